"""SciPy calls real programs make (probe round 35): ``scipy.fft``'s transforms
(srcad/rules/scipy_fft.py), ``scipy.integrate``'s rules of sampled data and refusals of its
function integrators (scipy_integrate.py), and the Bessel functions ``kv``, ``kn``, ``kve``,
``spherical_jn``, ``spherical_yn`` (scipy_special_bessel.py). One line per rule (and per edge
case: axis, n=, s=, norm=, even and odd lengths, initial=0), each checked in every mode against
central finite differences: joint adjoint and pullback, jvp, hvp and grad of grad."""
import numpy as np
import pytest
import scipy.fft as sfft
import scipy.integrate as integrate
import scipy.special as special

import srcad
from srcad.errors import UnsupportedCaseError
from srcad.rules import scipy_fft
from lang_checks import check_all_modes, refused
from srcad.testing import check_grads, check_jvp
from library_check import samplers

R, positive, unit = samplers(35, positive=(0.3, 2.5))
POINTS = np.cumsum(positive(4)) ** 1.3  # uneven sample points
GRID = np.cumsum(positive(3, 4), axis=1)


# ---- scipy.fft: one line per transform, then keywords --------------------------------------

def fft_(x):
    z = sfft.fft(x)
    return np.sum(np.real(z) * 0.7 + np.imag(z) ** 2)


def fft_n(x):
    z = sfft.fft(x, n=7, norm="ortho")
    return np.sum(np.real(z) * 0.7 + np.imag(z) ** 2)


def fft_cut(x):
    z = sfft.fft(x, 3, axis=0, norm="forward", workers=1)
    return np.sum(np.real(z) * 0.7 + np.imag(z) ** 2)


def ifft_(x):
    z = sfft.ifft(sfft.rfft(x) * 1.5)
    return np.sum(np.real(z) * 0.7 + np.imag(z) ** 2)


def ifft_n(x):
    z = sfft.ifft(x, n=4, norm="ortho", overwrite_x=False)
    return np.sum(np.real(z) * 0.7 + np.imag(z) ** 2)


def rfft_(x):
    z = sfft.rfft(x)
    return np.sum(np.real(z) * 0.7 + np.imag(z) ** 2)


def rfft_n(x):
    z = sfft.rfft(x, n=8, norm="ortho")
    return np.sum(np.real(z) * 0.7 + np.imag(z) ** 2)


def rfft_axis(x):
    z = sfft.rfft(x, axis=0, norm="forward")
    return np.sum(np.real(z) * 0.7 + np.imag(z) ** 2)


def irfft_(x): return np.sum(sfft.irfft(sfft.fft(x)) ** 2)
def irfft_odd(x): return np.sum(sfft.irfft(sfft.rfft(x, n=8), n=9, norm="ortho") ** 2)
def hfft_(x): return np.sum(sfft.hfft(sfft.ihfft(x) * 1.5) ** 2)
def hfft_n(x): return np.sum(sfft.hfft(sfft.fft(x), n=7, norm="forward") ** 2)
def ihfft_(x):
    z = sfft.ihfft(x)
    return np.sum(np.real(z) * 0.7 + np.imag(z) ** 2)


def ihfft_n(x):
    z = sfft.ihfft(x, n=6, norm="ortho")
    return np.sum(np.real(z) * 0.7 + np.imag(z) ** 2)


def fftn_(x):
    z = sfft.fftn(x)
    return np.sum(np.real(z) * 0.7 + np.imag(z) ** 2)


def fftn_s(x):
    z = sfft.fftn(x, s=(4, 3), axes=(0, 1), norm="ortho")
    return np.sum(np.real(z) * 0.7 + np.imag(z) ** 2)


def ifftn_(x):
    z = sfft.ifftn(x, axes=(1,))
    return np.sum(np.real(z) * 0.7 + np.imag(z) ** 2)


def fft2_(x):
    z = sfft.fft2(x, norm="forward")
    return np.sum(np.real(z) * 0.7 + np.imag(z) ** 2)


def ifft2_(x):
    z = sfft.ifft2(x, s=(2, 5))
    return np.sum(np.real(z) * 0.7 + np.imag(z) ** 2)


def rfftn_(x):
    z = sfft.rfftn(x)
    return np.sum(np.real(z) * 0.7 + np.imag(z) ** 2)


def rfftn_axes(x):
    z = sfft.rfftn(x, axes=(1, 0), norm="ortho")
    return np.sum(np.real(z) * 0.7 + np.imag(z) ** 2)


