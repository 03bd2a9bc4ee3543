"""Elementwise NumPy (and ``math``) functions: reverse and forward rules.

Functions of one argument whose derivative is a factor state it once
(``register_elementwise``), which gives both rules. The vjp rules of math.log, math.pow,
maximum, minimum, where and of the operators live in ``numpy_core.py`` and
``operators.py``; their jvp rules are here.

Forward rules broadcast a tangent that does not involve the other operands to the
result's shape (``broadcast_like``), so ``t[y]`` always has the shape of ``y``. Constants
are Python floats so float32 arguments keep float32 derivatives.
"""
import math

import gast
import numpy as np

from ..errors import SrcadError
from ..registry import register_elementwise, register_jvp, register_vjp
from ..runtime import unbroadcast

LN2 = math.log(2.0)
LN10 = math.log(10.0)
DEG_PER_RAD = 180.0 / math.pi
RAD_PER_DEG = math.pi / 180.0


def math_functions(*names):
    """The ``math`` functions among ``names`` that this Python has (exp2, cbrt: 3.11+)."""
    return tuple(getattr(math, name) for name in names if hasattr(math, name))


def broadcast_like(t, y):
    """A tangent broadcast to the shape of the result ``y``."""
    shape = np.shape(y)
    return t if np.shape(t) == shape else np.broadcast_to(t, shape)


# ---- rounding: piecewise constant, zero derivative -----------------------------------
# sign, floor, ceil, trunc, rint and fix are listed in nondifferentiable.py. round has
# rules instead, because the method ``x.round()`` maps to it and methods need a rule.
ROUNDS = tuple(getattr(np, name) for name in ("round", "around") if hasattr(np, name))


@register_vjp(*ROUNDS, zero="a")  # piecewise constant
def round_(y, a, decimals=0, out=None):
    """Rounding is piecewise constant: no cotangent flows back."""


@register_jvp(*ROUNDS, zero="a")
def round_jvp(y, a, decimals=0, out=None):
    """Rounding is piecewise constant: the tangent is zero."""


# ---- jvp rules of the vjp rules in numpy_core.py --------------------------------------
@register_jvp(math.log)
def math_log(y, x, base=math.e):
    t[y] += t[x] / (x * np.log(base))
    t[y] += -t[base] * y / (base * np.log(base))


@register_jvp(math.pow)
def math_pow(z, x, y):
    t[z] += t[x] * y * x ** (y - 1)
    t[z] += t[y] * z * np.log(np.where(x == 0, 1.0, x))


@register_jvp(np.maximum)
def maximum(z, x, y):
    """Ties split the tangent equally between the two operands."""
    t[z] += t[x] * larger_share(x, y)
    t[z] += t[y] * larger_share(y, x)


@register_jvp(np.minimum)
def minimum(z, x, y):
    """Ties split the tangent equally between the two operands."""
    t[z] += t[x] * larger_share(y, x)
    t[z] += t[y] * larger_share(x, y)


@register_jvp(np.where, zero="condition")
def where(out, condition, x, y):
    t[out] += broadcast_like(np.where(condition, t[x], 0), out)
    t[out] += broadcast_like(np.where(condition, 0, t[y]), out)


# ---- jvp rules of the vjp rules in operators.py ---------------------------------------
@register_jvp(gast.Add, np.add)
def add(z, x, y):
    t[z] += broadcast_like(t[x], z)
    t[z] += broadcast_like(t[y], z)


@register_jvp(gast.Sub, np.subtract)
def subtract(z, x, y):
    t[z] += broadcast_like(t[x], z)
    t[z] += broadcast_like(-t[y], z)


@register_jvp(gast.Mult, np.multiply)
def multiply(z, x, y):
    t[z] += t[x] * y
    t[z] += x * t[y]


@register_jvp(gast.Div, np.divide)
def divide(z, x, y):
    t[z] += t[x] / y
    t[z] += -t[y] * z / y


@register_jvp(gast.Pow, np.power)
def power(z, x, y):
    t[z] += t[x] * y * x ** (y - 1)
    t[z] += t[y] * z * np.log(np.where(x == 0, 1.0, x))


@register_jvp(gast.MatMult, np.matmul)
def matmul(z, x, y):
    t[z] += t[x] @ y
    t[z] += x @ t[y]


