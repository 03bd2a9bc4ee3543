"""Common subexpressions: compute ``x[i]`` once in ``np.sin(x[i]) * x[i]``.

Afterwards no temporary of the A-normal form recomputes an indexing, attribute, operator or
comparison on atoms that an earlier temporary of the same block already holds, with nothing
rebound in between and no memory possibly updated in place (an element store, or a call that
may change its arguments: anything but a function or method with a rule). Only names bound
once in the function (no parameters) are merged, and only where the merged one is read after
its binding in its block: ``a and b`` binds its temporary twice, and a loop may read a name
before the binding that would be merged. Calls themselves are left alone (they may have
effects). Fewer temporaries mean fewer values saved for the reverse sweep, and shorter
generated code.

>>> import numpy as np
>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> from srcad.passes.normalize import normalize
>>> from srcad.astutil import to_source
>>> def f(x, i):
...     return np.sin(x[i]) * x[i]
>>> src = capture(f)
>>> print(to_source(eliminate_common_subexpressions(normalize(resolve_calls(src.node, src), src))).strip())
def f(x, i):
    _t1 = x[i]
    _t2 = np.sin(_t1)
    _t4 = _t2 * _t1
    return _t4
"""
import collections

import gast

from .. import astutil as A
from .. import registry

_PURE = (gast.Subscript, gast.Attribute, gast.BinOp, gast.UnaryOp, gast.Compare)


def _key(expr):
    """A value equal for two expressions exactly when they are written alike (what
    ``gast.dump`` tells apart, at a fraction of its cost: no text is formatted)."""
    if isinstance(expr, gast.AST):
        return (expr.__class__,) + tuple(_key(getattr(expr, field, _MISSING)) for field in expr._fields)
    if isinstance(expr, list):
        return (list,) + tuple(map(_key, expr))
    return expr if expr is _MISSING else repr(expr)  # (1 and 1.0 and True are equal, their reprs not)


_MISSING = object()  # a field a node does not have


def _changes(stmt):
    """The names ``stmt`` rebinds, or None if it may change an array or list in place, through
    any name that shares it: an element store may, and so may any call srcad does not know to
    return a new value (a method such as ``fill``, ``np.add.at``, a user's function, ``out=``)."""
    rebound = set()
    for n in A.walk(stmt):
        cls = n.__class__
        if cls is gast.Name:
            if isinstance(n.ctx, gast.Store):
                rebound.add(n.id)
        elif cls is gast.Assign and n.targets[0].__class__ is gast.Subscript or (
                cls is gast.Call and not _returns_new_value(n)):
            return None
    return rebound


def _returns_new_value(call):
    callee = A.anno(call, "callee")
    if callee is None or any(k.arg == "out" for k in call.keywords):
        return False
    if callee.kind == "method":
        return callee.name in registry.METHODS or callee.name in registry.NONDIFF_METHODS
    return callee.kind == "object" and registry.lookup(registry.VJP, callee.obj) is not None


def _block(stmts, renames, names):
    available = {}  # expression key -> (temporary, names it reads)
    loads = _LazyLoads(stmts)  # each statement's reads before renaming, made when a candidate needs them
    for p, s in enumerate(stmts):
        A.replace_names(s, renames) if renames else None
        if isinstance(s, (gast.If, gast.For, gast.While)):
            s.body = _block(s.body, renames, names)
            s.orelse = _block(s.orelse, renames, names)
        if (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and isinstance(s.value, _PURE)
                and s.targets[0].id.startswith("_t")):
            key = _key(s.value)
            target = s.targets[0].id
            if key in available and _replaceable(target, available[key][0], loads, p, names):
                renames[target] = available[key][0]
                s.srcad_dead = True
                continue
            available = _still_available(available, s)
            available[key] = (target, A.names_read(s.value))
            continue
        available = _still_available(available, s)
    return [s for s in stmts if not getattr(s, "srcad_dead", False)]


class _LazyLoads:
    """How often each statement of a block loads each name, counted before any renaming (the
    first time a candidate asks: most blocks have none)."""

    def __init__(self, stmts):
        self.counts = list(stmts)  # a statement until it is counted

    def after(self, p, name):
        """How often the statements after ``p`` load ``name``."""
        total = 0
        for i in range(p + 1, len(self.counts)):
            counted = self.counts[i]
            if not isinstance(counted, collections.Counter):
                counted = self.counts[i] = collections.Counter(
                    n.id for n in A.walk(counted) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))
            total += counted[name]
        return total


def _replaceable(target, holder, loads, p, names):
    """May every read of ``target`` (bound at statement ``p`` of the block whose statements read
    ``loads``) read ``holder`` instead? Each is bound once in the function and is no parameter,
    and ``target`` is read only after ``p`` in this block: a name bound twice (``_t = a; if _t:
    _t = b`` for ``a and b``) would rebind ``holder``, and a read before ``p`` (a loop's
    previous pass) would see ``holder``'s newer value."""
    stores, all_loads, params = names
    if stores[target] != 1 or stores[holder] != 1 or target in params or holder in params:
        return False
    return loads.after(p, target) == all_loads[target]


def _still_available(available, stmt):
    """What ``available`` still holds after ``stmt``: nothing if it may update memory in place
    (the names an expression reads may share it), else what reads nothing it rebinds."""
    changed = _changes(stmt) if available else None
    if changed is None:
        return {}
    return {k: v for k, v in available.items() if not (v[1] & changed) and v[0] not in changed}


def eliminate_common_subexpressions(node):
    """Reuse temporaries for repeated pure expressions (see module doc); returns ``node``."""
    stores, loads = collections.Counter(), collections.Counter()
    for n in A.walk(node):
        if isinstance(n, gast.Name):
            (loads if isinstance(n.ctx, gast.Load) else stores)[n.id] += 1
    params = {a.id for a in node.args.args + node.args.posonlyargs + node.args.kwonlyargs}
    params |= {a.id for a in (node.args.vararg, node.args.kwarg) if a is not None}
    node.body = _block(node.body, {}, (stores, loads, params))
    return node