def rfft2_(x):
    z = sfft.rfft2(x, s=(3, 6))
    return np.sum(np.real(z) * 0.7 + np.imag(z) ** 2)


def irfftn_(x): return np.sum(sfft.irfftn(sfft.fftn(x)) ** 2)
def irfftn_s(x): return np.sum(sfft.irfftn(sfft.rfftn(x), s=(3, 5), norm="ortho") ** 2)
def irfft2_(x): return np.sum(sfft.irfft2(sfft.fft2(x) * 1.5, norm="forward") ** 2)
def fftshift_(x): return np.sum(sfft.fftshift(x, axes=1) * x)
def ifftshift_(x): return np.sum(sfft.ifftshift(x) * x)
def round_trip(x): return np.sum(sfft.irfft(sfft.rfft(x) * 1.5, n=5) ** 2)


FFT = [(fft_, (R(5),)), (fft_n, (R(5),)), (fft_cut, (R(5, 2),)), (ifft_, (R(5),)), (ifft_n, (R(6),)),
       (rfft_, (R(5),)), (rfft_n, (R(6),)), (rfft_axis, (R(4, 3),)), (irfft_, (R(5),)), (irfft_odd, (R(5),)),
       (hfft_, (R(5),)), (hfft_n, (R(5),)), (ihfft_, (R(5),)), (ihfft_n, (R(5),)), (fftn_, (R(3, 4),)),
       (fftn_s, (R(3, 4),)), (ifftn_, (R(2, 3),)), (fft2_, (R(3, 4),)), (ifft2_, (R(3, 4),)), (rfftn_, (R(3, 4),)),
       (rfftn_axes, (R(3, 4),)), (rfft2_, (R(3, 4),)), (irfftn_, (R(3, 4),)), (irfftn_s, (R(3, 4),)),
       (irfft2_, (R(3, 4),)), (fftshift_, (R(3, 4),)), (ifftshift_, (R(5),)), (round_trip, (R(5),))]


# ---- scipy.integrate: sampled data -----------------------------------------------------------

def trapezoid_dx(y): return np.sum(integrate.trapezoid(y ** 2, dx=0.3))
def trapezoid_x(y): return np.sum(integrate.trapezoid(np.sin(y), x=np.cumsum(y ** 2)))
def trapezoid_axis(y): return np.sum(integrate.trapezoid(y * GRID, x=GRID, axis=1))
def cumtrapz_dx(y): return np.sum(integrate.cumulative_trapezoid(y ** 2, dx=0.3))
def cumtrapz_initial(y): return np.sum(integrate.cumulative_trapezoid(y ** 2, dx=0.3, initial=0))
def cumtrapz_x(y): return np.sum(integrate.cumulative_trapezoid(np.sin(y), x=np.cumsum(y ** 2), initial=0))
def cumtrapz_grid(y): return np.sum(integrate.cumulative_trapezoid(np.sin(GRID * y[0]), x=GRID * y[1], axis=1))
def cumtrapz_axis0(y): return np.sum(integrate.cumulative_trapezoid(np.outer(y, y), x=np.cumsum(y), axis=0, initial=0))
def cumtrapz_spacing(y): return np.sum(integrate.cumulative_trapezoid(np.outer(y, y), dx=y[0], axis=0))
def simpson_odd(y): return np.sum(integrate.simpson(y ** 3, dx=0.3))
def simpson_even(y): return np.sum(integrate.simpson(y[:4] ** 3, x=POINTS))
def simpson_two(y): return np.sum(integrate.simpson(y[:2] ** 3, x=POINTS[:2]))
def simpson_grid(y): return np.sum(integrate.simpson(np.sin(GRID * y[0]), x=GRID, axis=-1))
def simpson_axis0(y): return np.sum(integrate.simpson(np.outer(y, y[:4]), dx=y[1], axis=0))


INTEGRATE = [(trapezoid_dx, (positive(5),)), (trapezoid_x, (positive(5),)), (trapezoid_axis, (R(3, 1),)),
             (cumtrapz_dx, (positive(5),)), (cumtrapz_initial, (positive(4),)), (cumtrapz_x, (positive(5),)),
             (cumtrapz_grid, (positive(2),)), (cumtrapz_axis0, (positive(4),)), (cumtrapz_spacing, (positive(3),)),
             (simpson_odd, (positive(5),)), (simpson_even, (positive(4),)), (simpson_two, (positive(3),)),
             (simpson_grid, (positive(2),)), (simpson_axis0, (positive(5),))]


