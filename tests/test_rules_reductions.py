"""Reductions and scans: vjp and jvp rules against finite differences through srcad, ties,
zeros, NaNs, float32."""
import numpy as np
import pytest
from numpy.linalg import norm

import srcad
from srcad import registry
from srcad.rules import numpy_reductions
from srcad.testing import check_grads, check_jvp
from test_rules_elementwise import covered_keys

SHAPES = [(), (3,), (2, 3)]
NUMPY2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"
W2 = np.array([0.5, 2.0])
W3 = np.array([1.0, 2.0, 3.0])
W24 = np.arange(1.0, 9.0).reshape(2, 4)

# (key, keyword arguments, the same call for srcad, domain), over every shape in SHAPES
WHOLE = [
    (np.sum, {}, lambda x: np.sum(x), (-2, 2)),
    (np.mean, {}, lambda x: np.mean(x), (-2, 2)),
    (np.prod, {}, lambda x: np.prod(x), (-2, 2)),
    (np.var, {}, lambda x: np.var(x), (-2, 2)),
    (np.max, {}, lambda x: np.max(x), (-2, 2)),
    (np.min, {}, lambda x: np.min(x), (-2, 2)),
    (np.amax, {}, lambda x: np.amax(x), (-2, 2)),
    (np.amin, {}, lambda x: np.amin(x), (-2, 2)),
    (np.ptp, {}, lambda x: np.ptp(x), (-2, 2)),
    (np.cumsum, {}, lambda x: np.cumsum(x), (-2, 2)),
    (np.cumprod, {}, lambda x: np.cumprod(x), (-2, 2)),
    (np.average, {}, lambda x: np.average(x), (-2, 2)),
    (np.nansum, {}, lambda x: np.nansum(x), (-2, 2)),
    (np.nanmean, {}, lambda x: np.nanmean(x), (-2, 2)),
    (np.nanmax, {}, lambda x: np.nanmax(x), (-2, 2)),
    (np.nanmin, {}, lambda x: np.nanmin(x), (-2, 2)),
    (np.median, {}, lambda x: np.median(x), (-2, 2)),
    (np.quantile, dict(q=0.3), lambda x: np.quantile(x, 0.3), (-2, 2)),
    (np.percentile, dict(q=[20.0, 75.0]), lambda x: np.percentile(x, [20.0, 75.0]), (-2, 2)),
    (norm, {}, lambda x: norm(x), (0.2, 2)),
]

