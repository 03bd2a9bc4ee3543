"""Calls in A-normal form, for the normalize pass: each kind of call lowered by the room that
knows it (an effect hoisted, ``map``/``reduce``, a ufunc's ``outer``, a helper inlined, a record
built, a module helper bound), any other a call on atoms; and a call made for its effect. ``d.get(k, default)``
becomes ``k in d.keys()`` and a branch (an array has no ``.keys``: it fails as ``.get`` would),
``dict(a=x)`` a dict display.
"""
import gast

from .. import astutil as A
from .binding import displays_unpacked, module_helper
from .callees import Callee, method_call
from .effect_calls import effect_value, library_store
from .call_options import mapping_reaches_memory, spread_reaches_memory
from .functional import check_statement, functional_rhs, is_check, mark_consumed, mark_read_in_part, mark_read_through
from .dispatch_tables import table_item_check
from .held_calls import held_function_check
from .in_place import unshared_store_check
from .inline import inline_call, unknown_function
from .local_objects import keep_unlowered
from .memory_refusals import describe_call
from .method_calls import method_check
from .records import record_call, record_fields, record_replace
from .resolve_calls import resolve_calls
from .ufunc_outer import outer_rhs
from .call_binding import user_function_call


def call_statement(norm, s, out):
    """``call(...)`` made for its effect: a check (``np.testing.assert_*``), a library's store
    into an array as an element store (``effect_calls.library_store``), else the call on atoms
    (``L.append(v)`` checked first where an item of ``L`` is updated in place)."""
    if is_check(s.value):
        check_statement(norm, s.value, out)
        return
    if _extend_by_a_display(norm, s, out):
        return
    A.set_anno(s.value, "for_effect", True)  # a helper updating its arguments is inlined
    call = normalize_call(norm, s.value, out)
    if call is not None and library_store(norm, call, out, s):
        return
    if call is not None:
        if method_call(call, "append") and call.func.value.id in norm.updated_items and len(call.args) == 1:
            out.append(unshared_store_check(norm, call.func.value.id, None, call.args[0], s))
        out.append(gast.Expr(value=call))


def _extend_by_a_display(norm, s, out):
    """``L.extend([a, b])`` (a list or tuple display, no ``*``) of a named list as ``L.append(a);
    L.append(b)``, the items evaluated first as ``extend`` evaluates them: appends, which srcad
    differentiates. True if it was one."""
    call = s.value
    if not (method_call(call, "extend") and len(call.args) == 1 and not call.keywords
            and isinstance(call.args[0], (gast.List, gast.Tuple))
            and not any(isinstance(e, gast.Starred) for e in call.args[0].elts)):
        return False
    items = [norm.atom(e, out) for e in call.args[0].elts]
    for item in items:
        append = gast.Call(func=gast.Attribute(value=A.load(call.func.value.id), attr="append", ctx=gast.Load()),
                           args=[item], keywords=[])
        A.set_anno(append, "callee", Callee("method", name="append"))
        call_statement(norm, gast.copy_location(gast.Expr(value=gast.copy_location(append, call)), s), out)
    return True


