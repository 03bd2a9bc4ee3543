"""In-place updates: the checks ``normalize`` writes for them (``augmented_assignment``,
``list_slice_check``), and the pass dropping those that cannot fail, known from the shapes.

``z op= e`` is normalised to ``t = z op e`` and ``z = in_place_result(t, z)``: where ``z`` is
an array, NumPy updates it in place, keeping its shape and dtype or raising, and
``runtime.in_place_result`` does the same when the code runs. Where shape inference knows that
``t`` has ``z``'s shape and dtype (or that ``z`` is a Python number, which is rebound), the
check can neither fail nor cast, and the call is dropped. Likewise ``check_list_slice(S, ...)``
before a slice store ``S[a:b] = v`` (``errors.check_list_slice``: a list must keep its length)
where ``S`` is known to be an array.

>>> import gast, numpy as np
>>> from srcad import astutil as A, runtime
>>> from srcad.passes.callees import Callee
>>> from srcad.passes.shape_values import Spec
>>> fn = gast.parse("def f(z, e):\\n    t = z + e\\n    z = in_place_result(t, z)\\n    return z").body[0]
>>> call = fn.body[1].value
>>> _ = A.set_anno(call, "callee", Callee("object", obj=runtime.in_place_result, name="in_place_result"))
>>> _ = A.set_anno(fn, "specs", {"z": Spec((3,), np.float64), "t": Spec((3,), np.float64)})
>>> print(A.to_source(fold_in_place_checks(fn)).strip())
def f(z, e):
    t = z + e
    z = t
    return z
"""
import gast

from .. import astutil as A
from .. import runtime
from ..errors import check_list_slice
from ..sharing import check_unshared_arguments, check_unshared_item, check_unshared_store, copy_for_calls
from .binding import builtin_call, helper_call
from .memory import updated_arguments
from .memory_scan import bound_names
from .shape_values import Spec


def in_place_check(new, old):
    """The call ``in_place_result(new, old)`` that ``normalize`` makes of ``old op= e``, ``new``
    being ``old op e`` (``runtime.in_place_result``: an array keeps its shape and dtype, or NumPy's
    error)."""
    return helper_call("in_place_result", runtime.in_place_result, new, old)


def list_slice_check(norm, base, index, new, node):
    """The statement ``check_list_slice(base, slice(...), new, where)`` that ``normalize`` puts
    before ``base[a:b] = new`` (``errors.check_list_slice``: a list must keep its length)."""
    bounds = [A.deepcopy(b) if b is not None else A.const(None) for b in (index.lower, index.upper, index.step)]
    where = _where(norm.source, node)
    return gast.Expr(value=helper_call("check_list_slice", check_list_slice, A.load(base),
                                       builtin_call("slice", *bounds), A.deepcopy(new), A.const(where)))


def unshared_item_check(norm, base, index, node):
    """The statement ``check_unshared_item(base, index, where)`` that ``normalize`` puts before
    ``base[index] op= e`` (``sharing.check_unshared_item``: on a list or dict, no other item holds
    the array updated in place)."""
    where = _where(norm.source, node)
    return gast.Expr(value=helper_call("check_unshared_item", check_unshared_item, A.load(base),
                                       A.deepcopy(index), A.const(where)))


def unshared_store_check(norm, base, index, value, node):
    """The statement ``check_unshared_store(base, index, value, where)`` that ``normalize`` puts
    before ``base[index] = value`` (index None: ``base.append(value)``) where an item of
    ``base`` is updated in place somewhere in the function (``sharing.check_unshared_store``)."""
    where = _where(norm.source, node)
    return gast.Expr(value=helper_call("check_unshared_store", check_unshared_store, A.load(base),
                                       A.deepcopy(index) if index is not None else A.const(None), A.deepcopy(value),
                                       A.const(where)))


