"""njit versions of the derivative helpers rules call for reductions and products (``srcad.runtime``'s
``sum_to_reduced``, ``extremum_grad``, the rules' ``dot_grad``, ``norm_axes``, ``norm_slope``,
``variance_slope``, ``cumsum_grad``, ``logistic_weight``; ``max``/``min``'s ``chosen_index``; ``det``'s ``cofactors``), for the numba backend (``numba_runtime``
imports this module, registering the overloads).

Each covers the float vectors and matrices numba's own NumPy functions reduce (axis None, or the
one integer axis of ``np.sum``), and computes what the Python helper computes, element by element (ties share
equally); for anything else (more dimensions, several axes, another ``ord``) it offers no
implementation, so numba refuses to type the call: never a different meaning.
"""
import numpy as np
from numba import literal_unroll, njit, types
from numba.extending import overload

from .. import runtime
from ..rules import builtin_rules, numpy_exponential, numpy_linalg, numpy_products, numpy_reductions
from .numba_copies import none_type, number_type


def _vector_or_matrix(t):
    return isinstance(t, types.Array) and isinstance(t.dtype, types.Float) and t.ndim in (1, 2)


def _one_axis(t):
    """An axis numba's reductions take: None, or one integer (a tuple of one, as ``norm_axes`` gives)."""
    return (none_type(t) or isinstance(t, types.Integer)
            or isinstance(t, types.UniTuple) and t.count == 1 and isinstance(t.dtype, types.Integer))


def _axes(t):
    """None, an integer, or a tuple of integers (``norm_axes`` of a matrix: every axis)."""
    return (none_type(t) or isinstance(t, types.Integer)
            or isinstance(t, types.UniTuple) and isinstance(t.dtype, types.Integer))


def _axis_of(axis):
    """The integer of an ``axis`` that ``_one_axis`` accepts and is not None."""
    return axis if isinstance(axis, int) else axis[0]


@overload(_axis_of)
def _axis_of_impl(axis):
    if isinstance(axis, types.Integer):
        return lambda axis: axis
    return lambda axis: axis[0]


@njit
def _spread(g, shape):
    """``g`` broadcast to ``shape``, in new memory (NumPy's ``broadcast_to`` gives a view; both are only read)."""
    return g + np.zeros(shape, g.dtype)


@njit
def _spread_along(g, shape, axis):
    """The reduction of a matrix over ``axis`` (its result ``g``, a vector) spread back to ``shape``."""
    a = axis % 2
    if g.shape[0] != shape[1 - a]:
        raise ValueError("an adjoint that does not broadcast to its value's shape")
    kept = (1, g.shape[0]) if a == 0 else (g.shape[0], 1)
    return _spread(np.ascontiguousarray(g).reshape(kept), shape)


@overload(runtime.sum_to_reduced)
def _sum_to_reduced(g, x, axis, keepdims):
    if not (_vector_or_matrix(x) and _axes(axis)):
        return None
    if number_type(g):  # one value for every element (a scalar seed, or axis=None)
        return lambda g, x, axis, keepdims: np.full(x.shape, g)
    if not (isinstance(g, types.Array) and isinstance(g.dtype, types.Float) and g.ndim > 0 and _one_axis(axis)):
        return None
    if none_type(axis) or g.ndim == x.ndim:
        def impl(g, x, axis, keepdims):
            if axis is not None and not keepdims:
                raise ValueError("an adjoint with as many dimensions as the array its reduction reduced")
            return _spread(g, x.shape)
        return impl
    if g.ndim == 1 and x.ndim == 2:
        def impl(g, x, axis, keepdims):
            if keepdims:
                return _spread(g, x.shape)
            return _spread_along(g, x.shape, _axis_of(axis))
        return impl
    return None


@overload(runtime.extremum_grad)
def _extremum_grad(g, x, y, axis=None, keepdims=False):
    if _vector_or_matrix(x) and none_type(axis) and number_type(y) and number_type(g):  # numba's max takes no axis
        def impl(g, x, y, axis=None, keepdims=False):
            mask = x == y
            return np.full(x.shape, g) * mask / np.sum(mask)  # ties share g (NaN, equal to nothing: NaN everywhere)
        return impl
    return None


@overload(numpy_products.dot_grad)
def _dot_grad(g, a, b, which):
    if _vector_or_matrix(a) and _vector_or_matrix(b) and (number_type(g) or isinstance(g, types.Array)):
        def impl(g, a, b, which):
            if which == 0:
                return runtime.matmul_dx(g, a, b)
            return runtime.matmul_dy(g, a, b)
        return impl
    return None  # N-D or 0-d operands: the rules' einsum


