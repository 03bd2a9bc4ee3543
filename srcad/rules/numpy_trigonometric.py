"""Trigonometric and hyperbolic functions, their inverses and angle conversions
(NumPy and ``math``): reverse and forward rules. Conventions as in ``numpy_elementwise.py``."""
import math

import numpy as np

from ..registry import register_elementwise, register_jvp, register_vjp
from ..runtime import moves, resting_zero, unbroadcast

DEG_PER_RAD = 180.0 / math.pi
RAD_PER_DEG = math.pi / 180.0


@register_elementwise(np.arcsin, math.asin, infinite_slopes=True)
def arcsin(y, x):
    return 1 / np.sqrt(1 - x**2)


@register_elementwise(np.arccos, math.acos, infinite_slopes=True)
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


@register_elementwise(np.arccosh, math.acosh, infinite_slopes=True)
def arccosh(y, x):
    return 1 / np.sqrt(x**2 - 1)


@register_elementwise(np.arctanh, math.atanh, infinite_slopes=True)
def arctanh(y, x):
    return 1 / (1 - x**2)


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


def sinc_curvature(x):
    """d²/dx² sinc(x) = -π² sinc(x) - 2 sinc'(x) / x, which is -π²/3 at x = 0 (its limit)."""
    safe = np.where(x == 0, 1, x)
    return np.where(x == 0, -math.pi ** 2 / 3, -math.pi ** 2 * np.sinc(safe) - 2 * sinc_slope(safe) / safe)


@register_elementwise(sinc_slope)  # its constant branch at 0 would say the curvature there is 0
def sinc_slope_slope(y, x):
    return sinc_curvature(x)


# x / (x1² + x2²) as (x / r) / r with r = hypot(x1, x2): no square overflows (a Python float's
# ** raises OverflowError past 1.3e154), and (t · x) / r as t · (x / r) for the same reason
@register_vjp(np.arctan2, math.atan2)
def arctan2(z, x1, x2):
    d[x1] += unbroadcast(d[z] * (x2 / np.hypot(x1, x2)) / np.hypot(x1, x2), x1)
    d[x2] += unbroadcast(-d[z] * (x1 / np.hypot(x1, x2)) / np.hypot(x1, x2), x2)


@register_jvp(np.arctan2, math.atan2)
def arctan2_jvp(z, x1, x2):
    """At the origin the slopes are 0/0, which a resting operand never meets (as for hypot)."""
    t[z] += t[x1] * resting_zero(t[x1], (x2 / np.hypot(x1, x2)) / np.hypot(x1, x2))
    t[z] += -t[x2] * resting_zero(t[x2], (x1 / np.hypot(x1, x2)) / np.hypot(x1, x2))


@register_vjp(np.hypot)
def hypot(z, x1, x2):
    d[x1] += unbroadcast(d[z] * (x1 / z), x1)
    d[x2] += unbroadcast(d[z] * (x2 / z), x2)


@register_jvp(np.hypot)
def hypot_jvp(z, x1, x2):
    """At the origin the slopes are 0/0, which a resting operand never meets (as for np.linalg.norm)."""
    t[z] += t[x1] * resting_zero(t[x1], x1 / z)
    t[z] += t[x2] * resting_zero(t[x2], x2 / z)


@register_vjp(math.hypot)
def math_hypot(z, *coordinates):
    for c in coordinates:
        d[c] += d[z] * c / z


@register_jvp(math.hypot)
def math_hypot_jvp(z, *coordinates):
    for c in coordinates:  # a resting coordinate never meets the slope 0/0 at the origin
        t[z] += t[c] * resting_zero(t[c], c / z) if moves(t[c]) else t[c] * 0.0