def updated_parameters(body, params, updated, source, arrays=(), numbers=()):
    """``(checked, copied, deep)``: the parameters whose memory an in-place update in ``body``
    may reach (``updated``: the names updated in place, ``S[i] = e``, ``S.append(e)``,
    ``w.sort()``; ``x op= e`` is found by the ``"in_place"`` annotation
    ``augmented_assignment`` leaves; the memory analysis follows them to the parameters,
    through other names, ``v = w; v *= 2``, and helpers updating theirs), which
    ``argument_sharing_check`` compares with the rest; those the compiled function copies
    first, so that no update reaches the caller's memory: the parameters updated by name
    (srcad's own updates, which reach the value itself, or a list's or dict's items); and
    ``deep``, those among them a call may update (srcad runs a call that carries no derivative
    as written, and it may change any array the value holds: an item of a list, an object's
    attribute), copied whole. In srcad's own code, the names updated only. ``arrays`` are the
    parameters only ever given arrays or numbers (``check_aliasing``'s): a copy of one shares nothing;
    ``numbers`` those given Python numbers, which no update reaches (``h += dt * v`` rebinds ``h``)."""
    objects = [p for p in params if p not in numbers]
    augmented = {A.anno(s, "in_place")[0] for s in A.every_statement(body) if A.anno(s, "in_place") is not None}
    copied = {p for p in objects if p in updated}
    checked = copied | {p for p in objects if p in augmented}
    if source.is_srcads() or not (updated or augmented or _calls_for_effect_or_helpers(body)):
        return checked, copied, set()
    reached, by_calls = (names - set(numbers) for names in updated_arguments(body, params, arrays))
    # a parameter bound again (``X = X.copy()``) is updated by name where the argument may no
    # longer be what it holds: there the memory analysis says whether the update reaches it
    rebound = bound_names(body)
    checked, copied = ({p for p in names if p not in rebound or p in reached} for names in (checked, copied))
    return checked | reached, copied | by_calls, by_calls


def argument_sharing_check(updated, params, source, ref, deep=()):
    """The statement ``check_unshared_arguments(...)`` a compiled function starts with where it
    updates the parameters ``updated`` in place (``updated_parameters``): against its other
    parameters and the arrays, lists, tuples, dicts and objects the function and the functions
    it calls read as globals (``sharing.check_unshared_arguments``). None where it updates none,
    and in srcad's own code. ``ref(name, obj)`` names an object in generated code."""
    if source.is_srcads() or not updated:
        return None
    updated = sorted(updated)
    names = updated + [p for p in params if p not in updated]
    copied_whole = tuple(k for k, p in enumerate(updated) if p in deep)
    where = _where(source, source.node)
    return gast.Expr(value=gast.Call(
        func=A.load(ref("check_unshared_arguments", check_unshared_arguments)),
        args=[gast.Tuple(elts=[A.const(n) for n in names], ctx=gast.Load()),
              gast.Tuple(elts=[A.load(n) for n in names], ctx=gast.Load()), A.const(len(updated)), A.const(where),
              A.load(ref(f"{source.node.name}_function", source.fn))]
        + ([gast.Tuple(elts=[A.const(k) for k in copied_whole], ctx=gast.Load())] if copied_whole else []),
        keywords=[]))


def deep_copy(source, ref, param):
    """``copy_for_calls(param, where)``: the copy a compiled function starts with of a parameter
    a call it runs as written may change (``sharing.copy_for_calls``)."""
    where = _where(source, source.node)
    return gast.Call(func=A.load(ref("copy_for_calls", copy_for_calls)), args=[A.load(param), A.const(where)],
                     keywords=[])


def _where(source, node):
    """``"file:line: "`` of ``node`` in ``source``, which the run-time checks begin their messages with."""
    return f"{source.filename}:{getattr(node, 'lineno', None) or '?'}: "


def _calls_for_effect_or_helpers(body):
    """Does ``body`` make a call for its effect, or call a Python function (which may update
    what it is given)?"""
    import types

    if any(isinstance(s, gast.Expr) for s in A.every_statement(body)):
        return True
    callees = (A.anno(n, "callee") for n in A.walk(gast.Module(body=body, type_ignores=[])) if isinstance(n, gast.Call))
    return any(c is not None and c.kind == "object"
               and isinstance(getattr(c.obj, "__srcad_function__", c.obj), types.FunctionType) for c in callees)


def fold_in_place_checks(node):
    """Replace, in ``node`` (annotated ``"specs"`` by ``infer_shapes``), each
    ``x = in_place_result(new, old)`` that cannot fail or cast by ``x = new`` (and a temporary
    ``x`` that only the next statement reads, ``z = x``, by ``z = new``); returns ``node``."""
    specs = A.anno(node, "specs") or {}
    reads = {}
    for n in A.walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            reads[n.id] = reads.get(n.id, 0) + 1
    stored = _stored_by_item(node)
    for block in A.blocks(node.body):
        block[:] = [s for s in block if not _array_slice_check(s, specs)]
        dropped = set()
        for k, s in enumerate(block):
            if not _needless_check(s, specs, stored):
                continue
            s.value = A.load(s.value.args[0].id)
            after = block[k + 1] if k + 1 < len(block) else None
            if (isinstance(after, gast.Assign) and isinstance(after.value, gast.Name)
                    and after.value.id == s.targets[0].id and reads.get(after.value.id) == 1):
                after.value = s.value
                dropped.add(id(s))
        block[:] = [s for s in block if id(s) not in dropped]
    return node


