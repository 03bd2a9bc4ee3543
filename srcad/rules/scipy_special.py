"""Rules for ``scipy.special``, reverse (vjp) and forward (jvp). SciPy is optional: without
it this module registers nothing (and srcad still imports)."""
import numpy as np

from ..registry import register_elementwise, register_jvp, register_vjp
from ..runtime import expand_reduced, unbroadcast
from .numpy_shapes import item_grad

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
