"""A ``functools.partial`` bound in the function and called by its name, read as the call of
the function it fixes arguments of.

Guarantee: ``name = functools.partial(F, p..., k=v...)`` (or ``partial(...)`` imported from
``functools``) is rewritten, and each ``name(a..., j=w...)`` becomes ``F(p..., a..., **{k: v...,
j: w...})`` as Python's partial calls it, only where that is provably what Python runs:

- the binding is a statement at the top level of the function's body, and ``name`` is bound
  nowhere else in the function (no parameter, loop, ``del``, ``global``/``nonlocal``, nested
  function's name of it);
- ``F`` is a dotted name of a module-level (or closure) function, partial, ufunc or function
  srcad has a rule for, whose first name the function binds nowhere (so ``F`` denotes at the
  call what it denoted at the binding; it is guarded like any called name);
- every read of ``name`` is the callee of a call in the statements after the binding (not in
  a nested ``def`` or ``lambda``), and no ``*``/``**`` is in the partial or those calls;
- the call's keywords override the partial's in the order a dict merge gives, or ``F`` takes
  no ``**`` keywords (then that order is not observable).

The partial evaluates its arguments when it is made: each non-literal one is bound to a fresh
name at the binding (``_half_s = expr``), which the calls read. Any other ``partial`` in a
local name is left as written and refused as any local value called (``resolve_calls``) or
passed to a function that calls it (``inline``).

>>> import functools, numpy as np
>>> from srcad import astutil as A
>>> from srcad.source import capture
>>> def f(x, s):
...     half = functools.partial(np.multiply, s)
...     return half(x)
>>> src = capture(f)
>>> read_local_partials(src.node, src)
>>> print(A.to_source(src.node).strip())
def f(x, s):
    _half_0 = s
    return np.multiply(_half_0, x)
"""
import functools
import inspect
import types

import gast
import numpy as np

from .. import astutil as A
from ..naming import Namer
from .callees import denoted, dotted, lookup_path, path_expr
from .local_functions import SCOPES
from .method_calls import has_rule
from .module_aliases import name_bindings

_DONE = "local_partials_read"  # on the FunctionDef: its partials are read already


def read_local_partials(fdef, source):
    """Rewrite in place the local partials of ``fdef`` (the function ``source`` reads) that the
    module docstring allows, and their calls."""
    if A.anno(fdef, _DONE):
        return
    A.set_anno(fdef, _DONE, True)
    bindings = name_bindings(fdef)
    namer = Namer(A.all_names(fdef) | set(source.globals) | set(source.closure))
    for stmt in list(fdef.body):
        found = _partial_binding(stmt, bindings, source)
        if found is None:
            continue
        name, function, fixed, keywords = found
        calls = calls_of(name, fdef, fdef.body[fdef.body.index(stmt) + 1:])
        if calls is None or not all(_order_kept(call, keywords, function, source) for call in calls):
            continue
        temps, values = [], {}
        for key, value in [(str(i), v) for i, v in enumerate(fixed)] + [(k.arg, k.value) for k in keywords]:
            if isinstance(value, gast.Constant):
                values[key] = value
                continue
            temp = namer.unique(f"_{name}_{key}")
            temps.append(gast.copy_location(gast.Assign(targets=[A.store(temp)], value=value, type_comment=None), stmt))
            values[key] = A.load(temp)
        for call in calls:
            _spread(call, function, len(fixed), [k.arg for k in keywords], values)
        index = fdef.body.index(stmt)
        fdef.body[index:index + 1] = temps or [gast.copy_location(gast.Pass(), stmt)]


def _partial_binding(stmt, bindings, source):
    """``(name, F's dotted name, [p...], [keyword...])`` if ``stmt`` is ``name = partial(F, p...,
    k=v...)`` of a name bound only there and a callee ``F`` as the module docstring says; else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.Call) and stmt.value.args):
        return None
    name, call = stmt.targets[0].id, stmt.value
    if len(bindings.get(name, ())) != 1 or any(isinstance(a, gast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords):
        return None
    maker, function = dotted(call.func), dotted(call.args[0])
    if maker is None or function is None or maker[0] in bindings or function[0] in bindings:
        return None
    try:
        if denoted(maker, source) is not functools.partial or not _known_callee(denoted(function, source)):
            return None
    except (KeyError, AttributeError):
        return None
    lookup_path(maker, source)  # guarded: the code is made for this partial and this F
    lookup_path(function, source)
    return name, function, call.args[1:], call.keywords


def _known_callee(obj):
    """Is ``obj`` a function srcad reads or has a rule for (not a class, nor an object with ``__call__``)?"""
    return isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, np.ufunc, functools.partial)) or has_rule(obj)


def calls_of(name, fdef, after):
    """The calls ``name(...)`` in the statements ``after``, if every read of ``name`` in ``fdef``
    is the callee of one of them, none in a nested ``def`` or ``lambda`` and none passing
    ``*``/``**``; else None."""
    nested = {id(n) for s in A.walk(fdef) if isinstance(s, SCOPES) and s is not fdef
              and not isinstance(s, (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp))
              for n in A.walk(s)}
    calls = [n for stmt in after for n in A.walk(stmt) if isinstance(n, gast.Call)
             and isinstance(n.func, gast.Name) and n.func.id == name and id(n) not in nested]
    callees = {id(c.func) for c in calls}
    reads = [n for n in A.walk(fdef) if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)]
    if not calls or any(id(r) not in callees for r in reads):
        return None
    if any(isinstance(a, gast.Starred) for c in calls for a in c.args) or any(
            k.arg is None for c in calls for k in c.keywords):
        return None
    return calls


def _order_kept(call, keywords, function, source):
    """Does ``F`` receive the keywords of ``call`` of the partial (fixing ``keywords``) in the
    order Python's partial passes them (``{**fixed, **given}``), or is that order not observable
    (``F`` has no ``**`` parameter)?"""
    fixed, given = [k.arg for k in keywords], [k.arg for k in call.keywords]
    if list(dict.fromkeys(fixed + given)) == [k for k in fixed if k not in given] + given:
        return True
    try:
        parameters = inspect.signature(lookup_path(function, source)).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.kind is not inspect.Parameter.VAR_KEYWORD for p in parameters)


def _spread(call, function, count, fixed_keywords, values):
    """``call`` of the partial as the call of ``function`` (a dotted name): the partial's
    ``count`` positional values first, then its keywords the call does not pass itself."""
    given = {k.arg for k in call.keywords}
    call.func = gast.copy_location(path_expr(function), call.func)
    call.args = [A.deepcopy(values[str(i)]) for i in range(count)] + call.args
    call.keywords = [gast.keyword(arg=k, value=A.deepcopy(values[k])) for k in fixed_keywords
                     if k not in given] + call.keywords
