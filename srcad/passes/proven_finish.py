"""Proven finishes: ``finish(g, x)`` marked where it must return ``g`` itself.

``finish`` makes a gradient what the caller gets for argument ``x``: its shape and dtype, a
fresh writeable array, never an alias of the cotangent or of another gradient. On a small
straight-line adjoint (``A @ B`` of 10×10 matrices) its two calls cost as much as one of the
products; an expert returns ``dA, dB``. Guarantee: afterwards a call ``finish(g, x)`` in the
function's final ``return`` carries the annotation ``"proven"`` only where, for every call
the code's key admits, ``finish`` would return ``g`` unchanged (``codegen`` then returns
``g`` in the joint adjoint; the split pair keeps the call, which batched pullbacks rewrite).
Read off the generated code itself, fail closed:

- every statement before the ``return`` (but comments) is a plain assignment to a name or
  an arithmetic update in place of one (``dX += g``: the same array, of its shape and
  dtype), and no parameter is bound; the statements are followed in order;
- each value is a parameter the key proves an ndarray of at least one dimension (its shape
  and dtype), the cotangent checked against a float64 output's known shape (``cotangent_like``
  returns a float64 array of that shape), a number literal, or ``a @ b``, ``+ - * / **``,
  unary minus, ``a.T`` or a call of a NumPy ufunc on such values (shapes by NumPy's rules,
  dtypes by NumPy itself on one-element arrays);
- ``g`` holds an array made by ``@``, arithmetic or a ufunc (new memory, no view) that no
  other returned name holds, of ``x``'s shape and float32 or float64 dtype exactly.

>>> import gast, numpy as np
>>> from srcad import astutil as A, runtime
>>> from srcad.passes.shape_values import Spec
>>> fn = gast.parse('''
... def f_adjoint(A, B, v=None):
...     d_t1 = cotangent_like(v, (2, 2), 'float64')
...     dA = d_t1 @ B.T
...     dB = A.T
...     return finish(dA, A), finish(dB, B)
... ''').body[0]
>>> for call in A.walk(fn):
...     if isinstance(call, gast.Call):
...         _ = A.set_anno(call.func, "denotes", getattr(runtime, call.func.id))
>>> specs = {"A": Spec((2, 2), np.float64), "B": Spec((2, 2), np.float64)}
>>> fn = prove_finishes(A.set_anno(fn, "cotangent", "v"), specs, {}.get)
>>> [A.anno(c, "proven", False) for c in fn.body[-1].value.elts]  # dB is a view of A
[True, False]
"""
import gast
import numpy as np

from .. import astutil as A
from .. import runtime
from .item_forms import denotes
from .shape_values import Spec

_FLOATS = (np.dtype(np.float64), np.dtype(np.float32))
_ARITHMETIC = {gast.Add: np.add, gast.Sub: np.subtract, gast.Mult: np.multiply, gast.Div: np.true_divide,
               gast.Pow: np.power}


class _Array:
    """What is known of an array: its shape and dtype, and whether this call made its memory
    (one instance per array: names bound to the same instance hold the same array)."""

    __slots__ = ("shape", "dtype", "fresh")

    def __init__(self, shape, dtype, fresh):
        self.shape, self.dtype, self.fresh = tuple(shape), np.dtype(dtype), fresh


def prove_finishes(node, specs, resolve):
    """Annotate ``"proven"`` the ``finish`` calls of ``node``'s final ``return`` that return
    their first argument unchanged (see module doc). ``specs``: parameter -> its key's spec;
    ``resolve(name)``: the object a free name of the generated code denotes, or None."""
    body = node.body
    if not body or not isinstance(body[-1], gast.Return) or not specs:
        return node
    params = {a.id for a in node.args.args}
    cotangent = A.anno(node, "cotangent")
    known = {}  # name -> what it holds now: an _Array (one instance per array), a number, None
    for s in body[:-1]:
        if A.is_comment(s):
            continue
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name):
            name = s.targets[0].id
            value = _value(s.value, known, params, specs, cotangent, resolve)
        elif isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name) and type(s.op) in _ARITHMETIC:
            name = s.target.id
            # an array updated in place stays that array, of its shape and dtype (else NumPy raises)
            held = known.get(name)
            update = _value(s.value, known, params, specs, cotangent, resolve)
            value = held if isinstance(held, _Array) and update is not None else None
        else:
            return node
        if name in params:
            return node
        known[name] = value
    returned = body[-1].value
    calls = returned.elts if isinstance(returned, gast.Tuple) else [returned]
    if not all(_is_finish(c) for c in calls):
        return node
    held = [known.get(c.args[0].id) if isinstance(c.args[0], gast.Name) else None for c in calls]
    for k, call in enumerate(calls):
        array, spec = held[k], _param_array(call.args[1], params, specs)
        if (isinstance(array, _Array) and spec is not None and array.fresh and array.shape == spec.shape
                and array.dtype == spec.dtype and array.dtype in _FLOATS
                and not any(other is array for j, other in enumerate(held) if j != k)):
            A.set_anno(call, "proven", True)
    return node


