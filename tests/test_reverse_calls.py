"""Calls to the user's own functions: the callee's residuals are recorded like any other
value (per loop iteration, per branch, per call on one line), in every mode."""
import functools

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

rng = np.random.default_rng(7)
X3 = rng.uniform(0.2, 1.0, 3)


def sq(z):
    return z * z


def helper_in_for_loop(x):
    h = x
    for i in range(2):
        h = sq(h)
    return np.sum(h)


def step(s, dt):
    return s + dt * np.sin(s)


def helper_in_while_loop(x):
    s = x
    t = 0.0
    while t < 0.35:
        s = step(s, 0.1)
        t = t + 0.1
    return np.sum(s * s)


def layer(h, W, b):
    return np.tanh(W @ h + b)


def helper_over_layers(layers, x):
    h = x
    for W, b in layers:
        h = layer(h, W, b)
    return np.sum(h ** 2)


def cumulative(z):
    out = np.zeros(z.shape)
    acc = 0.0
    for k in range(z.shape[0]):
        acc = acc + z[k] ** 2
        out[k] = acc
    return out


def helper_with_loop_and_stores(x):
    h = x
    for i in range(3):
        h = np.sin(cumulative(h))
    return np.sum(h)


def scaled(z, c=1.5):
    return np.sin(z) * c


def helper_with_default(x):
    h = x
    for i in range(3):
        h = scaled(h)
    return np.sum(h)


def helper_twice_on_one_line(x):
    h = x
    for i in range(2):
        h = sq(h) * np.cos(sq(h + 0.5))
    return np.sum(h)


def outer_helper(z):
    return sq(np.sin(z)) + sq(z)


def helper_calls_helper(x):
    h = x
    for i in range(2):
        h = outer_helper(h)
    return np.sum(h)


def helper_in_branch(x):
    h = x
    for i in range(4):
        if i % 2 == 0:
            h = sq(h)
        else:
            h = scaled(h, 0.7)
    return np.sum(h)


def helper_two_args_in_loop(x, y):
    s = 0.0
    h = x
    for i in range(3):
        h = layer(h, y, h)
        s = s + np.sum(h)
    return s


CASES = [
    (helper_in_for_loop, (X3,), 0),
    (helper_in_while_loop, (X3,), 0),
    (helper_with_loop_and_stores, (X3,), 0),
    (helper_with_default, (X3,), 0),
    (helper_twice_on_one_line, (X3,), 0),
    (helper_calls_helper, (X3,), 0),
    (helper_in_branch, (X3,), 0),
    (helper_two_args_in_loop, (X3, rng.uniform(-1, 1, (3, 3))), (0, 1)),
]


