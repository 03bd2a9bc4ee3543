"""Functions passed as arguments (issue 10): a helper called with a function known when srcad
compiles (a global function, np.tanh, a lambda, a def of the function, functools.partial) is
inlined, specialised on that function, as an ODE integrator stepping a right-hand side is
written. Every mode against central finite differences; what cannot be known is refused."""
import functools

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes

Y0 = np.array([1.0, 0.5, -0.3])
P = np.array([10.0, 28.0, 8.0 / 3.0])
X = np.array([0.4, -0.7, 1.1])


def lorenz(y, p):
    return np.array([p[0] * (y[1] - y[0]), y[0] * (p[1] - y[2]) - y[1], y[0] * y[1] - p[2] * y[2]])


def rk4(f, y, dt, p):
    k1 = f(y, p)
    k2 = f(y + dt / 2 * k1, p)
    k3 = f(y + dt / 2 * k2, p)
    k4 = f(y + dt * k3, p)
    return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def simulate(y0, p):
    y = y0
    for _ in range(4):
        y = rk4(lorenz, y, 0.01, p)
    return np.sum(y ** 2)


def integrate(f, y, p, steps, dt=0.01):
    for _ in range(steps):
        y = rk4(f, y, dt, p)  # the function is passed on
    return y


def simulate_through_integrate(y0, p):
    return np.sum(integrate(lorenz, y0, p, 3) * y0)


def apply_twice(f, x):
    return f(f(x)) * 2.0


def with_ufunc(x):
    return np.sum(apply_twice(np.tanh, x))


def with_numpy_function(x):
    return np.sum(apply_twice(np.cumsum, x) * x)


def with_lambda(x):
    return np.sum(apply_twice(lambda t: np.sin(t) * t, x))


def with_local_def(x, w):
    def layer(h):
        return np.tanh(h * w)

    return np.sum(apply_twice(layer, x))


def damped(y, p, c):
    return -c * y + p[0] * np.sin(y)


def with_partial_keyword(y0, p):
    return np.sum(integrate(functools.partial(damped, c=0.3), y0, p, 3))


def with_partial_of_an_active_value(y0, p):
    scale = p[1] * 0.01
    return np.sum(integrate(functools.partial(damped, c=scale), y0, p, 2))


def mapped(f, xs):
    return sum(map(f, xs))


def with_map_inside(x):
    return mapped(np.exp, [x[0], x[1] * x[2]])


def apply_default(x, f=np.sin):
    return f(x) * x


def with_default_function(x):
    return np.sum(apply_default(x)) + np.sum(apply_default(x, f=np.cos))


def with_keyword_arguments(x):
    return np.sum(apply_twice(x=x, f=np.tanh))


ACTIVATION = np.tanh


def with_global_activation(x):
    return np.sum(apply_twice(ACTIVATION, x))


def with_local_helper_taking_a_function(x):
    def compose(f, g, t):
        return f(g(t))

    return np.sum(compose(np.sin, lambda t: t * t, x))


def euler(f, y, dt):
    return y + dt * f(y)


def with_function_in_a_loop(x):
    total = 0.0
    for rhs in [np.sin, np.tanh]:  # a local variable: the helper cannot be specialised on it
        total = total + np.sum(euler(rhs, x, 0.1))
    return total


