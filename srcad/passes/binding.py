"""Argument binding for inlined calls, as Python binds them: ``f(a, *seq, k=v, **d)``.

Guarantee: ``bind_arguments`` gives each parameter of the inlined function an atom holding
what Python would bind to it, evaluated in the caller's order: plain positional arguments,
then the items of a final ``*seq`` (its length checked when the code runs: a mismatch
raises ``TypeError`` as the call would; parameters with defaults that a short ``seq`` leaves
take them, decided then too; with a ``**d`` whose keys srcad does not read when compiling, the
parameters a short ``seq`` leaves take ``d``'s entries, or their defaults), keywords, and the entries of a final ``**d``
(a key that names no parameter, or one already bound, raises ``TypeError``). ``*rest`` is a
tuple and ``**options`` a dict of what is left over; defaults fill the rest. A ``*args`` or
``**kwargs`` bound to a display just before (a wrapper passing on what it is given) is
bound as its items.
``module_helper`` decides which functions of the caller's own module are inlined rather
than called: those with ``*args``, ``**kwargs``, keyword-only or positional-only
parameters, any called with ``*`` or ``**``, and a small leaf helper a loop calls
(``_small_helper``). A parameter the inlined body only reads is the caller's atom itself.

>>> import gast
>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> from srcad.passes.normalize import normalize
>>> from srcad.astutil import to_source
>>> def f(x, pair):
...     def scaled(a, b, *, by=2.0):
...         return (a + b) * by
...     return scaled(*pair, by=x)
>>> src = capture(f)
>>> print(to_source(normalize(resolve_calls(src.node, src), src)).strip())
def f(x, pair):
    _seq1 = list(pair)
    _t1 = len(_seq1)
    _t2 = _t1 != 2
    if _t2:
        raise TypeError('*pair must hold 2 items for scaled()')
    _t3 = _seq1[0]
    _t4 = _seq1[1]
    _t5 = _t3 + _t4
    scaled_result1 = _t5 * x
    return scaled_result1
"""
import builtins
import inspect
import types

import gast
import numpy as np

from .. import astutil as A
from .. import registry
from ..errors import SrcadError
from ..naming import BUILTIN, builtin
from ..source import capture, srcad_file
from ..source_check import check_source_is_code
from .fresh import MUTATING_METHODS, known_pure
from .callees import Callee, local_names
from .helper_defaults import with_held_defaults
from .resolve_calls import resolve_calls


