"""Ordinary library calls that probe 28 found refused, now differentiated: exact where the
derivative is a convention (ties, an ``initial`` that wins, entries outside a ``where`` mask),
the builtin ``min``/``max`` with ``default=``, and a ``functools.partial`` of a NumPy function
(the finite-difference rows are in tests/test_library_numpy.py)."""
import functools

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

X = np.array([0.3, -1.2, 0.7, 2.0, -0.4])
MASK = np.array([True, False, True, False, True])


def max_with_initial(x, c):
    return np.max(x, initial=c)


def test_an_initial_that_wins_gives_the_entries_nothing():
    gx, gc = srcad.grad(max_with_initial, wrt=(0, 1))(X, 5.0)
    np.testing.assert_array_equal(gx, np.zeros(5))
    assert gc == 1.0
    _, tangent = srcad.jvp(max_with_initial, (X, 5.0), (np.ones(5), 0.25))
    assert tangent == 0.25


def test_an_initial_tied_with_the_extremum_shares_it_as_one_more_entry():
    x = np.array([0.3, 2.0, 2.0, -0.4])
    gx, gc = srcad.grad(max_with_initial, wrt=(0, 1))(x, 2.0)
    np.testing.assert_allclose(gx, [0.0, 1 / 3, 1 / 3, 0.0])
    assert gc == pytest.approx(1 / 3)


def masked_sum(x):
    return np.sum(x ** 2, where=MASK) + np.mean(x, where=MASK) + np.max(x, where=MASK, initial=-9.0)


def test_entries_outside_the_mask_get_zero():
    expected = np.where(MASK, 2 * X + 1 / 3, 0.0) + np.array([0, 0, 1.0, 0, 0])  # 0.7 is the largest in the mask
    np.testing.assert_allclose(srcad.grad(masked_sum)(X), expected)
    _, tangent = srcad.jvp(masked_sum, (X,), (np.ones(5),))
    assert tangent == pytest.approx(np.sum(expected))


def pad_maximum(x):
    return np.sum(np.pad(x, (2, 1), mode="maximum") * np.arange(1.0, x.size + 4.0))


def pad_maximum_by_max(x):
    top = np.max(x)
    return np.sum(np.concatenate([[top, top], x, [top]]) * np.arange(1.0, x.size + 4.0))


def pad_median(x):
    return np.sum(np.pad(x, (1, 2), mode="median") * np.arange(1.0, x.size + 4.0))


def pad_median_by_median(x):
    middle = np.median(x)
    return np.sum(np.concatenate([[middle], x, [middle, middle]]) * np.arange(1.0, x.size + 4.0))


@pytest.mark.parametrize("x", [np.array([0.5, 2.0, -1.0, 2.0, 0.1]), np.array([1.0, 3.0, 1.0, 0.0, 3.0]),
                               np.array([1.0, 3.0, 1.0, 0.0])])
def test_pad_statistics_split_ties_as_np_max_and_np_median_do(x):
    """Ties at the maximum share equally, as np.max's rule splits them; the median of an even
    count is half each middle entry, tied entries sharing, as np.median's rule."""
    np.testing.assert_allclose(srcad.grad(pad_maximum)(x), srcad.grad(pad_maximum_by_max)(x))
    np.testing.assert_allclose(srcad.grad(pad_median)(x), srcad.grad(pad_median_by_median)(x))
    u = np.linspace(-1.0, 1.0, x.size)
    assert srcad.jvp(pad_median, (x,), (u,))[1] == pytest.approx(srcad.jvp(pad_median_by_median, (x,), (u,))[1])


def first_or_default(x):
    return min([v for v in x if v > 10.0], default=x[2] * 3.0) + max([x[0], x[1] * 2.0], default=x[3])


def test_builtin_min_and_max_with_a_default():
    """``default`` is the result only for an empty iterable: it gets the derivative then, and
    nothing otherwise."""
    np.testing.assert_allclose(srcad.grad(first_or_default)(X), [1.0, 0.0, 3.0, 0.0, 0.0])
    check_grads(first_or_default, (X,), modes=("rev",))
    check_jvp(first_or_default, (X,))


CLIP = functools.partial(np.clip, a_min=-0.5, a_max=0.7)
SUM_ROWS = functools.partial(np.sum, axis=0)
POWER_OF_TWO = functools.partial(np.power, 2.0)
FREXP = functools.partial(np.frexp)


def clipped(x):
    return np.sum(CLIP(x) ** 2) + np.sum(CLIP(x, a_max=0.1) * x)  # the call's keyword overrides the partial's


def summed(m):
    return np.sum(SUM_ROWS(m) ** 2) + np.sum(SUM_ROWS(m, axis=1) ** 3) + np.sum(POWER_OF_TWO(m))


def test_a_partial_of_a_numpy_function_is_that_function_with_its_arguments():
    x = X + 0.05  # no entry at a bound
    expected = np.where((x > -0.5) & (x < 0.7), 2 * x, 0.0) + np.clip(x, -0.5, 0.1) + np.where(
        (x > -0.5) & (x < 0.1), x, 0.0)
    np.testing.assert_allclose(srcad.grad(clipped)(x), expected)
    check_jvp(clipped, (x,))
    m = np.arange(12.0).reshape(3, 4) * 0.37 - 1
    check_grads(summed, (m,), modes=("rev",))
    check_jvp(summed, (m,))
    u = np.ones_like(m)
    eps = 1e-5
    gradient = srcad.grad(summed)
    np.testing.assert_allclose(srcad.hvp(summed)(m, u), (gradient(m + eps * u) - gradient(m - eps * u)) / (2 * eps),
                               rtol=1e-5)


def fraction(x):
    return np.sum(FREXP(x)[0] * x)


def test_a_partial_of_a_function_without_a_rule_is_refused_naming_its_type_once():
    with pytest.raises(srcad.NoRuleError, match=r"FREXP \(functools\.partial\(<ufunc 'frexp'>\)\) has no derivative"):
        srcad.grad(fraction)(X)
