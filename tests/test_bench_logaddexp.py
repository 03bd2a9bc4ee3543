"""np.logaddexp's rules through σ(x1 - x2) (``logistic_weight``): the result is not read, so
the forward sweep does not compute it; values against finite differences in reverse, forward
and second order, for small and large differences, broadcasting, float32 and no warnings."""
import numpy as np
import pytest

import srcad
from srcad.rules.numpy_exponential import logistic_weight
from srcad.testing import check_grads, check_jvp

from lang_checks import check_second_order

RNG = np.random.default_rng(5)


def lae(a, b):
    return np.logaddexp(a, b)


def lae_sum(a, b):
    return np.sum(np.logaddexp(a, b) ** 2)


def softplus_loss(m):
    return np.mean(np.logaddexp(0.0, -m))


def lae_nested(a, b):
    return np.sum(np.logaddexp(np.sin(a), b * a))


DIFFERENCES = [0.0, 0.3, 5.0, -7.0, 40.0, -45.0, 800.0, -900.0]


@pytest.mark.parametrize("gap", DIFFERENCES)
def test_reverse_and_forward_at_every_difference(gap):
    a = RNG.standard_normal(4)
    b = a - gap + 0.1 * RNG.standard_normal(4)
    check_grads(lae, (a, b), wrt=(0, 1), modes=("rev",))
    check_jvp(lae, (a, b), wrt=(0, 1))


@pytest.mark.parametrize("gap", DIFFERENCES)
@pytest.mark.parametrize("wrt", [0, 1])
def test_second_order_at_every_difference(gap, wrt):
    a = RNG.standard_normal(3)
    b = a - gap + 0.1 * RNG.standard_normal(3)
    check_second_order(lae_sum, (a, b), wrt=wrt)


@pytest.mark.parametrize("args", [(np.zeros((3, 1)), RNG.standard_normal(4)), (0.5, RNG.standard_normal(5)),
                                  (RNG.standard_normal((2, 3)), 1.5)], ids=["column-row", "float-vector", "matrix-float"])
def test_broadcasting_operands(args):
    check_grads(lae, args, wrt=(0, 1), modes=("rev",))
    check_jvp(lae, args, wrt=(0, 1))
    check_second_order(lae_sum, args, wrt=0)
    check_second_order(lae_sum, args, wrt=1)


def test_the_softplus_loss_in_every_mode():
    m = np.concatenate([RNG.standard_normal(6) * 3.0, [60.0, -60.0, 750.0, -750.0]])
    check_grads(softplus_loss, (m,), modes=("rev",))
    check_jvp(softplus_loss, (m,))
    check_second_order(softplus_loss, (m,))


def test_nested_operands():
    a, b = RNG.standard_normal(4), RNG.standard_normal(4)
    check_grads(lae_nested, (a, b), wrt=(0, 1), modes=("rev",))
    check_jvp(lae_nested, (a, b), wrt=(0, 1))
    check_second_order(lae_nested, (a, b), wrt=0)


def test_the_smaller_operand_keeps_relative_accuracy():
    """Finite differences cannot see e^-40: the weight of the smaller operand is compared with
    e^(b - a) / (1 + e^(b - a)), which has no cancellation, to 1e-14 relative."""
    a, b = np.array([40.0, 300.0]), np.array([0.0, 0.0])
    da, db = srcad.grad(lambda_free_sum, wrt=(0, 1))(a, b)
    expected = np.exp(b - a) / (1.0 + np.exp(b - a))
    np.testing.assert_allclose(db, expected, rtol=1e-14, atol=0)
    np.testing.assert_allclose(da, 1.0 / (1.0 + np.exp(b - a)), rtol=1e-15)


def lambda_free_sum(a, b):
    return np.sum(np.logaddexp(a, b))


def test_huge_differences_give_the_limits_without_overflow():
    a, b = np.array([1000.0, -1000.0, 3.0]), np.array([0.0, 0.0, np.inf])
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        da, db = srcad.grad(lambda_free_sum, wrt=(0, 1))(a, b)
    np.testing.assert_array_equal(da, [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(db, [0.0, 1.0, 1.0])


def test_float32_stays_float32():
    a, b = RNG.standard_normal(3).astype(np.float32), np.float32(200.0) + np.zeros(3, np.float32)
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        da, db = srcad.grad(lambda_free_sum, wrt=(0, 1))(a, b)
    assert da.dtype == np.float32 and db.dtype == np.float32
    np.testing.assert_array_equal(db, np.ones(3, np.float32))


def test_the_forward_sweep_does_not_compute_the_result():
    d = srcad.differentiable(softplus_loss)
    d.grad(RNG.standard_normal(5))
    code = [line for line in d.adjoint_source.splitlines() if not line.strip().startswith("#")]
    assert not any("np.logaddexp(" in line for line in code)


def weight_sum(a, b):
    return np.sum(logistic_weight(a, b) * a)


def test_the_weight_helper_in_every_mode():
    """Generated adjoints call logistic_weight; its own rules make them differentiable again."""
    a, b = RNG.standard_normal(4), RNG.standard_normal(4) + np.array([0.0, 30.0, -30.0, 0.0])
    check_grads(weight_sum, (a, b), wrt=(0, 1), modes=("rev",))
    check_jvp(weight_sum, (a, b), wrt=(0, 1))
    check_second_order(weight_sum, (a, b), wrt=0)
    check_second_order(weight_sum, (a, b), wrt=1)