def bind_arguments(norm, call, name, fdef, out):
    """``{parameter: atom}`` for a call of the inlined ``fdef`` (see the module doc)."""
    args = fdef.args
    positional = [a.id for a in args.posonlyargs + args.args]
    call = displays_unpacked(call, out)
    plain, starred = list(call.args), None
    if plain and isinstance(plain[-1], gast.Starred):
        starred = plain.pop()
    if any(isinstance(a, gast.Starred) for a in plain):
        raise norm.error("srcad inlines a call with one *sequence, as its last positional argument", call)
    if len(plain) > len(positional) and args.vararg is None:
        raise norm.error(f"'{name}' takes {len(positional)} positional arguments but {len(plain)} were given", call)
    bound, extra_args = {}, []
    for i, value in enumerate(plain):
        if i < len(positional):
            bound[positional[i]] = norm.atom(value, out)
        else:
            extra_args.append(norm.atom(value, out))
    rest = None  # *rest from the items of *seq beyond the positional parameters
    seq_or_mapping = None  # f(*seq, **m): (the list of seq's items, the parameters it fills while it has items)
    if starred is not None:
        if extra_args:
            raise norm.error("srcad inlines f(a, *seq) only when the plain arguments fill no *rest parameter", call)
        by_name = {k.arg for k in call.keywords}  # f(*seq, k=v): seq fills the parameters before k
        params = positional[len(plain):]
        params = params[:next((i for i, p in enumerate(params) if p in by_name), len(params))]
        # a short seq leaves the last parameters to their defaults, or with a **mapping to it (or them)
        has_mapping = any(k.arg is None for k in call.keywords)
        if has_mapping and args.vararg is None and not {a.id for a in args.posonlyargs} & set(params):
            seq_or_mapping = (_listed(norm, call, starred, out), params)  # bound once the mapping is read
        else:
            optional = {} if has_mapping else dict(zip(positional[len(positional) - len(args.defaults):],
                                                       args.defaults))
            rest = _bind_sequence(norm, call, name, params, args.vararg is not None, starred, bound, optional, out)
    keywords, mapping = list(call.keywords), None
    if keywords and keywords[-1].arg is None:
        mapping = norm.atom(keywords.pop().value, out)
    if any(k.arg is None for k in keywords):
        raise norm.error("srcad inlines a call with one **mapping, as its last argument", call)
    by_keyword = [a.id for a in args.args + args.kwonlyargs]  # positional-only parameters have no keyword
    extra_keywords = {}
    for kw in keywords:
        if kw.arg in bound or kw.arg in extra_keywords:
            raise norm.error(f"bad keyword argument for '{name}': '{kw.arg}' has a value already", call)
        if kw.arg in by_keyword:
            bound[kw.arg] = norm.atom(kw.value, out)
        elif args.kwarg is not None:
            extra_keywords[kw.arg] = norm.atom(kw.value, out)
        else:
            raise norm.error(f"bad keyword argument for '{name}': it has no parameter '{kw.arg}' to pass by keyword",
                             call)
    defaults = dict(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    defaults.update({a.id: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    if mapping is not None:
        if seq_or_mapping is not None:
            _bind_sequence_or_mapping(norm, call, name, *seq_or_mapping, starred, mapping, bound, defaults, out)
        options = _bind_mapping(norm, name, by_keyword, args.kwarg is not None, mapping, bound, defaults,
                                extra_keywords, out, either=seq_or_mapping[1] if seq_or_mapping else ())
        if options is not None:
            bound[args.kwarg.id] = options
    if args.vararg is not None:
        bound[args.vararg.id] = rest if rest is not None else gast.Tuple(elts=extra_args, ctx=gast.Load())
    if args.kwarg is not None and args.kwarg.id not in bound:
        bound[args.kwarg.id] = gast.Dict(keys=[A.const(k) for k in extra_keywords], values=list(extra_keywords.values()))
    for param in positional + [a.id for a in args.kwonlyargs]:
        if param not in bound:
            if param not in defaults:
                raise norm.error(f"missing argument '{param}' in call to '{name}'", call)
            value = A.deepcopy(defaults[param])
            if isinstance(value, gast.Name) and A.anno(value, BUILTIN) is not None:  # the object a def held
                local = norm.namer.fresh(f"_{param}")
                out.append(gast.copy_location(A.assign(local, value), call))
                value = A.load(local)
            bound[param] = value
    return bound


def _bind_sequence(norm, call, name, params, has_rest, starred, bound, defaults, out):
    """Bind ``params`` to the items of ``*seq``, the trailing ones that have ``defaults`` to
    theirs where ``seq`` is too short (as Python does, decided when the code runs); returns
    the atom for ``*rest`` (or None)."""
    seq = _listed(norm, call, starred, out)
    count = norm.atom(builtin_call("len", A.load(seq)), out)
    what = A.to_source(starred.value).strip()
    needed = len(params)
    while needed and params[needed - 1] in defaults:  # (with *rest too: h(*[x]) for h(x, w=W, *rest))
        needed -= 1
    if needed == len(params) or has_rest:
        test = gast.Compare(left=count, ops=[gast.Lt() if has_rest else gast.NotEq()], comparators=[A.const(needed)])
        message = f"*{what} must hold {'at least ' if has_rest else ''}{needed} items for {name}()"
    else:
        test = gast.BoolOp(op=gast.Or(), values=[
            gast.Compare(left=count, ops=[gast.Lt()], comparators=[A.const(needed)]),
            gast.Compare(left=A.deepcopy(count), ops=[gast.Gt()], comparators=[A.const(len(params))])])
        message = f"*{what} must hold {needed} to {len(params)} items for {name}()"
    _raise_if(norm, test, message, call, out)
    for k, param in enumerate(params):
        item = gast.Subscript(value=A.load(seq), slice=A.const(k), ctx=gast.Load())
        if k >= needed:  # seq[k] if seq has it, else the default
            item = gast.IfExp(test=gast.Compare(left=A.deepcopy(count), ops=[gast.Gt()], comparators=[A.const(k)]),
                              body=item, orelse=A.deepcopy(defaults[param]))
        bound[param] = norm.atom(item, out)
    if not has_rest:
        return None
    tail = gast.Subscript(value=A.load(seq), slice=gast.Slice(A.const(len(params)), None, None), ctx=gast.Load())
    return norm.atom(builtin_call("tuple", tail), out)


def _listed(norm, call, starred, out):
    """The name of a new list of the items of ``*seq`` (read once, as Python reads it)."""
    seq = norm.namer.fresh("_seq")
    out.append(gast.copy_location(A.assign(seq, norm.rhs(builtin_call("list", starred.value), out)), call))
    return seq


def _bind_sequence_or_mapping(norm, call, name, seq, params, starred, mapping, bound, defaults, out):
    """``f(*seq, **m)`` as Python binds it when the code runs: each of ``params`` from the
    item of ``seq`` at its place while ``seq`` has one, else from ``m`` (or its default); an
    item beyond them, and a parameter given by both, raise Python's TypeError."""
    count = norm.atom(builtin_call("len", A.load(seq)), out)
    what = A.to_source(starred.value).strip()
    _raise_if(norm, gast.Compare(left=count, ops=[gast.Gt()], comparators=[A.const(len(params))]),
              f"*{what} holds more than the {len(params)} positional arguments {name}() takes there", call, out)
    keys = norm.atom(_method_call(A.deepcopy(mapping), "keys"), out)
    for k, param in enumerate(params):
        given = norm.atom(gast.Compare(left=A.deepcopy(count), ops=[gast.Gt()], comparators=[A.const(k)]), out)
        named = norm.atom(gast.Compare(left=A.const(param), ops=[gast.In()], comparators=[A.deepcopy(keys)]), out)
        _raise_if(norm, gast.BoolOp(op=gast.And(), values=[A.deepcopy(given), A.deepcopy(named)]),
                  f"{name}() got multiple values for argument '{param}'", call, out)
        if param in defaults:
            fallback = gast.Call(func=gast.Attribute(value=A.deepcopy(mapping), attr="get", ctx=gast.Load()),
                                 args=[A.const(param), defaults.pop(param)], keywords=[])
            A.set_anno(fallback, "callee", Callee("method", name="get"))
        else:
            _raise_if(norm, gast.BoolOp(op=gast.And(), values=[
                gast.UnaryOp(op=gast.Not(), operand=A.deepcopy(given)),
                gast.UnaryOp(op=gast.Not(), operand=A.deepcopy(named))]),
                f"{name}() missing argument '{param}'", call, out)
            fallback = gast.Subscript(value=A.deepcopy(mapping), slice=A.const(param), ctx=gast.Load())
        item = gast.Subscript(value=A.load(seq), slice=A.const(k), ctx=gast.Load())
        bound[param] = norm.atom(gast.IfExp(test=A.deepcopy(given), body=item, orelse=fallback), out)


def displays_unpacked(call, out):
    """``call`` with a final ``*seq`` that is a tuple or list display (``f(*(a, b))``) or whose
    name was last bound, among ``out``'s statements, to one (``f(*args)`` in an inlined ``def
    wrapper(*args)``) as those items, and a final ``**d`` bound to a dict display of string keys
    as those keywords: Python binds them the same, and srcad then knows which parameter each one
    fills (and that each is the item itself, not an item of a list made of them)."""
    args, keywords = list(call.args), list(call.keywords)
    if args and isinstance(args[-1], gast.Starred):
        spread = args[-1].value
        shown = spread if isinstance(spread, (gast.Tuple, gast.List)) else _display_of(spread, out, (gast.Tuple, gast.List))
        if shown is not None and not any(isinstance(e, gast.Starred) for e in shown.elts):
            args[-1:] = [A.deepcopy(e) for e in shown.elts]
    if keywords and keywords[-1].arg is None:
        shown = _display_of(keywords[-1].value, out, gast.Dict)
        if shown is not None and all(isinstance(k, gast.Constant) and isinstance(k.value, str) for k in shown.keys) \
                and not {k.value for k in shown.keys} & {k.arg for k in keywords[:-1]}:
            keywords[-1:] = [gast.keyword(arg=k.value, value=A.deepcopy(v)) for k, v in zip(shown.keys, shown.values)]
    if args == call.args and keywords == call.keywords:
        return call
    changed = gast.copy_location(gast.Call(func=call.func, args=args, keywords=keywords), call)
    for key in ("callee", "for_effect", "consumed"):
        if A.anno(call, key) is not None:
            A.set_anno(changed, key, A.anno(call, key))
    return changed


def _display_of(node, out, kind):
    """The ``kind`` display ``node`` (a name) was bound to by the last statement of ``out`` that
    mentions it, if that is its assignment (nothing since has read or changed it) and no name
    the display reads has been bound again since (its items are what the display holds)."""
    if not isinstance(node, gast.Name):
        return None
    for k in range(len(out) - 1, -1, -1):
        stmt = out[k]
        if node.id in A.all_names(stmt):
            if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
                    and stmt.targets[0].id == node.id and isinstance(stmt.value, kind)):
                return None
            read = A.names_read(stmt.value)
            if any(read & A.names_stored(later) for later in out[k + 1:]):
                return None
            return stmt.value
    return None


def _bind_mapping(norm, name, by_keyword, has_options, mapping, bound, defaults, extra_keywords, out, either=()):
    """Bind the parameters left by keyword from the dict ``mapping`` (``**d``); those in
    ``either`` are bound already, from ``*seq`` or from it (``_bind_sequence_or_mapping``)."""
    keys = norm.atom(_method_call(A.deepcopy(mapping), "keys"), out)
    taken = [p for p in by_keyword if p in bound and p not in either or p in extra_keywords]
    for param in taken:  # Python: "got multiple values"
        found = norm.atom(gast.Compare(left=A.const(param), ops=[gast.In()], comparators=[A.deepcopy(keys)]), out)
        _raise_if(norm, found, f"{name}() got multiple values for argument '{param}'", mapping, out)
    for param in by_keyword:
        if param in bound:
            continue
        if param in defaults:
            value = gast.Call(func=gast.Attribute(value=A.deepcopy(mapping), attr="get", ctx=gast.Load()),
                              args=[A.const(param), defaults.pop(param)], keywords=[])
            A.set_anno(value, "callee", Callee("method", name="get"))
        else:
            value = gast.Subscript(value=A.deepcopy(mapping), slice=A.const(param), ctx=gast.Load())
        bound[param] = norm.atom(value, out)
    names = gast.Tuple(elts=[A.const(p) for p in by_keyword], ctx=gast.Load())
    key = norm.namer.fresh("_key")
    unknown = gast.Compare(left=A.load(key), ops=[gast.NotIn()], comparators=[names])
    if has_options:  # **options: the entries that name no parameter, after the explicit keywords
        item = gast.Subscript(value=A.deepcopy(mapping), slice=A.load(key), ctx=gast.Load())
        entries = gast.DictComp(key=A.load(key), value=item, generators=[
            gast.comprehension(target=A.store(key), iter=A.deepcopy(keys), ifs=[unknown], is_async=0)])
        options = norm.atom(entries, out)
        for k, v in extra_keywords.items():
            out.append(A.assign(gast.Subscript(value=options, slice=A.const(k), ctx=gast.Store()), v))
        return options
    check = gast.For(target=A.store(key), iter=A.deepcopy(keys), body=[gast.If(test=unknown, body=[_raise(
        f"{name}() got an unexpected keyword argument in **{A.to_source(mapping).strip()}")], orelse=[])],
        orelse=[], type_comment=None)
    norm.stmt(gast.copy_location(check, mapping), out)
    return None


def _raise(message):
    return gast.Raise(exc=builtin_call("TypeError", A.const(message)), cause=None)


def _raise_if(norm, test, message, node, out):
    norm.stmt(gast.copy_location(gast.If(test=test, body=[_raise(message)], orelse=[]), node), out)


def builtin_call(name, *args):
    """A call of the builtin ``name`` (never the user's name for it) with its callee."""
    call = gast.Call(func=builtin(name), args=list(args), keywords=[])
    return A.set_anno(call, "callee", Callee("object", obj=getattr(builtins, name), name=name))


def helper_call(name, obj, *args):
    """A call of srcad's helper ``obj`` (bound under ``name`` whatever the user's scope says,
    as a builtin is) with its callee."""
    call = gast.Call(func=A.set_anno(A.load(name), BUILTIN, (name, obj)), args=list(args), keywords=[])
    return A.set_anno(call, "callee", Callee("object", obj=obj, name=name))


def _method_call(receiver, name):
    call = gast.Call(func=gast.Attribute(value=receiver, attr=name, ctx=gast.Load()), args=[], keywords=[])
    return A.set_anno(call, "callee", Callee("method", name=name))


def updates_parameter(fdef):
    """Does ``fdef`` write into one of its parameters (``p[...] = ...``, ``p[...] += ...``,
    ``p += ...``)?"""
    params = {a.id for a in fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs}
    for node in gast.walk(fdef):
        target = node.targets[0] if isinstance(node, gast.Assign) and len(node.targets) == 1 else (
            node.target if isinstance(node, gast.AugAssign) else None)
        while isinstance(target, gast.Subscript):
            target = target.value
        if isinstance(target, gast.Name) and target.id in params and (
                isinstance(node, gast.AugAssign) or isinstance(node.targets[0], gast.Subscript)):
            return True
    return False


def module_helper(norm, call, obj):
    """The ``FunctionDef`` to inline for a call of ``obj``, a Python function defined in the
    caller's module (same globals, no closure), when its parameters are not all plain
    positional ones, the call passes ``*`` or ``**`` or a function (``rk4(lorenz, y)``: the
    helper is specialised on it, see ``inline.static_function``; a helper of another module
    is compiled on its own, where a call of its parameter is refused), or it is called for its effect and
    updates one of its parameters in place (a solver's ``step(field)``: inlined, the update
    is the caller's, checked like its own); None to leave the call as it is.
    Such a function of another module, or one that reads a global the caller binds as a
    local, is refused at the call."""
    fn = getattr(obj, "__srcad_function__", obj)
    if (not isinstance(fn, types.FunctionType) or fn.__name__ == "<lambda>" or hasattr(fn, "__wrapped__")
            or srcad_file(fn.__code__.co_filename)):
        return None  # (a decorator's wrapper, or a derivative srcad made, is judged where it is called)
    if registry.lookup(registry.VJP, obj) is not None or registry.is_nondifferentiable(obj):
        return None
    from .inline import passes_function

    code = fn.__code__
    packed = bool(code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS))
    spread = any(isinstance(a, gast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
    updates = A.anno(call, "for_effect") and code.co_argcount and fn.__globals__ is norm.source.globals
    defaults = list(fn.__defaults__ or ()) + list((fn.__kwdefaults__ or {}).values())
    passes = passes_function(norm, call) or any(callable(d) and not isinstance(d, type) for d in defaults)
    if not (packed or spread or passes or code.co_kwonlyargcount or code.co_posonlyargcount or updates):
        inline = norm.loop_depth and obj is fn
        return _small_helper(norm, call, fn) if inline else None
    if passes and (fn.__globals__ is not norm.source.globals or fn.__closure__) and not (packed or spread):
        return None  # another module's helper is compiled on its own, as before: a call of its parameter is refused
    if fn.__globals__ is not norm.source.globals or fn.__closure__:
        if not (packed or spread) or known_pure(fn) and not spread:
            # keyword-only parameters bind by name at the call as in Python; the libraries srcad
            # has rules for keep their calls as before (scipy's array_namespace(*arrays))
            return None
        raise norm.error(
            f"srcad inlines a call of {fn.__qualname__} with * or ** (or to a function with *args or **kwargs) "
            "only when it is defined at the top level of this module; pass its arguments one by one, or "
            "define it here", call)
    from .match_statements import lower_matches

    if not (packed or spread or passes or code.co_kwonlyargcount or code.co_posonlyargcount):  # for its effect
        try:
            helper = capture(fn)
        except SrcadError:
            return None  # no source to read: the call stays a call, judged as before
        if not updates_parameter(helper.node):
            return None  # an effect srcad leaves to the function (printing, checking)
    else:
        helper = capture(fn)
    check_source_is_code(helper)
    lower_matches(helper.node, norm.namer, helper)  # (normalize lowers the caller's own)
    # a method of a module-level object (obj.step(*args)) or of self: self.act(x) in it is its class's, as
    # where it is called
    receiver = call.args[0] if call.args else None
    receiver_class = A.anno(call, "receiver_class") or (
        norm.record_classes.get(receiver.id) if isinstance(receiver, gast.Name) else None)
    first = (helper.node.args.posonlyargs + helper.node.args.args)[:1]
    resolve_calls(helper.node, helper, param_classes=[(a.id, receiver_class) for a in first if receiver_class])
    shadowed = _shadowed(norm, helper.node)
    if shadowed:
        raise norm.error(
            f"srcad inlines {fn.__qualname__} here, and it reads the global '{shadowed[0]}', which this function "
            "binds as a local name; rename one of them", call)
    return with_held_defaults(norm, call, fn, _taken(norm, helper))


def _shadowed(norm, fdef):
    """Globals ``fdef`` reads that the caller binds as locals (inlined, it would read those)."""
    return sorted((A.names_read(fdef) - local_names(fdef)) & norm.source_locals)


def _taken(norm, helper):
    """``helper``'s ``FunctionDef``, its names reserved in the caller and the globals it reads
    guarded like the caller's own."""
    resolved = A.anno(helper.node, "resolved") or []
    A.set_anno(norm.source.node, "resolved", (A.anno(norm.source.node, "resolved") or []) + resolved)
    norm.namer.reserve(A.all_names(helper.node))
    norm.user_names |= A.all_names(helper.node)
    return helper.node


_SMALL = 12  # statements of a helper inlined where a loop calls it


def _small_helper(norm, call, fn):
    """The ``FunctionDef`` of ``fn``, a helper of the caller's module called by its global
    name in a loop, one positional argument per parameter, when its body is a few
    assignments to names and one final ``return`` and every call in it has a rule (a leaf:
    nothing recursive, no update in place): inlined, its adjoint has no call boundary per
    iteration (``softmin3`` of soft-DTW, ``lorenz`` of an RK4 step). The name's binding and
    the function's code are guarded (``compile.Compiled``). None for anything else: the call
    stays a call."""
    code = fn.__code__
    plain_call = isinstance(call.func, gast.Name) and not call.keywords and len(call.args) == code.co_argcount
    if not plain_call or fn.__globals__ is not norm.source.globals or fn.__closure__ or code.co_flags & _NOT_PLAIN:
        return None
    try:
        helper = capture(fn)
    except SrcadError:
        return None
    body = helper.node.body
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
        body = body[1:]  # the docstring
    if not body or len(body) > _SMALL or not isinstance(body[-1], gast.Return) or body[-1].value is None:
        return None
    if any(isinstance(getattr(s, "value", None), _DISPLAYS) for s in body):
        return None  # several results (h, cache): a call gives an unread one no adjoint at all, not zeros
    if not all(map(_assigns_names, body[:-1])) or updates_parameter(helper.node) or any(
            isinstance(n, _SCOPES) for n in gast.walk(helper.node) if n is not helper.node):
        return None
    try:
        check_source_is_code(helper)
        resolve_calls(helper.node, helper)
    except SrcadError:
        return None
    calls = [n for n in gast.walk(helper.node) if isinstance(n, gast.Call)]
    if not all(map(_rule_call, calls)) or _shadowed(norm, helper.node):
        return None
    if norm.inline_loop_helpers == "array results" and not _array_of_display(body[-1].value):
        return None
    return _taken(norm, helper)


def _array_of_display(node):
    """Is ``node`` ``np.array([a, b, ...])``, a small array of numbers the numba backend makes scalars?"""
    callee = A.anno(node, "callee") if isinstance(node, gast.Call) else None
    return (getattr(callee, "obj", None) is np.array and len(node.args) == 1 and not node.keywords
            and isinstance(node.args[0], (gast.List, gast.Tuple)))


_DISPLAYS = (gast.Tuple, gast.List, gast.Dict, gast.Set)
_NOT_PLAIN = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_SCOPES = (gast.FunctionDef, gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp,
           gast.Global, gast.Nonlocal, gast.Yield, gast.YieldFrom, gast.Await, gast.NamedExpr, gast.Starred)


def _assigns_names(s):
    targets = s.targets if isinstance(s, gast.Assign) else [s.target] if isinstance(s, gast.AugAssign) else None
    return targets is not None and all(
        isinstance(t, gast.Name) or isinstance(t, gast.Tuple) and all(isinstance(e, gast.Name) for e in t.elts)
        for t in targets)


def _rule_call(call):
    """Is ``call`` one srcad differentiates by a rule, or one without derivative, that cannot
    change its arguments: no user function, no method that updates its object?"""
    callee = A.anno(call, "callee")
    if callee is None:
        return False
    if callee.kind == "method":
        return callee.name not in MUTATING_METHODS
    if callee.kind != "object":
        return False
    obj = callee.obj
    if registry.lookup(registry.VJP, obj) is not None:
        return True
    return registry.is_nondifferentiable(obj) and known_pure(obj) or isinstance(obj, type) and obj in (float, int)
