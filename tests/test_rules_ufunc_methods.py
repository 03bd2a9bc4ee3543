"""Methods of ufuncs (``np.add.reduce``, ``np.maximum.accumulate``, ``np.subtract.outer``...):
every rule against central finite differences in reverse and forward mode and at second order,
their keywords, ties, zeros and NaNs, exact lookup by the bound method, refusals, and realistic
programs (a drawdown, a kernel of pairwise differences, a mixture's log-likelihood)."""
import numpy as np
import pytest

import srcad
from srcad import registry
from srcad.errors import NoRuleError, SrcadError
from srcad.rules import numpy_ufunc_methods, numpy_ufunc_scans, numpy_ufunc_segments
from srcad.testing import check_grads, check_jvp

MASK = np.array([[True, False, True], [True, True, False]])
MASK3 = np.arange(24).reshape(2, 3, 4) % 3 != 1
W3 = np.array([0.5, -1.0, 2.0])

# (key, keyword arguments, the same call for srcad, shape, domain)
ROWS = [
    (np.add.reduce, {}, lambda x: np.add.reduce(x), (2, 3), (-2, 2)),
    (np.add.reduce, dict(axis=1), lambda x: np.add.reduce(x, axis=1), (2, 3), (-2, 2)),
    (np.add.reduce, dict(axis=None), lambda x: np.add.reduce(x, axis=None), (2, 3), (-2, 2)),
    (np.add.reduce, dict(axis=(0, 2), keepdims=True), lambda x: np.add.reduce(x, axis=(0, 2), keepdims=True),
     (2, 3, 4), (-2, 2)),
    (np.add.reduce, dict(axis=1, initial=0.5, where=MASK), lambda x: np.add.reduce(x, axis=1, initial=0.5, where=MASK),
     (2, 3), (-2, 2)),
    (np.add.reduce, dict(axis=-1, dtype=np.float64), lambda x: np.add.reduce(x, axis=-1, dtype=np.float64), (2, 3),
     (-2, 2)),
    (np.multiply.reduce, {}, lambda x: np.multiply.reduce(x), (2, 3), (-2, 2)),
    (np.multiply.reduce, dict(axis=None, keepdims=True), lambda x: np.multiply.reduce(x, axis=None, keepdims=True),
     (2, 3), (-2, 2)),
    (np.multiply.reduce, dict(axis=1, initial=2.0, where=MASK),
     lambda x: np.multiply.reduce(x, axis=1, initial=2.0, where=MASK), (2, 3), (-2, 2)),
    (np.maximum.reduce, {}, lambda x: np.maximum.reduce(x), (2, 3), (-2, 2)),
    (np.maximum.reduce, dict(axis=None), lambda x: np.maximum.reduce(x, axis=None), (2, 3), (-2, 2)),
    (np.maximum.reduce, dict(axis=1, initial=0.0), lambda x: np.maximum.reduce(x, axis=1, initial=0.0), (3, 4),
     (-2, 2)),
    (np.maximum.reduce, dict(axis=(0, 2), initial=-5.0, where=MASK3),
     lambda x: np.maximum.reduce(x, axis=(0, 2), initial=-5.0, where=MASK3), (2, 3, 4), (-2, 2)),
    (np.minimum.reduce, dict(axis=(1, 2), keepdims=True), lambda x: np.minimum.reduce(x, axis=(1, 2), keepdims=True),
     (2, 3, 4), (-2, 2)),
    (np.fmax.reduce, dict(axis=1), lambda x: np.fmax.reduce(x, axis=1), (2, 3), (-2, 2)),
    (np.fmin.reduce, {}, lambda x: np.fmin.reduce(x), (2, 3), (-2, 2)),
    (np.logaddexp.reduce, {}, lambda x: np.logaddexp.reduce(x), (2, 3), (-2, 2)),
    (np.logaddexp.reduce, dict(axis=None), lambda x: np.logaddexp.reduce(x, axis=None), (2, 3), (-2, 2)),
    (np.logaddexp.reduce, dict(axis=1, keepdims=True), lambda x: np.logaddexp.reduce(x, axis=1, keepdims=True),
     (2, 3), (-2, 2)),
    (np.logaddexp.reduce, dict(axis=1, initial=0.3, where=MASK),
     lambda x: np.logaddexp.reduce(x, axis=1, initial=0.3, where=MASK), (2, 3), (-2, 2)),
    (np.logaddexp2.reduce, dict(axis=(0, 1)), lambda x: np.logaddexp2.reduce(x, axis=(0, 1)), (2, 3, 4), (-2, 2)),
    (np.logaddexp2.reduce, dict(axis=-1, initial=1.5), lambda x: np.logaddexp2.reduce(x, axis=-1, initial=1.5),
     (2, 3), (-2, 2)),
    (np.subtract.reduce, {}, lambda x: np.subtract.reduce(x), (3, 2), (-2, 2)),
    (np.subtract.reduce, dict(axis=-1, keepdims=True), lambda x: np.subtract.reduce(x, axis=-1, keepdims=True),
     (2, 3, 4), (-2, 2)),
    (np.subtract.reduce, dict(axis=None), lambda x: np.subtract.reduce(x, axis=None), (4,), (-2, 2)),
    (np.subtract.reduce, dict(axis=(1,), initial=0.5, where=MASK),
     lambda x: np.subtract.reduce(x, axis=(1,), initial=0.5, where=MASK), (2, 3), (-2, 2)),
    (np.divide.reduce, {}, lambda x: np.divide.reduce(x), (3, 2), (0.5, 2)),
    (np.divide.reduce, dict(axis=1, keepdims=True), lambda x: np.divide.reduce(x, axis=1, keepdims=True), (2, 4),
     (-2, -0.5)),
    (np.divide.reduce, dict(axis=-1, initial=1.5, where=MASK),
     lambda x: np.divide.reduce(x, axis=-1, initial=1.5, where=MASK), (2, 3), (0.5, 2)),
    (np.divide.reduce, dict(axis=0, dtype=np.float64), lambda x: np.divide.reduce(x, axis=0, dtype=np.float64), (3,),
     (0.5, 2)),
    (np.add.reduceat, dict(indices=[0, 2, 3]), lambda x: np.add.reduceat(x, [0, 2, 3]), (5,), (-2, 2)),
    (np.add.reduceat, dict(indices=[4, 1, 3, 0], axis=1), lambda x: np.add.reduceat(x, [4, 1, 3, 0], axis=1), (2, 6),
     (-2, 2)),  # overlapping slices, and single entries where the next index is not larger
    (np.add.reduceat, dict(indices=np.array([1, 2]), axis=(-1,), dtype=np.float64),
     lambda x: np.add.reduceat(x, np.array([1, 2]), axis=(-1,), dtype=np.float64), (2, 3, 4), (-2, 2)),
    (np.maximum.reduceat, dict(indices=[0, 3, 1]), lambda x: np.maximum.reduceat(x, [0, 3, 1]), (6, 2), (-2, 2)),
    (np.minimum.reduceat, dict(indices=[0, 2], axis=-1), lambda x: np.minimum.reduceat(x, [0, 2], axis=-1), (2, 5),
     (-2, 2)),
    (np.fmax.reduceat, dict(indices=[1, 4]), lambda x: np.fmax.reduceat(x, [1, 4]), (6,), (-2, 2)),
    (np.fmin.reduceat, dict(indices=[2, 0], axis=1), lambda x: np.fmin.reduceat(x, [2, 0], axis=1), (2, 4), (-2, 2)),
    (np.add.accumulate, {}, lambda x: np.add.accumulate(x), (3, 2), (-2, 2)),
    (np.subtract.accumulate, {}, lambda x: np.subtract.accumulate(x), (4, 2), (-2, 2)),
    (np.subtract.accumulate, dict(axis=(1,)), lambda x: np.subtract.accumulate(x, axis=(1,)), (2, 3, 2), (-2, 2)),
    (np.divide.accumulate, {}, lambda x: np.divide.accumulate(x), (4, 2), (0.5, 2)),
    (np.divide.accumulate, dict(axis=-1), lambda x: np.divide.accumulate(x, axis=-1), (2, 5), (-2, -0.5)),
    (np.logaddexp.accumulate, {}, lambda x: np.logaddexp.accumulate(x), (5,), (-2, 2)),
    (np.logaddexp.accumulate, dict(axis=1), lambda x: np.logaddexp.accumulate(x, axis=1), (2, 6), (-2, 2)),
    (np.logaddexp.accumulate, dict(axis=None), lambda x: np.logaddexp.accumulate(x, axis=None), (4,), (-2, 2)),
    (np.logaddexp2.accumulate, dict(axis=0), lambda x: np.logaddexp2.accumulate(x, axis=0), (4, 2, 3), (-2, 2)),
    (np.add.accumulate, dict(axis=(0,)), lambda x: np.add.accumulate(x, axis=(0,)), (3, 2), (-2, 2)),
    (np.maximum.accumulate, dict(axis=None), lambda x: np.maximum.accumulate(x, axis=None), (5,), (-2, 2)),
    (np.add.accumulate, dict(axis=-1), lambda x: np.add.accumulate(x, axis=-1), (2, 3, 4), (-2, 2)),
    (np.multiply.accumulate, {}, lambda x: np.multiply.accumulate(x), (4, 2), (-2, 2)),
    (np.multiply.accumulate, dict(axis=1), lambda x: np.multiply.accumulate(x, axis=1), (2, 3), (-2, 2)),
    (np.maximum.accumulate, {}, lambda x: np.maximum.accumulate(x), (5,), (-2, 2)),
    (np.maximum.accumulate, dict(axis=1), lambda x: np.maximum.accumulate(x, axis=1), (2, 6), (-2, 2)),
    (np.maximum.accumulate, dict(axis=0), lambda x: np.maximum.accumulate(x, axis=0), (5, 2, 3), (-2, 2)),
    (np.minimum.accumulate, dict(axis=-1), lambda x: np.minimum.accumulate(x, axis=-1), (2, 3, 5), (-2, 2)),
    (np.fmax.accumulate, {}, lambda x: np.fmax.accumulate(x), (6,), (-2, 2)),
    (np.fmin.accumulate, dict(axis=1), lambda x: np.fmin.accumulate(x, axis=1), (2, 5), (-2, 2)),
]


