"""Rules for ``scipy.special``, reverse (vjp) and forward (jvp). SciPy is optional: without
it this module registers nothing (and srcad still imports)."""
import numpy as np

from ..registry import no_derivative, register_elementwise, register_jvp, register_partials, register_vjp
from ..runtime import expand_reduced, item_grad, resting_zero, unbroadcast

try:
    from scipy import special
except ImportError:  # SciPy is not a dependency of srcad
    special = None


def logsumexp_weights(a, y, axis, b, keepdims, return_sign):
    """``∂ logsumexp / ∂a = sign · b · exp(a - y)`` (with ``y = log|Σ b eᵃ|``), and
    ``exp(a - y)``, which is ``∂/∂b`` without the factor ``b``."""
    scale = np.exp(a - expand_reduced(y[0] if return_sign else y, a, axis, keepdims))
    if return_sign:
        scale = scale * expand_reduced(y[1], a, axis, keepdims)
    return scale if b is None else scale * b, scale


def logsumexp_grad(g, a, y, axis, b, keepdims, return_sign, which):
    """The adjoint of ``a`` (which=0) or ``b`` (which=1) in ``logsumexp(a, axis, b)``; with
    ``return_sign`` only the value (item 0) has a derivative."""
    g = item_grad(g, 0, y) if return_sign else g
    weights, scale = logsumexp_weights(a, y, axis, b, keepdims, return_sign)
    g = expand_reduced(np.asarray(g), a, axis, keepdims)
    if which == 0:
        return unbroadcast(g * weights, a)
    return unbroadcast(g * scale, b)


def logsumexp_tangent(tv, a, y, axis, b, keepdims, return_sign, which):
    weights, scale = logsumexp_weights(a, y, axis, b, keepdims, return_sign)
    ty = np.sum((weights if which == 0 else scale) * tv, axis=axis, keepdims=keepdims)
    if not return_sign:
        return ty
    return [ty, np.zeros(np.shape(y[1]), np.result_type(np.asarray(ty).dtype, np.float16))]


def xlogy_dx(x, y):
    """``∂ xlogy(x, y) / ∂x = log y``, 0 where x and y are both 0 (the function is 0 there)."""
    return np.log(np.where((x == 0) & (y == 0), 1.0, y))


def xlog1py_dx(x, y):
    return np.log1p(np.where((x == 0) & (y == -1), 0.0, y))


def ratio_where_x(x, y):
    """``x / y``, 0 where ``x`` is 0 (``xlogy(0, y)`` is 0 for every ``y``)."""
    return np.where(x == 0, 0.0, x / np.where(x == 0, 1.0, y))


def _poles(x):
    """Where Γ has its poles (0, -1, -2, ...): 1/Γ is 0 there, and ψ infinite."""
    return (x <= 0) & (x == np.floor(x))


def rgamma_slope(x):
    """``d/dx 1/Γ(x) = -ψ(x)/Γ(x)``; at the pole ``-n`` its limit ``cos(πx) Γ(1 - x)``, ``(-1)ⁿ n!``
    (from the reflection ``1/Γ(x) = sin(πx) Γ(1 - x)/π``), not 0 · ∞."""
    pole = _poles(x)
    safe = np.where(pole, 0.5, x)
    return np.where(pole, np.cos(np.pi * x) * special.gamma(1 - x), -special.rgamma(safe) * special.digamma(safe))


def rgamma_curvature(x):
    """``d²/dx² 1/Γ(x) = (ψ(x)² - ψ'(x))/Γ(x)``; at a pole ``-2 cos(πx) Γ(1 - x) ψ(1 - x)``."""
    pole = _poles(x)
    safe = np.where(pole, 0.5, x)
    return np.where(pole, -2 * np.cos(np.pi * x) * special.gamma(1 - x) * special.digamma(1 - x),
                    special.rgamma(safe) * (special.digamma(safe) ** 2 - special.polygamma(1, safe)))


def exprel_slope(x):
    """``d/dx (eˣ - 1)/x = (eˣ - exprel(x))/x``; by its series ``1/2 + x/3 + x²/8 + x³/30``
    near 0, where the difference cancels."""
    near_zero = np.abs(x) < 1e-3
    safe = np.where(near_zero, 1.0, x)
    series = 0.5 + x * (1 / 3 + x * (1 / 8 + x / 30))
    return np.where(near_zero, series, (np.exp(safe) - special.exprel(safe)) / safe)


