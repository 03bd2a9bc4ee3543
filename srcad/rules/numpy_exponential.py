"""Exponentials, logarithms and powers (NumPy and ``math``): ``exp2``, ``expm1``, the
``log`` variants, ``float_power``, ``logaddexp``/``logaddexp2``, the modified Bessel
function ``i0`` (an average of exponentials) and ``math.erf``/``math.erfc`` (integrals of
``exp(-x²)``), with reverse and forward rules. Conventions as
in ``numpy_elementwise.py``."""
import math

import numpy as np

from ..registry import register_elementwise, register_jvp, register_vjp
from ..runtime import resting_zero, unbroadcast
from .numpy_elementwise import math_functions

LN2 = math.log(2.0)
LN10 = math.log(10.0)


@register_elementwise(np.exp2, *math_functions("exp2"))
def exp2(y, x):
    return y * LN2


@register_elementwise(np.expm1, math.expm1)
def expm1(y, x):
    return y + 1


@register_elementwise(np.log2, math.log2)
def log2(y, x):
    return 1 / (x * LN2)


@register_elementwise(np.log10, math.log10)
def log10(y, x):
    return 1 / (x * LN10)


@register_elementwise(np.log1p, math.log1p)
def log1p(y, x):
    return 1 / (1 + x)


@register_elementwise(math.erf)
def erf(y, x):
    return (2 / math.sqrt(math.pi)) * np.exp(-x * x)


@register_elementwise(math.erfc)
def erfc(y, x):
    return -(2 / math.sqrt(math.pi)) * np.exp(-x * x)


@register_elementwise(np.i0)
def i0(y, x):
    return bessel_i1(x)


def bessel_i1(x):
    """The modified Bessel function I₁ = I₀' (NumPy has only I₀).

    I₁(x) = (1/π) ∫₀^π exp(x cos θ) cos θ dθ. The integrand is smooth and periodic, so the
    midpoint rule converges geometrically (error ≈ exp(-2n²/|x|) for n points). Small |x|
    uses expm1 (∫ cos θ = 0) to keep relative accuracy; large |x| factors out exp(|x|)
    inside a logarithm so values near the overflow limit stay finite.
    """
    x = np.asarray(x)
    dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    size = np.abs(x.astype(np.float64))
    n = 32 + int(math.sqrt(25.0 * float(np.max(size, initial=1.0))))
    small = np.minimum(size, 1.0)
    large = np.maximum(size, 1.0)
    near_zero = np.zeros(size.shape)
    far = np.zeros(size.shape)
    for c in np.cos(math.pi * (np.arange(n) + 0.5) / n):  # a loop: memory stays the size of x
        near_zero += np.expm1(small * c) * c
        far += np.exp(large * (c - 1)) * c
    far = np.exp(large + np.log(far / n))
    return (np.sign(x) * np.where(size < 1.0, near_zero / n, far)).astype(dtype)


@register_elementwise(bessel_i1)
def bessel_i1_derivative(y, x):
    return bessel_i1_slope(x, y)


def bessel_i1_slope(x, i1):
    """I₁'(x) = I₀(x) − I₁(x)/x, and 1/2 at 0 (so second derivatives of i0 have rules too)."""
    x = np.asarray(x)
    return np.where(x == 0, 0.5, np.i0(x) - i1 / np.where(x == 0, 1.0, x))


@register_vjp(np.float_power)
def float_power(z, x, y):  # as ** (operators.power): x ** 0 has slope 0 at x = 0
    d[x] += unbroadcast(d[z] * np.where(y == 0, 0, y) * np.float_power(x, np.where(y == 0, 1, y - 1)), x)
    d[y] += unbroadcast(d[z] * z * np.log(np.where(x == 0, 1.0, x)), y)


@register_jvp(np.float_power)
def float_power_jvp(z, x, y):  # a zero exponent tangent (a helper's constant) gives 0, not 0 · log(x < 0)
    # an exponent below 1 has an infinite slope at x = 0, which a resting x never meets (as ** does)
    t[z] += t[x] * resting_zero(t[x], np.where(y == 0, 0, y) * np.float_power(x, np.where(y == 0, 1, y - 1)))
    t[z] += t[y] * z * np.log(np.where((x == 0) | (t[y] == 0), 1.0, x))


@register_vjp(np.logaddexp)
def logaddexp(z, x1, x2):
    """∂z/∂x1 = σ(x1 - x2): the result is not read, so the forward sweep need not compute it."""
    d[x1] += unbroadcast(d[z] * logistic_weight(x1, x2), x1)
    d[x2] += unbroadcast(d[z] * logistic_weight(x2, x1), x2)


@register_jvp(np.logaddexp)
def logaddexp_jvp(z, x1, x2):
    t[z] += t[x1] * logistic_weight(x1, x2)
    t[z] += t[x2] * logistic_weight(x2, x1)


def logistic_weight(a, b):
    """σ(a - b) = 1 / (1 + e^(b - a)), relatively accurate for every a - b: where e^(b - a)
    overflows the weight is 0, its limit (without a warning)."""
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(b - a))


# generated adjoints call logistic_weight: σ'(u) = σ(u) σ(-u) (1 - σ(u) would cancel where σ ≈ 1)
@register_vjp(logistic_weight)
def logistic_weight_vjp(r, a, b):
    d[a] += unbroadcast(d[r] * r * logistic_weight(b, a), a)
    d[b] += unbroadcast(-d[r] * r * logistic_weight(b, a), b)


@register_jvp(logistic_weight)
def logistic_weight_jvp(r, a, b):
    t[r] += t[a] * r * logistic_weight(b, a)
    t[r] += -t[b] * r * logistic_weight(b, a)


@register_vjp(np.logaddexp2)
def logaddexp2(z, x1, x2):
    d[x1] += unbroadcast(d[z] * np.exp2(x1 - z), x1)
    d[x2] += unbroadcast(d[z] * np.exp2(x2 - z), x2)


@register_jvp(np.logaddexp2)
def logaddexp2_jvp(z, x1, x2):
    t[z] += t[x1] * np.exp2(x1 - z)
    t[z] += t[x2] * np.exp2(x2 - z)