@register_jvp(gast.USub, np.negative)
def negative(y, x):
    t[y] += -t[x]


@register_jvp(gast.UAdd, np.positive)
def positive(y, x):
    t[y] += t[x]


@register_jvp(gast.Mod, np.mod)
def mod(z, x, y):
    t[z] += broadcast_like(t[x], z)
    t[z] += -t[y] * np.floor_divide(x, y)


# ---- unary functions (an elementwise rule returns dy/dx, from the result y and x) ------
@register_elementwise(np.arcsin, math.asin)
def arcsin(y, x):
    return 1 / np.sqrt(1 - x**2)


@register_elementwise(np.arccos, math.acos)
def arccos(y, x):
    return -1 / np.sqrt(1 - x**2)


@register_elementwise(np.arctan, math.atan)
def arctan(y, x):
    return 1 / (1 + x**2)


@register_elementwise(np.sinh, math.sinh)
def sinh(y, x):
    return np.cosh(x)


@register_elementwise(np.cosh, math.cosh)
def cosh(y, x):
    return np.sinh(x)


@register_elementwise(np.arcsinh, math.asinh)
def arcsinh(y, x):
    return 1 / np.sqrt(x**2 + 1)


@register_elementwise(np.arccosh, math.acosh)
def arccosh(y, x):
    return 1 / np.sqrt(x**2 - 1)


@register_elementwise(np.arctanh, math.atanh)
def arctanh(y, x):
    return 1 / (1 - x**2)


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


@register_elementwise(np.cbrt, *math_functions("cbrt"))
def cbrt(y, x):
    return 1 / (3 * y**2)


@register_elementwise(np.square)
def square(y, x):
    return 2 * x


@register_elementwise(np.reciprocal)
def reciprocal(y, x):
    return -y**2


@register_elementwise(np.fabs)
def fabs(y, x):
    return np.sign(x)


@register_elementwise(np.deg2rad, np.radians, math.radians)
def deg2rad(y, x):
    return RAD_PER_DEG


@register_elementwise(np.rad2deg, np.degrees, math.degrees)
def rad2deg(y, x):
    return DEG_PER_RAD


@register_elementwise(np.sinc)
def sinc(y, x):
    return sinc_slope(x)


def sinc_slope(x):
    """d/dx sin(πx)/(πx) = (cos(πx) - sinc(x)) / x, which is 0 at x = 0."""
    safe = np.where(x == 0, 1, x)
    return np.where(x == 0, 0, (np.cos(math.pi * safe) - np.sinc(safe)) / safe)


@register_vjp(np.nan_to_num)
def nan_to_num(y, x, copy=True, nan=0.0, posinf=None, neginf=None):
    """Finite entries pass through; replaced entries depend only on the replacement value."""
    d[x] += d[y] * np.isfinite(x)
    d[nan] += np.sum(d[y] * np.isnan(x))
    d[posinf] += np.sum(d[y] * np.isposinf(x))
    d[neginf] += np.sum(d[y] * np.isneginf(x))


@register_jvp(np.nan_to_num)
def nan_to_num_jvp(y, x, copy=True, nan=0.0, posinf=None, neginf=None):
    t[y] += t[x] * np.isfinite(x)
    t[y] += t[nan] * np.isnan(x)
    t[y] += t[posinf] * np.isposinf(x)
    t[y] += t[neginf] * np.isneginf(x)


# Complex values (from np.fft): a cotangent of z = a + ib is ∂L/∂a + i ∂L/∂b (numpy_fft.py).

@register_vjp(np.real)
def real(y, val):
    d[val] += d[y]


@register_jvp(np.real)
def real_jvp(y, val):
    t[y] += np.real(t[val])


@register_vjp(np.imag)
def imag(y, val):
    """``imag`` of a real array is a constant zero."""
    d[val] += imag_cotangent(d[y], val)


@register_jvp(np.imag)
def imag_jvp(y, val):
    t[y] += np.imag(t[val])


@register_vjp(np.conjugate)
def conjugate(y, x):
    d[x] += np.conjugate(d[y])


@register_jvp(np.conjugate)
def conjugate_jvp(y, x):
    t[y] += np.conjugate(t[x])


def imag_cotangent(g, x):
    """The cotangent of ``x`` from that of ``np.imag(x)``: ``i g`` for complex ``x``, 0 for real."""
    return 1j * g if np.iscomplexobj(x) else 0 * g


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


