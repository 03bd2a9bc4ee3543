"""njit versions of the helpers generated code calls (``srcad.runtime``), for the numba backend.

Each helper of ``srcad.runtime`` that scalar and array code needs gets a numba
``overload``: numba picks an implementation from the argument *types* when it compiles,
where the Python helper decides from the values at run time. An overload covers numbers
and arrays of floats; for anything else (lists, dicts, complex values) it offers no
implementation, so numba refuses to type the call and the backend falls back or says why:
never a different meaning. Importing this module registers the overloads (numba must be
installed).
"""
import collections

import numpy as np
from numba import njit, types
from numba.extending import overload

from .. import runtime
from ..extend import stop_gradient
from ..errors import CotangentError
from ..rules import builtin_rules, numpy_linalg, numpy_shapes
from . import numba_containers, numba_derivatives, numba_python  # noqa: F401  (their overloads register on import)
from .numba_copies import none_type, number_type
from .numba_items import real_numbers


def _float_array(t):
    return isinstance(t, types.Array) and isinstance(t.dtype, types.Float)


def same_value(a, b):
    """What ``a is b`` means between a ``min``/``max`` result and an argument: the same number
    (NaN included, which ``min`` returns as it got it). Numbers only: identity of anything
    else has no numba meaning, so numba refuses to type it."""
    return a == b or (a != a and b != b)


@overload(same_value)
def _same_value(a, b):
    if number_type(a) and number_type(b):
        return lambda a, b: a == b or (a != a and b != b)
    return None


@njit
def previous_value(stack, current):
    """Restore of a value stack that is pushed after each assignment: drop this assignment's
    value and return the one before it (``current`` if there is none: never read then)."""
    stack.pop()
    return stack[-1] if len(stack) else current


@njit
def set_current_value(stack, value):
    """An assignment the Python code does not save, to a name whose stack is pushed after each
    saved assignment: its top is the name's current value (the value the next save pushes)."""
    if len(stack):
        stack[-1] = value
    else:  # assigned before its first save: the value that save pushes in Python
        stack.append(value)


@njit
def _sum_to(g, xshape):
    """``g`` summed down to ``xshape`` as NumPy broadcasting would have spread it."""
    out = np.zeros(xshape, np.float64)
    flat_out = out.reshape(-1)
    flat_g = np.ascontiguousarray(g).reshape(-1)
    n, k = g.ndim, len(xshape)
    for f in range(flat_g.size):
        rest, offset, stride = f, 0, 1
        for axis in range(n - 1, -1, -1):
            i = rest % g.shape[axis]
            rest //= g.shape[axis]
            x_axis = axis - (n - k)
            if x_axis >= 0:
                size = xshape[x_axis]
                if size != 1:
                    if size != g.shape[axis]:
                        raise ValueError("an adjoint that does not broadcast to its value's shape")
                    offset += i * stride
                stride *= size
        flat_out[offset] += flat_g[f]
    return out


@overload(runtime.unbroadcast)
def _unbroadcast(g, x):
    if number_type(g):
        return lambda g, x: g
    if _float_array(g) and number_type(x):
        return lambda g, x: np.sum(g)
    if _float_array(g) and isinstance(x, types.Array) and g.ndim >= x.ndim:
        def impl(g, x):
            if g.shape == x.shape:
                return np.asarray(g)
            return _sum_to(g, x.shape).astype(g.dtype)
        return impl
    return None


@overload(runtime.zeros_like)
def _zeros_like(x):
    if isinstance(x, types.Array):
        dtype = x.dtype if isinstance(x.dtype, types.Float) else types.float64
        return lambda x: np.zeros(x.shape, dtype)
    if number_type(x):
        return lambda x: 0.0
    if real_numbers(x):  # a float vector's items (a loop over them)
        return lambda x: [0.0 for _ in range(len(x))]
    return None


@overload(np.ndim)
def _ndim(x):  # numba has no np.ndim: it is decided by the type
    if isinstance(x, types.Array):
        ndim = x.ndim
        return lambda x: ndim
    if number_type(x):
        return lambda x: 0
    return None