def _array_slice_check(s, specs):
    """Is ``s`` ``check_list_slice(a, ...)`` or ``check_unshared_item(a, ...)`` of an ``a`` known
    to be an array (which keeps its length: NumPy raises if the value does not fit; whose
    items are numbers)?"""
    if not (isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) and s.value.args
            and isinstance(s.value.args[0], gast.Name)):
        return False
    callee = A.anno(s.value, "callee")
    spec = specs.get(s.value.args[0].id)
    return (callee is not None and callee.kind == "object"
            and (callee.obj is check_list_slice or callee.obj is check_unshared_item
                 or callee.obj is check_unshared_store)
            and isinstance(spec, Spec) and spec.python is None)


def _needless_check(s, specs, stored):
    """Can ``x = in_place_result(new, old)`` neither fail nor cast, so that ``x = new``? Not
    where ``old`` has shape ``()`` and is stored into by item (``acc[...] = v``): it may be a 0-d
    array, which ``old op= e`` keeps, where ``old op e`` is a NumPy scalar (the specs do not tell
    the two apart)."""
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.Call) and len(s.value.args) == 2
            and all(isinstance(a, gast.Name) for a in s.value.args)):
        return False
    callee = A.anno(s.value, "callee")
    if callee is None or callee.kind != "object" or callee.obj is not runtime.in_place_result:
        return False
    new, old = (specs.get(a.id) for a in s.value.args)
    if old is not None and old.python is None and old.shape == () and s.value.args[1].id in stored:
        return False
    return old is not None and (old.python is not None
                                or new is not None and new.shape == old.shape and new.dtype == old.dtype)


def _stored_by_item(node):
    """The names ``node`` stores into by item or slice (``S[i] = v``, ``S[...] = v``)."""
    return {t.value.id for t in A.walk(node) if isinstance(t, gast.Subscript) and isinstance(t.ctx, gast.Store)
            and isinstance(t.value, gast.Name)}


_OPERATORS = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.MatMult: "@", gast.Pow: "**",
              gast.FloorDiv: "//", gast.Mod: "%", gast.BitAnd: "&", gast.BitOr: "|", gast.BitXor: "^",
              gast.LShift: "<<", gast.RShift: ">>"}


def augmented_assignment(norm, s, out):
    """``normalize``'s form of ``z op= e``: ``z = z op e``, right for numbers and tuples, which
    are rebound, passed through ``in_place_check``. On an array (or a list) it updates z's memory
    in place, so the statement computing ``z + e`` is annotated ``in_place`` = (z, exempt name,
    operator) for the aliasing check, which refuses when another name sharing z's memory is
    read afterwards."""
    target = s.target
    start = len(out)
    # srcad's own code (a derivative differentiated again) adds into adjoints of their shape and dtype
    checked = not norm.source.is_generated()
    if isinstance(target, gast.Name):
        rhs = gast.BinOp(left=A.load(target.id), op=s.op, right=s.value)
        if checked:
            new = norm.atom(gast.copy_location(rhs, s), out)
            rhs = in_place_check(new, A.load(target.id))
        norm.assign_to(A.store(target.id), gast.copy_location(rhs, s), out)
        updated, exempt = target.id, None
    elif isinstance(target, gast.Subscript):
        base = norm.atom(target.value, out)
        index = norm.index(target.slice, out)
        old = gast.Subscript(value=base, slice=index, ctx=gast.Load())
        if checked and isinstance(base, gast.Name) and not any(isinstance(n, gast.Slice) for n in A.walk(index)):
            out.append(gast.copy_location(unshared_item_check(norm, base.id, index, s), s))
        updated = norm.atom(old, out)  # S[i] += e updates the item S[i] in place, then stores it
        rhs = gast.BinOp(left=updated, op=s.op, right=s.value)
        new = norm.atom(gast.copy_location(rhs, s), out)
        if checked:
            new = norm.atom(gast.copy_location(in_place_check(new, A.deepcopy(updated)), s), out)
        out.append(A.assign(gast.Subscript(value=base, slice=A.deepcopy(index), ctx=gast.Store()), new))
        updated, exempt = getattr(updated, "id", None), getattr(base, "id", None)
    else:
        from .local_objects import unlowered_object  # (an object's store says why it was not lowered)

        raise norm.error(unlowered_object(target) or "srcad supports augmented assignment to names and subscripts only",
                         s)
    for new in out[start:]:
        value = getattr(new, "value", None)
        if (isinstance(new, gast.Assign) and isinstance(value, gast.BinOp) and isinstance(value.left, gast.Name)
                and value.left.id == updated and type(value.op) is type(s.op)):
            A.set_anno(new, "in_place", (updated, exempt, _OPERATORS.get(type(s.op), "op")))
