"""Fixes of probes 23D and 23E: an index that is a view, a list given to np.copyto, a rule
template's temporary bound in the branches of a run-time ``if``, and the real part of a complex
cotangent for a real value."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp


def update_through_unravelled_row(x):
    K = np.outer(x[:6], x[:4]).reshape(2, 3, 4) * 1.0
    i = np.unravel_index(4, (2, 3))  # one flat index: a tuple of integers, a basic index: K[i] is a view
    row = K[i]
    row[:] = np.sin(x[4:8])  # writes into K
    return np.sum(K ** 2)


def read_through_unravelled_rows(x):
    K = np.outer(x[:6], x[:4]).reshape(2, 3, 4)
    rows = K[np.unravel_index(np.array([1, 4]), (2, 3))]  # index arrays: a copy
    return np.sum(rows ** 2) + np.sum(K)


def test_a_view_by_an_unravelled_index_is_never_taken_for_a_copy():
    x = np.random.default_rng(1).standard_normal(8)
    try:
        g = srcad.grad(update_through_unravelled_row)(x)
    except srcad.SrcadSyntaxError as error:  # refused, naming the user's line: never a wrong value
        assert "row" in str(error) and "test_probe_23_fixes.py" in str(error)
    else:
        f = update_through_unravelled_row
        numeric = np.array([(f(x + 1e-6 * e) - f(x - 1e-6 * e)) / 2e-6 for e in np.eye(8)])
        np.testing.assert_allclose(g, numeric, rtol=1e-5, atol=1e-6)
    check_grads(read_through_unravelled_rows, (x,))


def copy_a_list_in(x):
    K = np.zeros(3)
    np.copyto(K, [x[0], x[1] * x[2], 2.0])
    return np.sum(K ** 2)


def test_copyto_from_a_list():
    x = np.array([0.3, -0.7, 1.1])
    g = srcad.grad(copy_a_list_in)(x)
    np.testing.assert_allclose(g, [2 * x[0], 2 * x[1] * x[2] ** 2, 2 * x[1] ** 2 * x[2]], rtol=1e-12)
    check_jvp(copy_a_list_in, (x,))


@srcad.custom_vjp
def select(a, b):
    return a * b if np.sum(a) > 0 else a + b


@select.defvjp
def select_vjp(y, a, b):
    if np.sum(a) > 0:
        d[a] += d[y] * b
        d[b] += d[y] * a
    else:
        d[a] += d[y]
        d[b] += d[y]


@select.defjvp
def select_jvp(y, a, b):
    if np.sum(a) > 0:
        g = t[b] * a
    else:
        g = t[a]
    t[y] += g
    if np.sum(a) > 0:
        t[y] += t[a] * b
    else:
        t[y] += t[b]


C = np.array([0.5, -0.3, 1.2])


def through_select(x):
    return np.sum(select(C, x) ** 2)


def through_select_both(a, x):
    return np.sum(select(a, x) ** 2)


def test_a_temporary_zero_in_one_branch_of_a_run_time_if_is_refused():
    """``g`` is t[b]·a in one branch and t[a] (zero: a is a constant) in the other: srcad lost
    the live term (jvp 0.0 for 8.61) or read g unbound; it refuses, naming the rule's line."""
    x = np.array([0.3, -0.7, 1.1])
    with pytest.raises(srcad.SrcadError, match=r"'g' is bound in the branches of an 'if' decided when the code runs"):
        srcad.jvp(through_select, (x,), (np.ones(3),))


def test_a_temporary_live_in_both_branches_is_kept():
    a, x = np.array([0.5, -0.3, 1.2]), np.array([0.3, -0.7, 1.1])
    check_jvp(through_select_both, (a, x), wrt=(0, 1))
    check_jvp(through_select_both, (-a, x), wrt=(0, 1))
    check_grads(through_select_both, (a, x), wrt=(0, 1))


def spectrum_plus_its_real_part(x):
    z = np.fft.fft(x)
    w = z + z.real ** 2  # a real value added to a complex one
    return np.sum(np.abs(w) ** 2)


def shifted_spectrum(x, s):
    z = np.fft.rfft(x)
    w = (z + np.sin(s) * x[0]) * 2.0 - z.imag  # real values shifting a complex one
    return np.sum(np.abs(w) ** 2)


def test_a_real_value_added_to_a_complex_one_gets_a_real_cotangent():
    """The cotangent of w = z + r (r real) is complex; r's part of it is its real part. srcad
    passed the imaginary part on to r too: a gradient of -0.230 where finite differences give
    0.442 (found by the helper of probe 23D)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(6)
    check_grads(spectrum_plus_its_real_part, (x,))
    check_grads(shifted_spectrum, (x, 0.7), wrt=(0, 1), modes=("rev",))
    check_jvp(shifted_spectrum, (x, 0.7), wrt=(0, 1))
