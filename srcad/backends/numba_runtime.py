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
from ..arguments import snapshot
from ..extend import stop_gradient
from ..errors import CotangentError, IntegerOverflowError
from ..rules import builtin_rules, numpy_linalg, numpy_shapes


def _number(t):
    return isinstance(t, (types.Float, types.Integer, types.Boolean))


def _float_array(t):
    return isinstance(t, types.Array) and isinstance(t.dtype, types.Float)


def _none(t):
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


def same_value(a, b):
    """What ``a is b`` means between a ``min``/``max`` result and an argument: the same number
    (NaN included, which ``min`` returns as it got it). Numbers only: identity of anything
    else has no numba meaning, so numba refuses to type it."""
    return a == b or (a != a and b != b)


@overload(same_value)
def _same_value(a, b):
    if _number(a) and _number(b):
        return lambda a, b: a == b or (a != a and b != b)
    return None


@njit
def previous_value(stack, current):
    """Restore of a value stack that is pushed after each assignment: drop this assignment's
    value and return the one before it (``current`` if there is none: never read then)."""
    stack.pop()
    return stack[-1] if len(stack) else current


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
    if _number(g):
        return lambda g, x: g
    if _float_array(g) and _number(x):
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
    if _number(x):
        return lambda x: 0.0
    return None


@overload(np.ndim)
def _ndim(x):  # numba has no np.ndim: it is decided by the type
    if isinstance(x, types.Array):
        ndim = x.ndim
        return lambda x: ndim
    if _number(x):
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
    if _number(x):
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
    if _number(value):  # no foreign array inside compiled code: NumPy's own full
        return lambda shape, value: np.full(shape, value)
    return None


@overload(runtime.read_again)
def _read_again(items, message):
    return lambda items, message: None  # numba is given lists and arrays, never a one-pass iterator


@overload(runtime.real_constant)
def _real_constant(value, message):
    if _number(value) and not isinstance(value, types.Complex) or isinstance(value, types.Array) and not isinstance(
            value.dtype, types.Complex):
        return lambda value, message: None  # real by its type: nothing to check
    return None  # complex, or a container: numba refuses to type it, and "auto" runs NumPy code


@overload(runtime.numeric_constant)
def _numeric_constant(value, subject, complex_message=None):
    if _number(value) or isinstance(value, types.Array) and not isinstance(value.dtype, types.Complex):
        return lambda value, subject, complex_message=None: None  # a real number or array by its type
    return None  # complex, or a container: as for real_constant


@overload(runtime.cleared_slot)
def _cleared_slot(value):
    if _number(value) or isinstance(value, types.Array):
        return lambda value: 0.0
    return None


@overload(runtime.copy_grad)
def _copy_grad(g):
    if isinstance(g, types.Array):
        return lambda g: g.copy()
    if _number(g):
        return lambda g: g
    return None


@overload(runtime.copy_value)
def _copy_value(v):
    if isinstance(v, types.Array):
        return lambda v: v.copy()
    if isinstance(v, (types.List, types.ListType)):
        return lambda v: v.copy()  # a value stack handed to a backward sweep: shallow, as in Python
    if _number(v) or isinstance(v, (types.BaseTuple, types.RangeType)):
        return lambda v: v  # immutable
    return None


def _immutable(t):
    """Is a value of numba type ``t`` immutable (numbers, None, strings, ranges, tuples of them)?"""
    if isinstance(t, types.Optional):
        return _immutable(t.type)
    if isinstance(t, types.BaseTuple):
        return all(_immutable(item) for item in t.types)
    return _number(t) or _none(t) or isinstance(t, (types.UnicodeType, types.RangeType))


@overload(snapshot)
def _snapshot(x):
    """A saved copy of a value that may hold the user's memory (``pullback_values``): its
    arrays copied, inside the tuples and lists holding them too (a value stack, a helper's
    saved values); numbers and None as they are. numba's globals are numbers (arrays, lists
    and dicts it would freeze are refused), but a default argument may be an array."""
    if isinstance(x, types.Array):
        return lambda x: x.copy()
    if _immutable(x):
        return lambda x: x
    if isinstance(x, types.Optional) and isinstance(x.type, types.Array):
        def optional_array(x):
            if x is None:
                return None
            return x.copy()

        return optional_array
    if isinstance(x, types.BaseTuple):
        return _snapshot_items(len(x))
    if isinstance(x, (types.List, types.ListType)):
        item = x.dtype if isinstance(x, types.List) else x.item_type
        if _immutable(item):
            return lambda x: x.copy()
        if isinstance(item, types.Array):
            def array_list(x):
                out = x.copy()
                for k in range(len(out)):
                    out[k] = out[k].copy()
                return out

            return array_list
    return None


def _snapshot_items(n):
    """``snapshot`` of an ``n``-tuple, item by item (its items may differ in type, so they are
    read with constant indices: the function is written out for ``n``)."""
    scope = {"snapshot": snapshot}
    items = "".join(f"snapshot(x[{k}]), " for k in range(n))
    exec(f"def each_item(x):\n    return ({items})\n", scope)
    return scope["each_item"]


@overload(runtime.check_integer_range, prefer_literal=True)
def _check_integer_range(op, a, b, message):
    """Raise where ``a op b`` of 64-bit integers wraps (Python's integers grow)."""
    if not (isinstance(op, types.StringLiteral) and isinstance(message, types.StringLiteral)):
        return None
    if not (isinstance(a, types.Integer) and isinstance(b, types.Integer) and a.signed and b.signed):
        return lambda op, a, b, message: None  # floats, or NumPy's unsigned integers, which wrap in Python too
    wraps, text = _WRAPS[op.literal_value], message.literal_value

    def check(op, a, b, message):
        if wraps(np.int64(a), np.int64(b)):
            raise IntegerOverflowError(text)

    return check