@overload(numpy_reductions.norm_axes)
def _norm_axes(x, ord, axis):
    if _vector_or_matrix(x) and none_type(axis):  # numba's norm takes no axis
        every = tuple(range(x.ndim))
        return lambda x, ord, axis: every
    return None


@overload(numpy_reductions.norm_slope)
def _norm_slope(x, y, ord, axis, keepdims):
    if not (_vector_or_matrix(x) and none_type(axis) and number_type(y)):
        return None
    if none_type(ord) or x.ndim == 1 and isinstance(ord, types.IntegerLiteral) and ord.literal_value == 2:
        return lambda x, y, ord, axis, keepdims: x / y  # the 2-norm of a vector, Frobenius of a matrix
    if x.ndim == 1 and isinstance(ord, types.IntegerLiteral) and ord.literal_value == 1:
        return lambda x, y, ord, axis, keepdims: np.sign(x)
    return None


@overload(numpy_reductions.variance_slope)
def _variance_slope(a, axis, ddof, correction):
    if _vector_or_matrix(a) and none_type(axis) and isinstance(ddof, types.Integer) and none_type(correction):
        return lambda a, axis, ddof, correction: 2 * (a - np.mean(a)) / (a.size - ddof)
    return None  # numba's var and std take no axis


@overload(numpy_reductions.cumsum_grad)
def _cumsum_grad(g, a, axis):
    if not (isinstance(g, types.Array) and isinstance(g.dtype, types.Float) and g.ndim == 1
            and isinstance(a, types.Array) and (a.ndim == 1 or none_type(axis))):
        return None
    return lambda g, a, axis: np.ascontiguousarray(np.cumsum(g[::-1])[::-1]).reshape(a.shape)


@overload(numpy_exponential.logistic_weight)
def _logistic_weight(a, b):
    if (number_type(a) or _vector_or_matrix(a)) and (number_type(b) or _vector_or_matrix(b)):
        return lambda a, b: 1.0 / (1.0 + np.exp(b - a))  # e^(b - a) overflows to inf: the weight 0, its limit
    return None


@overload(builtin_rules.chosen_index)
def _chosen_index(items, chosen):
    """Numbers have no identity here: the first item equal to the result (nan to nan), which
    is the one ``max``/``min`` took (``builtin_rules.chosen_index``)."""
    if not (isinstance(items, types.BaseTuple) and all(number_type(t) for t in items) and number_type(chosen)):
        return None

    def impl(items, chosen):
        i = 0
        for v in literal_unroll(items):
            if v == chosen or (v != v and chosen != chosen):
                return i
            i += 1
        raise ValueError("srcad cannot tell which item max or min chose")
    return impl


@overload(numpy_linalg.cofactors)
def _cofactors(a, det):
    """``det · A⁻ᵀ`` of one float matrix, as the Python helper: from the SVD (``sign · U diag(Πⱼ≠ᵢ sⱼ)
    Vᵀ``, right everywhere) where ``A`` may be singular to working precision, else from the inverse.
    ``‖A‖₁ ‖A⁻¹‖₁``, within a factor ``n`` of the condition number, rules that out for most matrices
    at the cost of two norms; ``det`` exactly 0 (a zero pivot, where ``inv`` would raise) never inverts."""
    if not (isinstance(a, types.Array) and a.ndim == 2 and isinstance(a.dtype, types.Float) and number_type(det)):
        return None  # a stack, or integers: the Python helper's, which numba refuses to type
    eps = float(np.finfo(np.float32 if a.dtype == types.float32 else np.float64).eps)

    def impl(a, det):
        n = a.shape[0]
        if n == 0:
            return np.zeros_like(a)
        if det != 0.0 and np.isfinite(det):
            inverse = np.linalg.inv(a)
            if np.max(np.sum(np.abs(a), axis=0)) * np.max(np.sum(np.abs(inverse), axis=0)) < 1.0 / (n * n * eps):
                return det * inverse.T
        u, s, vt = np.linalg.svd(a)
        others = np.ones(n, a.dtype)
        for i in range(n):
            for j in range(n):
                if j != i:
                    others[i] *= s[j]
        return np.sign(np.linalg.det(u) * np.linalg.det(vt)) * ((u * others) @ vt)
    return impl
