"""Rules for the core of NumPy: elementwise functions and reductions (products and shapes are in
``numpy_products.py`` and ``numpy_shapes.py``, ``numpy_indexing.py``, ``numpy_joining.py``). The ``register_elementwise`` rules here are
both directions; the jvp rules of the others are in ``numpy_elementwise.py`` and
``numpy_reductions.py``."""
import math

import numpy as np

from ..registry import register_elementwise, register_jvp, register_vjp
from ..runtime import extremum_grad, full_of, prod_grad, size_of, sum_to_reduced, unbroadcast
from .numpy_reductions import extremum_shares, initial_share, mask_shares, masked_prod_grad


@register_elementwise(np.sin, math.sin)
def sin(y, x):
    return np.cos(x)


@register_elementwise(np.cos, math.cos)
def cos(y, x):
    return -np.sin(x)


@register_elementwise(np.tan, math.tan)
def tan(y, x):
    return 1 + y**2


@register_elementwise(np.exp, math.exp)
def exp(y, x):
    return y


@register_elementwise(np.log)
def log(y, x):
    return 1 / x


@register_vjp(math.log)
def math_log(y, x, base=math.e):
    d[x] += d[y] / (x * np.log(base))
    d[base] += -d[y] * y / (base * np.log(base))


@register_elementwise(np.sqrt, math.sqrt, infinite_slopes=True)
def sqrt(y, x):
    return 1 / (2 * y)


@register_elementwise(np.tanh, math.tanh)
def tanh(y, x):
    return 1 - y**2


@register_vjp(np.abs, np.absolute, math.fabs)
def absolute(y, x):
    if np.iscomplexobj(x):  # ∂|x|/∂Re + i ∂|x|/∂Im (the cotangent convention of numpy_fft.py)
        d[x] += d[y] * unit_phase(x)
    else:
        d[x] += d[y] * np.sign(x)


@register_jvp(np.abs, np.absolute, math.fabs)
def absolute_jvp(y, x):
    t[y] += np.real(np.conjugate(unit_phase(x)) * t[x]) if np.iscomplexobj(x) else t[x] * np.sign(x)


def unit_phase(x):
    """``x / |x|`` for complex ``x`` (0 at 0): unlike ``np.sign``, which srcad treats as piecewise
    constant, it differentiates as the smooth function it is."""
    size = np.abs(x)
    return x / np.where(size == 0, 1.0, size)


# Second order through np.abs of a complex value: u = x/|x| turns with the phase of x only,
# u̇ = i u Im(conj(u) ẋ) / |x| (0 at 0); the adjoint in the convention ∂L/∂Re + i ∂L/∂Im is
# x̄ = -i u Im(conj(ū) u) / |x|.
@register_vjp(unit_phase)
def unit_phase_vjp(u, x):
    d[x] += phase_turn(-1j * u, np.imag(np.conjugate(d[u]) * u), x)


@register_jvp(unit_phase)
def unit_phase_jvp(u, x):
    t[u] += phase_turn(1j * u, np.imag(np.conjugate(u) * t[x]), x)


def phase_turn(direction, angle, x):
    """``direction · angle / |x|``, 0 where ``x`` is 0."""
    size = np.abs(x)
    return direction * angle / np.where(size == 0, 1.0, size)


@register_vjp(math.pow)
def math_pow(z, x, y):
    d[x] += d[z] * y * x ** (y - 1)
    d[y] += d[z] * z * np.log(np.where(x == 0, 1.0, x))


@register_vjp(np.maximum)
def maximum(z, x, y):
    """Ties split the cotangent equally between the two operands."""
    d[x] += unbroadcast(d[z] * ((x > y) + 0.5 * (x == y)), x)
    d[y] += unbroadcast(d[z] * ((y > x) + 0.5 * (x == y)), y)


@register_vjp(np.minimum)
def minimum(z, x, y):
    """Ties split the cotangent equally between the two operands."""
    d[x] += unbroadcast(d[z] * ((x < y) + 0.5 * (x == y)), x)
    d[y] += unbroadcast(d[z] * ((y < x) + 0.5 * (x == y)), y)


@register_vjp(np.where, zero="condition")  # piecewise constant in the condition
def where(y, condition, x, z):
    d[x] += unbroadcast(np.where(condition, d[y], 0), x)
    d[z] += unbroadcast(np.where(condition, 0, d[y]), z)


@register_vjp(np.sum, zero="where")  # piecewise constant in the mask
def sum_(y, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    if initial is not None or where is not True:  # initial + the sum of the entries in the mask
        d[a] += np.where(where, sum_to_reduced(d[y], a, axis, keepdims), 0)
        d[initial] += unbroadcast(d[y], initial)
    elif axis is None and not keepdims:
        # small: filling is cheapest; large (or a Dask/CuPy array): a view costs nothing and stays lazy
        if isinstance(a, np.ndarray) and np.size(a) <= 4096:
            d[a] += full_of(np.shape(a), d[y])
        else:
            d[a] += np.broadcast_to(d[y], np.shape(a))
    else:
        d[a] += sum_to_reduced(d[y], a, axis, keepdims)


@register_vjp(np.mean, zero="where")
def mean(y, a, axis=None, dtype=None, out=None, keepdims=False, where=True):
    if where is not True:  # the mean of the entries in the mask
        d[a] += sum_to_reduced(d[y], a, axis, keepdims) * mask_shares(a, where, axis)
    elif axis is None and not keepdims:
        if isinstance(a, np.ndarray) and np.size(a) <= 4096:
            d[a] += full_of(np.shape(a), d[y] / np.size(a))
        elif isinstance(a, np.ndarray):  # np.size of a known shape is a literal: a need not be kept
            d[a] += np.broadcast_to(d[y] / np.size(a), np.shape(a))
        else:
            d[a] += np.broadcast_to(d[y] / size_of(a), np.shape(a))
    else:
        d[a] += sum_to_reduced(d[y], a, axis, keepdims) * (size_of(y) / size_of(a))


@register_vjp(np.max, np.amax, np.min, np.amin, np.nanmax, np.nanmin, zero="where")
def extremum(y, a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """Ties share the cotangent equally (NaNs, which ``nanmax`` skips, equal nothing); ``initial``
    is one more entry (where it wins, ``a`` gets nothing), entries outside ``where`` none."""
    if initial is not None or where is not True:
        d[a] += sum_to_reduced(d[y], a, axis, keepdims) * extremum_shares(a, y, axis, keepdims, initial, where)
        d[initial] += unbroadcast(d[y] * initial_share(a, y, axis, keepdims, initial, where), initial)
    else:
        d[a] += extremum_grad(d[y], a, y, axis, keepdims)


@register_vjp(np.prod, zero="where")
def prod(y, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    if initial is not None or where is not True:  # initial times the product of the entries in the mask
        d[a] += masked_prod_grad(d[y], a, axis, keepdims, initial, where)
        d[initial] += unbroadcast(d[y] * np.prod(a, axis=axis, keepdims=keepdims, where=where), initial)
    else:
        d[a] += prod_grad(d[y], a, axis, keepdims)