@pytest.mark.parametrize("fn, args, wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_helper_residuals_per_call(fn, args, wrt):
    check_grads(fn, args, wrt=wrt)


@pytest.mark.parametrize("fn, args, wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_helper_residuals_forward_mode(fn, args, wrt):
    check_jvp(fn, args, wrt=wrt)


def test_helper_over_layers():
    layers = [(rng.uniform(-1, 1, (3, 3)), rng.uniform(-1, 1, 3)) for _ in range(3)]
    check_grads(helper_over_layers, (layers, X3), wrt=(0, 1))


def test_helper_in_loop_value():
    """The example from issue 9: h = sq(sq(x)), so the gradient is 4 x³."""
    x = np.array([1.5, 2.0])
    np.testing.assert_allclose(srcad.grad(helper_in_for_loop)(x), 4 * x ** 3)


@pytest.mark.parametrize("fn", [c[0] for c in CASES if c[2] == 0], ids=[c[0].__name__ for c in CASES if c[2] == 0])
def test_helper_residuals_second_order(fn):
    u = rng.standard_normal(3)
    gradient = srcad.grad(fn)
    hv = srcad.hvp(fn)(X3, u)
    eps = 1e-5
    numeric = (gradient(X3 + eps * u) - gradient(X3 - eps * u)) / (2 * eps)
    np.testing.assert_allclose(hv, numeric, rtol=1e-5, atol=1e-7)
    check_grads(gradient, (X3,), v=u)  # reverse over reverse


def quadratic(x):
    return np.sum(x ** 2) * 1.5


quadratic_adjoint = srcad.adjoint(quadratic)
quadratic_differentiable = srcad.differentiable(quadratic)


def calls_adjoint_companion(x):
    return np.sum(quadratic_adjoint(x))


def calls_differentiable_grad(x):
    return np.sum(quadratic_differentiable.grad(x))


@pytest.mark.parametrize("fn", [calls_adjoint_companion, calls_differentiable_grad])
def test_derivative_made_by_srcad_is_refused(fn):
    """A companion srcad.adjoint(f) is not f: its call is refused, never differentiated as f."""
    x = np.array([0.5, 2.0])
    with pytest.raises(srcad.SrcadSyntaxError, match="derivative made by srcad") as info:
        srcad.grad(fn)(x)
    assert info.value.filename == __file__


def calls_grad_directly(x):
    return np.sum(srcad.grad(quadratic)(x))


def test_grad_written_in_the_code_is_differentiated():
    x = np.array([0.5, 2.0])
    np.testing.assert_allclose(srcad.grad(calls_grad_directly)(x), [3.0, 3.0])
    check_grads(calls_grad_directly, (x,))


def doubled(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return fn(x) * 2.0

    return wrapper


@doubled
def doubled_sine(x):
    return np.sum(np.sin(x))


def calls_doubled_sine(x):
    h = x
    for i in range(2):
        h = h + doubled_sine(h)
    return h


def test_wrapper_is_read_from_its_own_code():
    """functools.wraps sets __wrapped__; srcad reads the wrapper's own source, not the wrapped one."""
    x = np.array([0.3, -0.7])
    np.testing.assert_allclose(srcad.grad(doubled_sine)(x), 2.0 * np.cos(x))
    check_grads(doubled_sine, (x,))
    check_grads(calls_doubled_sine, (x,), v=np.array([0.4, 1.1]), modes=("rev",))
    check_jvp(calls_doubled_sine, (x,))


def scalar_helper(t):
    return np.sin(t) * t


def scalar_through_helpers(x):
    y = x
    for i in range(2):
        y = scalar_helper(y) + outer_helper(y)
    return y


def test_grad_of_grad_through_helpers():
    """Issue 9: reverse over reverse through a module-level helper was a bogus CotangentError."""
    x, eps = 0.37, 1e-5
    first = srcad.grad(scalar_through_helpers)
    second = srcad.grad(first)(x)
    np.testing.assert_allclose(second, (first(x + eps) - first(x - eps)) / (2 * eps), rtol=1e-6)


def test_hessian_through_helpers():
    x, eps = X3, 1e-5
    gradient = srcad.grad(helper_calls_helper)
    H = srcad.hessian(helper_calls_helper)(x)
    numeric = np.stack([(gradient(x + eps * e) - gradient(x - eps * e)) / (2 * eps) for e in np.eye(3)], axis=1)
    np.testing.assert_allclose(H, numeric, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(H, H.T, rtol=1e-10, atol=1e-12)


def sine_times(u, w):
    return np.sin(u) * w


def helper_then_update(b, x):
    w = x * 1.0
    d = sine_times(b, w)
    w[0] = 0.0
    return d * x


def helper_then_update_through_view(b, x):
    w = x * 1.0
    d = sine_times(b, w)
    head = w[0:2]
    head[0] = 0.0
    return d * x


@pytest.mark.parametrize("fn", [helper_then_update, helper_then_update_through_view])
def test_callee_residuals_keep_what_they_were_given(fn):
    """An array updated in place after a call (directly or through a view) does not change
    the values the callee's backward function reads."""
    b = np.array([0.3, 0.6, 0.8])
    check_grads(fn, (b, b + 1.0), wrt=(0, 1))


def test_helper_over_layers_second_order():
    layers = [(rng.uniform(-1, 1, (3, 3)), rng.uniform(-1, 1, 3)) for _ in range(3)]
    u = rng.standard_normal(3)
    gradient = srcad.grad(helper_over_layers, wrt=1)
    hv = srcad.hvp(helper_over_layers, wrt=1)(layers, X3, u)
    eps = 1e-5
    numeric = (gradient(layers, X3 + eps * u) - gradient(layers, X3 - eps * u)) / (2 * eps)
    np.testing.assert_allclose(hv, numeric, rtol=1e-5, atol=1e-7)
    check_grads(gradient, (layers, X3), wrt=1, v=u)  # reverse over reverse
