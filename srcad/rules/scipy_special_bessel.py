"""Rules for ``scipy.special``'s Bessel functions, reverse (vjp) and forward (jvp), in their
argument (an order has no derivative: refused). The derivatives come from the recurrences
``2 C'_v = C_{v-1} - C_{v+1}`` (``J``, ``Y``), ``2 I'_v = I_{v-1} + I_{v+1}``,
``2 K'_v = -(K_{v-1} + K_{v+1})``; the exponentially scaled ``ive = iv e^{-|z|}`` and
``kve = kv eᶻ`` add the scale's derivative. Where a function is singular (``K_v`` and ``Y_v``
at 0, ``J_v`` and ``I_v`` of an order between 0 and 1 there) the derivative is infinite or nan,
as SciPy's values there are, never a finite guess. SciPy is optional: without it this module
registers nothing."""
import numpy as np

from ..registry import no_derivative, register_elementwise, register_jvp, register_vjp
from ..runtime import unbroadcast

try:
    from scipy import special
except ImportError:  # SciPy is not a dependency of srcad
    special = None


def i1_dx(x):
    """``I₁'(x) = (I₀(x) + I₂(x)) / 2`` (finite at 0, unlike ``I₀ - I₁/x``)."""
    return (special.i0(x) + special.iv(2, x)) / 2


def spherical_derivative(n, z, second_kind):
    """SciPy's derivative of ``spherical_yn`` (``second_kind``) or ``spherical_jn``."""
    return special.spherical_yn(n, z, True) if second_kind else special.spherical_jn(n, z, True)


def spherical_slope(n, z, derivative, second_kind):
    """``d/dz`` of ``spherical_jn(n, z, derivative)`` (``spherical_yn`` if ``second_kind``): the
    derivative SciPy computes, and of that derivative the derivative of the recurrence
    ``(2n + 1) f'_n = n f_{n-1} - (n + 1) f_{n+1}`` (order 0: ``f'_0 = -f_1``)."""
    if not derivative:
        return spherical_derivative(n, z, second_kind)
    below = spherical_derivative(np.maximum(n - 1, 0), z, second_kind)
    return (n * below - (n + 1) * spherical_derivative(n + 1, z, second_kind)) / (2 * n + 1)