@overload(np.vdot)
def _vdot(a, b):  # numba's own takes 1-d arrays; rules write Σ d[y]·x of equal-shaped arrays as np.vdot
    if _float_array(a) and _float_array(b) and a.ndim == b.ndim and a.ndim > 1:
        def impl(a, b):
            if a.shape != b.shape:
                raise ValueError("vdot: arrays of different shapes")
            return np.sum(a * b)
        return impl
    return None


def dims_of(x):
    """The shape of ``x``, a tuple as long as its number of dimensions (``()`` for a number):
    numba knows ``len`` of it from the type, which decides an outlined branch's test."""
    return np.shape(x)


@overload(dims_of)
def _dims_of(x):
    if isinstance(x, types.Array):
        return lambda x: x.shape
    if number_type(x):
        return lambda x: ()
    return None


def is_ndarray(x):
    """``isinstance(x, np.ndarray)`` as numba decides it: from ``x``'s type."""
    return isinstance(x, np.ndarray)


@overload(is_ndarray)
def _is_ndarray(x):
    if isinstance(x, types.Array):
        return lambda x: True
    return lambda x: False


def array_flag(x):
    """``(True,)`` for an array, ``()`` for anything else: numba knows ``len`` of it from the
    type, which decides an outlined branch's ``is_ndarray`` test (``numba_static``)."""
    return (True,) if isinstance(x, np.ndarray) else ()


@overload(array_flag)
def _array_flag(x):
    if isinstance(x, types.Array):
        return lambda x: (True,)
    return lambda x: ()


def is_integer(x):
    """``isinstance(x, int)`` as numba decides it: from ``x``'s type (a bool is an int, as in Python)."""
    return isinstance(x, int)


@overload(is_integer)
def _is_integer(x):
    if isinstance(x, (types.Integer, types.Boolean)):
        return lambda x: True
    return lambda x: False


@overload(runtime.full_of)
def _full_of(shape, value):
    if number_type(value):  # no foreign array inside compiled code: NumPy's own full
        return lambda shape, value: np.full(shape, value)
    return None


@overload(runtime.read_again)
def _read_again(items, message):
    return lambda items, message: None  # numba is given lists and arrays, never a one-pass iterator


@overload(runtime.real_constant)
def _real_constant(value, message):
    if number_type(value) and not isinstance(value, types.Complex) or isinstance(value, types.Array) and not isinstance(
            value.dtype, types.Complex):
        return lambda value, message: None  # real by its type: nothing to check
    return None  # complex, or a container: numba refuses to type it, and "auto" runs NumPy code


@overload(runtime.numeric_constant)
def _numeric_constant(value, subject, complex_message=None):
    if number_type(value) or isinstance(value, types.Array) and not isinstance(value.dtype, types.Complex):
        return lambda value, subject, complex_message=None: None  # a real number or array by its type
    return None  # complex, or a container: as for real_constant


@overload(runtime.cleared_slot)
def _cleared_slot(value):
    if number_type(value) or isinstance(value, types.Array):
        return lambda value: 0.0
    return None


@overload(stop_gradient)
def _stop_gradient(x):
    return lambda x: x


@overload(runtime.grad_buffer)
def _grad_buffer(g):
    if isinstance(g, types.Array):
        return lambda g: g
    if isinstance(g, types.Float):
        # Python makes a fresh 0-d array, only ever added to (an owned buffer no other name sees),
        # which adds as the float does; what a float cannot do (``g[()] = ...``) numba refuses to
        # type, and an ndarray test of it is refused by the lowering (``numba_lowering``)
        return lambda g: g
    return None  # a 0-d buffer for an integer adjoint, or a container: numba refuses to type it


@overload(runtime.container_grad)
def _container_grad(g, x):
    if (number_type(g) or isinstance(g, types.Array)) and (number_type(x) or isinstance(x, types.Array)):
        return lambda g, x: g
    if isinstance(g, types.Array) and isinstance(x, types.List) and number_type(x.dtype):
        def impl(g, x):  # the adjoint of a list of numbers an array was made from: its items
            if len(g) != len(x):
                raise ValueError("an adjoint whose length is not its list's")
            return [g[i] for i in range(len(x))]
        return impl
    if isinstance(g, types.Array) and g.ndim == 1 and _number_items(x) and isinstance(x, types.BaseTuple):
        def impl(g, x):  # a tuple's adjoint is only read by item (numba_allocations): the array's items are its items
            if len(g) != len(x):
                raise ValueError("an adjoint whose length is not its tuple's")
            return g
        return impl
    return None


