"""Inlining: helpers defined in the function (``def``, ``lambda``) and comprehensions
(list, dict, generator expressions).

Guarantee: an inlined scope never reads or overwrites a name of the scope around it by
accident. Every local of an inlined helper (parameters, assignments, loop variables) gets a
fresh ``<helper>_<name>`` name at each call, and every comprehension variable a fresh
``_<name>N`` name, as Python 3 gives comprehensions a scope of their own; the names a helper
reads but does not bind are the enclosing function's, as in Python. A comprehension's first
iterable is evaluated in the enclosing scope, the rest of it in its own. Arguments bind as
Python binds them: positional-only, keyword-only and default parameters, ``*rest`` (a tuple
of the extra positional arguments) and ``**options`` (a dict of the extra keywords).

>>> import gast
>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> from srcad.passes.normalize import normalize
>>> from srcad.astutil import to_source
>>> def f(y):
...     e = y[0]
...     pieces = [e * 3.0 for e in y]
...     return e
>>> src = capture(f)
>>> print(to_source(normalize(resolve_calls(src.node, src), src)).strip())
def f(y):
    e = y[0]
    _list1 = []
    _seq1 = list(y)
    _t1 = len(_seq1)
    _range1 = range(_t1)
    for _k1 in _range1:
        _e1 = _seq1[_k1]
        _t2 = _e1 * 3.0
        _list1.append(_t2)
    pieces = _list1
    return e
"""
import gast

from .. import astutil as A
from .binding import bind_arguments
from .jumps import eliminate_jumps
from .resolve_calls import Callee, local_names


def lambda_def(name, lam):
    """``name = lambda args: body`` as the helper ``def name(args): return body``."""
    ret = gast.copy_location(gast.Return(value=lam.body), lam.body)
    fdef = gast.FunctionDef(name=name, args=lam.args, body=[ret], decorator_list=[], returns=None,
                            type_comment=None, type_params=[])
    return gast.copy_location(fdef, lam)


def inline_comprehension(norm, e, out):
    """A list or dict comprehension (or a generator expression, materialised as a list) as a
    loop filling a fresh ``_listN`` or ``_dictN``."""
    for gen in e.generators:
        if gen.is_async:
            raise norm.error("srcad does not support async comprehensions", e)
    scope = sorted({n.id for gen in e.generators for n in gast.walk(gen.target)
                    if isinstance(n, gast.Name)})
    renames = {name: norm.namer.fresh(f"_{name}") for name in scope}
    first_iter = e.generators[0].iter
    e = A.replace_names(A.deepcopy(e), renames)
    e.generators[0].iter = first_iter  # evaluated in the enclosing scope
    if isinstance(e, gast.DictComp):  # {k: v for ...}: d[k] = v in the loop
        result = norm.namer.fresh("_dict")
        out.append(A.assign(result, gast.Dict(keys=[], values=[])))
        store = gast.Subscript(value=A.load(result), slice=e.key, ctx=gast.Store())
        inner = [A.assign(store, e.value)]
    else:
        result = norm.namer.fresh("_list")
        out.append(A.assign(result, gast.List(elts=[], ctx=gast.Load())))
        append = gast.Call(func=gast.Attribute(value=A.load(result), attr="append", ctx=gast.Load()),
                           args=[e.elt], keywords=[])
        A.set_anno(append, "callee", Callee("method", name="append"))
        inner = [gast.Expr(value=append)]
    for gen in reversed(e.generators):
        for cond in reversed(gen.ifs):
            inner = [gast.If(test=cond, body=inner, orelse=[])]
        inner = [gast.For(target=gen.target, iter=gen.iter, body=inner, orelse=[], type_comment=None)]
    for stmt in inner:
        gast.copy_location(stmt, e)
        norm.stmt(stmt, out)
    return A.load(result)


def inline_call(norm, call, name, out, fdef=None):
    """Inline a call of the helper ``name`` (a function defined in the caller, or ``fdef``:
    one of its module, see ``binding.module_helper``); returns the atom holding its result."""
    fdef = fdef or norm.local_functions.get(name)
    if fdef is None:
        raise norm.error(f"'{name}' is called before it is defined", call)
    if name in norm.inlining:
        raise norm.error(
            f"'{name}' calls itself; srcad does not differentiate recursion inside a function. "
            "Write it as a loop, or define it at module level with a custom_vjp", call)
    renames = {p: norm.namer.unique(f"{name}_{p}") for p in sorted(local_names(fdef))}
    bound = bind_arguments(norm, call, name, fdef, out)  # in the caller's order, before the helper runs
    args = fdef.args
    order = args.posonlyargs + args.args + [args.vararg] + args.kwonlyargs + [args.kwarg]
    rebound = A.names_stored(gast.Module(body=fdef.body, type_ignores=[]))
    for param in [a.id for a in order if a is not None]:
        value = bound[param]
        if A.anno(call, "for_effect") and isinstance(value, gast.Name) and param not in rebound:
            # called for its effect: the parameter is the caller's array itself, so an update
            # through it is the caller's own (and checked as such), not one through an alias
            renames[param] = value.id
            continue
        out.append(gast.copy_location(A.assign(renames[param], value), call))
    body = A.replace_names(A.deepcopy(gast.Module(body=fdef.body, type_ignores=[])), renames).body
    result = norm.namer.fresh(f"{name}_result")
    body = eliminate_jumps(body, norm.namer, norm.source, top_level=False, result=result,
                           params=[renames[p] for p in bound])
    norm.inlining.append(name)
    saved_functions = dict(norm.local_functions)
    try:
        for stmt in body:
            norm.stmt(stmt, out)
    finally:
        norm.inlining.pop()
        norm.local_functions = saved_functions
    return A.load(result)
