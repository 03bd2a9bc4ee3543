"""Common subexpressions: compute ``x[i]`` once in ``np.sin(x[i]) * x[i]``.

Afterwards no temporary of the A-normal form recomputes an indexing, attribute, operator or
comparison on atoms that an earlier temporary of the same block already holds, with nothing
rebound or updated in place in between. Calls are left alone (they may have effects). Fewer
temporaries mean fewer values saved for the reverse sweep, and shorter generated code.

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
import gast

from .. import astutil as A

_PURE = (gast.Subscript, gast.Attribute, gast.BinOp, gast.UnaryOp, gast.Compare)


def _key(expr):
    return gast.dump(expr)


def _changed(stmt):
    """Names a statement rebinds or updates in place."""
    names = A.names_stored(stmt)
    for n in gast.walk(stmt):
        if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Subscript):
            names.add(n.targets[0].value.id)
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and isinstance(n.func.value, gast.Name):
            names.add(n.func.value.id)  # a method may change its receiver
    return names


def _block(stmts, renames):
    available = {}  # expression key -> (temporary, names it reads)
    for s in stmts:
        A.replace_names(s, renames) if renames else None
        if isinstance(s, (gast.If, gast.For, gast.While)):
            s.body = _block(s.body, renames)
            s.orelse = _block(s.orelse, renames)
        if (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and isinstance(s.value, _PURE)
                and s.targets[0].id.startswith("_t")):
            key = _key(s.value)
            if key in available:
                renames[s.targets[0].id] = available[key][0]
                s.srcad_dead = True
                continue
            changed = _changed(s)
            available = {k: v for k, v in available.items() if not (v[1] & changed) and v[0] not in changed}
            available[key] = (s.targets[0].id, A.names_read(s.value))
            continue
        changed = _changed(s)
        available = {k: v for k, v in available.items() if not (v[1] & changed) and v[0] not in changed}
    return [s for s in stmts if not getattr(s, "srcad_dead", False)]


def eliminate_common_subexpressions(node):
    """Reuse temporaries for repeated pure expressions (see module doc); returns ``node``."""
    node.body = _block(node.body, {})
    return node