@overload(runtime.in_place_result)
def _in_place_result(new, old):
    if isinstance(old, types.Array) and isinstance(new, types.Array) and new.dtype == old.dtype \
            and new.ndim == old.ndim:
        def impl(new, old):
            if new.shape != old.shape:
                raise ValueError("non-broadcastable output operand (an augmented assignment updates the array "
                                 "in place)")
            return new
        return impl
    if number_type(old) and number_type(new):
        return lambda new, old: new
    return None  # a cast or another kind of value: NumPy code decides


@overload(runtime.in_place_cast)
def _in_place_cast(g, y):
    if number_type(y) and number_type(g):  # a number updated: rebound, as it is
        return lambda g, y: g
    if isinstance(y, types.Array) and isinstance(g, types.Array) and g.dtype == y.dtype:
        return lambda g, y: g
    return None  # a cast or another kind of value: NumPy code decides


@overload(runtime.into_dtype_of)
def _into_dtype_of(g, target):
    if isinstance(target, types.Array) and (number_type(g) or isinstance(g, types.Array)):
        if isinstance(target.dtype, types.Float):
            return lambda g, target: g
        if number_type(g):  # integers or booleans: the store truncated the value
            return lambda g, target: 0.0
        return lambda g, target: np.zeros(g.shape, np.float64)
    return None


@overload(runtime.add_grads)
def _add_grads(a, b):
    if none_type(a):
        return lambda a, b: b
    if none_type(b):
        return lambda a, b: a
    if (number_type(a) or isinstance(a, types.Array)) and (number_type(b) or isinstance(b, types.Array)):
        return lambda a, b: a + b
    return None


@overload(runtime.finish)
def _finish(g, x, shared=False):
    if _float_array(x):
        dtype = x.dtype
        if none_type(g):
            return lambda g, x, shared=False: np.zeros(x.shape, dtype)
        if number_type(g):
            return lambda g, x, shared=False: np.full(x.shape, g, dtype)
        if _float_array(g) and g.ndim >= x.ndim:
            def impl(g, x, shared=False):
                if g.shape == x.shape:
                    return np.ascontiguousarray(g).astype(dtype)  # a copy: never the cotangent itself
                return _sum_to(g, x.shape).astype(dtype)
            return impl
        return None
    if isinstance(x, (types.Float, types.Integer)):
        if none_type(g):
            return lambda g, x, shared=False: 0.0
        if number_type(g):
            return lambda g, x, shared=False: float(g)
        if _float_array(g):
            return lambda g, x, shared=False: float(np.sum(g))
    return None


def finish_owned(g, x):
    """``finish(g, x)`` of a gradient ``g`` the generated function made itself (numba lowering,
    ``numba_allocations``): nobody else holds it, so it is handed out without a copy."""
    return runtime.finish(g, x)


@overload(finish_owned)
def _finish_owned(g, x):
    if _float_array(x) and _float_array(g) and g.dtype == x.dtype and g.ndim == x.ndim:
        def impl(g, x):
            if g.shape == x.shape:
                return g
            return runtime.finish(g, x)
        return impl
    return lambda g, x: runtime.finish(g, x)


@overload(runtime.cotangent)
def _cotangent(v, y):
    if none_type(v):
        if isinstance(y, types.Float):
            return lambda v, y: 1.0
        if _float_array(y):
            def impl(v, y):
                if y.size != 1:
                    raise CotangentError("the output is not a scalar, so a gradient can only be implicitly taken "
                                         "for a scalar output; pass the cotangent v (vector-Jacobian product)")
                return np.ones(y.shape, y.dtype)
            return impl
        return None
    if number_type(v) and isinstance(y, types.Float):
        return lambda v, y: float(v)
    if _float_array(v) and _float_array(y) and v.ndim == y.ndim:
        def impl(v, y):
            if v.shape != y.shape:
                raise CotangentError("the cotangent v does not have the output's shape; pass v with the "
                                     "output's shape")
            return v
        return impl
    return None