@pytest.mark.parametrize("fn, args", [
    (simulate, (Y0, P)),
    (simulate_through_integrate, (Y0, P)),
    (with_ufunc, (X,)),
    (with_numpy_function, (X,)),
    (with_lambda, (X,)),
    (with_partial_keyword, (Y0, P)),
    (with_partial_of_an_active_value, (Y0, P)),
    (with_map_inside, (X,)),
    (with_default_function, (X,)),
    (with_keyword_arguments, (X,)),
    (with_global_activation, (X,)),
    (with_local_helper_taking_a_function, (X,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_function_passed_to_a_helper(fn, args):
    check_all_modes(fn, args)


@pytest.mark.parametrize("fn", [simulate, with_partial_keyword, with_partial_of_an_active_value])
def test_the_parameters_of_the_function_passed(fn):
    check_all_modes(fn, (Y0, P), wrt=1)


def test_a_local_def_closing_over_an_argument():
    check_all_modes(with_local_def, (X, np.array([0.5, 1.5, -1.0])), wrt=1)
    check_all_modes(with_local_def, (X, np.array([0.5, 1.5, -1.0])), wrt=0)


def test_rebinding_the_global_function_recompiles(monkeypatch):
    grad = srcad.grad(with_global_activation)
    before = grad(X)
    monkeypatch.setitem(globals(), "ACTIVATION", np.sin)
    after = grad(X)
    expected = 2.0 * np.cos(np.sin(X)) * np.cos(X)
    np.testing.assert_allclose(after, expected, rtol=1e-12)
    assert not np.allclose(before, after)


def test_a_local_variable_holding_a_function_is_refused():
    with pytest.raises(srcad.SrcadSyntaxError, match=r"'f' is a parameter of euler that it calls; srcad knows which "
                                                     r"function it holds only where a call passes one by name .* not "
                                                     r"a value known only when it runs such as a local variable"):
        srcad.grad(with_function_in_a_loop)(X)


def compose(f, g, t):
    return f(g(t))


def with_function_from_a_branch(x):
    g = np.sin if x[0] > 0 else np.cos
    return np.sum(compose(np.tanh, g, x))


def test_a_helper_specialised_on_one_function_but_given_a_local_variable_for_another_is_refused():
    with pytest.raises(srcad.SrcadSyntaxError, match=r"srcad cannot tell which function the parameter 'g' holds "
                                                     r"here: the caller passes a value known only when it runs"):
        srcad.grad(with_function_from_a_branch)(X)


def simulate_with(y0, p, f):
    return np.sum(rk4(f, y0, 0.01, p))


def test_a_function_given_to_the_differentiated_function_is_refused_with_what_to_write():
    with pytest.raises(srcad.SrcadSyntaxError, match=r"'f' is a parameter of rk4 that it calls.*to differentiate "
                                                     r"rk4 itself, differentiate a function that calls it so"):
        srcad.grad(simulate_with)(Y0, P, lorenz)
    loss = lambda y0, p: simulate_with(y0, p, lorenz)  # noqa: E731  (what the message says to write)
    check_all_modes(loss, (Y0, P))


def rebinding(f, x):
    f = np.cos
    return f(x)


def with_rebinding_helper(x):
    return np.sum(rebinding(np.sin, x))


def test_a_helper_that_assigns_its_function_parameter_is_refused():
    with pytest.raises(srcad.SrcadSyntaxError, match="srcad specialises 'rebinding' on the function passed as 'f', "
                                                     "which 'rebinding' assigns again"):
        srcad.grad(with_rebinding_helper)(X)


def _make_scaler():
    factor = 3.0

    def scaled(f, x):
        return f(x) * factor

    return scaled


scaled = _make_scaler()


def with_closure_helper(x):
    return np.sum(scaled(np.sin, x))


def test_a_helper_with_a_closure_called_with_a_function_is_refused():
    with pytest.raises(srcad.SrcadSyntaxError, match=r"'f' is a parameter of scaled that it calls.*from a function "
                                                     r"of the same module"):
        srcad.grad(with_closure_helper)(X)


class Affine:
    """A callable object: passed to a helper that only reads it, it is a value, as before."""

    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return self.w * x


AFFINE = Affine(np.array([0.5, -1.0, 2.0]))


def weighted(layer, x):
    return np.sum(layer.w * np.sin(x))


def with_a_callable_object(x):
    return weighted(AFFINE, x) * 2.0


def test_a_callable_object_passed_to_a_helper_that_reads_it():
    check_all_modes(with_a_callable_object, (X,))


DAMPED = functools.partial(damped, c=0.3)


def call_global_partial(y0, p):
    return np.sum(DAMPED(y0, p) * y0)


def pass_global_partial(y0, p):
    return np.sum(integrate(DAMPED, y0, p, 2))


@pytest.mark.parametrize("fn", [call_global_partial, pass_global_partial], ids=lambda f: f.__name__)
def test_a_global_partial_called_or_passed(fn):
    check_all_modes(fn, (Y0, P))
    check_all_modes(fn, (Y0, P), wrt=1)


def test_a_global_partial_binds_what_it_holds_when_the_code_runs(monkeypatch):
    grad = srcad.grad(call_global_partial)
    monkeypatch.setitem(DAMPED.keywords, "c", 2.0)  # the same object, changed in place
    np.testing.assert_allclose(grad(Y0, P), srcad.grad(lambda y, p: np.sum(damped(y, p, 2.0) * y))(Y0, P))
    monkeypatch.setitem(globals(), "DAMPED", functools.partial(shifted, 0.5))  # a positional argument now
    np.testing.assert_allclose(grad(Y0, P), srcad.grad(lambda y, p: np.sum(shifted(0.5, y, p) * y))(Y0, P))


def shifted(shift, y, p, c=0.3):
    return damped(y - shift, p, c)