def _is_finish(call):
    return (isinstance(call, gast.Call) and denotes(call.func, runtime.finish) and not call.keywords
            and 2 <= len(call.args) <= 3)


def _param_array(node, params, specs):
    """A parameter's spec if its key proves an ndarray (an argument of shape () may be a NumPy scalar)."""
    name = node.id if isinstance(node, gast.Name) else None
    spec = specs.get(name) if name in params else None
    return spec if isinstance(spec, Spec) and spec.python is None and spec.shape else None


def _value(expr, known, params, specs, cotangent, resolve):
    """An ``_Array`` for an array value, a number for a literal, None when not known."""
    if isinstance(expr, gast.Name):  # another name for the same array: the same instance
        spec = _param_array(expr, params, specs)
        return _Array(spec.shape, spec.dtype, False) if spec is not None else known.get(expr.id)
    if isinstance(expr, gast.Constant):
        return expr.value if type(expr.value) in (int, float) else None
    operand = lambda e: _value(e, known, params, specs, cotangent, resolve)  # noqa: E731
    if isinstance(expr, gast.Attribute) and expr.attr == "T":
        a = operand(expr.value)
        return _Array(a.shape[::-1], a.dtype, False) if isinstance(a, _Array) else None
    if isinstance(expr, gast.UnaryOp) and isinstance(expr.op, gast.USub):
        return _applied(np.negative, [operand(expr.operand)])
    if isinstance(expr, gast.BinOp) and isinstance(expr.op, gast.MatMult):
        return _matmul(operand(expr.left), operand(expr.right))
    if isinstance(expr, gast.BinOp) and type(expr.op) in _ARITHMETIC:
        return _applied(_ARITHMETIC[type(expr.op)], [operand(expr.left), operand(expr.right)])
    if not isinstance(expr, gast.Call) or expr.keywords:
        return None
    if denotes(expr.func, runtime.cotangent_like):
        return _cotangent(expr.args, cotangent)
    ufunc = _ufunc(expr.func, resolve)
    if ufunc is not None and ufunc.nout == 1 and len(expr.args) == ufunc.nin:
        return _applied(ufunc, [operand(a) for a in expr.args])
    return None


def _cotangent(args, cotangent):
    """``cotangent_like(v, shape, 'float64')``: a float64 array of that shape."""
    if not (len(args) == 3 and isinstance(args[0], gast.Name) and args[0].id == cotangent
            and isinstance(args[1], gast.Tuple) and args[1].elts
            and all(isinstance(n, gast.Constant) and type(n.value) is int for n in args[1].elts)
            and isinstance(args[2], gast.Constant) and isinstance(args[2].value, str)):
        return None
    dtype = np.dtype(args[2].value)
    return _Array([n.value for n in args[1].elts], dtype, False) if dtype == np.float64 else None


def _ufunc(func, resolve):
    """The NumPy ufunc ``np.name`` denotes, or None."""
    if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)):
        return None
    if resolve(func.value.id) is not np:
        return None
    ufunc = getattr(np, func.attr, None)
    return ufunc if isinstance(ufunc, np.ufunc) else None


def _applied(ufunc, operands):
    """An elementwise operation's result: broadcast shape, the dtype NumPy gives; an array
    only if some operand is one (numbers give a number, not known here)."""
    if any(o is None for o in operands) or not any(isinstance(o, _Array) for o in operands):
        return None
    try:
        shape = np.broadcast_shapes(*[o.shape for o in operands if isinstance(o, _Array)])
        with np.errstate(all="ignore"):
            dtype = ufunc(*[np.ones(1, o.dtype) if isinstance(o, _Array) else o for o in operands]).dtype
    except (ValueError, TypeError):
        return None
    return _Array(shape, dtype, True) if shape else None


def _matmul(a, b):
    """``a @ b`` of vectors and matrices: a new array, or None (a number, or not known)."""
    if not (isinstance(a, _Array) and isinstance(b, _Array) and a.shape and b.shape
            and len(a.shape) <= 2 and len(b.shape) <= 2):
        return None
    inner_a, inner_b = a.shape[-1], b.shape[0]
    if inner_a != inner_b:
        return None
    shape = a.shape[:-1] + b.shape[1:]
    dtype = np.result_type(a.dtype, b.dtype)
    return _Array(shape, dtype, True) if shape else None
