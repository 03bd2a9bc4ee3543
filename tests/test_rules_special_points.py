"""Rules at special points, where finite differences in random directions are no oracle: an
input resting at a point where its slope is infinite (``x ** 0.5`` at 0, ``entr`` at 0) moves
nothing in forward mode, as ``np.sqrt`` promises (docs/limitations.md, Conventions). Along a
direction that leaves that input at rest the function is smooth, so each value is checked
against central differences along that direction. A QR factorisation of a matrix without full
column rank has no derivative: refused there, not rounding error."""
import math

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads

scipy = pytest.importorskip("scipy")
from scipy import special  # noqa: E402


def along(f, args, tangents, eps=1e-6):
    """The central difference of ``f`` along ``tangents`` (None: held still)."""
    def moved(s):
        return [a if t is None else a + s * t for a, t in zip(args, tangents)]
    return (np.asarray(f(*moved(eps))) - np.asarray(f(*moved(-eps)))) / (2 * eps)


def assert_resting_moves_nothing(f, args, tangents):
    y, y_dot = srcad.jvp(f, args, tangents)
    assert np.all(np.isfinite(y_dot))
    np.testing.assert_allclose(y_dot, along(f, args, tangents), rtol=1e-6, atol=1e-8)


def decay_by_power(x, t):
    return x * np.exp(-t) * t ** 0.5


def decay_by_sqrt(x, t):
    return x * np.exp(-t) * np.sqrt(t)


def power_of(x, t, p):
    return x * t ** p


def float_power_of(x, t):
    return x * np.float_power(t, 0.25)


X = np.array([1.0, -2.0, 0.5])


@pytest.mark.parametrize("t", [0.0, np.float64(0.0), np.array(0.0)], ids=["float", "float64", "0-d"])
def test_a_resting_time_at_zero_moves_nothing_through_a_fractional_power(t):
    tangents = (np.ones(3), np.zeros_like(t) if isinstance(t, np.ndarray) else 0.0 * t)
    assert_resting_moves_nothing(decay_by_power, (X, t), tangents)
    np.testing.assert_array_equal(srcad.jvp(decay_by_power, (X, t), tangents)[1],
                                  srcad.jvp(decay_by_sqrt, (X, t), tangents)[1])


def test_resting_entries_at_zero_move_nothing_through_a_fractional_power():
    t = np.array([0.0, 1.0, 4.0])
    assert_resting_moves_nothing(decay_by_power, (X, t), (np.ones(3), np.array([0.0, 1.0, -1.0])))
    for p in (0.5, np.array([0.5, 2.0, 0.0])):  # an exponent the code reads, one per entry
        assert_resting_moves_nothing(power_of, (X, t, p), (np.ones(3), np.array([0.0, 1.0, 1.0]), None))
    assert_resting_moves_nothing(float_power_of, (X, t), (np.ones(3), np.array([0.0, 2.0, 1.0])))
    # an entry at 0 that moves still meets the infinite slope
    y_dot = srcad.jvp(power_of, (X, t, 0.5), (None, np.array([1.0, 0.0, 0.0]), None))[1]
    assert y_dot[0] == np.inf and np.all(y_dot[1:] == 0.0)


def entropies(p, q):
    return special.entr(p) + special.rel_entr(p, q) + special.kl_div(p, q)


def test_a_resting_probability_at_zero_moves_nothing_through_the_entropies():
    p, q = np.array([0.0, 0.25, 0.75]), np.array([0.5, 0.25, 0.25])
    assert_resting_moves_nothing(entropies, (p, q), (np.array([0.0, 1.0, -1.0]), np.array([1.0, -0.5, -0.5])))
    assert_resting_moves_nothing(entropies, (p, q), (None, np.array([1.0, -0.5, -0.5])))


def polar(p, x):
    return np.hypot(p[0], p[1]) * x + np.arctan2(p[1], p[0]) * x


def polar_of_floats(a, b, x):
    return math.hypot(a, b) * x + math.atan2(b, a) * x


def test_a_resting_point_at_the_origin_moves_nothing_through_hypot_and_arctan2():
    x = np.array([1.0, 2.0])
    assert_resting_moves_nothing(polar, (np.zeros(2), x), (np.zeros(2), np.ones(2)))
    assert_resting_moves_nothing(polar_of_floats, (0.0, 0.0, x), (0.0, 0.0, np.ones(2)))
    assert_resting_moves_nothing(polar, (np.array([3.0, 0.0]), x), (np.array([0.0, 1.0]), np.ones(2)))


def standardized(x, w):
    return (x * w) / (np.std(x, axis=1, keepdims=True) + 1e-3) + (x * w) / (np.nanstd(x, axis=1, keepdims=True) + 1e-3)


def test_a_resting_constant_row_moves_nothing_through_std():
    x, w = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 4.0]]), np.array([1.0, 2.0, 3.0])
    assert_resting_moves_nothing(standardized, (x, w), (None, np.ones(3)))
    assert_resting_moves_nothing(standardized, (x, w), (np.array([[0.0, 0.0, 0.0], [1.0, 0.0, -1.0]]), np.ones(3)))


def _qr_sum(a):
    q, r = np.linalg.qr(a)
    return np.sum(r) + np.sum(q[:, 0])


@pytest.mark.parametrize("a", [np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]]),  # rank 1: R[1, 1] ~ 4e-16
                               np.array([[1.0, 2.0, 0.5], [2.0, 4.0, 1.0]])],  # wide, its square part rank 1
                         ids=["tall", "wide"])
def test_qr_of_a_matrix_without_full_column_rank_is_refused_not_rounding_error(a):
    # (the gradient there was finite and wrong: -0.85 where one-sided differences agree on 0.78)
    with pytest.raises(srcad.UnsupportedCaseError, match="full column rank"):
        srcad.grad(_qr_sum)(a)
    with pytest.raises(srcad.UnsupportedCaseError, match="full column rank"):
        srcad.jvp(_qr_sum, (a,), (np.ones_like(a),))


def test_qr_near_a_rank_deficient_matrix_is_still_differentiated():
    check_grads(_qr_sum, (np.array([[1.0, 2.0], [2.0, 4.5], [0.0, 1e-3]]),))