def key_name(key):
    owner = getattr(key, "__self__", None)
    return f"{owner.__name__}.{key.__name__}" if isinstance(owner, np.ufunc) else getattr(key, "__name__", str(key))


def label(row):
    return f"{key_name(row[0])}-{'-'.join(f'{k}={v}' for k, v in row[1].items() if k != 'where')}"


def sample(rng, domain, shape):
    return rng.uniform(*domain, shape)


@pytest.mark.parametrize("row", ROWS, ids=label)
def test_each_rule_in_both_modes_and_at_second_order(row):
    key, kwargs, fun, shape, domain = row
    x = sample(np.random.default_rng(3), domain, shape)
    np.testing.assert_array_equal(fun(x), key(x, **kwargs))
    check_grads(fun, (x,), modes=("rev",))
    check_jvp(fun, (x,))
    weights = np.random.default_rng(4).uniform(0.5, 1.5, np.shape(fun(x)))

    def smooth(x):
        return np.sum(np.sin(fun(x)) * weights)

    check_grads(srcad.grad(smooth), (x,), rtol=1e-4, atol=1e-6, modes=("rev",))  # reverse over reverse
    check_jvp(srcad.grad(smooth), (x,), rtol=1e-4, atol=1e-6)  # forward over reverse


def test_every_ufunc_method_rule_is_in_the_table():
    keys = [k for table in (registry.VJP, registry.JVP) for k, rule in table.items()
            if rule.fn.__module__ in (numpy_ufunc_methods.__name__, numpy_ufunc_scans.__name__,
                                      numpy_ufunc_segments.__name__)
            and isinstance(getattr(k, "__self__", None), np.ufunc)]
    assert len(keys) == 2 * 25  # 10 reductions, 10 running ones, 5 over slices
    assert {key_name(k) for k in keys} == {key_name(row[0]) for row in ROWS}