# ---- binary functions ----------------------------------------------------------------
def larger_share(a, b):
    """The share of ``a`` in ``max(a, b)``: 1 if larger, 1/2 on a tie, else 0."""
    return (a > b) + 0.5 * (a == b)


def nan_ignoring_share(a, b):
    """The share of ``a`` in ``fmax(a, b)``: as ``larger_share``, but a NaN never wins."""
    return np.where(np.isnan(b), ~np.isnan(a), np.where(np.isnan(a), 0, larger_share(a, b)))


@register_vjp(np.float_power)
def float_power(z, x, y):
    d[x] += unbroadcast(d[z] * y * np.float_power(x, y - 1), x)
    d[y] += unbroadcast(d[z] * z * np.log(np.where(x == 0, 1.0, x)), y)


@register_jvp(np.float_power)
def float_power_jvp(z, x, y):
    t[z] += t[x] * y * np.float_power(x, y - 1)
    t[z] += t[y] * z * np.log(np.where(x == 0, 1.0, x))


@register_vjp(np.fmax)
def fmax(z, x, y):
    """Ties split the cotangent equally; a NaN operand gets none (fmax ignores NaNs)."""
    d[x] += unbroadcast(d[z] * nan_ignoring_share(x, y), x)
    d[y] += unbroadcast(d[z] * nan_ignoring_share(y, x), y)


@register_jvp(np.fmax)
def fmax_jvp(z, x, y):
    """Ties split the tangent equally; a NaN operand contributes none."""
    t[z] += t[x] * nan_ignoring_share(x, y)
    t[z] += t[y] * nan_ignoring_share(y, x)


@register_vjp(np.fmin)
def fmin(z, x, y):
    """Ties split the cotangent equally; a NaN operand gets none (fmin ignores NaNs)."""
    d[x] += unbroadcast(d[z] * nan_ignoring_share(-x, -y), x)
    d[y] += unbroadcast(d[z] * nan_ignoring_share(-y, -x), y)


@register_jvp(np.fmin)
def fmin_jvp(z, x, y):
    """Ties split the tangent equally; a NaN operand contributes none."""
    t[z] += t[x] * nan_ignoring_share(-x, -y)
    t[z] += t[y] * nan_ignoring_share(-y, -x)


@register_vjp(np.arctan2, math.atan2)
def arctan2(z, x1, x2):
    d[x1] += unbroadcast(d[z] * x2 / (x1**2 + x2**2), x1)
    d[x2] += unbroadcast(-d[z] * x1 / (x1**2 + x2**2), x2)


@register_jvp(np.arctan2, math.atan2)
def arctan2_jvp(z, x1, x2):
    t[z] += t[x1] * x2 / (x1**2 + x2**2)
    t[z] += -t[x2] * x1 / (x1**2 + x2**2)


@register_vjp(np.hypot)
def hypot(z, x1, x2):
    d[x1] += unbroadcast(d[z] * x1 / z, x1)
    d[x2] += unbroadcast(d[z] * x2 / z, x2)


@register_jvp(np.hypot)
def hypot_jvp(z, x1, x2):
    t[z] += t[x1] * x1 / z
    t[z] += t[x2] * x2 / z


@register_vjp(math.hypot)
def math_hypot(z, *coordinates):
    for c in coordinates:
        d[c] += d[z] * c / z


@register_jvp(math.hypot)
def math_hypot_jvp(z, *coordinates):
    for c in coordinates:
        t[z] += t[c] * c / z


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


@register_vjp(np.fmod, math.fmod, math.remainder)
def fmod(z, x1, x2):
    """z = x1 - n·x2 with n an integer constant between kinks: ∂z/∂x2 = -n."""
    d[x1] += unbroadcast(d[z], x1)
    d[x2] += unbroadcast(-d[z] * whole_quotient(x1, x2, z), x2)


@register_jvp(np.fmod, math.fmod, math.remainder)
def fmod_jvp(z, x1, x2):
    t[z] += broadcast_like(t[x1], z)
    t[z] += -t[x2] * whole_quotient(x1, x2, z)


def whole_quotient(x1, x2, z):
    """The integer n with z = x1 - n·x2, read off the computed remainder (so it agrees
    with it even where x1 / x2 rounds across an integer)."""
    return np.round((x1 - z) / x2)


