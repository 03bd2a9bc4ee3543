"""The benchmark programs of issue 12 (benchmarks/workloads_wide.py) at small sizes: srcad's
gradients against finite differences (joint adjoint, pullback twice, jvp), and each
hand-written adjoint (the denominator of every ratio) against srcad's and finite differences."""
import os
import sys

import numpy as np
import pytest

from srcad.testing import check_grads, check_jvp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
import workloads_wide as W  # noqa: E402

from lang_checks import check_second_order  # noqa: E402

RNG = np.random.default_rng(30)


def small_cases():
    labels = np.where(RNG.standard_normal(40) > 0, 1.0, -1.0)
    return [
        ("soft_dtw", W.soft_dtw, W.soft_dtw_grad, (RNG.standard_normal(5), RNG.standard_normal(4), 0.7), (0, 1)),
        ("kalman", W.kalman, W.kalman_grad, W.kalman_inputs(RNG, steps=6, n=3), (0, 1, 2)),
        ("heat", W.heat, W.heat_grad, (RNG.standard_normal((7, 6)), 0.15, 4), (0, 1)),
        ("logistic", W.logistic, W.logistic_grad,
         (RNG.standard_normal(5), 0.2, RNG.standard_normal((40, 5)) * 3.0, labels, 0.1), (0, 1)),
        ("lstm", W.lstm, W.lstm_grad, W.lstm_inputs(RNG, steps=3, batch=2, inputs=3, hidden=4), (0, 1, 2)),
        ("recurrence", W.scalar_recurrence, W.scalar_recurrence_grad, (0.4, 0.6, 30), (0, 1)),
    ]


CASES = small_cases()


@pytest.mark.parametrize("name,fn,hand,args,wrt", CASES, ids=[c[0] for c in CASES])
def test_srcad_and_the_hand_written_adjoint_agree_with_finite_differences(name, fn, hand, args, wrt):
    assert W.finite_difference_check(fn, hand, args, wrt) is None
    grads = check_grads(fn, args, wrt=wrt, v=1.0)
    for g, h in zip(grads, hand(*args)):
        np.testing.assert_allclose(g, h, rtol=1e-9, atol=1e-12)
    check_jvp(fn, args, wrt=wrt)


def test_logistic_regression_second_order():
    _, fn, _, args, _ = CASES[3]
    check_second_order(fn, args, wrt=0)


def test_the_jacobian_closed_form():
    x, Wm, b = RNG.standard_normal(6), RNG.standard_normal((6, 6)), RNG.standard_normal(6)
    eps = 1e-6
    numeric = np.stack([(W.layer(x + eps * e, Wm, b) - W.layer(x - eps * e, Wm, b)) / (2 * eps)
                        for e in np.eye(6)], axis=1)
    np.testing.assert_allclose(W.layer_jacobian(x, Wm, b), numeric, rtol=1e-6, atol=1e-9)


def test_call_overhead_programs():
    x, M, v = RNG.standard_normal((1, 2)), RNG.standard_normal((2, 2)), RNG.standard_normal((1, 2))
    check_grads(W.seed_dot, (x, M), wrt=(0, 1), v=v)
    assert W.finite_difference_check(W.seed_dot, W.seed_dot_vjp, (x, M), (0, 1), v) is None
    A, B, V = RNG.standard_normal((3, 10, 10))
    check_grads(W.matmul_both, (A, B), wrt=(0, 1), v=V)
    assert W.finite_difference_check(W.matmul_both, W.matmul_both_vjp, (A, B), (0, 1), V) is None