@overload(runtime.cotangent_like)
def _cotangent_like(v, shape, dtype):
    if not (isinstance(dtype, types.StringLiteral) and dtype.literal_value == "float64"):
        return None
    if none_type(v):
        def impl(v, shape, dtype):
            size = 1
            for n in shape:
                size *= n
            if size != 1:
                raise CotangentError("the output is not a scalar, so a gradient can only be implicitly taken "
                                     "for a scalar output; pass the cotangent v (vector-Jacobian product)")
            return np.ones(shape, np.float64)
        if len(shape) == 0:
            return lambda v, shape, dtype: 1.0
        return impl
    if number_type(v) and len(shape) == 0:
        return lambda v, shape, dtype: float(v)
    if _float_array(v) and v.ndim == len(shape):
        def impl(v, shape, dtype):
            if v.shape != shape:
                raise CotangentError("the cotangent v does not have the output's shape; pass v with the "
                                     "output's shape")
            return v
        return impl
    return None


@overload(numpy_shapes.array_grad)
def _array_grad(g, obj, y):
    if _float_array(g) and _number_items(obj) and g.ndim == 1:
        return lambda g, obj, y: g
    return None


def _number_items(t):
    """Is ``t`` a list or tuple of numbers?"""
    if isinstance(t, types.List):
        return number_type(t.dtype)
    return isinstance(t, types.BaseTuple) and all(number_type(item) for item in t)


def _matmul_operands(g, x, y):
    """Float matrices and vectors (no stacks, which numba's ``@`` does not take)."""
    return (_float_array(x) and _float_array(y) and x.ndim <= 2 and y.ndim <= 2
            and (_float_array(g) or isinstance(g, types.Float)))


@overload(runtime.matmul_dx)
def _matmul_dx(g, x, y):
    if not _matmul_operands(g, x, y):
        return None
    if x.ndim == 2 and y.ndim == 2:
        return lambda g, x, y: g @ y.T
    if x.ndim == 2:  # a matrix times a vector
        return lambda g, x, y: np.outer(g, y)
    if y.ndim == 2:  # a vector times a matrix
        return lambda g, x, y: y @ g
    return lambda g, x, y: g * y


@overload(runtime.matmul_dy)
def _matmul_dy(g, x, y):
    if not _matmul_operands(g, x, y):
        return None
    if x.ndim == 2 and y.ndim == 2:
        return lambda g, x, y: x.T @ g
    if x.ndim == 2:
        return lambda g, x, y: x.T @ g
    if y.ndim == 2:
        return lambda g, x, y: np.outer(x, g)
    return lambda g, x, y: g * x


@overload(numpy_linalg.mT)
def _matrix_transpose(x):
    if isinstance(x, types.Array) and x.ndim == 2:
        return lambda x: x.T
    return None  # a stack of matrices: numba has no swapaxes


@overload(builtin_rules.pick_grad)
def _pick_grad(g, items, chosen):
    if number_type(g) and _float_array(items) and items.ndim == 1:
        def impl(g, items, chosen):
            out = np.zeros(items.shape, np.float64)
            out[np.argmax(items == chosen)] = g
            return out
        return impl
    return None


SavedRange = collections.namedtuple("SavedRange", "start stop step")  # a range among saved values


def saved_value(x):
    """``x`` as saved values cross into Python: a range as a ``SavedRange``."""
    return SavedRange(x.start, x.stop, x.step) if isinstance(x, range) else x


def restored_value(x):
    """The inverse of ``saved_value``."""
    return range(x.start, x.stop, x.step) if isinstance(x, SavedRange) else x


@overload(saved_value)
def _saved_value(x):
    if isinstance(x, types.RangeType):
        return lambda x: SavedRange(x.start, x.stop, x.step)
    return lambda x: x


@overload(restored_value)
def _restored_value(x):
    if isinstance(x, types.NamedUniTuple) and x.instance_class is SavedRange:
        return lambda x: range(x.start, x.stop, x.step)
    return lambda x: x