# ---- Bessel functions ------------------------------------------------------------------------

def kv_(x): return np.sum(special.kv(1.5, x) * x)
def kv_near_0(x): return np.sum(special.kv(0.5, x * 1e-2))
def kn_(x): return np.sum(special.kn(2, x) * x ** 2)
def kve_(x): return np.sum(special.kve(0.7, x) ** 2)
def spherical_jn_(x): return np.sum(special.spherical_jn(2, x) ** 2)
def spherical_jn_orders(x): return np.sum(special.spherical_jn(np.arange(4), x))
def spherical_jn_derivative(x): return np.sum(special.spherical_jn(0, x, derivative=True) + special.spherical_jn(3, x, True))
def spherical_yn_(x): return np.sum(special.spherical_yn(1, x) * x ** 3)
def spherical_yn_derivative(x): return np.sum(special.spherical_yn(2, x, True) * x ** 4)


BESSEL = [(kv_, (positive(4),)), (kv_near_0, (positive(4),)), (kn_, (positive(4),)), (kve_, (positive(4),)),
          (spherical_jn_, (positive(4),)), (spherical_jn_orders, (positive(4),)),
          (spherical_jn_derivative, (positive(4),)), (spherical_yn_, (positive(4),)),
          (spherical_yn_derivative, (positive(4),))]


@pytest.mark.parametrize("fun, args", INTEGRATE + BESSEL, ids=lambda v: getattr(v, "__name__", ""))
def test_rule_in_every_mode(fun, args):
    check_all_modes(fun, args)


@pytest.mark.parametrize("fun, args", FFT, ids=lambda v: getattr(v, "__name__", ""))
def test_transform_in_every_mode_srcad_takes_through_complex_values(fun, args):
    check_through_complex_values(fun, args)


def check_through_complex_values(fun, args):
    """Reverse and forward mode, and hvp (forward over reverse); reverse over reverse is
    refused through complex values, as for np.fft."""
    check_grads(fun, args, modes=("rev",))
    check_jvp(fun, args)
    x = args[0]
    u = np.random.default_rng(1).standard_normal(x.shape)
    gradient = srcad.grad(fun)
    numeric = (gradient(x + 1e-6 * u) - gradient(x - 1e-6 * u)) / 2e-6
    np.testing.assert_allclose(srcad.hvp(fun)(x, u), numeric, rtol=1e-5, atol=1e-7)


def test_bessel_slopes_at_zero_are_the_limits():
    """J₁'(0) = 1/2 and j₁'(0) = 1/3, j₀''(0) = -1/3 (entire functions); K₁ is infinite at 0 and
    so is its slope: no finite guess."""
    zero = np.zeros(1)
    np.testing.assert_allclose(srcad.grad(bessel_j1)(zero), [0.5])
    np.testing.assert_allclose(srcad.grad(spherical_j1)(zero), [1 / 3])
    np.testing.assert_allclose(srcad.grad(spherical_j0_slope)(zero), [-1 / 3])
    assert np.isneginf(srcad.grad(bessel_k1)(zero)[0])


def bessel_j1(x): return np.sum(special.jv(1.0, x))
def spherical_j1(x): return np.sum(special.spherical_jn(1, x))
def spherical_j0_slope(x): return np.sum(special.spherical_jn(0, x, True))
def bessel_k1(x): return np.sum(special.kv(1.0, x))


# ---- refusals: each at the user's line, in both modes ---------------------------------------

def decay(y, t, k):
    return -k * y


def decay_ivp(t, y, k):
    return -k * y


def integrand(t, k):
    return np.exp(-k * t)


def odeint_args(x): return np.sum(integrate.odeint(decay, np.ones(2), np.linspace(0, 1, 4), args=(x,))[-1])
def odeint_y0(x): return np.sum(integrate.odeint(decay, x, np.linspace(0, 1, 4), args=(np.ones(2),))[-1])
def odeint_t(x): return np.sum(integrate.odeint(decay, np.ones(2), np.cumsum(x), args=(np.ones(2),)))
def solve_ivp_y0(x): return np.sum(integrate.solve_ivp(decay_ivp, (0.0, 1.0), x, args=(1.0,)).y[:, -1])
def solve_ivp_args(x): return np.sum(integrate.solve_ivp(decay_ivp, (0.0, 1.0), np.ones(2), args=(x[0],)).y)
def quad_bound(x): return np.sum(integrate.quad(np.exp, 0.0, x[0])[0])
def quad_args(x): return np.sum(integrate.quad(integrand, 0.0, 1.0, args=(x[0],))[0])
def quad_vec_args(x): return np.sum(integrate.quad_vec(integrand, 0.0, 1.0, args=(x,))[0])
def fixed_quad_bound(x): return np.sum(integrate.fixed_quad(np.exp, 0.0, x[0])[0])
def nquad_args(x): return np.sum(integrate.nquad(integrand, [(0.0, 1.0)], args=(x[0],))[0])
def dblquad_bound(x): return np.sum(integrate.dblquad(integrand, 0.0, x[0], 0.0, 1.0)[0])


