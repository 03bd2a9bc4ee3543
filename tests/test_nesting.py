"""Derivatives of derivatives: srcad differentiates the code it generates."""
import inspect

import numpy as np
import pytest

import srcad


def central(fun, x, eps=1e-5):
    return (fun(x + eps) - fun(x - eps)) / (2 * eps)


def cubic_sine(x):
    return np.sin(x) * x ** 3


def with_branch(x):
    if x > 0:
        y = np.exp(x) * x
    else:
        y = x ** 4 - np.cos(x)
    return y


def power_loop(x):
    s = 0.0
    p = 1.0
    for k in range(4):
        p = p * x
        s = s + np.cos(p) / (k + 1)
    return s


def loop_with_branch(x):
    s = 0.0
    y = x
    for i in range(5):
        y = np.sin(y) * 1.3 + x * 0.1
        if i % 2 == 0:
            s = s + y ** 2
        else:
            s = s - np.cos(y) * x
    return s


def while_loop(x):
    y = x
    n = 0
    while n < 4:
        y = y * np.cos(y) + x
        n = n + 1
    return y


def list_stack(x):
    saved = []
    for i in range(3):
        saved.append(np.sin(x * (i + 1)))
    total = 0.0
    while saved:
        total = total * x + saved.pop()
    return total


def test_second_derivative_closed_form():
    x = 0.7
    expected = -np.sin(x) * x ** 3 + 6 * np.cos(x) * x ** 2 + 6 * np.sin(x) * x
    assert srcad.grad(srcad.grad(cubic_sine))(x) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("fun", [cubic_sine, with_branch, power_loop, loop_with_branch, while_loop, list_stack])
@pytest.mark.parametrize("x", [0.7, -0.4])
def test_grad_of_grad_matches_differences_of_the_gradient(fun, x):
    first = srcad.grad(fun)
    second = srcad.grad(first)
    assert second(x) == pytest.approx(central(first, x), rel=1e-6, abs=1e-7)
    # forward over reverse gives the same number
    assert srcad.hessian(fun)(x) == pytest.approx(second(x), rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("fun", [cubic_sine, with_branch, power_loop, loop_with_branch, while_loop])
def test_third_derivative(fun):
    x = 0.7
    second = srcad.grad(srcad.grad(fun))
    third = srcad.grad(second)
    assert third(x) == pytest.approx(central(second, x), rel=1e-6, abs=1e-6)


def test_third_derivative_closed_form():
    x = 0.3
    d3 = srcad.grad(srcad.grad(srcad.grad(cubic_sine)))(x)
    expected = (-np.cos(x) * x ** 3 - 9 * np.sin(x) * x ** 2 + 18 * np.cos(x) * x + 6 * np.sin(x))
    assert d3 == pytest.approx(expected, rel=1e-10)


gradient_of_cubic_sine = srcad.grad(cubic_sine)


def calls_a_gradient(x):
    return gradient_of_cubic_sine(x) * x


def makes_a_gradient_inside(x):
    return srcad.grad(power_loop)(x) * np.sin(x)


@pytest.mark.parametrize("fun", [calls_a_gradient, makes_a_gradient_inside])
def test_functions_that_call_gradients(fun):
    x = 0.8
    assert fun(x) == pytest.approx(makes_a_gradient_inside(x) if fun is makes_a_gradient_inside else
                                   gradient_of_cubic_sine(x) * x)
    assert srcad.grad(fun)(x) == pytest.approx(central(fun, x), rel=1e-6)
    y, y_dot = srcad.jvp(fun, (x,), (2.0,))
    assert y_dot == pytest.approx(2.0 * central(fun, x), rel=1e-6)


def sum_of_squares_of_gradient(w, X):
    g = srcad.grad(loss)(w, X)
    return (g ** 2).sum()


def loss(w, X):
    total = 0.0
    for i in range(X.shape[0]):
        total = total + np.log1p(np.exp(-X[i] @ w))
    return total


def test_gradient_penalty_through_a_loop(rng):
    """The gradient of ||∇_w loss||², the pattern of gradient penalties."""
    w, X = rng.standard_normal(3), rng.standard_normal((4, 3))
    g = srcad.grad(sum_of_squares_of_gradient)(w, X)
    H = srcad.hessian(loss)(w, X)
    np.testing.assert_allclose(g, 2 * H @ srcad.grad(loss)(w, X), rtol=1e-8)


def test_generated_adjoint_is_readable_source():
    fn = srcad.api.source_function(srcad.grad(power_loop), (0.5,))
    text = inspect.getsource(fn)
    assert text.lstrip().startswith("def power_loop_adjoint(x, v=None):")
    assert "_p_stack.append(p)" in text and "p = _p_stack.pop()" in text