# (key, keyword arguments, the same call for srcad, shape, domain)
AXES = [
    (np.sum, dict(axis=1), lambda x: np.sum(x, axis=1), (2, 3), (-2, 2)),
    (np.sum, dict(axis=-1, keepdims=True), lambda x: np.sum(x, axis=-1, keepdims=True), (2, 3), (-2, 2)),
    (np.sum, dict(axis=(0, 2)), lambda x: np.sum(x, axis=(0, 2)), (2, 3, 4), (-2, 2)),
    (np.mean, dict(axis=0), lambda x: np.mean(x, axis=0), (2, 3), (-2, 2)),
    (np.mean, dict(axis=(0, 2), keepdims=True), lambda x: np.mean(x, axis=(0, 2), keepdims=True), (2, 3, 4), (-2, 2)),
    (np.prod, dict(axis=1), lambda x: np.prod(x, axis=1), (2, 3), (-2, 2)),
    (np.prod, dict(axis=(0, 1), keepdims=True), lambda x: np.prod(x, axis=(0, 1), keepdims=True), (2, 3), (-2, 2)),
    (np.var, dict(axis=1, ddof=1), lambda x: np.var(x, axis=1, ddof=1), (2, 3), (-2, 2)),
    (np.var, dict(axis=(0, 2), keepdims=True), lambda x: np.var(x, axis=(0, 2), keepdims=True), (2, 3, 4), (-2, 2)),
    (np.var, dict(ddof=2), lambda x: np.var(x, ddof=2), (2, 3), (-2, 2)),
    (np.std, {}, lambda x: np.std(x), (3,), (-2, 2)),
    (np.std, {}, lambda x: np.std(x), (2, 3), (-2, 2)),
    (np.std, dict(axis=0, ddof=1), lambda x: np.std(x, axis=0, ddof=1), (2, 3), (-2, 2)),
    (np.std, dict(axis=(1, 2), keepdims=True), lambda x: np.std(x, axis=(1, 2), keepdims=True), (2, 3, 4), (-2, 2)),
    (np.max, dict(axis=1), lambda x: np.max(x, axis=1), (2, 3), (-2, 2)),
    (np.min, dict(axis=0, keepdims=True), lambda x: np.min(x, axis=0, keepdims=True), (2, 3), (-2, 2)),
    (np.amax, dict(axis=(0, 2)), lambda x: np.amax(x, axis=(0, 2)), (2, 3, 4), (-2, 2)),
    (np.amin, dict(axis=-1), lambda x: np.amin(x, axis=-1), (2, 3), (-2, 2)),
    (np.ptp, dict(axis=1), lambda x: np.ptp(x, axis=1), (2, 3), (-2, 2)),
    (np.ptp, dict(axis=(0, 1), keepdims=True), lambda x: np.ptp(x, axis=(0, 1), keepdims=True), (2, 3, 4), (-2, 2)),
    (np.cumsum, dict(axis=0), lambda x: np.cumsum(x, axis=0), (2, 3), (-2, 2)),
    (np.cumsum, dict(axis=-1), lambda x: np.cumsum(x, axis=-1), (2, 3, 4), (-2, 2)),
    (np.cumprod, dict(axis=1), lambda x: np.cumprod(x, axis=1), (2, 3), (-2, 2)),
    (np.cumprod, dict(axis=0), lambda x: np.cumprod(x, axis=0), (4, 2, 3), (-2, 2)),
    (np.cumprod, {}, lambda x: np.cumprod(x), (2, 3), (-2, 2)),
    (np.average, dict(axis=1), lambda x: np.average(x, axis=1), (2, 3), (-2, 2)),
    (np.average, dict(axis=0, weights=W2), lambda x: np.average(x, axis=0, weights=W2), (2, 3), (-2, 2)),
    (np.trace, {}, lambda x: np.trace(x), (3, 3), (-2, 2)),
    (np.trace, dict(offset=1), lambda x: np.trace(x, offset=1), (3, 4), (-2, 2)),
    (np.trace, dict(offset=-1, axis1=1, axis2=2), lambda x: np.trace(x, offset=-1, axis1=1, axis2=2), (2, 3, 3), (-2, 2)),
    (np.nansum, dict(axis=1), lambda x: np.nansum(x, axis=1), (2, 3), (-2, 2)),
    (np.nanmean, dict(axis=0, keepdims=True), lambda x: np.nanmean(x, axis=0, keepdims=True), (2, 3), (-2, 2)),
    (np.nanvar, dict(axis=1, ddof=1), lambda x: np.nanvar(x, axis=1, ddof=1), (2, 3), (-2, 2)),
    (np.nanstd, {}, lambda x: np.nanstd(x), (2, 3), (-2, 2)),
    (np.nanstd, dict(axis=(0, 2), keepdims=True), lambda x: np.nanstd(x, axis=(0, 2), keepdims=True), (2, 3, 4), (-2, 2)),
    (np.median, {}, lambda x: np.median(x), (4,), (-2, 2)),
    (np.median, dict(axis=1), lambda x: np.median(x, axis=1), (2, 3), (-2, 2)),
    (np.median, dict(axis=0), lambda x: np.median(x, axis=0), (4, 3), (-2, 2)),
    (np.median, dict(axis=(0, 2), keepdims=True), lambda x: np.median(x, axis=(0, 2), keepdims=True), (2, 3, 3), (-2, 2)),
    (np.quantile, dict(q=[0.1, 0.5, 0.95], axis=1), lambda x: np.quantile(x, [0.1, 0.5, 0.95], axis=1), (2, 5), (-2, 2)),
    (np.quantile, dict(q=0.4, axis=(0, 2), keepdims=True, method="hazen"),
     lambda x: np.quantile(x, 0.4, axis=(0, 2), keepdims=True, method="hazen"), (2, 3, 4), (-2, 2)),
    (np.percentile, dict(q=[[10.0], [60.0]], axis=-1, method="nearest"),
     lambda x: np.percentile(x, [[10.0], [60.0]], axis=-1, method="nearest"), (3, 4), (-2, 2)),
    (np.nanmedian, {}, lambda x: np.nanmedian(x), (4,), (-2, 2)),
    (np.nanmedian, dict(axis=1, keepdims=True), lambda x: np.nanmedian(x, axis=1, keepdims=True), (2, 3), (-2, 2)),
    (np.nanquantile, dict(q=[0.1, 0.5, 0.95], axis=(0, 2)), lambda x: np.nanquantile(x, [0.1, 0.5, 0.95], axis=(0, 2)),
     (2, 3, 2), (-2, 2)),
    (np.nanpercentile, dict(q=30.0, axis=0, keepdims=True, method="weibull"),
     lambda x: np.nanpercentile(x, 30.0, axis=0, keepdims=True, method="weibull"), (5, 2), (-2, 2)),
    (np.cov, {}, lambda x: np.cov(x), (3, 5), (-2, 2)),
    (np.cov, dict(rowvar=False, ddof=0), lambda x: np.cov(x, rowvar=False, ddof=0), (5, 2), (-2, 2)),
    (np.cov, dict(bias=True), lambda x: np.cov(x, bias=True), (4,), (-2, 2)),
    (np.corrcoef, {}, lambda x: np.corrcoef(x), (3, 5), (-2, 2)),
    (np.corrcoef, dict(rowvar=False), lambda x: np.corrcoef(x, rowvar=False), (6, 2), (-2, 2)),
    (norm, dict(ord=1), lambda x: norm(x, ord=1), (3,), (-2, 2)),
    (norm, dict(ord=2), lambda x: norm(x, ord=2), (3,), (-2, 2)),
    (norm, dict(ord=np.inf), lambda x: norm(x, ord=np.inf), (4,), (-2, 2)),
    (norm, dict(ord=-np.inf), lambda x: norm(x, ord=-np.inf), (4,), (-2, 2)),
    (norm, dict(ord=3), lambda x: norm(x, ord=3), (4,), (-2, 2)),
    (norm, dict(ord=0.5), lambda x: norm(x, ord=0.5), (4,), (0.2, 2)),
    (norm, dict(ord=-1.5), lambda x: norm(x, ord=-1.5), (4,), (0.2, 2)),
    (norm, dict(ord=0), lambda x: norm(x, ord=0), (4,), (0.2, 2)),
    (norm, dict(axis=1), lambda x: norm(x, axis=1), (2, 3), (-2, 2)),
    (norm, dict(ord=1, axis=0, keepdims=True), lambda x: norm(x, ord=1, axis=0, keepdims=True), (2, 3), (-2, 2)),
    (norm, {}, lambda x: norm(x), (2, 3, 4), (-2, 2)),
    (norm, dict(ord="fro"), lambda x: norm(x, ord="fro"), (3, 4), (-2, 2)),
    (norm, dict(ord="nuc"), lambda x: norm(x, ord="nuc"), (3, 4), (-2, 2)),
    (norm, dict(ord=2), lambda x: norm(x, ord=2), (4, 3), (-2, 2)),
    (norm, dict(ord=-2), lambda x: norm(x, ord=-2), (3, 3), (-2, 2)),
    (norm, dict(ord=1), lambda x: norm(x, ord=1), (3, 4), (-2, 2)),
    (norm, dict(ord=-1), lambda x: norm(x, ord=-1), (3, 4), (-2, 2)),
    (norm, dict(ord=np.inf), lambda x: norm(x, ord=np.inf), (3, 4), (-2, 2)),
    (norm, dict(ord=-np.inf), lambda x: norm(x, ord=-np.inf), (3, 4), (-2, 2)),
    (norm, dict(ord="nuc", axis=(2, 0)), lambda x: norm(x, ord="nuc", axis=(2, 0)), (3, 2, 4), (-2, 2)),
    (norm, dict(ord=1, axis=(2, 1), keepdims=True), lambda x: norm(x, ord=1, axis=(2, 1), keepdims=True), (2, 3, 4), (-2, 2)),
    (norm, dict(ord=np.inf, axis=(0, 2)), lambda x: norm(x, ord=np.inf, axis=(0, 2)), (3, 2, 4), (-2, 2)),
    (norm, dict(axis=(1, 2)), lambda x: norm(x, axis=(1, 2)), (2, 3, 4), (-2, 2)),
]
if NUMPY2:  # var/std's correction= keyword, average over several axes
    AXES += [
        (np.var, dict(axis=0, correction=1), lambda x: np.var(x, axis=0, correction=1), (3, 2), (-2, 2)),
        (np.average, dict(axis=(0, 2), weights=W24), lambda x: np.average(x, axis=(0, 2), weights=W24), (2, 3, 4), (-2, 2)),
        (np.average, dict(axis=1, keepdims=True), lambda x: np.average(x, axis=1, keepdims=True), (2, 3), (-2, 2)),
    ]

