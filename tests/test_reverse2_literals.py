"""Generated code never tests a literal with ``is``.

Regression test of fuzz finding F6: second-order code held ``... if 0 is None else ...``
(the rule of ``concat_grad`` with its literal ``axis=0`` substituted into a conditional
expression), and Python warns (``SyntaxWarning: "is" with a literal``) each time it compiles
such code. Rule templates now decide conditional expressions on literal arguments when they
are instantiated, and fold ``literal is None`` in tests they cannot decide. Each program is
compiled and run with every warning an error, and its values checked against finite
differences.
"""
import warnings

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp


def check_second_order_without_warnings(f, x):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_grads(f, (x,), modes=("rev",))
        check_jvp(f, (x,))
        gradient = srcad.grad(f)
        check_grads(gradient, (x,))  # reverse over reverse: joint adjoint and pullback
        u = np.random.default_rng(5).standard_normal(np.shape(x))
        eps = 1e-5
        numeric = (gradient(x + eps * u) - gradient(x - eps * u)) / (2 * eps)
        np.testing.assert_allclose(srcad.hvp(f)(x, u), numeric, rtol=1e-5, atol=1e-7)


def concatenated(x):
    return np.sum(np.concatenate([np.sin(x), x * x]) ** 2)


def concatenated_flat(x):
    return np.sum(np.concatenate([np.sin(x), x[:3] * x[1:]], axis=None) ** 3)


def stacked_and_split(x):
    parts = np.split(np.concatenate([x, x * x]), 2)
    return np.sum(np.stack(parts, axis=1) * np.cos(parts[0])[:, None])


def reduced_on_axes(x):
    m = np.outer(x, np.tanh(x))
    return np.sum(np.mean(m, axis=0) * np.max(m, axis=1)) + np.sum(np.sort(m, axis=None) ** 2)


@pytest.mark.parametrize("f", [concatenated, concatenated_flat, stacked_and_split, reduced_on_axes])
def test_second_order_code_compiles_without_warnings(f):
    check_second_order_without_warnings(f, np.array([0.3, -0.7, 1.1, 0.45]))


def halved(x, axis=0):
    return x * 0.5


@srcad.extend.register_vjp(halved)
def halved_vjp(y, x, axis=0):
    if axis is None or np.any(d[y] > 1e9):  # noqa: F821 (d is the rule's marker)
        d[x] += d[y] * 0.5  # noqa: F821
    else:
        d[x] += d[y] * 0.5  # noqa: F821


@srcad.extend.register_jvp(halved)
def halved_jvp(y, x, axis=0):
    t[y] += t[x] * 0.5  # noqa: F821


def through_undecided_test(x):
    return np.sum(np.sin(halved(x * x)))


def test_literal_in_a_test_decided_at_run_time():
    """``0 is None or np.any(...)`` cannot be decided when the rule is instantiated: the
    literal's part is folded, the rest stays."""
    f = srcad.differentiable(through_undecided_test)
    x = np.array([0.3, -0.7, 1.1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_grads(f, (x,))
    assert " is None" not in f.adjoint_source and "np.any" in f.adjoint_source


def larger_of_literal_and_value(x):
    return sum(max(0.41, v) * v for v in np.sin(x)) + max(np.cos(x[0]), 0.2, x[1])


def test_builtin_max_with_a_literal_operand():
    """``max(0.41, v)``: the rule asks whether the result *is* an operand; the literal's
    identity test is decided when the rule is instantiated."""
    check_second_order_without_warnings(larger_of_literal_and_value, np.array([0.3, 1.2, 0.1, 2.0]))
