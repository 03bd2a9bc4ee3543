"""``ufunc.outer`` as the ufunc on broadcast operands; part of normalisation.

Guarantee: afterwards no call of the ``outer`` method of a ufunc of two operands is left:
``np.X.outer(a, b, **options)`` is ``np.X(np.reshape(a, np.shape(a) + (1,) * np.ndim(b)), b,
**options)``, which is how NumPy computes it (every axis of ``a`` before every axis of ``b``).
So ``np.X``'s own rules differentiate it in every mode and to every order, and its options
(``where=``, ``dtype=``, ``out=``) are read, refused or passed as for ``np.X`` itself; a ufunc
without a derivative (``np.greater``) gives none, one without a rule is refused by its name.
The method is recognised by the object the call resolves to (``np.subtract.outer`` is equal to
another access of it, never to another ufunc's), not by its name. A call with ``*seq`` or
``**mapping`` arguments, or of a ufunc NumPy gives no outer product (one operand, a
generalized ufunc such as ``np.matmul``), is left as it is: it has no rule, so it is refused.

>>> import numpy as np
>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> from srcad.passes.normalize import normalize
>>> from srcad.astutil import to_source
>>> def f(x, y):
...     return np.subtract.outer(x, y)
>>> src = capture(f)
>>> print(to_source(normalize(resolve_calls(src.node, src), src)).strip())
def f(x, y):
    _t1 = np.shape(x)
    _t2 = np.ndim(y)
    _t3 = (1,) * _t2
    _t4 = _t1 + _t3
    _t5 = np.reshape(x, _t4)
    _t6 = np.subtract(_t5, y)
    return _t6
"""
import gast
import numpy as np

from .. import astutil as A
from ..naming import BUILTIN
from .callees import Callee


def outer_ufunc(obj):
    """The ufunc whose ``outer`` method ``obj`` is, where NumPy has that method for it; else None."""
    owner = getattr(obj, "__self__", None)
    if isinstance(owner, np.ufunc) and owner.nin == 2 and owner.signature is None and obj == owner.outer:
        return owner
    return None


def outer_rhs(norm, call, callee, out):
    """The lowered form of ``call`` if it is a ufunc's ``outer`` (see the module doc), else None."""
    ufunc = outer_ufunc(callee.obj) if callee.kind == "object" else None
    if (ufunc is None or len(call.args) != 2 or any(isinstance(a, gast.Starred) for a in call.args)
            or any(k.arg is None for k in call.keywords)):
        return None
    a, b = norm.atoms(call.args, out)
    shape = _numpy_call("shape", A.deepcopy(a))
    wide = gast.BinOp(left=shape, op=gast.Add(), right=gast.BinOp(
        left=gast.Tuple(elts=[A.const(1)], ctx=gast.Load()), op=gast.Mult(), right=_numpy_call("ndim", A.deepcopy(b))))
    operand = _numpy_call("reshape", A.deepcopy(a), wide)
    lowered = _numpy_call(ufunc.__name__, operand, A.deepcopy(b), keywords=call.keywords)
    return norm.rhs(gast.copy_location(lowered, call), out)


def _numpy_call(name, *args, keywords=()):
    """``np.name(*args)``, NumPy bound as ``np`` whatever the user's scope says, with its callee."""
    func = gast.Attribute(value=A.set_anno(A.load("np"), BUILTIN, ("np", np)), attr=name, ctx=gast.Load())
    call = gast.Call(func=func, args=list(args), keywords=list(keywords))
    return A.set_anno(call, "callee", Callee("object", obj=getattr(np, name), name=f"np.{name}"))
