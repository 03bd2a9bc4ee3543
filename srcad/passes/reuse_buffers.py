"""Buffer reuse: an arithmetic result computed into a temporary nobody else reads.

A-normal form gives every intermediate a name, so ``a + b + c`` allocates two arrays where an
expert writes ``t = a + b; t += c``. Guarantee: afterwards ``z = t OP b`` (``OP`` one of
``+ - * /``; for ``+`` and ``*`` also ``z = b OP t``) is ``t OP= b; z = t`` wherever all of
these hold, each known when the code is generated, so the value of every name is what it was:

- ``t`` is bound once in the function, by an arithmetic operation (a new array), and read
  once: here. Nothing else sees its memory, before or after.
- ``t`` and ``z`` are arrays (not scalars) of the same known shape and float dtype: ``b``
  broadcasts into ``t`` without changing its shape or type, as NumPy's in-place operators
  require. Or ``t`` is the adjoint of such an array (a float array of its shape) and ``b`` a
  literal number. A number is never reused: ``t += b`` on it is a new number and one more
  statement.
- both statements are in the same sweep (the forward sweep or the reverse sweep), so a value
  the forward sweep hands to the backward sweep (``vjp``'s residuals) is never written; and in
  the same statement list, ``t``'s binding first, so each run of ``z = t OP b`` (a loop's
  every pass) reads a ``t`` bound anew, never one a previous pass already updated.
- ``t`` is not the function's output, which the forward sweep returns, and the statement is
  not in a ``try`` or ``with`` body, where code differentiated again may not update in place.

IEEE addition and multiplication are commutative, so ``b + t`` computed as ``t += b`` is the
same number. Code srcad differentiates again reads ``t += b`` on a fresh ``t`` as ``t = t + b``.

>>> import gast, numpy as np
>>> from srcad import astutil as A
>>> from srcad.passes.shapes import Spec
>>> fn = gast.parse('''
... def f_adjoint(x, y, v=None):
...     _t1 = x * y
...     _t2 = _t1 + x
...     return _t2
... ''').body[0]
>>> spec = Spec((3,), np.float64)
>>> _ = A.set_anno(fn, "specs", {"x": spec, "y": spec, "_t1": spec, "_t2": spec})
>>> _ = A.set_anno(fn, "n_forward", 2)
>>> print(A.to_source(reuse_buffers(fn)).strip())
def f_adjoint(x, y, v=None):
    _t1 = x * y
    _t1 += x
    _t2 = _t1
    return _t2
"""
import gast

from .. import astutil as A
from .shapes import Spec

_IN_PLACE = (gast.Add, gast.Sub, gast.Mult, gast.Div)
_COMMUTATIVE = (gast.Add, gast.Mult)


def reuse_buffers(node):
    """Compute into dead temporaries in place in the generated function ``node``; see the
    module doc. Returns ``node``."""
    specs = A.anno(node, "specs") or {}
    n = A.anno(node, "n_forward")
    fwd, rev = node.body[:n], node.body[n:]
    output = A.anno(node, "output")
    excluded = {a.id for a in node.args.args} | ({output.id} if isinstance(output, gast.Name) else set())
    reads, binds, fresh = {}, {}, set()
    for part, stmts in (("fwd", fwd), ("rev", rev)):
        for s in A.walk(gast.Module(body=stmts, type_ignores=[])):
            if isinstance(s, gast.Name):
                table = reads if isinstance(s.ctx, gast.Load) else binds
                table.setdefault(s.id, []).append(part)
            elif isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) \
                    and isinstance(s.value, (gast.BinOp, gast.UnaryOp)):
                fresh.add(s.targets[0].id)  # a new array (the specs say the operands are arrays)

    adjoint_of = A.anno(node, "adjoint_of") or {}

    def reusable(name, z, other, part):
        if not (name in fresh and name not in excluded and binds.get(name) == [part] and reads.get(name) == [part]):
            return False
        primal = specs.get(adjoint_of.get(name))
        if isinstance(primal, Spec) and primal.python is None and primal.shape and _number(other):
            return True  # the adjoint of an array (a float array of its shape) times a number

        spec, target = specs.get(name), specs.get(z)
        return (isinstance(spec, Spec) and isinstance(target, Spec) and spec.python is None
                and target.python is None and bool(spec.shape) and spec.shape == target.shape
                and spec.dtype == target.dtype and spec.dtype.kind in "fc")

    def rewrite(stmts, part):
        out = []
        bound_here = set()  # bound earlier in this statement list: bound anew each time the read runs
        for s in stmts:
            if isinstance(s, gast.If) and A.anno(s.test, "region") is not None:
                out.append(s)  # a try or with body: srcad refuses in-place updates there (passes.statements)
                continue
            for field in ("body", "orelse"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and isinstance(s, (gast.For, gast.While, gast.If)):
                    setattr(s, field, rewrite(inner, part))
            out.extend(_in_place(s, part, lambda name, z, other, p: name in bound_here and reusable(name, z, other, p)))
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                bound_here.add(s.targets[0].id)
        return out

    new_fwd, new_rev = rewrite(fwd, "fwd"), rewrite(rev, "rev")
    node.body = new_fwd + new_rev
    A.set_anno(node, "n_forward", len(new_fwd))
    return node


def _number(node):
    return isinstance(node, gast.Constant) and type(node.value) in (int, float)


def _in_place(s, part, reusable):
    """``[s]``, or ``[t OP= b, z = t]`` where ``s`` is ``z = t OP b`` and ``t`` may be reused."""
    if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.BinOp)
            and isinstance(s.value.op, _IN_PLACE)):
        return [s]
    z, rhs = s.targets[0].id, s.value
    if isinstance(rhs.left, gast.Name) and reusable(rhs.left.id, z, rhs.right, part):
        t, b = rhs.left, rhs.right
    elif isinstance(rhs.op, _COMMUTATIVE) and isinstance(rhs.right, gast.Name) \
            and reusable(rhs.right.id, z, rhs.left, part):
        t, b = rhs.right, rhs.left
    else:
        return [s]
    update = gast.AugAssign(target=A.store(t.id), op=type(rhs.op)(), value=b)
    copied = A.assign(z, A.load(t.id))
    for new in (update, copied):
        gast.copy_location(new, s)
        A.set_anno(new, "origin", A.anno(s, "origin"))
    A.set_anno(update, "reused_buffer", True)  # codegen may drop it with t where z is not needed
    return [update, copied]