INTEGRATORS = [(odeint_args, "scipy.integrate.odeint", "Runge-Kutta"), (odeint_y0, "odeint", "Runge-Kutta"),
               (odeint_t, "odeint", "Runge-Kutta"), (solve_ivp_y0, "solve_ivp", "Runge-Kutta"),
               (solve_ivp_args, "solve_ivp", "Runge-Kutta"), (quad_bound, "scipy.integrate", "leggauss"),
               (quad_args, "scipy.integrate", "leggauss"), (quad_vec_args, "scipy.integrate", "leggauss"),
               (fixed_quad_bound, "scipy.integrate", "leggauss"), (dblquad_bound, "scipy.integrate", "leggauss"),
               (nquad_args, "scipy.integrate", "leggauss")]


@pytest.mark.parametrize("fun, what, advice", INTEGRATORS, ids=lambda v: getattr(v, "__name__", ""))
def test_integrator_with_a_derivative_is_refused_with_advice(fun, what, advice):
    x = positive(2)
    message = refused(fun, x, line_text=f"def {fun.__name__}(x)", message="srcad does not differentiate")
    assert what in message and advice in message and "register_vjp" in message
    with pytest.raises(srcad.SrcadSyntaxError, match=advice):
        srcad.jvp(fun, (x,), (np.ones(2),))


def constant_integrals(x): return np.sum(x[0] * integrate.quad(np.exp, 0.0, 1.0)[0] + x[1] * integrate.trapezoid(POINTS))


def test_integrators_of_constants_still_run():
    check_all_modes(constant_integrals, (R(2),))


def simpson_points(x): return np.sum(integrate.simpson(POINTS, x=np.cumsum(x)))
def kv_order(x): return np.sum(special.kv(x[0], x))
def spherical_order(x): return np.sum(special.spherical_jn(x, 1.5))


@pytest.mark.parametrize("fun, message", [
    (simpson_points, "scipy.integrate.simpson in its sample points x"),
    (kv_order, "scipy.special.kv in its order v"),
    (spherical_order, "scipy.special.spherical_jn in its order n"),
])
def test_derivatives_srcad_does_not_take_are_refused(fun, message):
    x = positive(4)
    refused(fun, x, line_text=f"def {fun.__name__}(x)", message=message)
    with pytest.raises(srcad.SrcadSyntaxError, match=message):
        srcad.jvp(fun, (x,), (np.ones(4),))


def test_a_precomputed_plan_is_refused():
    """(SciPy's own backend refuses a plan too; another backend, installed with
    scipy.fft.set_backend, may take one, and srcad's adjoint would not know it.)"""
    with pytest.raises(UnsupportedCaseError, match="precomputed plan"):
        scipy_fft.unplanned("ortho", object())
    assert scipy_fft.unplanned("ortho", None) == "ortho"


def exp_of_spectrum(x): return np.sum(np.real(np.exp(sfft.fft(x))))
def exp_of_half_spectrum(x): return np.sum(np.real(np.exp(sfft.rfft2(x))))


@pytest.mark.parametrize("fun", [exp_of_spectrum, exp_of_half_spectrum])
def test_a_scipy_fft_result_is_known_complex(fun):
    """np.exp's rule is a real one: on scipy.fft's complex result it is refused, not applied
    (it was silently wrong while scipy.fft's transforms were not known to make complex values)."""
    refused(fun, R(3, 4), line_text=f"def {fun.__name__}(x)", message="may have a complex operand or result")


def real_after_irfft(x): return np.sum(np.exp(sfft.irfft(sfft.rfft(x) * 1.5, n=5)))


def test_an_inverse_real_transform_is_known_real():
    check_through_complex_values(real_after_irfft, (R(5),))


# ---- the advice for ODEs: a fixed-step RK4 loop in the function ---------------------------------