# array methods standing for the functions above
METHODS = [
    lambda x: x.sum(axis=0) + x.mean() + x.prod(axis=1).sum(),
    lambda x: x.var(ddof=1) + x.std(axis=0).sum(),
    lambda x: x.var(axis=1, keepdims=True) * x.std(),
    lambda x: x.cumsum(axis=1) * x.cumprod(axis=0),
    lambda x: x.max(axis=1) - x.min(axis=1),
    lambda x: x.clip(-0.5, 0.5).sum() + x.trace(),
]


def sample(rng, domain, shape):
    low, high = domain
    return float(rng.uniform(low, high)) if shape == () else rng.uniform(low, high, shape)


def label(row):
    return f"{row[0].__name__}-{'-'.join(f'{k}={v}' for k, v in row[1].items() if k != 'weights')}"


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("row", WHOLE, ids=label)
def test_whole_array(row, shape):
    key, kwargs, fun, domain = row
    x = sample(np.random.default_rng(1), domain, shape)
    np.testing.assert_array_equal(fun(x), key(x, **kwargs))
    check_grads(fun, (x,), modes=("rev",))
    check_jvp(fun, (x,))


@pytest.mark.parametrize("row", AXES, ids=label)
def test_axes(row):
    key, kwargs, fun, shape, domain = row
    x = sample(np.random.default_rng(2), domain, shape)
    np.testing.assert_array_equal(fun(x), key(x, **kwargs))
    check_grads(fun, (x,), modes=("rev",))
    check_jvp(fun, (x,))