def spence_slope(z):
    """``d/dz spence(z) = log(z)/(1 - z)`` (SciPy's dilogarithm ``∫₁ᶻ log t/(1 - t) dt``),
    -1 at z = 1."""
    one = z == 1
    safe = np.where(one, 0.5, z)
    return np.where(one, -1.0, np.log(safe) / (1 - safe))


_ZETA_IN_X = "scipy.special.zeta in its exponent x (its derivative there has no closed form in SciPy)"
_ZETA_INSTEAD = "pass x as a constant; srcad differentiates zeta(x, q) in q"


if special is not None:

    @register_elementwise(special.expit)
    def expit(y, x):
        return y * (1 - y)

    @register_elementwise(special.logit)
    def logit(y, x):
        return 1 / (x * (1 - x))

    @register_elementwise(special.erf)
    def erf(y, x):
        return (2 / np.sqrt(np.pi)) * np.exp(-x * x)

    @register_elementwise(special.erfc)
    def erfc(y, x):
        return -(2 / np.sqrt(np.pi)) * np.exp(-x * x)

    @register_elementwise(special.gamma)
    def gamma(y, x):
        return y * special.digamma(x)

    @register_elementwise(special.gammaln)
    def gammaln(y, x):
        return special.digamma(x)

    @register_elementwise(special.digamma, special.psi)
    def digamma(y, x):
        return special.polygamma(1, x)

    @register_vjp(special.xlogy)
    def xlogy(z, x, y):
        d[x] += unbroadcast(d[z] * xlogy_dx(x, y), x)
        d[y] += unbroadcast(d[z] * ratio_where_x(x, y), y)

    @register_jvp(special.xlogy)
    def xlogy_jvp(z, x, y):
        t[z] += t[x] * xlogy_dx(x, y)
        t[z] += t[y] * ratio_where_x(x, y)

    @register_vjp(special.xlog1py)
    def xlog1py(z, x, y):
        d[x] += unbroadcast(d[z] * xlog1py_dx(x, y), x)
        d[y] += unbroadcast(d[z] * ratio_where_x(x, 1 + y), y)

    @register_jvp(special.xlog1py)
    def xlog1py_jvp(z, x, y):
        t[z] += t[x] * xlog1py_dx(x, y)
        t[z] += t[y] * ratio_where_x(x, 1 + y)

    @register_vjp(special.logsumexp)
    def logsumexp(y, a, axis=None, b=None, keepdims=False, return_sign=False):
        d[a] += logsumexp_grad(d[y], a, y, axis, b, keepdims, return_sign, 0)
        d[b] += logsumexp_grad(d[y], a, y, axis, b, keepdims, return_sign, 1)

    @register_jvp(special.logsumexp)
    def logsumexp_jvp(y, a, axis=None, b=None, keepdims=False, return_sign=False):
        t[y] += logsumexp_tangent(t[a], a, y, axis, b, keepdims, return_sign, 0)
        t[y] += logsumexp_tangent(t[b], a, y, axis, b, keepdims, return_sign, 1)

    @register_vjp(special.softmax)
    def softmax(y, x, axis=None):
        d[x] += y * (d[y] - np.sum(d[y] * y, axis=axis, keepdims=True))

    @register_jvp(special.softmax)
    def softmax_jvp(y, x, axis=None):
        t[y] += y * (t[x] - np.sum(t[x] * y, axis=axis, keepdims=True))

    @register_vjp(special.log_softmax)
    def log_softmax(y, x, axis=None):
        d[x] += d[y] - np.exp(y) * np.sum(d[y], axis=axis, keepdims=True)

    @register_jvp(special.log_softmax)
    def log_softmax_jvp(y, x, axis=None):
        t[y] += t[x] - np.sum(np.exp(y) * t[x], axis=axis, keepdims=True)

    @register_elementwise(special.erfinv)
    def erfinv(y, x):
        return (np.sqrt(np.pi) / 2) * np.exp(y * y)

    @register_elementwise(special.erfcinv)
    def erfcinv(y, x):
        return -(np.sqrt(np.pi) / 2) * np.exp(y * y)

    @register_elementwise(special.erfcx)
    def erfcx(y, x):
        return 2 * x * y - 2 / np.sqrt(np.pi)

    if hasattr(special, "softplus"):  # SciPy 1.15 and later

        @register_elementwise(special.softplus)
        def softplus(y, x):
            return special.expit(x)

    @register_elementwise(special.log_expit)
    def log_expit(y, x):
        return special.expit(-x)

    @register_elementwise(special.ndtr)
    def ndtr(y, x):
        return np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi)  # the normal density

    @register_elementwise(special.ndtri)
    def ndtri(y, x):
        return np.sqrt(2.0 * np.pi) * np.exp(0.5 * y * y)  # 1 / density at the quantile

    @register_elementwise(special.log_ndtr)
    def log_ndtr(y, x):
        return np.exp(-0.5 * x * x - y) / np.sqrt(2 * np.pi)  # φ(x) / Φ(x), stable for x ≪ 0

    @register_elementwise(special.rgamma)
    def rgamma(y, x):
        return rgamma_slope(x)

    @register_elementwise(rgamma_slope)  # (third derivatives at the poles themselves: not exact)
    def rgamma_slope_slope(y, x):
        return rgamma_curvature(x)

    @register_elementwise(special.entr, infinite_slopes=True)  # at x = 0
    def entr(y, x):
        return -(np.log(x) + 1)

    # ---- more functions of one argument --------------------------------------------------

    @register_elementwise(special.cbrt, infinite_slopes=True)
    def cbrt(y, x):
        return 1 / (3 * y**2)

    @register_elementwise(special.exprel)
    def exprel(y, x):
        return exprel_slope(x)

    @register_elementwise(exprel_slope)  # second order of exprel and boxcox1p
    def exprel_slope_slope(y, x):
        return exprel_curvature(x)

    @register_elementwise(special.exp1)
    def exp1(y, x):
        return -np.exp(-x) / x

    @register_elementwise(special.expi)
    def expi(y, x):
        return np.exp(x) / x

    @register_elementwise(special.spence)
    def spence(y, z):
        return spence_slope(z)

    @register_elementwise(spence_slope)
    def spence_slope_slope(y, z):
        return spence_curvature(z)

    @register_elementwise(special.dawsn)  # D'(x) = 1 - 2 x D(x)
    def dawsn(y, x):
        return 1 - 2 * x * y

    @register_elementwise(special.loggamma)
    def loggamma(y, x):
        return special.digamma(x)

    @register_partials(special.boxcox1p)
    def boxcox1p(y, x, lmbda):
        log1p_x = np.log1p(x)
        # y = log(1 + x) exprel(λ log(1 + x)), also at λ = 0
        return {x: np.exp((lmbda - 1) * log1p_x), lmbda: log1p_x**2 * exprel_slope(lmbda * log1p_x)}

    @register_partials(special.huber)
    def huber(y, delta, r):
        inside = np.abs(r) <= delta
        return {r: np.clip(r, -delta, delta), delta: np.where(inside, 0.0, np.abs(r) - delta)}

    @register_partials(special.pseudo_huber)
    def pseudo_huber(y, delta, r):
        s = np.sqrt(1 + (r / delta) ** 2)
        return {r: r / s, delta: delta * (s - 1) ** 2 / s}

    # ---- functions of an order (or a count) and x: the order has no derivative -----------

    @register_vjp(special.polygamma)
    def polygamma(y, n, x):
        d[x] += unbroadcast(d[y] * special.polygamma(n + 1, x), x)
        d[n] += no_derivative("scipy.special.polygamma in its order n", "n is an integer")

    @register_jvp(special.polygamma)
    def polygamma_jvp(y, n, x):
        t[y] += t[x] * special.polygamma(n + 1, x)
        t[y] += t[n] * no_derivative("scipy.special.polygamma in its order n", "n is an integer")

    @register_vjp(special.multigammaln)
    def multigammaln(y, a, dimension):
        d[a] += d[y] * multigammaln_da(a, dimension)

    @register_jvp(special.multigammaln)
    def multigammaln_jvp(y, a, dimension):
        t[y] += t[a] * multigammaln_da(a, dimension)

    @register_vjp(special.zeta)
    def zeta(y, x, q=None):
        """Hurwitz's ``ζ(x, q) = Σₖ (k + q)⁻ˣ``: ``∂/∂q = -x ζ(x + 1, q)``."""
        d[q] += unbroadcast(-d[y] * x * special.zeta(x + 1, q), q)
        d[x] += no_derivative(_ZETA_IN_X, _ZETA_INSTEAD)

    @register_jvp(special.zeta)
    def zeta_jvp(y, x, q=None):
        t[y] += -t[q] * x * special.zeta(x + 1, q)
        t[y] += t[x] * no_derivative(_ZETA_IN_X, _ZETA_INSTEAD)

    # ---- functions of two arguments ------------------------------------------------------

    @register_vjp(special.beta)
    def beta(y, a, b):
        d[a] += unbroadcast(d[y] * y * (special.digamma(a) - special.digamma(a + b)), a)
        d[b] += unbroadcast(d[y] * y * (special.digamma(b) - special.digamma(a + b)), b)

    @register_jvp(special.beta)
    def beta_jvp(y, a, b):
        t[y] += t[a] * y * (special.digamma(a) - special.digamma(a + b))
        t[y] += t[b] * y * (special.digamma(b) - special.digamma(a + b))

    @register_vjp(special.betaln)
    def betaln(y, a, b):
        d[a] += unbroadcast(d[y] * (special.digamma(a) - special.digamma(a + b)), a)
        d[b] += unbroadcast(d[y] * (special.digamma(b) - special.digamma(a + b)), b)

    @register_jvp(special.betaln)
    def betaln_jvp(y, a, b):
        t[y] += t[a] * (special.digamma(a) - special.digamma(a + b))
        t[y] += t[b] * (special.digamma(b) - special.digamma(a + b))

    @register_vjp(special.rel_entr)
    def rel_entr(z, x, y):
        d[x] += unbroadcast(d[z] * (np.log(x / y) + 1), x)
        d[y] += unbroadcast(-d[z] * x / y, y)

    @register_jvp(special.rel_entr)
    def rel_entr_jvp(z, x, y):
        t[z] += t[x] * resting_zero(t[x], np.log(x / y) + 1)  # a resting x at 0 never meets the slope -inf
        t[z] += -t[y] * x / y

    @register_vjp(special.kl_div)
    def kl_div(z, x, y):
        d[x] += unbroadcast(d[z] * np.log(x / y), x)
        d[y] += unbroadcast(d[z] * (1 - x / y), y)

    @register_jvp(special.kl_div)
    def kl_div_jvp(z, x, y):
        t[z] += t[x] * resting_zero(t[x], np.log(x / y))  # a resting x at 0 never meets the slope -inf
        t[z] += t[y] * (1 - x / y)

    @register_vjp(special.gammainc)
    def gammainc(y, a, x):
        d[x] += unbroadcast(d[y] * gamma_density(a, x), x)
        d[a] += no_derivative("scipy.special.gammainc in its shape a", "only x is differentiated")

    @register_jvp(special.gammainc)
    def gammainc_jvp(y, a, x):
        t[y] += t[x] * gamma_density(a, x)
        t[y] += t[a] * no_derivative("scipy.special.gammainc in its shape a", "only x is differentiated")

    @register_vjp(special.gammaincc)
    def gammaincc(y, a, x):
        d[x] += unbroadcast(-d[y] * gamma_density(a, x), x)
        d[a] += no_derivative("scipy.special.gammaincc in its shape a", "only x is differentiated")

    @register_jvp(special.gammaincc)
    def gammaincc_jvp(y, a, x):
        t[y] += -t[x] * gamma_density(a, x)
        t[y] += t[a] * no_derivative("scipy.special.gammaincc in its shape a", "only x is differentiated")


