"""Integer growth: a loop-carried integer product is marked for the numba backend to refuse.

Python's integers grow without bound; numba's are 64-bit and wrap. A hash, a linear
congruential generator or a factorial kept as an ``int`` (``c = c * 1000003`` in a loop)
takes other values compiled, and with them other branches and weights: a silently different
gradient. Guarantee: afterwards, right before each statement of the forward sweep that
multiplies, raises to a power or shifts into an integer (its spec says so) whose value flows
back into its own operands (a product carried around a loop), there is
``numba_refuses(reason)``. In Python it does nothing; the numba lowering refuses the code at
that line (``backend="auto"`` runs the NumPy code). Index arithmetic (``i * n + j``) carries
no value around and is left alone.

>>> import gast, numpy as np
>>> from srcad import astutil as A
>>> from srcad.passes.shape_values import Spec
>>> fn = gast.parse('''
... def f_adjoint(x, v=None):
...     c = 1
...     for t in r:
...         k = t * 3
...         c = c * 7
... ''').body[0]
>>> _ = A.set_anno(fn, "specs", {n: Spec((), np.int64, int) for n in ("c", "k", "t")})
>>> _ = A.set_anno(fn, "n_forward", 2)
>>> print(A.to_source(mark_integer_growth(fn)).strip())
def f_adjoint(x, v=None):
    c = 1
    for t in r:
        k = t * 3
        numba_refuses('a loop-carried integer product may pass 2**63')
        c = c * 7
"""
import gast

from .. import astutil as A
from .. import runtime
from ..naming import BUILTIN
from .shape_values import Spec

_GROWING = (gast.Mult, gast.Pow, gast.LShift)
REASON = "a loop-carried integer product may pass 2**63"  # numba's lowering says the rest


def mark_integer_growth(node):
    """Mark each loop-carried integer product of the generated function ``node``'s forward
    sweep (annotated ``"specs"``); see the module doc. Returns ``node``."""
    specs = A.anno(node, "specs") or {}
    n_forward = A.anno(node, "n_forward")
    forward = node.body[:n_forward] if n_forward is not None else node.body
    flows = {}  # name -> names assigned from it
    products = []  # (statement, block, target, operands)
    for block in A.blocks(forward):
        for s in block:
            target, value = _assignment(s)
            if target is None:
                continue
            operands = A.names_read(value)
            for name in operands:
                flows.setdefault(name, set()).add(target)
            spec = specs.get(target)
            if (isinstance(value, gast.BinOp) and isinstance(value.op, _GROWING) and isinstance(spec, Spec)
                    and spec.shape == () and spec.dtype.kind in "iu" and spec.python is not bool):
                products.append((s, block, target, operands))
    marked = 0
    for s, block, target, operands in products:
        if _reaches(flows, target, operands):
            block.insert(block.index(s), _marker())
            marked += block is node.body
    if n_forward is not None:
        A.set_anno(node, "n_forward", n_forward + marked)
    return node


def _assignment(s):
    """``(target, value)`` of ``t = value`` or ``t op= value`` (as ``t op value``) to a name."""
    if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name):
        return s.targets[0].id, s.value
    if isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name):
        return s.target.id, gast.BinOp(left=A.load(s.target.id), op=s.op, right=s.value)
    return None, None


def _reaches(flows, start, goals):
    """Does a value assigned to ``start`` flow, through assignments, into one of ``goals``?"""
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name in goals:
            return True
        if name not in seen:
            seen.add(name)
            todo.extend(flows.get(name, ()))
    return False


def _marker():
    call = gast.Call(func=A.set_anno(A.load("numba_refuses"), BUILTIN, ("numba_refuses", runtime.numba_refuses)),
                     args=[A.const(REASON)], keywords=[])
    return gast.Expr(value=call)
