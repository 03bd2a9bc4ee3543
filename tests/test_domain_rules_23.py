"""Probe 23D (finance, signal, physics): rules for np.correlate and math.erf/erfc, a helper
called for its effect that updates its parameter with ``v += e`` (a velocity-Verlet kick),
and refusals of calls made for their effect naming what the call changes. Values against
central finite differences in every mode (lang_checks.check_all_modes)."""
import math

import numpy as np
import pytest

import srcad
from srcad.errors import SrcadSyntaxError
from lang_checks import check_all_modes

R = np.random.default_rng(23).standard_normal


def autocorrelation(x):
    xc = x - x.mean()
    r = np.correlate(xc, xc, mode="full")[len(x) - 1:]
    return np.sum(r[:4] / r[0])


def correlate_same_short_even(x):  # NumPy centres 'same' one later than np.convolve here
    return np.sum(np.correlate(x[:4], x ** 2, "same") ** 2)


def correlate_valid_default(x):
    return np.sum(np.sin(np.correlate(x, x[1:4] * 2.0)))


@pytest.mark.parametrize("fun", [autocorrelation, correlate_same_short_even, correlate_valid_default],
                         ids=lambda f: f.__name__)
def test_correlate(fun):
    check_all_modes(fun, (R(7),))


def bs_call(S, sig):
    d1 = (math.log(S / 100.0) + 0.5 * sig * sig) / sig
    N = lambda z: 0.5 * math.erfc(-z / math.sqrt(2.0))
    return S * N(d1) - 100.0 * N(d1 - sig)


def bs_call_packed(p):
    return bs_call(p[0], p[1])


def erf_of_product(x):
    return math.erf(x[0] * x[1]) + math.erfc(x[1] - 0.3 * x[0])


def test_black_scholes_with_math_erfc():
    check_all_modes(bs_call_packed, (np.array([100.0, 0.2]),))


def test_math_erf_and_erfc():
    check_all_modes(erf_of_product, (np.array([0.4, -0.7]),))


# ---- a helper updating its parameter with 'v += e', called for its effect -----------------

def kick(v, F, dt):
    v += 0.5 * dt * F


def drift(x, v, dt):
    x += dt * v
    x *= 1.0 - 0.1 * dt


def verlet(x0, v0, k):
    x, v = x0.copy(), v0.copy()
    for _ in range(3):
        kick(v, -k * x, 0.1)
        drift(x, v, 0.1)
        kick(v, -k * x, 0.1)
    return np.sum(x ** 2) + np.sum(v * x)


@pytest.mark.parametrize("wrt", [0, 1, 2])
def test_velocity_verlet_with_kick_helpers(wrt):
    check_all_modes(verlet, (R(3), R(3), 1.3), wrt=wrt)


def test_the_callers_argument_is_not_changed():
    x0, v0 = R(3), R(3)
    before = x0.copy(), v0.copy()
    srcad.grad(verlet, wrt=(0, 1))(x0, v0, 1.3)
    np.testing.assert_array_equal(x0, before[0])
    np.testing.assert_array_equal(v0, before[1])


def kick_then_read_alias(v0, F):
    v = v0.copy()
    kept = v
    kick(v, F, 0.1)
    return np.sum(kept ** 3)


def test_an_alias_read_after_the_kick_is_refused():
    with pytest.raises(SrcadSyntaxError, match="'kept', which shares memory"):
        srcad.grad(kick_then_read_alias)(R(2), R(2))


def kick_a_number(x):
    s = x * 1.0
    kick(s, x, 0.1)  # Python: kick rebinds its own 'v'; s is unchanged
    return s


def test_kick_of_a_number_is_refused_saying_what_to_do():
    with pytest.raises(srcad.SrcadError, match=r"'v \+= \.\.\.' in kick, which is called for its effect, changes "
                                               r"the caller's value in place only where it is a NumPy array; here "
                                               r"it is a float.*Return the new value from kick"):
        srcad.grad(kick_a_number)(2.0)


# ---- refusals of calls made for their effect name what changes -----------------------------

def accumulate(L, x):
    for k in range(3):
        L.append(x * (k + 1))


def run_list(x):
    L = []
    accumulate(L, x)
    return np.sum(np.stack(L) ** 2)


def put_along(x):
    y = np.zeros((2, 3))
    np.put_along_axis(y, np.array([1, 5]), x, axis=None)  # (into the flattened array: no store srcad writes)
    return np.sum(y ** 2)


def test_a_helper_appending_to_a_list_argument_names_the_list():
    with pytest.raises(SrcadSyntaxError, match=r"accumulate\(\.\.\.\) made for its effect on 'L' given 'x', which "
                                               r"carries a derivative.*make accumulate return the new value of 'L' "
                                               r"and assign it \('L = accumulate\(L, x\)'\)") as e:
        srcad.grad(run_list)(R(2))
    assert e.value.filename == __file__


def accumulate_returning(L, x):
    for k in range(3):
        L.append(x * (k + 1))
    return L


def run_list_as_advised(x):
    L = []
    L = accumulate_returning(L, x)
    return np.sum(np.stack(L) ** 2)


def test_the_advice_works():
    check_all_modes(run_list_as_advised, (R(2),))


def test_put_along_axis_names_the_array_it_changes():
    with pytest.raises(SrcadSyntaxError, match=r"np.put_along_axis\(\.\.\.\) made for its effect on 'y' given 'x'.*"
                                               r"assign a new value to 'y'"):
        srcad.grad(put_along)(R(2))