# ---- outer: the elementwise ufunc on broadcast operands ----------------------------------------
OUTERS = [
    lambda a, b: np.subtract.outer(a, b),
    lambda a, b: np.add.outer(b, a),
    lambda a, b: np.multiply.outer(a, b),
    lambda a, b: np.divide.outer(a, b),
    lambda a, b: np.power.outer(a, b),
    lambda a, b: np.maximum.outer(a, b),
    lambda a, b: np.minimum.outer(b, a),
    lambda a, b: np.logaddexp.outer(a, b),
    lambda a, b: np.hypot.outer(a, b),
    lambda a, b: np.arctan2.outer(b, a),
    lambda a, b: np.fmax.outer(a, 1.2),
    lambda a, b: np.subtract.outer(0.7, b),
    lambda a, b: np.multiply.outer(a, b) * np.greater.outer(a, b),  # a comparison: no derivative
]


@pytest.mark.parametrize("fun", OUTERS, ids=lambda f: f"line{f.__code__.co_firstlineno}")
def test_outer_in_both_modes_and_at_second_order(fun):
    rng = np.random.default_rng(5)
    a, b = rng.uniform(0.5, 2.0, (3,)), rng.uniform(0.5, 2.0, (2, 2))
    check_grads(fun, (a, b), wrt=(0, 1), modes=("rev",))
    check_jvp(fun, (a, b), wrt=(0, 1))

    def smooth(a, b):
        return np.sum(np.cos(fun(a, b)))

    check_grads(srcad.grad(smooth, wrt=(0, 1)), (a, b), wrt=(0, 1), rtol=1e-4, atol=1e-6, modes=("rev",))
    check_jvp(srcad.grad(smooth, wrt=(0, 1)), (a, b), wrt=(0, 1), rtol=1e-4, atol=1e-6)


def pairwise_scaled(a, b):
    return np.subtract.outer(a, b) * 2.0


def test_outer_jacobian_in_both_modes():
    a, b = np.array([0.5, -1.0, 2.0]), np.array([[1.0, 2.0], [3.0, 4.0]])
    expected = np.zeros((3, 2, 2, 3))
    for i in range(3):
        expected[i, :, :, i] = 2.0
    np.testing.assert_array_equal(srcad.jacobian(pairwise_scaled)(a, b), expected)
    np.testing.assert_array_equal(srcad.jacobian(pairwise_scaled, mode="fwd")(a, b), expected)
    np.testing.assert_array_equal(srcad.jacobian(pairwise_scaled, wrt=1)(a, b),
                                  -np.broadcast_to(np.eye(4).reshape(1, 2, 2, 2, 2), (3, 2, 2, 2, 2)) * 2.0)