@pytest.mark.parametrize("shape", [(2, 3), (3, 3)])
@pytest.mark.parametrize("fun", METHODS, ids=lambda f: f"line{f.__code__.co_firstlineno}")
def test_methods(fun, shape):
    check_grads(fun, (np.random.default_rng(3).uniform(-1, 1, shape),))


# ---- weights, zeros, NaNs ------------------------------------------------------------------
def weighted(x, w):
    return np.average(x, axis=1, weights=w)


def weighted_full(x, w):
    return np.average(x, weights=w, axis=0)


def weighted_all(x, w):
    return np.average(x, weights=w)


@pytest.mark.parametrize("fun, w_shape", [(weighted, (3,)), (weighted_full, (2, 3)), (weighted_all, (2, 3))],
                         ids=lambda p: getattr(p, "__name__", ""))
def test_average_weights(fun, w_shape):
    rng = np.random.default_rng(4)
    x = rng.uniform(-2, 2, (2, 3))
    w = rng.uniform(0.5, 2, w_shape)
    check_grads(fun, (x, w), wrt=(0, 1), modes=("rev",))
    check_jvp(fun, (x, w), wrt=(0, 1))


def averaged_over_three_axes(x, w):
    return np.average(x, axis=(3, 0, 2), weights=w)


def test_average_weights_over_several_axes():
    """Weights laid out in the order of ``axis`` (not a self-inverse permutation)."""
    rng = np.random.default_rng(5)
    x = rng.uniform(-2, 2, (2, 3, 4, 5))
    w = rng.uniform(0.5, 2, (5, 2, 4))
    if not NUMPY2:
        with pytest.raises(TypeError):
            np.average(x, axis=(3, 0, 2), weights=w)
        return
    check_grads(averaged_over_three_axes, (x, w), wrt=(0, 1), modes=("rev",))
    check_jvp(averaged_over_three_axes, (x, w), wrt=(0, 1))


