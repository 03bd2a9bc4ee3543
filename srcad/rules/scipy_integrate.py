"""Rules for ``scipy.integrate``, reverse (vjp) and forward (jvp).

The rules of sampled data: ``trapezoid`` is ``np.trapezoid`` (its helpers);
``cumulative_trapezoid`` sums the segments' areas ``h_i (y_i + y_{i+1}) / 2`` into running totals
(after ``initial=0``, which SciPy allows alone), so a segment's cotangent is the sum of the
cotangents of the totals that hold it (a reversed running sum), and the spacings ``h`` come
from ``dx`` or the differences of ``x``. ``simpson`` is linear in ``y`` for given sample points:
its adjoint weights are ``simpson`` of the unit samples, so every spacing and parity SciPy
handles is covered by construction; it is ``dx`` times its value at ``dx=1``, but nonlinear in
``x`` (refused).

The integrators of functions (``odeint``, ``solve_ivp``, ``quad``, ``quad_vec``, ``fixed_quad``,
``dblquad``, ``tplquad``, ``nquad``) run adaptive or compiled code on a function of yours: a call
whose arguments carry a derivative is refused, advising to write the steps in the function
(which srcad differentiates) or to register a rule.
"""
import numpy as np

from ..registry import no_derivative, register_jvp, register_vjp
from ..runtime import unbroadcast
from .numpy_numerical import (along_axis, pad_ends, segment_means, trapezoid_spacings, trapezoid_x_grad,
                              trapezoid_x_tangent, trapezoid_y_grad)

try:
    from scipy import integrate
except ImportError:  # SciPy is not a dependency of srcad
    integrate = None


def segment_cotangents(g, initial, axis):
    """The cotangent of each segment's area in ``cumulative_trapezoid``: the sum of the
    cotangents ``g`` of the running totals that hold it (``initial``'s total holds none)."""
    g = np.asarray(g)
    if initial is not None:
        g = np.take(g, np.arange(1, g.shape[axis]), axis=axis)
    return np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis)


def cumulative_trapezoid_y_grad(g, y, x, dx, axis, initial):
    axis = axis % np.ndim(y)
    half_areas = segment_cotangents(g, initial, axis) * trapezoid_spacings(y, x, dx, axis) / 2
    return unbroadcast(pad_ends(half_areas, axis, True) + pad_ends(half_areas, axis, False), y)


def cumulative_trapezoid_x_grad(g, y, x, axis, initial):
    """``h_i = x_{i+1} - x_i``: the cotangent of ``h_i`` (segment cotangent times mean) goes to
    ``x_{i+1}`` and, negated, to ``x_i``."""
    axis = axis % np.ndim(y)
    spacing_cotangents = segment_cotangents(g, initial, axis) * segment_means(y, axis)
    full = pad_ends(spacing_cotangents, axis, True) - pad_ends(spacing_cotangents, axis, False)
    if np.ndim(x) == 1:
        return np.sum(full, axis=tuple(a for a in range(np.ndim(y)) if a != axis))
    return unbroadcast(full, x)


def cumulative_trapezoid_x_tangent(tx, y, x, axis, initial):
    axis = axis % np.ndim(y)
    running = np.cumsum(trapezoid_spacings(y, tx, None, axis) * segment_means(y, axis), axis=axis)
    return running if initial is None else pad_ends(running, axis, True)


def simpson_weights(y, x, dx, axis):
    """``∂ simpson(y) / ∂y_i`` along ``axis``: ``simpson`` of the unit samples (it is linear in y)."""
    axis = axis % np.ndim(y)
    n = np.shape(y)[axis]
    if x is None or np.ndim(x) == 1:
        return along_axis(integrate.simpson(np.eye(n), x=x, dx=dx, axis=-1), axis, np.ndim(y))
    points = np.moveaxis(np.asarray(x), axis, -1)[..., None, :]
    shape = points.shape[:-2] + (n, n)
    weights = integrate.simpson(np.broadcast_to(np.eye(n), shape), x=np.broadcast_to(points, shape), axis=-1)
    return np.moveaxis(weights, -1, axis)


_SIMPSON_X = ("use evenly spaced samples (dx=), or scipy.integrate.trapezoid, which srcad differentiates in "
              "its sample points")
_SOLVER = ("write the solver's steps in your function (a fixed-step Runge-Kutta loop over NumPy arrays, which "
           "srcad differentiates), or give srcad a rule for it with srcad.extend.register_vjp and register_jvp")
_QUADRATURE = ("write the quadrature in your function (np.sum(weights * f(nodes)) over fixed nodes, e.g. from "
               "np.polynomial.legendre.leggauss, or scipy.integrate.trapezoid of sampled values), which srcad "
               "differentiates, or give srcad a rule for it with srcad.extend.register_vjp and register_jvp")