# ---- ties, zeros, NaNs -------------------------------------------------------------------------
def running_max(x):
    return np.maximum.accumulate(x)


def running_min_rows(x):
    return np.minimum.accumulate(x, axis=1)


def running_fmax(x):
    return np.fmax.accumulate(x)


def last_running_max(x):
    return np.maximum.accumulate(x)[-1]


def whole_max(x):
    return np.max(x)


def reduced_max(x):
    return np.maximum.reduce(x)


def test_running_max_ties_share_as_max_of_each_prefix():
    """Output i's cotangent goes to the entries up to i equal to it, shared equally: output 3
    (max of [1, 3, 2, 3] = 3) gives half to x1 and half to x3."""
    x = np.array([1.0, 3.0, 2.0, 3.0, 5.0, 5.0])
    v = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0])
    g = srcad.differentiable(running_max).adjoint(x, v)
    np.testing.assert_array_equal(g, [1.0, 2 + 4 + 8 / 2, 0.0, 8 / 2, 16 + 32 / 2, 32 / 2])
    _, tangent = srcad.jvp(running_max, (x,), (np.array([1.0, 10.0, 100.0, 1000.0, 1e4, 1e5]),))
    np.testing.assert_array_equal(tangent, [1.0, 10.0, 10.0, (10 + 1000) / 2, 1e4, (1e4 + 1e5) / 2])
    for fun in (last_running_max, reduced_max):  # the convention of np.max
        np.testing.assert_array_equal(srcad.grad(fun)(x), srcad.grad(whole_max)(x))


def test_running_min_ties_along_an_axis():
    x = np.array([[2.0, 1.0, 1.0, 3.0], [0.0, 0.0, 0.0, -1.0]])
    v = np.array([[1.0, 2.0, 4.0, 8.0], [1.0, 2.0, 4.0, 8.0]])
    g = srcad.differentiable(running_min_rows).adjoint(x, v)
    np.testing.assert_allclose(g, [[1.0, 2 + 4 / 2 + 8 / 2, 4 / 2 + 8 / 2, 0.0],
                                   [1 + 2 / 2 + 4 / 3, 2 / 2 + 4 / 3, 4 / 3, 8.0]], rtol=1e-15)
    check_jvp(running_min_rows, (x + np.array([0.0, 0.5, 0.25, 0.125]),))


def test_running_extrema_of_nan():
    """maximum propagates NaN: every entry of a row with a NaN output gets NaN (as np.max);
    fmax skips NaNs, which get zero."""
    v = np.array([1.0, 2.0, 4.0])
    assert np.isnan(srcad.differentiable(running_max).adjoint(np.array([1.0, np.nan, 2.0]), v)).all()
    np.testing.assert_array_equal(srcad.differentiable(running_fmax).adjoint(np.array([1.0, np.nan, 3.0]), v),
                                  [1.0 + 2.0, 0.0, 4.0])
    g = srcad.differentiable(running_fmax).adjoint(np.array([np.nan, 1.0, 3.0]), v)
    assert np.isnan(g[0]) and g[1:].tolist() == [2.0, 4.0]


def product_rows(x):
    return np.multiply.reduce(x, axis=-1)


def running_product(x):
    return np.multiply.accumulate(x)


def test_products_exact_at_zeros():
    x = np.array([2.0, 0.0, -3.0, 1.5])
    np.testing.assert_array_equal(srcad.grad(product_rows)(x), [0.0, 2.0 * -3.0 * 1.5, 0.0, 0.0])
    v = np.array([1.0, 10.0, 100.0, 1000.0])
    np.testing.assert_array_equal(srcad.differentiable(running_product).adjoint(x, v),
                                  [1.0, 10 * 2 + 100 * 2 * -3 + 1000 * 2 * -3 * 1.5, 0.0, 0.0])
    for fun in (product_rows, running_product):
        check_grads(fun, (x,), modes=("rev",))
        check_jvp(fun, (x,))


def softmax_weights(x):
    return np.logaddexp.reduce(x, axis=1)


def test_logaddexp_reduce_is_stable_and_its_gradient_a_softmax():
    x = np.array([[1000.0, 1000.0, 990.0], [-5.0, 0.0, 3.0]])
    g = srcad.differentiable(softmax_weights).adjoint(x, np.ones(2))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(g, e / e.sum(axis=1, keepdims=True), rtol=1e-12)


def running_max_rows(x):
    return np.maximum.accumulate(x, axis=-1)


def prefix_argmax(x):
    """Where the maximum of each prefix of the vector x is (no ties), by a loop."""
    where, best = np.zeros(len(x), int), 0
    for i in range(len(x)):
        best = i if x[i] > x[best] else best
        where[i] = best
    return where