ZEROS = [
    np.array([2.0, 0.0, -3.0, 1.5]),
    np.array([0.0, 2.0, 0.0, 1.5]),
    np.array([[0.0, 2.0, 3.0], [1.0, -1.0, 0.0]]),
]


def prod_all(x):
    return np.prod(x)


def prod_rows(x):
    return np.prod(x, axis=-1)


def cumprod_all(x):
    return np.cumprod(x)


def cumprod_rows(x):
    return np.cumprod(x, axis=-1)


@pytest.mark.parametrize("x", ZEROS, ids=str)
@pytest.mark.parametrize("fun", [prod_all, prod_rows, cumprod_all, cumprod_rows], ids=lambda f: f.__name__)
def test_products_with_zeros(fun, x):
    check_grads(fun, (x,), modes=("rev",))
    check_jvp(fun, (x,))


def test_prod_gradient_at_a_zero_is_the_other_factors():
    g = srcad.grad(prod_all)(np.array([2.0, 0.0, -3.0, 1.5]))
    np.testing.assert_array_equal(g, [0.0, 2.0 * -3.0 * 1.5, 0.0, 0.0])
    g = srcad.grad(prod_all)(np.array([0.0, 2.0, 0.0]))
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.0])


def test_cumprod_gradient_with_zeros_exactly():
    x = np.array([2.0, 0.0, 3.0, 4.0])
    v = np.array([1.0, 10.0, 100.0, 1000.0])
    g = srcad.differentiable(cumprod_all).adjoint(x, v)
    # y = [x0, x0 x1, x0 x1 x2, x0 x1 x2 x3]; only x1 = 0 has nonzero products of the others
    np.testing.assert_array_equal(g, [1.0, 10 * 2 + 100 * 2 * 3 + 1000 * 2 * 3 * 4, 0.0, 0.0])


def nan_sum_rows(x):
    return np.nansum(x, axis=1)


def nan_mean_rows(x):
    return np.nanmean(x, axis=1)


def nan_var_rows(x):
    return np.nanvar(x, axis=1, ddof=1)


def nan_std_all(x):
    return np.nanstd(x)


def test_nan_variances_ignore_nans_in_every_mode():
    x = np.array([[1.0, np.nan, 3.0, 0.5], [np.nan, 2.0, 5.0, -1.0]])
    g = srcad.differentiable(nan_var_rows).adjoint(x, np.array([2.0, 4.0]))
    np.testing.assert_allclose(g, [[2 * 2 * (1 - 1.5) / 2, 0, 2 * 2 * (3 - 1.5) / 2, 2 * 2 * (0.5 - 1.5) / 2],
                                   [0, 4 * 2 * (2 - 2) / 2, 4 * 2 * (5 - 2) / 2, 4 * 2 * (-1 - 2) / 2]], rtol=1e-14)
    for fun in (nan_var_rows, nan_std_all):
        check_grads(fun, (x,), modes=("rev",))
        check_jvp(fun, (x,))
        check_jvp(srcad.grad(lambda x: np.sum(fun(x) ** 2)), (x,), rtol=1e-4, atol=1e-6)