def normalize_call(norm, e, out):
    """The call ``e`` in A-normal form: lowered by the room that knows its kind, or a call on atoms."""
    callee = A.anno(e, "callee")
    if callee is None:
        resolve_calls(e, norm.source, norm.local_functions)
        callee = A.anno(e, "callee")
    hoisted = effect_value(norm, e, callee, out)  # r = x.sort(): the call for its effect, where it is made
    if hoisted is not None:
        return hoisted
    mark_read_in_part(callee, e, norm)
    mark_consumed(callee, e, norm.namer)
    mark_read_through(callee, e)
    lowered = functional_rhs(norm, e, callee, out)  # map, filter, reduce, operator.add ...
    if lowered is None:
        lowered = outer_rhs(norm, e, callee, out)  # np.subtract.outer(a, b): np.subtract of broadcast operands
    if lowered is not None:
        return lowered
    if callee.kind == "parameter":
        raise unknown_function(norm, e, callee.name)
    if callee.kind == "local":
        return inline_call(norm, e, callee.name, out)
    # self.step(x) differentiated as C.step(self, x), self.act(z) as the function held, ACTS[act](z) as the
    # table's item: checked when it runs
    check = method_check(norm, e) or held_function_check(norm, e) or table_item_check(norm, e)
    if check is not None:
        norm.stmt(check, out)
    replaced = record_replace(norm, e, callee, out)
    if replaced is not None:  # dataclasses.replace(s, x=e), s._replace(x=e): State(e, s.v)
        return replaced
    fields = record_fields(callee.obj) if callee.kind == "object" else None
    if fields is not None:  # State(x, v) of a dataclass or named tuple
        return record_call(norm, e, callee.obj, fields, out)
    helper = module_helper(norm, e, callee.obj) if callee.kind == "object" else None
    if helper is not None:  # *args, **kwargs, keyword-only, or a call with * or **
        return inline_call(norm, e, helper.name, out, helper)
    if callee.kind == "method" and callee.name == "get":
        return _mapping_get(norm, e, out)
    if callee.kind == "object" and callee.obj is dict and not e.args:
        keys = [A.const(k.arg) for k in e.keywords]
        if None in [k.arg for k in e.keywords]:
            raise norm.error("srcad does not support ** in dict(...); build the dict with a display {...}", e)
        return norm.expr_Dict(gast.Dict(keys=keys, values=[k.value for k in e.keywords]), out)
    if callee.kind == "method":
        func = gast.Attribute(value=norm.atom(e.func.value, out), attr=e.func.attr, ctx=gast.Load())
    else:
        func = e.func
    args = []
    for a in e.args:
        if isinstance(a, gast.Starred):
            args.append(gast.Starred(value=norm.atom(a.value, out), ctx=gast.Load()))
        else:
            args.append(norm.atom(a, out))
    keywords = [gast.keyword(arg=k.arg, value=norm.atom(k.value, out)) for k in e.keywords]
    new = gast.Call(func=func, args=args, keywords=keywords)
    A.set_anno(new, "callee", callee)
    keep_unlowered(e, new)  # a refusal of its derivative says why its object was not lowered
    if A.anno(e, "item_functions"):  # the functions its object of a list holds (item_methods): compiled for them
        A.set_anno(new, "item_functions", A.anno(e, "item_functions"))
    if any(k.arg == "output" and not isinstance(k.value, (gast.Name, gast.Subscript, gast.Tuple)) for k in e.keywords):
        A.set_anno(new, "output_is_a_type", True)  # output=np.float32 (SciPy's ndimage), not a buffer: ``out_argument``
    new = gast.copy_location(new, e)
    return new if norm.source.is_srcads() or user_function_call(callee) else _spread_read(norm, new, e, callee, out)


def _spread_read(norm, call, e, callee, out):
    """A library's call ``call`` (of the user's ``e``) with its final ``*seq`` or ``**mapping``
    a display (bound just before) as those arguments: ``np.sin(x, **{"out": z})`` is
    ``np.sin(x, out=z)``, whose ``out`` srcad then sees. Refused where what srcad cannot read
    when it compiles the code may fill ``out``, ``copy`` or the like (``np.clip(x, *bounds)``
    with three bounds writes into the third; a ``**mapping`` may name any parameter it has)."""
    call = displays_unpacked(call, out)
    hidden = next((f"*{A.to_source(a.value).strip()}" for k, (a, mine) in enumerate(zip(e.args, call.args))
                   if isinstance(mine, gast.Starred) and spread_reaches_memory(callee, k)), None)
    if hidden is None and any(k.arg is None for k in call.keywords) and mapping_reaches_memory(callee):
        hidden = f"**{A.to_source(next(k.value for k in e.keywords if k.arg is None)).strip()}"
    if hidden is None:
        return call
    raise norm.error(f"srcad cannot read what {hidden} passes to {describe_call(call)} when it compiles the code, "
                     "and it may fill a parameter through which the call writes into, or returns, an array it is "
                     "given (out=, copy=), which srcad must see; pass the arguments by name (or as a display: "
                     "*(a, b), **{'axis': 0})", e)


def _mapping_get(norm, e, out):
    """``d.get(k, default)`` as ``d[k] if k in d else default``, so each branch differentiates."""
    if not 1 <= len(e.args) <= 2 or e.keywords or any(isinstance(a, gast.Starred) for a in e.args):
        raise norm.error("srcad supports d.get(key) and d.get(key, default) on a dict", e)
    mapping = norm.atom(e.func.value, out)
    key = norm.atom(e.args[0], out)
    default = norm.atom(e.args[1], out) if len(e.args) > 1 else A.const(None)
    # `key in d.keys()`, not `key in d`: an array has no .keys() (nor .get()), so it fails
    # as the user's own code does instead of testing membership of a value
    keys = gast.Call(func=gast.Attribute(value=A.deepcopy(mapping), attr="keys", ctx=gast.Load()), args=[],
                     keywords=[])
    A.set_anno(keys, "callee", Callee("method", name="keys"))
    found = norm.namer.fresh("_t")
    out.append(A.assign(found, gast.Compare(left=key, ops=[gast.In()], comparators=[norm.atom(keys, out)])))
    result = norm.namer.fresh("_t")
    value = gast.Subscript(value=A.deepcopy(mapping), slice=A.deepcopy(key), ctx=gast.Load())
    out.append(gast.If(test=A.load(found), body=[A.assign(result, value)], orelse=[A.assign(result, default)]))
    return A.load(result)