def test_running_max_keeps_its_digits_on_a_long_row():
    """An entry's adjoint sums the cotangents of its own run only: large cotangents late in a
    row of 10^5 do not swamp those of an early run (it subtracted suffix sums of the whole row,
    losing 3 of 16 digits there), nor large tangents early those of a late run."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal(10 ** 5)
    best = prefix_argmax(x)
    v = rng.standard_normal(x.shape)
    v[-1000:] *= 1e12
    expected = np.zeros_like(x)
    np.add.at(expected, best, v)
    early = np.unique(best[:-1000])
    np.testing.assert_allclose(srcad.differentiable(running_max).adjoint(x, v)[early], expected[early], rtol=1e-12)
    u = rng.standard_normal(x.shape)
    u[:10] *= 1e12
    _, tangent = srcad.jvp(running_max, (x,), (u,))
    np.testing.assert_allclose(tangent[best >= 10], u[best][best >= 10], rtol=1e-15)
    rows = np.stack([x[:1000], x[1000:2000]])  # along an axis, runs of each row apart
    gradient = srcad.differentiable(running_max_rows).adjoint(rows, np.stack([v[-1000:], v[:1000]]))
    for row, cotangent, got in zip(rows, np.stack([v[-1000:], v[:1000]]), gradient):
        expected = np.zeros(1000)
        np.add.at(expected, prefix_argmax(row), cotangent)
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def running_log_sums(x):
    return np.logaddexp.accumulate(x)


def test_logaddexp_accumulate_is_stable_over_widely_spread_entries():
    """Output i sends entry k ≤ i the share exp(x_k - y_i); entries 1500 apart neither
    overflow nor lose the small shares."""
    x = np.array([-800.0, 0.0, 700.0, -5.0, 700.0 + np.log(3.0), 699.0])
    y = np.logaddexp.accumulate(x)
    v = np.array([1.0, -2.0, 0.5, 3.0, -1.0, 2.0])
    expected = [sum(v[i] * np.exp(x[k] - y[i]) for i in range(k, len(x))) for k in range(len(x))]
    np.testing.assert_allclose(srcad.differentiable(running_log_sums).adjoint(x, v), expected, rtol=1e-12)
    assert srcad.differentiable(running_log_sums).adjoint(x, v)[0] == 1.0  # exp(-800 - (-800)): y_0 = x_0
    _, tangent = srcad.jvp(running_log_sums, (x,), (v,))
    np.testing.assert_allclose(tangent, [sum(v[k] * np.exp(x[k] - y[i]) for k in range(i + 1)) for i in range(len(x))],
                               rtol=1e-12)
    check_grads(running_log_sums, (x,), modes=("rev",))
    check_jvp(running_log_sums, (x,))


def quotients(x):
    return np.divide.reduce(x) + np.sum(np.divide.accumulate(x))


def differences(x, start):
    return np.sum(np.subtract.reduce(x, axis=1, initial=start, where=MASK)) * np.sum(np.subtract.reduce(x, axis=0))


def test_differences_and_quotients_fold_from_the_left():
    x = np.array([0.0, 2.0, -4.0])  # a zero dividend: its derivative is 1 / (the divisors), no 0 / 0
    np.testing.assert_array_equal(srcad.grad(quotients)(x), [1 / (2 * -4) + (1 + 1 / 2 + 1 / (2 * -4)), 0.0, 0.0])
    x = np.array([3.0, 2.0, -4.0])
    np.testing.assert_allclose(srcad.grad(quotients)(x),
                               [1 / -8 + 1 + 1 / 2 + 1 / -8, -3 / -8 / 2 - 3 / 2 / 2 - 3 / -8 / 2, -3 / -8 / -4 - 3 / -8 / -4],
                               rtol=1e-15)
    for point in (x, np.array([0.0, 2.0, -4.0])):
        check_grads(quotients, (point,), modes=("rev",))
        check_jvp(quotients, (point,))
        check_jvp(srcad.grad(quotients), (point,), rtol=1e-4, atol=1e-6)
    rows = np.array([[0.3, -0.8, 1.4], [0.2, 0.9, -0.5]])
    np.testing.assert_allclose(srcad.grad(differences, wrt=1)(rows, 2.0),
                               2 * np.sum(np.subtract.reduce(rows, axis=0)), rtol=1e-15)  # start in both rows
    check_grads(differences, (rows, 2.0), wrt=(0, 1), modes=("rev",))
    check_jvp(differences, (rows, 2.0), wrt=(0, 1))


def slice_extrema(x):
    return np.maximum.reduceat(x, [0, 3, 1, 4])


def slice_fmin(x):
    return np.fmin.reduceat(x, [0, 2], axis=1)


def test_extrema_over_slices_share_ties_and_propagate_nan():
    """Slices [0, 3), {3}, [1, 4), [4, 6): each slice's cotangent to its tied maxima, equally."""
    x = np.array([1.0, 4.0, 4.0, 2.0, 0.5, 0.5])
    v = np.array([1.0, 10.0, 100.0, 1000.0])
    np.testing.assert_array_equal(srcad.differentiable(slice_extrema).adjoint(x, v),
                                  [0.0, 1 / 2 + 100 / 2, 1 / 2 + 100 / 2, 10.0, 1000 / 2, 1000 / 2])
    _, tangent = srcad.jvp(slice_extrema, (x,), (np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0]),))
    np.testing.assert_array_equal(tangent, [3.0, 8.0, 3.0, 24.0])
    with_nan = np.array([1.0, np.nan, 4.0, 2.0, 0.5, 3.0])
    g = srcad.differentiable(slice_extrema).adjoint(with_nan, v)
    assert np.isnan(g[:4]).all() and g[4:].tolist() == [0.0, 1000.0]  # the NaN's slices: NaN, as np.max
    rows = np.array([[np.nan, 2.0, 5.0, np.nan], [1.0, 1.0, 3.0, 0.0]])
    np.testing.assert_array_equal(srcad.differentiable(slice_fmin).adjoint(rows, np.array([[1.0, 2.0], [4.0, 8.0]])),
                                  [[0.0, 1.0, 2.0, 0.0], [2.0, 2.0, 0.0, 8.0]])  # fmin skips NaNs