def multigammaln_da(a, dimension):
    """``∂/∂a log Γ_d(a) = Σ_{j<d} ψ(a - j/2)`` (``d`` is the dimension)."""
    return np.sum(special.digamma(np.asarray(a)[..., None] - np.arange(dimension) / 2), axis=-1)


def gamma_density(a, x):
    """``x^(a-1) e^(-x) / Γ(a)``, the derivative of the regularised incomplete gamma functions in x."""
    return np.exp((a - 1) * np.log(x) - x - special.gammaln(a))


def exprel_curvature(x):
    """``d²/dx² exprel(x) = (eˣ - 2 exprel'(x))/x``; ``1/3 + x/4 + x²/10`` near 0."""
    near_zero = np.abs(x) < 1e-3
    safe = np.where(near_zero, 1.0, x)
    series = 1 / 3 + x * (1 / 4 + x / 10)
    return np.where(near_zero, series, (np.exp(safe) - 2 * exprel_slope(safe)) / safe)


def spence_curvature(z):
    """``d/dz log(z)/(1 - z) = (1/z + log(z)/(1 - z))/(1 - z)``; 1/2 at z = 1."""
    one = z == 1
    safe = np.where(one, 0.5, z)
    return np.where(one, 0.5, (1 / safe + spence_slope(safe)) / (1 - safe))