def test_nan_reductions_ignore_nans():
    x = np.array([[1.0, np.nan, 3.0], [np.nan, 2.0, 5.0]])
    v = np.array([2.0, 4.0])
    np.testing.assert_array_equal(srcad.differentiable(nan_sum_rows).adjoint(x, v), [[2, 0, 2], [0, 4, 4]])
    np.testing.assert_array_equal(srcad.differentiable(nan_mean_rows).adjoint(x, v), [[1, 0, 1], [0, 2, 2]])
    check_grads(nan_sum_rows, (x,))
    check_grads(nan_mean_rows, (x,))
    check_jvp(nan_sum_rows, (x,))
    check_jvp(nan_mean_rows, (x,))


# ---- ties ----------------------------------------------------------------------------------
def max_rows(x):
    return np.max(x, axis=1)


def amin_all(x):
    return np.amin(x)


def ptp_rows(x):
    return np.ptp(x, axis=1)


def median_rows(x):
    return np.median(x, axis=1)


def middle_quantile_rows(x):
    return np.quantile(x, 0.5, axis=1)  # the median, as NumPy computes it: the same ties


def inf_norm(x):
    return norm(x, ord=np.inf)


def one_norm_matrix(x):
    return norm(x, ord=1)


TIES = [
    # function, x, v, expected vᵀJ (ties share equally)
    (max_rows, [[3.0, 1.0, 3.0], [2.0, 2.0, 2.0]], [6.0, 3.0], [[3, 0, 3], [1, 1, 1]]),
    (amin_all, [[1.0, 5.0], [1.0, 1.0]], 6.0, [[2, 0], [2, 2]]),
    (ptp_rows, [[3.0, -1.0, 3.0, -1.0], [2.0, 2.0, 2.0, 2.0]], [4.0, 5.0], [[2, -2, 2, -2], [0, 0, 0, 0]]),
    (ptp_rows, [[0.0, 4.0, -1.0, 4.0]], [6.0], [[0, 3, -6, 3]]),
    # odd rows: the middle value's entries share it; even rows: each middle value gets half
    (median_rows, [[1.0, 2.0, 2.0, 2.0, 9.0]], [6.0], [[0, 2, 2, 2, 0]]),
    (median_rows, [[4.0, 1.0, 3.0, 8.0]], [6.0], [[3, 0, 3, 0]]),
    (median_rows, [[5.0, 2.0, 2.0, 7.0]], [6.0], [[3, 1.5, 1.5, 0]]),
    (median_rows, [[1.0, 3.0, 3.0, 3.0, 2.0, 9.0]], [6.0], [[0, 2, 2, 2, 0, 0]]),
    (middle_quantile_rows, [[1.0, 2.0, 2.0, 2.0, 9.0]], [6.0], [[0, 2, 2, 2, 0]]),
    (middle_quantile_rows, [[5.0, 2.0, 2.0, 7.0]], [6.0], [[3, 1.5, 1.5, 0]]),
    (middle_quantile_rows, [[1.0, 3.0, 3.0, 3.0, 2.0, 9.0]], [6.0], [[0, 2, 2, 2, 0, 0]]),
    (inf_norm, [3.0, -3.0, 1.0], 6.0, [3, -3, 0]),
    # column sums |x| = [4, 4, 1]: the two largest columns share
    (one_norm_matrix, [[1.0, -3.0, 1.0], [-3.0, 1.0, 0.0]], 4.0, [[2, -2, 0], [-2, 2, 0]]),
]


@pytest.mark.parametrize("fun, x, v, expected", TIES, ids=lambda p: getattr(p, "__name__", ""))
def test_ties_share_equally(fun, x, v, expected):
    g = srcad.differentiable(fun).adjoint(np.array(x), np.array(v))
    np.testing.assert_array_equal(g, np.array(expected, float))


QUANTILE_METHODS = ["linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf", "averaged_inverted_cdf",
                    "closest_observation", "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
                    "normal_unbiased"]