# ---- exact lookup and refusals -----------------------------------------------------------------
def test_rules_are_looked_up_by_the_bound_method_exactly():
    assert np.add.reduce is not np.add.reduce  # a new bound method per access, equal to any other
    assert registry.lookup(registry.VJP, np.add.reduce).fn is numpy_ufunc_methods.add_reduce
    assert registry.lookup(registry.VJP, np.subtract.reduce).fn is numpy_ufunc_methods.subtract_reduce
    assert registry.lookup(registry.VJP, np.remainder.reduce) is None
    assert registry.lookup(registry.VJP, np.multiply.reduceat) is None
    mine = np.frompyfunc(lambda a, b: a + b, 2, 1)  # a ufunc of the user's named like none of NumPy's
    assert registry.lookup(registry.VJP, mine.reduce) is None
    assert registry.describe(np.maximum.accumulate) == "numpy.maximum.accumulate"


def cast_reduce(x):
    return np.add.reduce(x, casting="unsafe")


def folded_powers(x):
    return np.power.reduce(x)


def segment_products(x):
    return np.sum(np.multiply.reduceat(x, [0, 2]))


def reduce_into(x):
    total = np.zeros(())
    np.add.reduce(x, out=total)
    return total


def integer_running_max(x):
    return np.sum(np.maximum.accumulate(x, dtype=np.int64))


def cast_outer(x):
    return np.sum(np.add.outer(x, x, casting="unsafe"))


@pytest.mark.parametrize("fun, error, match", [
    (cast_reduce, SrcadError, "does not support the keyword argument 'casting'"),
    (folded_powers, NoRuleError, r"register_(vjp|jvp)\(np\.power\.reduce\)"),
    (segment_products, NoRuleError, r"np.multiply.reduceat \(numpy.multiply.reduceat\)"),
    (reduce_into, SrcadError, "out="),
    (integer_running_max, srcad.UnsupportedCaseError, "numpy.maximum.accumulate is given a dtype"),
    (cast_outer, SrcadError, "does not support the keyword argument 'casting'"),
], ids=lambda p: getattr(p, "__name__", ""))
def test_what_is_not_supported_is_refused_at_the_users_line(fun, error, match):
    for how in ("grad", "jvp"):
        with pytest.raises(error, match=match) as info:
            x = np.array([1.0, 3.0, 2.0])
            srcad.grad(fun)(x) if how == "grad" else srcad.jvp(fun, (x,), (np.ones(3),))
        assert "test_rules_ufunc_methods.py" in str(info.value)


def lists_reduced(x):
    return np.sum(np.maximum.reduce([x, 2.0 * x[::-1], np.ones(4)]) ** 2) + np.sum(np.add.accumulate([x, x ** 2]))


def test_a_list_is_reduced_as_its_array():
    x = np.array([0.3, 0.9, -0.4, 1.2])
    check_grads(lists_reduced, (x,), modes=("rev",))
    check_jvp(lists_reduced, (x,))
    check_jvp(srcad.grad(lists_reduced), (x,), rtol=1e-4, atol=1e-6)


# ---- realistic programs ------------------------------------------------------------------------
def drawdowns(returns, start):
    prices = start * np.exp(np.cumsum(returns))
    peaks = np.maximum.accumulate(prices)
    return (peaks - prices) / peaks


def max_drawdown(returns, start):
    return np.max(drawdowns(returns, start))