# (tested with bounds, never by wrapping: LLVM may assume numba's signed arithmetic does not wrap)
_MAX, _MIN = np.int64(2 ** 63 - 1), np.int64(-2 ** 63)


@njit
def _sum_wraps(a, b):
    return b > 0 and a > _MAX - b or b < 0 and a < _MIN - b


@njit
def _difference_wraps(a, b):
    return b < 0 and a > _MAX + b or b > 0 and a < _MIN + b


@njit
def _product_wraps(a, b):
    if a == 0 or b == 0:
        return False
    if a > 0:
        return a > _MAX // b if b > 0 else b < (_MIN + a - 1) // a  # (a ceiling, as floors)
    if b > 0:
        return a < (_MIN + b - 1) // b
    return a == _MIN or b < -(_MAX // -a)


_WRAPS = {"+": _sum_wraps, "-": _difference_wraps, "*": _product_wraps}


def in_math_domain(x, kind):
    """``x``, where ``math``'s function ``kind`` (``numba_static.DOMAIN_CHECKED``) takes it;
    ValueError("math domain error") elsewhere, as Python's ``math`` raises (numba's gives nan)."""
    return x


@overload(in_math_domain, prefer_literal=True)
def _in_math_domain(x, kind):
    if not (_number(x) and isinstance(kind, types.StringLiteral)):
        return None
    outside = _OUTSIDE[kind.literal_value]

    def check(x, kind):
        if outside(x):
            raise ValueError("math domain error")
        return x

    return check


_OUTSIDE = {"sqrt": njit(lambda x: x < 0), "log": njit(lambda x: x <= 0), "log1p": njit(lambda x: x <= -1),
            "acos": njit(lambda x: x < -1 or x > 1), "acosh": njit(lambda x: x < 1),
            "atanh": njit(lambda x: x <= -1 or x >= 1)}


@overload(stop_gradient)
def _stop_gradient(x):
    return lambda x: x


@overload(runtime.grad_buffer)
def _grad_buffer(g):
    if isinstance(g, types.Array):
        return lambda g: g
    return None  # a 0-d buffer for a scalar adjoint: not in numba's subset


@overload(runtime.container_grad)
def _container_grad(g, x):
    if (_number(g) or isinstance(g, types.Array)) and (_number(x) or isinstance(x, types.Array)):
        return lambda g, x: g
    if isinstance(g, types.Array) and isinstance(x, types.List) and _number(x.dtype):
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
    if _number(old) and _number(new):
        return lambda new, old: new
    return None  # a cast or another kind of value: NumPy code decides


@overload(runtime.in_place_cast)
def _in_place_cast(g, y):
    if _number(y) and _number(g):  # a number updated: rebound, as it is
        return lambda g, y: g
    if isinstance(y, types.Array) and isinstance(g, types.Array) and g.dtype == y.dtype:
        return lambda g, y: g
    return None  # a cast or another kind of value: NumPy code decides


@overload(runtime.into_dtype_of)
def _into_dtype_of(g, target):
    if isinstance(target, types.Array) and (_number(g) or isinstance(g, types.Array)):
        if isinstance(target.dtype, types.Float):
            return lambda g, target: g
        if _number(g):  # integers or booleans: the store truncated the value
            return lambda g, target: 0.0
        return lambda g, target: np.zeros(g.shape, np.float64)
    return None


@overload(runtime.add_grads)
def _add_grads(a, b):
    if _none(a):
        return lambda a, b: b
    if _none(b):
        return lambda a, b: a
    if (_number(a) or isinstance(a, types.Array)) and (_number(b) or isinstance(b, types.Array)):
        return lambda a, b: a + b
    return None


@overload(runtime.as_real)
def _as_real(x):
    if isinstance(x, types.Boolean):
        return lambda x: x
    if isinstance(x, types.Integer):
        return lambda x: float(x)
    if isinstance(x, types.Float) or _float_array(x):
        return lambda x: x
    if isinstance(x, types.Array) and isinstance(x.dtype, (types.Integer, types.Boolean)):
        return lambda x: x.astype(np.float64)
    return None


@overload(runtime.finish)
def _finish(g, x, shared=False):
    if _float_array(x):
        dtype = x.dtype
        if _none(g):
            return lambda g, x, shared=False: np.zeros(x.shape, dtype)
        if _number(g):
            return lambda g, x, shared=False: np.full(x.shape, g, dtype)
        if _float_array(g) and g.ndim >= x.ndim:
            def impl(g, x, shared=False):
                if g.shape == x.shape:
                    return np.ascontiguousarray(g).astype(dtype)  # a copy: never the cotangent itself
                return _sum_to(g, x.shape).astype(dtype)
            return impl
        return None
    if isinstance(x, (types.Float, types.Integer)):
        if _none(g):
            return lambda g, x, shared=False: 0.0
        if _number(g):
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
    if _none(v):
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
    if _number(v) and isinstance(y, types.Float):
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
    if _none(v):
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
    if _number(v) and len(shape) == 0:
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
        return _number(t.dtype)
    return isinstance(t, types.BaseTuple) and all(_number(item) for item in t)


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
    if _number(g) and _float_array(items) and items.ndim == 1:
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