@pytest.mark.parametrize("method", QUANTILE_METHODS)
def test_every_quantile_method(method):
    x = np.random.default_rng(5).uniform(-2, 2, (3, 7))

    def f(a):
        return np.quantile(a, [0.05, 0.33, 0.5, 0.99], axis=1, method=method)

    check_grads(f, (x,), modes=("rev",))
    check_jvp(f, (x,))


def test_a_quantile_of_nan_has_nan_slope_and_what_reorders_is_refused():
    g = srcad.differentiable(middle_quantile_rows).adjoint(np.array([[1.0, np.nan, 2.0], [1.0, 2.0, 3.0]]), np.ones(2))
    assert np.isnan(g[0]).all()
    np.testing.assert_array_equal(g[1], [0, 1, 0])
    with pytest.raises(srcad.SrcadSyntaxError, match="overwrite_input"):
        srcad.grad(quantile_reordering)(np.ones(3))
    with pytest.raises(srcad.SrcadSyntaxError, match="does not differentiate its argument 'q'"):
        srcad.grad(quantile_at)(0.3)  # a derivative in q is refused, never a silent zero


def quantile_reordering(x):
    return np.quantile(x * 1.0, 0.5, overwrite_input=True)


def quantile_at(q):
    return np.quantile(np.arange(4.0), q)


WITH_NANS = np.array([[0.3, np.nan, -1.2, 0.8, 0.8, np.nan, 2.0],
                      [1.5, -0.4, 0.9, np.nan, 0.1, 0.6, -2.0],
                      [np.nan, np.nan, 0.5, np.nan, np.nan, -0.5, np.nan]])


@pytest.mark.parametrize("method", QUANTILE_METHODS)
def test_nan_quantiles_skip_nans_with_every_method(method):
    """Each row's quantiles are those of its numbers: the same weights as np.quantile of the row
    without its NaNs (4, 6 and 2 numbers: each count its own weights), zero for a NaN."""
    def f(a):
        return np.nanquantile(a, [0.05, 0.33, 0.5, 0.99], axis=1, method=method)

    def g(a):
        return np.nanpercentile(a.T, 45.0, axis=0, method=method, keepdims=True)

    check_grads(f, (WITH_NANS,), modes=("rev",))
    check_jvp(f, (WITH_NANS,))
    check_grads(g, (WITH_NANS,))
    v = np.random.default_rng(6).standard_normal((4, 3))
    gradient = srcad.differentiable(f).adjoint(WITH_NANS, v)
    for row, cotangent, got in zip(WITH_NANS, v.T, gradient):
        numbers = ~np.isnan(row)
        expected = srcad.differentiable(lambda r: np.quantile(r, [0.05, 0.33, 0.5, 0.99], method=method)).adjoint(
            row[numbers], cotangent)
        np.testing.assert_allclose(got[numbers], expected, rtol=1e-14)
        assert (got[~numbers] == 0).all()


def nan_median_rows(x):
    return np.nanmedian(x, axis=-1)


def test_nan_median_ties_nans_and_rows_of_nans():
    x = np.array([[2.0, np.nan, 2.0, 7.0, 1.0], [np.nan, 4.0, np.nan, 1.0, np.nan], [np.nan, np.nan, np.nan, np.nan, np.nan]])
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):  # NumPy warns of the row of NaNs
        g = srcad.differentiable(nan_median_rows).adjoint(x, np.array([6.0, 4.0, 1.0]))
        _, tangent = srcad.jvp(nan_median_rows, (x,), (np.where(np.isnan(x), np.nan, np.arange(15.0).reshape(3, 5)),))
    # [2, 2, 7, 1]: the middle values 2 and 2 are one tied run, half each; [4, 1]: half each
    np.testing.assert_array_equal(g[:2], [[3.0, 0.0, 3.0, 0.0, 0.0], [0.0, 2.0, 0.0, 2.0, 0.0]])
    assert np.isnan(g[2]).all()  # its median is NaN: so is its slope
    np.testing.assert_array_equal(tangent[:2], [(0 + 2) / 2, (6 + 8) / 2])  # a NaN entry's NaN tangent is not read
    assert np.isnan(tangent[2])
    check_grads(nan_median_rows, (x[:2],), modes=("rev",))
    check_jvp(nan_median_rows, (x[:2],))
    check_jvp(srcad.grad(lambda x: np.sum(nan_median_rows(x) ** 2)), (x[:2],), rtol=1e-4, atol=1e-6)
    with pytest.raises(srcad.SrcadSyntaxError, match="overwrite_input"):
        srcad.grad(nan_median_reordering)(np.ones(3))
    with pytest.raises(srcad.SrcadSyntaxError, match="does not support the keyword argument 'weights'"):
        srcad.grad(nan_quantile_weighted)(np.ones(3))