def high_water_fee(nav, rate):
    """A performance fee charged on each new high of the net asset value."""
    marks = np.maximum.accumulate(nav, axis=-1)
    gains = np.diff(marks, axis=-1)
    return rate * np.sum(gains) + np.sum(np.minimum.accumulate(nav[:, ::-1], axis=1) ** 2)


def kernel_fit(x, z, ell):
    """A squared-exponential kernel between points and inducing points, from pairwise
    differences, and a penalty of the fitted weights."""
    k = np.exp(-np.subtract.outer(x, z) ** 2 / (2.0 * ell ** 2))
    gram = np.exp(-np.subtract.outer(z, z) ** 2 / (2.0 * ell ** 2)) + 0.1 * np.eye(len(z))
    w = np.linalg.solve(gram, np.multiply.outer(z, np.ones(2)).sum(axis=1))
    return k @ w


def mixture_loglik(means, log_weights, x):
    """Log-likelihood of a Gaussian mixture, the components summed with logaddexp.reduce."""
    d = np.subtract.outer(x, means)
    log_norm = log_weights - np.logaddexp.reduce(log_weights)
    comps = log_norm - 0.5 * d ** 2 - 0.5 * np.log(2 * np.pi)
    return np.sum(np.logaddexp.reduce(comps, axis=1))


def test_max_drawdown():
    r = np.array([0.05, -0.02, 0.03, -0.08, 0.01, -0.04, 0.06, 0.02])
    check_grads(max_drawdown, (r, 100.0), wrt=(0, 1), modes=("rev",))
    check_jvp(max_drawdown, (r, 100.0), wrt=(0, 1))
    check_grads(drawdowns, (r, 100.0))
    jac = srcad.jacobian(drawdowns)(r, 100.0)
    np.testing.assert_allclose(jac, srcad.jacobian(drawdowns, mode="fwd")(r, 100.0), rtol=1e-12, atol=1e-15)
    eps = 1e-6
    numeric = np.stack([(drawdowns(r + eps * e, 100.0) - drawdowns(r - eps * e, 100.0)) / (2 * eps)
                        for e in np.eye(len(r))], axis=-1)
    np.testing.assert_allclose(jac, numeric, rtol=1e-5, atol=1e-8)


def smooth_drawdown(returns, start):
    return np.sum(drawdowns(returns, start) ** 2)


def test_drawdown_second_order():
    r = np.array([0.05, -0.02, 0.03, -0.08, 0.01, -0.04, 0.06, 0.02])
    u = np.random.default_rng(6).standard_normal(r.shape)
    gradient = srcad.grad(smooth_drawdown)
    eps = 1e-5
    numeric = (gradient(r + eps * u, 100.0) - gradient(r - eps * u, 100.0)) / (2 * eps)
    np.testing.assert_allclose(srcad.hvp(smooth_drawdown)(r, 100.0, u), numeric, rtol=1e-5, atol=1e-9)
    check_grads(gradient, (r, 100.0), rtol=1e-4, atol=1e-7)


def test_high_water_fee():
    nav = np.random.default_rng(7).uniform(90, 110, (2, 7))
    check_grads(high_water_fee, (nav, 0.2), wrt=(0, 1), modes=("rev",))
    check_jvp(high_water_fee, (nav, 0.2), wrt=(0, 1))
    check_jvp(srcad.grad(high_water_fee), (nav, 0.2), rtol=1e-4, atol=1e-6)


def test_kernel_of_pairwise_differences():
    rng = np.random.default_rng(8)
    x, z = rng.uniform(-1, 1, 5), rng.uniform(-1, 1, 3)
    check_grads(kernel_fit, (x, z, 0.7), wrt=(0, 1, 2), modes=("rev",))
    check_jvp(kernel_fit, (x, z, 0.7), wrt=(0, 1, 2))
    jac = srcad.jacobian(kernel_fit, wrt=1)(x, z, 0.7)
    eps = 1e-6
    numeric = np.stack([(kernel_fit(x, z + eps * e, 0.7) - kernel_fit(x, z - eps * e, 0.7)) / (2 * eps)
                        for e in np.eye(3)], axis=-1)
    np.testing.assert_allclose(jac, numeric, rtol=1e-5, atol=1e-8)


def kernel_energy(x, z, ell):
    return np.sum(kernel_fit(x, z, ell) ** 2)


def test_kernel_second_order():
    rng = np.random.default_rng(9)
    x, z = rng.uniform(-1, 1, 5), rng.uniform(-1, 1, 3)
    u = rng.standard_normal(5)
    gradient = srcad.grad(kernel_energy)
    eps = 1e-5
    numeric = (gradient(x + eps * u, z, 0.7) - gradient(x - eps * u, z, 0.7)) / (2 * eps)
    np.testing.assert_allclose(srcad.hvp(kernel_energy)(x, z, 0.7, u), numeric, rtol=1e-5, atol=1e-9)