if integrate is not None:

    @register_vjp(integrate.trapezoid)
    def trapezoid(r, y, x=None, dx=1.0, axis=-1):
        d[y] += trapezoid_y_grad(d[r], y, x, dx, axis)
        d[x] += trapezoid_x_grad(d[r], y, x, axis)
        d[dx] += np.sum(d[r] * integrate.trapezoid(y, axis=axis)) * (x is None)

    @register_jvp(integrate.trapezoid)
    def trapezoid_jvp(r, y, x=None, dx=1.0, axis=-1):
        t[r] += integrate.trapezoid(t[y], x=x, dx=dx, axis=axis)
        t[r] += trapezoid_x_tangent(t[x], y, x, axis)
        t[r] += t[dx] * integrate.trapezoid(y, axis=axis) * (x is None)

    @register_vjp(integrate.cumulative_trapezoid)
    def cumulative_trapezoid(r, y, x=None, dx=1.0, axis=-1, initial=None):
        d[y] += cumulative_trapezoid_y_grad(d[r], y, x, dx, axis, initial)
        d[x] += cumulative_trapezoid_x_grad(d[r], y, x, axis, initial)
        d[dx] += np.sum(d[r] * integrate.cumulative_trapezoid(y, axis=axis, initial=initial)) * (x is None)

    @register_jvp(integrate.cumulative_trapezoid)
    def cumulative_trapezoid_jvp(r, y, x=None, dx=1.0, axis=-1, initial=None):
        t[r] += integrate.cumulative_trapezoid(t[y], x=x, dx=dx, axis=axis, initial=initial)
        t[r] += cumulative_trapezoid_x_tangent(t[x], y, x, axis, initial)
        t[r] += t[dx] * integrate.cumulative_trapezoid(y, axis=axis, initial=initial) * (x is None)

    @register_vjp(integrate.simpson)
    def simpson(r, y, x=None, *, dx=1.0, axis=-1):
        d[y] += unbroadcast(np.expand_dims(np.asarray(d[r]), axis) * simpson_weights(y, x, dx, axis), y)
        d[x] += no_derivative("scipy.integrate.simpson in its sample points x", _SIMPSON_X)
        d[dx] += np.sum(d[r] * integrate.simpson(y, axis=axis)) * (x is None)

    @register_jvp(integrate.simpson)
    def simpson_jvp(r, y, x=None, *, dx=1.0, axis=-1):
        t[r] += integrate.simpson(t[y], x=x, dx=dx, axis=axis)
        t[r] += t[x] * no_derivative("scipy.integrate.simpson in its sample points x", _SIMPSON_X)
        t[r] += t[dx] * integrate.simpson(y, axis=axis) * (x is None)

    # ---- integrators of a function of yours: refused where a derivative flows -----------------

    @register_vjp(integrate.odeint)
    def odeint(r, func, y0, t, args=(), *rest, **options):
        d[func] += no_derivative("scipy.integrate.odeint (a compiled adaptive solver)", _SOLVER)
        d[y0] += no_derivative("scipy.integrate.odeint (a compiled adaptive solver) in y0", _SOLVER)
        d[t] += no_derivative("scipy.integrate.odeint (a compiled adaptive solver) in t", _SOLVER)
        d[args] += no_derivative("scipy.integrate.odeint (a compiled adaptive solver) in args", _SOLVER)

    @register_jvp(integrate.odeint)
    def odeint_jvp(r, func, y0, t, args=(), *rest, **options):
        t[r] += t[func] * no_derivative("scipy.integrate.odeint (a compiled adaptive solver)", _SOLVER)
        t[r] += t[y0] * no_derivative("scipy.integrate.odeint (a compiled adaptive solver) in y0", _SOLVER)
        t[r] += t[t] * no_derivative("scipy.integrate.odeint (a compiled adaptive solver) in t", _SOLVER)
        t[r] += t[args] * no_derivative("scipy.integrate.odeint (a compiled adaptive solver) in args", _SOLVER)

    @register_vjp(integrate.solve_ivp)
    def solve_ivp(r, fun, t_span, y0, method="RK45", t_eval=None, *rest, args=None, **options):
        d[fun] += no_derivative("scipy.integrate.solve_ivp (an adaptive solver)", _SOLVER)
        d[t_span] += no_derivative("scipy.integrate.solve_ivp (an adaptive solver) in t_span", _SOLVER)
        d[y0] += no_derivative("scipy.integrate.solve_ivp (an adaptive solver) in y0", _SOLVER)
        d[t_eval] += no_derivative("scipy.integrate.solve_ivp (an adaptive solver) in t_eval", _SOLVER)
        d[args] += no_derivative("scipy.integrate.solve_ivp (an adaptive solver) in args", _SOLVER)

    @register_jvp(integrate.solve_ivp)
    def solve_ivp_jvp(r, fun, t_span, y0, method="RK45", t_eval=None, *rest, args=None, **options):
        t[r] += t[fun] * no_derivative("scipy.integrate.solve_ivp (an adaptive solver)", _SOLVER)
        t[r] += t[t_span] * no_derivative("scipy.integrate.solve_ivp (an adaptive solver) in t_span", _SOLVER)
        t[r] += t[y0] * no_derivative("scipy.integrate.solve_ivp (an adaptive solver) in y0", _SOLVER)
        t[r] += t[t_eval] * no_derivative("scipy.integrate.solve_ivp (an adaptive solver) in t_eval", _SOLVER)
        t[r] += t[args] * no_derivative("scipy.integrate.solve_ivp (an adaptive solver) in args", _SOLVER)

    @register_vjp(integrate.quad, integrate.fixed_quad)
    def quad(r, func, a, b, args=(), *rest, **options):
        d[func] += no_derivative("an integral computed by scipy.integrate", _QUADRATURE)
        d[a] += no_derivative("an integral computed by scipy.integrate in its bound a", _QUADRATURE)
        d[b] += no_derivative("an integral computed by scipy.integrate in its bound b", _QUADRATURE)
        d[args] += no_derivative("an integral computed by scipy.integrate in its args", _QUADRATURE)

    @register_jvp(integrate.quad, integrate.fixed_quad)
    def quad_jvp(r, func, a, b, args=(), *rest, **options):
        t[r] += t[func] * no_derivative("an integral computed by scipy.integrate", _QUADRATURE)
        t[r] += t[a] * no_derivative("an integral computed by scipy.integrate in its bound a", _QUADRATURE)
        t[r] += t[b] * no_derivative("an integral computed by scipy.integrate in its bound b", _QUADRATURE)
        t[r] += t[args] * no_derivative("an integral computed by scipy.integrate in its args", _QUADRATURE)

    @register_vjp(integrate.quad_vec)
    def quad_vec(r, f, a, b, *rest, args=(), **options):
        d[f] += no_derivative("an integral computed by scipy.integrate", _QUADRATURE)
        d[a] += no_derivative("an integral computed by scipy.integrate in its bound a", _QUADRATURE)
        d[b] += no_derivative("an integral computed by scipy.integrate in its bound b", _QUADRATURE)
        d[args] += no_derivative("an integral computed by scipy.integrate in its args", _QUADRATURE)

    @register_jvp(integrate.quad_vec)
    def quad_vec_jvp(r, f, a, b, *rest, args=(), **options):
        t[r] += t[f] * no_derivative("an integral computed by scipy.integrate", _QUADRATURE)
        t[r] += t[a] * no_derivative("an integral computed by scipy.integrate in its bound a", _QUADRATURE)
        t[r] += t[b] * no_derivative("an integral computed by scipy.integrate in its bound b", _QUADRATURE)
        t[r] += t[args] * no_derivative("an integral computed by scipy.integrate in its args", _QUADRATURE)

    @register_vjp(integrate.dblquad, integrate.tplquad)
    def dblquad(r, func, a, b, gfun, hfun, *rest, **options):
        d[func] += no_derivative("an integral computed by scipy.integrate", _QUADRATURE)
        d[a] += no_derivative("an integral computed by scipy.integrate in its bound a", _QUADRATURE)
        d[b] += no_derivative("an integral computed by scipy.integrate in its bound b", _QUADRATURE)
        d[gfun] += no_derivative("an integral computed by scipy.integrate in its bound gfun", _QUADRATURE)
        d[hfun] += no_derivative("an integral computed by scipy.integrate in its bound hfun", _QUADRATURE)

    @register_jvp(integrate.dblquad, integrate.tplquad)
    def dblquad_jvp(r, func, a, b, gfun, hfun, *rest, **options):
        t[r] += t[func] * no_derivative("an integral computed by scipy.integrate", _QUADRATURE)
        t[r] += t[a] * no_derivative("an integral computed by scipy.integrate in its bound a", _QUADRATURE)
        t[r] += t[b] * no_derivative("an integral computed by scipy.integrate in its bound b", _QUADRATURE)
        t[r] += t[gfun] * no_derivative("an integral computed by scipy.integrate in its bound gfun", _QUADRATURE)
        t[r] += t[hfun] * no_derivative("an integral computed by scipy.integrate in its bound hfun", _QUADRATURE)

    @register_vjp(integrate.nquad)
    def nquad(r, func, ranges, args=None, *rest, **options):
        d[func] += no_derivative("an integral computed by scipy.integrate", _QUADRATURE)
        d[ranges] += no_derivative("an integral computed by scipy.integrate in its ranges", _QUADRATURE)
        d[args] += no_derivative("an integral computed by scipy.integrate in its args", _QUADRATURE)

    @register_jvp(integrate.nquad)
    def nquad_jvp(r, func, ranges, args=None, *rest, **options):
        t[r] += t[func] * no_derivative("an integral computed by scipy.integrate", _QUADRATURE)
        t[r] += t[ranges] * no_derivative("an integral computed by scipy.integrate in its ranges", _QUADRATURE)
        t[r] += t[args] * no_derivative("an integral computed by scipy.integrate in its args", _QUADRATURE)