def rk4_final_state(rates):
    """y' = -rates * y + sin(t), y(0) = 1, integrated to t = 1 in 20 classical RK4 steps."""
    y = np.ones(2)
    h = 0.05
    for i in range(20):
        t = i * h
        k1 = -rates * y + np.sin(t)
        k2 = -rates * (y + h / 2 * k1) + np.sin(t + h / 2)
        k3 = -rates * (y + h / 2 * k2) + np.sin(t + h / 2)
        k4 = -rates * (y + h * k3) + np.sin(t + h)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return np.sum(y ** 2)


def forced_decay(y, t, rates):
    return -rates * y + np.sin(t)


def test_the_advised_rk4_loop_is_differentiated_and_matches_odeint():
    rates = np.array([0.4, 1.3])
    check_all_modes(rk4_final_state, (rates,))
    exact = integrate.odeint(forced_decay, np.ones(2), [0.0, 1.0], args=(rates,), rtol=1e-12, atol=1e-12)[-1]
    np.testing.assert_allclose(rk4_final_state(rates), np.sum(exact ** 2), rtol=1e-6)


# ---- the hygiene sweep's calls (tests/test_rules_hygiene.py) -----------------------------------

HYGIENE_CALLS = [
    (sfft.fft, [R(5)], {"n": 6}, (0,), "abs({fn}({0}, n=6))"),
    (sfft.ifft, [R(5)], {}, (0,), "abs({fn}({0}))"),
    (sfft.rfft, [R(5)], {}, (0,), "abs({fn}({0}))"),
    (sfft.irfft, [R(5)], {}, (0,), None),
    (sfft.hfft, [R(5)], {}, (0,), None),
    (sfft.ihfft, [R(5)], {}, (0,), "abs({fn}({0}))"),
    (sfft.fftn, [R(3, 4)], {}, (0,), "abs({fn}({0}))"),
    (sfft.ifftn, [R(3, 4)], {}, (0,), "abs({fn}({0}))"),
    (sfft.fft2, [R(3, 4)], {}, (0,), "abs({fn}({0}))"),
    (sfft.ifft2, [R(3, 4)], {}, (0,), "abs({fn}({0}))"),
    (sfft.rfftn, [R(3, 4)], {}, (0,), "abs({fn}({0}))"),
    (sfft.rfft2, [R(3, 4)], {}, (0,), "abs({fn}({0}))"),
    (sfft.irfftn, [R(3, 4)], {}, (0,), None),
    (sfft.irfft2, [R(3, 4)], {}, (0,), None),
    (sfft.fftshift, [R(5)], {}, (0,), None),
    (sfft.ifftshift, [R(5)], {}, (0,), None),
    (integrate.trapezoid, [R(5)], {"x": POINTS[:1] + np.arange(5.0)}, (0, "x"), None),
    (integrate.cumulative_trapezoid, [R(5)], {"x": np.arange(5.0) ** 1.2, "initial": 0}, (0, "x"), None),
    (integrate.cumulative_trapezoid, [R(5)], {"dx": 0.4}, (0, "dx"), None),
    (integrate.simpson, [R(5)], {"dx": 0.4}, (0, "dx"), None),
    (special.kv, [1.5, positive(3)], {}, (1,), None),
    (special.kve, [0.5, positive(3)], {}, (1,), None),
    (special.spherical_jn, [2, positive(3)], {}, (1,), None),
    (special.spherical_yn, [1, positive(3)], {"derivative": True}, (1,), None),
]

REFUSED_CALLS = [
    (integrate.odeint, [decay, R(2), np.linspace(0.0, 1.0, 3)], {"args": (1.0,)}, (1,), None),
    (integrate.solve_ivp, [decay_ivp, (0.0, 1.0), R(2)], {"args": (1.0,)}, (2,), None),
    (integrate.quad, [np.exp, 0.0, 0.7], {}, (2,), None),
    (integrate.quad_vec, [np.exp, 0.0, 0.7], {}, (2,), None),
    (integrate.dblquad, [integrand, 0.0, 0.7, 0.0, 1.0], {}, (2,), None),
    (integrate.nquad, [integrand, [(0.0, 0.7)]], {"args": positive(1)}, ("args",), None),
]


def closure_rhs(x):
    def rhs(y, t):
        return -x * y
    return np.sum(integrate.odeint(rhs, np.ones(2), np.linspace(0.0, 1.0, 4))[-1])


def test_a_local_function_handed_to_an_integrator_is_told_about_args():
    """The way out of the inlining refusal, args=, leads to the integrator's own refusal and its advice."""
    refused(closure_rhs, positive(2), line_text="return np.sum(integrate.odeint(rhs",
            message="takes the values it needs through its args=")