def test_mixture_log_likelihood():
    rng = np.random.default_rng(10)
    means, log_weights, x = np.array([-1.0, 0.5, 2.0]), np.array([0.1, -0.3, 0.4]), rng.normal(0, 1.5, 20)
    check_grads(mixture_loglik, (means, log_weights, x), wrt=(0, 1, 2), modes=("rev",))
    check_jvp(mixture_loglik, (means, log_weights, x), wrt=(0, 1, 2))
    hess = srcad.hessian(mixture_loglik)(means, log_weights, x)
    gradient = srcad.grad(mixture_loglik)
    eps = 1e-5
    numeric = np.stack([(gradient(means + eps * e, log_weights, x) - gradient(means - eps * e, log_weights, x))
                        / (2 * eps) for e in np.eye(3)], axis=-1)
    np.testing.assert_allclose(hess, numeric, rtol=1e-5, atol=1e-8)
    u = rng.standard_normal(3)
    np.testing.assert_allclose(srcad.hvp(mixture_loglik, wrt=1)(means, log_weights, x, u),
                               srcad.hessian(mixture_loglik, wrt=1)(means, log_weights, x) @ u, rtol=1e-10)


def reductions_from_initial(x, start):
    return (np.add.reduce(x, axis=1, initial=start) * np.multiply.reduce(x, axis=1, initial=start, where=MASK)
            + np.maximum.reduce(x, axis=1, initial=start) + np.logaddexp.reduce(x, axis=1, initial=start, where=MASK)
            + np.sum(np.logaddexp2.reduce(x, axis=0, initial=start))
            + np.subtract.reduce(x, axis=1, initial=start, where=MASK) * np.divide.reduce(x, axis=1, initial=start))


def initial_energy(x, start):
    return np.sum(reductions_from_initial(x, start) ** 2)


def positional_out(x):
    total = np.zeros(3)
    np.add.reduce(x, 0, None, total)
    return total


def test_initial_is_differentiated_and_out_by_position_refused():
    x = np.array([[0.3, -0.8, 1.4], [0.2, 0.9, -0.5]])
    for start in (0.6, 1.5):  # the maximum's initial loses, then wins in the second row
        check_grads(reductions_from_initial, (x, start), wrt=(0, 1), modes=("rev",))
        check_jvp(reductions_from_initial, (x, start), wrt=(0, 1))
        check_grads(srcad.grad(initial_energy, wrt=1), (x, start), wrt=(0, 1), rtol=1e-4, atol=1e-6, modes=("rev",))
        check_jvp(srcad.grad(initial_energy, wrt=1), (x, start), wrt=(0, 1), rtol=1e-4, atol=1e-6)
    with pytest.raises(SrcadError, match="out="):
        srcad.grad(positional_out)(x)


def cox_partial_loglik(beta, features, event):
    """Cox's partial log-likelihood (Breslow), the subjects sorted by decreasing time: subject i's
    risk set is subjects 0..i, its log-normaliser a running log-sum."""
    eta = features @ beta
    return np.sum(event * (eta - np.logaddexp.accumulate(eta)))


def grouped_hinge(x, starts):
    """A loss over groups of a sorted batch: each group's total against its largest member."""
    totals = np.add.reduceat(x, starts)
    peaks = np.maximum.reduceat(x, starts)
    return np.sum(np.maximum(totals - 2.0 * peaks, 0.0) ** 2) + np.sum(np.subtract.accumulate(totals) ** 2)


def test_cox_partial_likelihood():
    rng = np.random.default_rng(13)
    features, event = rng.standard_normal((30, 3)), (rng.uniform(size=30) < 0.7).astype(float)
    beta = np.array([0.4, -1.1, 0.7])
    check_grads(cox_partial_loglik, (beta, features, event), modes=("rev",))
    check_jvp(cox_partial_loglik, (beta, features, event))
    hess = srcad.hessian(cox_partial_loglik)(beta, features, event)
    gradient = srcad.grad(cox_partial_loglik)
    eps = 1e-5
    numeric = np.stack([(gradient(beta + eps * e, features, event) - gradient(beta - eps * e, features, event))
                        / (2 * eps) for e in np.eye(3)], axis=-1)
    np.testing.assert_allclose(hess, numeric, rtol=1e-6, atol=1e-8)
    u = rng.standard_normal(3)
    np.testing.assert_allclose(srcad.hvp(cox_partial_loglik)(beta, features, event, u), hess @ u, rtol=1e-10)


def test_grouped_losses_over_slices():
    x = np.random.default_rng(14).uniform(0.0, 1.0, 12)
    starts = np.array([0, 3, 4, 9])
    check_grads(grouped_hinge, (x, starts), modes=("rev",))
    check_jvp(grouped_hinge, (x, starts))
    check_jvp(srcad.grad(grouped_hinge), (x, starts), rtol=1e-4, atol=1e-6)
    check_grads(srcad.grad(grouped_hinge), (x, starts), rtol=1e-4, atol=1e-6)
