"""Elementwise NumPy (and ``math``) arithmetic: rounding, the forward rules of the
operators, algebraic and complex-part functions, and the comparison-style functions that
pick or share between operands (``fmax``, ``clip``, ``select``, ``fmod``, ``copysign``).
Trigonometric and hyperbolic functions are in ``numpy_trigonometric.py``; exponentials,
logarithms and powers in ``numpy_exponential.py``.

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

from ..registry import register_elementwise, register_jvp, register_nondifferentiable, register_vjp
from ..errors import SrcadError
from ..runtime import moves, resting_zero, unbroadcast
from ..runtime_adjoints import JOINED_SEQUENCES

def math_functions(*names):
    """The ``math`` functions among ``names`` that this Python has (exp2, cbrt: 3.11+)."""
    return tuple(getattr(math, name) for name in names if hasattr(math, name))


def broadcast_like(t, y):
    """A tangent broadcast to the shape of the result ``y``; refused, as in reverse mode, for
    the tangent of a list or tuple that ``+`` or ``*`` joined or repeated into ``y``."""
    if y.__class__ in (list, tuple) and t.__class__ in (list, tuple) and len(t) != len(y):
        raise SrcadError(JOINED_SEQUENCES)
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
    """An exponent between 0 and 1 has an infinite slope at x = 0, which a resting x never meets
    (as for ``np.sqrt``): a zero tangent pushes zero there, not 0 · ∞."""
    if np.ndim(y) == 0 and 0 < y < 1:
        t[z] += t[x] * resting_zero(t[x], y * x ** (y - 1)) if moves(t[x]) else t[x] * 0.0
    elif np.ndim(y) == 0 and y != 0:
        t[z] += t[x] * y * x ** (y - 1)
    else:  # x ** 0 has slope 0 at x = 0 too
        t[z] += t[x] * resting_zero(t[x], np.where(y == 0, 0, y) * x ** np.where(y == 0, 1, y - 1))
    # where the exponent's tangent is 0 (a constant a helper was given, at second order) the term
    # is 0, not 0 · log(x < 0) = nan
    t[z] += t[y] * z * np.log(np.where((x == 0) | (t[y] == 0), 1.0, x))


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
@register_elementwise(np.cbrt, *math_functions("cbrt"), infinite_slopes=True)
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


# linear in the real g (x gives the branch only): the adjoint of g -> i g is the imaginary part
# of the cotangent, and that of g -> 0 · g (real) is 0, its imaginary part too
@register_vjp(imag_cotangent, zero="x")
def imag_cotangent_vjp(r, g, x):
    d[g] += np.imag(d[r])


@register_jvp(imag_cotangent, zero="x")
def imag_cotangent_jvp(r, g, x):
    t[r] += imag_cotangent(t[g], x)


# ---- binary functions ----------------------------------------------------------------
def larger_share(a, b):
    """The share of ``a`` in ``max(a, b)``: 1 if larger, 1/2 on a tie, else 0."""
    return (a > b) + 0.5 * (a == b)


def nan_ignoring_share(a, b):
    """The share of ``a`` in ``fmax(a, b)``: as ``larger_share``, but a NaN never wins."""
    return np.where(np.isnan(b), ~np.isnan(a), np.where(np.isnan(a), 0, larger_share(a, b)))


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


register_nondifferentiable(select_masks, reason="it builds boolean masks from the conditions")


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