def nan_median_reordering(x):
    return np.nanmedian(x * 1.0, overwrite_input=True)


def nan_quantile_weighted(x):
    return np.nanquantile(x, 0.5, method="inverted_cdf", weights=np.ones(3))


def test_median_of_nan_has_nan_slope():
    g = srcad.differentiable(median_rows).adjoint(np.array([[1.0, np.nan, 2.0], [1.0, 2.0, 3.0]]), np.ones(2))
    assert np.isnan(g[0]).all()
    np.testing.assert_array_equal(g[1], [0, 1, 0])


def test_unsupported_keywords_are_errors():
    def median_in_place(x):
        return np.median(x, overwrite_input=True)

    def var_where(x):
        return np.var(x, where=x > 0)

    for fun in (median_in_place, var_where):
        with pytest.raises(srcad.SrcadError, match="does not support the keyword"):
            srcad.grad(fun)(np.array([1.0, 2.0, 3.0]))


FLOAT32 = [
    lambda x: np.var(x, axis=0, ddof=1) + np.std(x, axis=0) + np.ptp(x, axis=0),
    lambda x: np.median(x, axis=1) + norm(x, axis=1) + np.average(x, axis=1, weights=W3),
    lambda x: np.cumprod(x, axis=1) + np.cumsum(x, axis=1) + np.nanmean(x),
    lambda x: norm(x, "nuc") + norm(x, np.inf) + np.prod(x) + np.max(x),
]


@pytest.mark.parametrize("fun", FLOAT32, ids=lambda f: f"line{f.__code__.co_firstlineno}")
def test_float32_keeps_float32(fun):
    x = np.array([[0.8, -0.3, 1.1], [0.2, 1.5, -0.6]], dtype=np.float32)
    v = np.ones(np.shape(fun(x)), np.float32)
    g32 = srcad.differentiable(fun).adjoint(x, v)
    g64 = srcad.differentiable(fun).adjoint(x.astype(np.float64), v.astype(np.float64))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, g64, rtol=1e-5, atol=1e-6)


# ---- jvp rules -----------------------------------------------------------------------------
def test_every_covered_vjp_rule_has_a_jvp_rule():
    keys = covered_keys(("srcad.rules.numpy_reductions",), {np.sum, np.mean, np.max, np.amax, np.min, np.amin,
                                                            np.prod, np.trace})
    assert len(keys) >= 18
    assert not [registry.describe(k) for k in keys if registry.lookup(registry.JVP, k) is None]


# the rules of a reduction's adjoint helpers (second and third order): tests/test_second_order_library_23.py
# and tests/test_third_order_helpers.py check them through np.cumprod, and tests/test_rules_hygiene.py
# calls them by themselves
HELPERS_CHECKED_ELSEWHERE = {numpy_reductions.cumprod_grad, numpy_reductions.cumprod_tangent,
                             numpy_reductions.cumprod_grad_along}


def test_table_rows_exercise_every_rule():
    keys = {row[0] for row in WHOLE + AXES} | HELPERS_CHECKED_ELSEWHERE
    rules = {key for key, rule in registry.VJP.items() if rule.fn.__module__ == "srcad.rules.numpy_reductions"}
    rules |= {key for key, rule in registry.JVP.items() if rule.fn.__module__ == "srcad.rules.numpy_reductions"}
    assert not {registry.describe(k) for k in rules - keys}