if special is not None:

    @register_elementwise(special.i0)
    def i0(y, x):
        return special.i1(x)

    @register_elementwise(special.i1)
    def i1(y, x):
        return i1_dx(x)

    @register_elementwise(special.i0e)
    def i0e(y, x):
        return special.i1e(x) - np.sign(x) * y

    @register_elementwise(special.i1e)
    def i1e(y, x):
        return (special.i0e(x) + special.ive(2, x)) / 2 - np.sign(x) * y

    @register_elementwise(special.j0)
    def j0(y, x):
        return -special.j1(x)

    @register_elementwise(special.j1)
    def j1(y, x):
        return (special.j0(x) - special.jv(2, x)) / 2

    @register_elementwise(special.y0)
    def y0(y, x):
        return -special.y1(x)

    @register_elementwise(special.y1)
    def y1(y, x):
        return (special.y0(x) - special.yv(2, x)) / 2

    @register_elementwise(special.k0)
    def k0(y, x):
        return -special.k1(x)

    @register_elementwise(special.k1)
    def k1(y, x):
        return -special.k0(x) - y / x  # K₁' = -(K₀ + K₂)/2, written with K₀ and K₁ (which have rules)

    @register_vjp(special.iv)
    def iv(y, v, z):
        d[z] += unbroadcast(d[y] * (special.iv(v - 1, z) + special.iv(v + 1, z)) / 2, z)
        d[v] += no_derivative("scipy.special.iv in its order v", "pass the order as a constant")

    @register_jvp(special.iv)
    def iv_jvp(y, v, z):
        t[y] += t[z] * (special.iv(v - 1, z) + special.iv(v + 1, z)) / 2
        t[y] += t[v] * no_derivative("scipy.special.iv in its order v", "pass the order as a constant")

    @register_vjp(special.ive)
    def ive(y, v, z):
        d[z] += unbroadcast(d[y] * ((special.ive(v - 1, z) + special.ive(v + 1, z)) / 2 - np.sign(z) * y), z)
        d[v] += no_derivative("scipy.special.ive in its order v", "pass the order as a constant")

    @register_jvp(special.ive)
    def ive_jvp(y, v, z):
        t[y] += t[z] * ((special.ive(v - 1, z) + special.ive(v + 1, z)) / 2 - np.sign(z) * y)
        t[y] += t[v] * no_derivative("scipy.special.ive in its order v", "pass the order as a constant")

    @register_vjp(special.jv)
    def jv(y, v, z):
        d[z] += unbroadcast(d[y] * (special.jv(v - 1, z) - special.jv(v + 1, z)) / 2, z)
        d[v] += no_derivative("scipy.special.jv in its order v", "pass the order as a constant")

    @register_jvp(special.jv)
    def jv_jvp(y, v, z):
        t[y] += t[z] * (special.jv(v - 1, z) - special.jv(v + 1, z)) / 2
        t[y] += t[v] * no_derivative("scipy.special.jv in its order v", "pass the order as a constant")

    @register_vjp(special.yv, special.yn)
    def yv(y, v, z):
        d[z] += unbroadcast(d[y] * (special.yv(v - 1, z) - special.yv(v + 1, z)) / 2, z)
        d[v] += no_derivative("scipy.special.yv in its order v", "pass the order as a constant")

    @register_jvp(special.yv, special.yn)
    def yv_jvp(y, v, z):
        t[y] += t[z] * (special.yv(v - 1, z) - special.yv(v + 1, z)) / 2
        t[y] += t[v] * no_derivative("scipy.special.yv in its order v", "pass the order as a constant")

    @register_vjp(special.kv, special.kn)
    def kv(y, v, z):
        d[z] += unbroadcast(-d[y] * (special.kv(v - 1, z) + special.kv(v + 1, z)) / 2, z)
        d[v] += no_derivative("scipy.special.kv in its order v", "pass the order as a constant")

    @register_jvp(special.kv, special.kn)
    def kv_jvp(y, v, z):
        t[y] += -t[z] * (special.kv(v - 1, z) + special.kv(v + 1, z)) / 2
        t[y] += t[v] * no_derivative("scipy.special.kv in its order v", "pass the order as a constant")

    @register_vjp(special.kve)
    def kve(y, v, z):  # kve = kv eᶻ
        d[z] += unbroadcast(d[y] * (y - (special.kve(v - 1, z) + special.kve(v + 1, z)) / 2), z)
        d[v] += no_derivative("scipy.special.kve in its order v", "pass the order as a constant")

    @register_jvp(special.kve)
    def kve_jvp(y, v, z):
        t[y] += t[z] * (y - (special.kve(v - 1, z) + special.kve(v + 1, z)) / 2)
        t[y] += t[v] * no_derivative("scipy.special.kve in its order v", "pass the order as a constant")

    @register_vjp(special.spherical_jn)
    def spherical_jn(y, n, z, derivative=False):
        d[z] += unbroadcast(d[y] * spherical_slope(n, z, derivative, False), z)
        d[n] += no_derivative("scipy.special.spherical_jn in its order n", "n is an integer")

    @register_jvp(special.spherical_jn)
    def spherical_jn_jvp(y, n, z, derivative=False):
        t[y] += t[z] * spherical_slope(n, z, derivative, False)
        t[y] += t[n] * no_derivative("scipy.special.spherical_jn in its order n", "n is an integer")

    @register_vjp(special.spherical_yn)
    def spherical_yn(y, n, z, derivative=False):
        d[z] += unbroadcast(d[y] * spherical_slope(n, z, derivative, True), z)
        d[n] += no_derivative("scipy.special.spherical_yn in its order n", "n is an integer")

    @register_jvp(special.spherical_yn)
    def spherical_yn_jvp(y, n, z, derivative=False):
        t[y] += t[z] * spherical_slope(n, z, derivative, True)
        t[y] += t[n] * no_derivative("scipy.special.spherical_yn in its order n", "n is an integer")