@register_vjp(np.copysign, math.copysign, zero="x2")  # only x2's sign is used
def copysign(z, x1, x2):
    """|x1| with the sign of x2: the sign of x2 is piecewise constant, so x2 gets nothing."""
    d[x1] += unbroadcast(d[z] * np.copysign(1.0, x1) * np.copysign(1.0, x2), x1)


@register_jvp(np.copysign, math.copysign, zero="x2")
def copysign_jvp(z, x1, x2):
    t[z] += t[x1] * np.copysign(1.0, x1) * np.copysign(1.0, x2)


@register_vjp(np.clip)
def clip(y, a, a_min=None, a_max=None, out=None, min=None, max=None):
    """``clip`` is ``minimum(maximum(a, lower), upper)``, and ties split equally as in
    those: where ``a`` equals a bound, each gets half."""
    d[a] += unbroadcast(d[y] * clip_share(a, a_min, a_max, min, max, "a"), a)
    d[a_min] += unbroadcast(d[y] * clip_share(a, a_min, a_max, min, max, "lower"), a_min)
    d[min] += unbroadcast(d[y] * clip_share(a, a_min, a_max, min, max, "lower"), min)
    d[a_max] += unbroadcast(d[y] * clip_share(a, a_min, a_max, min, max, "upper"), a_max)
    d[max] += unbroadcast(d[y] * clip_share(a, a_min, a_max, min, max, "upper"), max)


@register_jvp(np.clip)
def clip_jvp(y, a, a_min=None, a_max=None, out=None, min=None, max=None):
    """Ties split equally, as in the vjp rule."""
    t[y] += t[a] * clip_share(a, a_min, a_max, min, max, "a")
    t[y] += t[a_min] * clip_share(a, a_min, a_max, min, max, "lower")
    t[y] += t[min] * clip_share(a, a_min, a_max, min, max, "lower")
    t[y] += t[a_max] * clip_share(a, a_min, a_max, min, max, "upper")
    t[y] += t[max] * clip_share(a, a_min, a_max, min, max, "upper")


def clip_share(a, a_min, a_max, min_, max_, which):
    """The derivative of ``clip(a, lower, upper)`` with respect to ``which`` of a, lower, upper."""
    lower = a_min if a_min is not None else min_
    upper = a_max if a_max is not None else max_
    if lower is None:
        lower = -np.inf
    if upper is None:
        upper = np.inf
    raised = np.maximum(a, lower)
    below_upper = larger_share(upper, raised)
    if which == "upper":
        return larger_share(raised, upper)
    if which == "lower":
        return below_upper * larger_share(lower, a)
    return below_upper * larger_share(a, lower)


@register_vjp(np.select, zero="condlist")
def select(y, condlist, choicelist, default=0):
    """The first true condition picks the choice; where none is true, ``default``."""
    d[choicelist] += select_grad(d[y], condlist, choicelist)
    d[default] += unbroadcast(d[y] * none_selected(condlist, y), default)


@register_jvp(np.select, zero="condlist")
def select_jvp(y, condlist, choicelist, default=0):
    t[y] += select_tangent(t[choicelist], condlist, y)
    t[y] += t[default] * none_selected(condlist, y)


def select_masks(condlist, y):
    """For each condition, where it is the first true one (broadcast to ``y``'s shape)."""
    taken = np.zeros(np.shape(y), bool)
    masks = []
    for condition in condlist:
        mask = np.logical_and(condition, ~taken)
        masks.append(mask)
        taken = taken | mask
    return masks


def select_grad(g, condlist, choicelist):
    """The adjoints of ``select``'s choices: each gets ``g`` where it was picked."""
    return [unbroadcast(g * mask, choice) for mask, choice in zip(select_masks(condlist, g), choicelist)]


def none_selected(condlist, y):
    return ~np.logical_or.reduce([np.broadcast_to(c, np.shape(y)) for c in condlist], axis=0)


def select_tangent(tangents, condlist, y):
    """The tangent of ``select``'s result from the choices' tangents (None: zero)."""
    total = np.zeros(np.shape(y), np.result_type(y, np.float32))
    for mask, tangent in zip(select_masks(condlist, y), tangents):
        if tangent is not None:
            total = total + tangent * mask
    return total
