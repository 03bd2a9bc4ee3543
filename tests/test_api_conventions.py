"""How functions are called and named: the cotangent never captures a parameter, methods,
partials, other decorators, ``*args``, lambdas, and ``wrt`` checked when the transform is made.
Every gradient is checked against finite differences (``check_grads``, ``check_jvp``)."""
import functools

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

X = np.linspace(0.2, 0.9, 3)
W = np.arange(9.0).reshape(3, 3) / 10


# ---- the cotangent keyword never binds a parameter named v -------------------------------


def kwv(x, v=2.0):
    return np.sum(np.sin(x) * v)


def kwv_vector(x, v=2.0):
    return np.sin(x) * v


def test_grad_binds_keyword_v_to_the_parameter():
    reference = check_grads(kwv, (X, 3.0), v=1.0)  # finite differences, v passed positionally
    d = srcad.differentiable(kwv)
    np.testing.assert_allclose(d.grad(X, v=3.0), reference)
    np.testing.assert_allclose(srcad.grad(kwv)(X, v=3.0), reference)
    value, g = srcad.value_and_grad(kwv)(X, v=3.0)
    assert value == pytest.approx(kwv(X, 3.0))
    np.testing.assert_allclose(g, reference)
    value, g = d.value_and_grad(X, v=3.0)
    np.testing.assert_allclose(g, reference)
    y, pullback = d.vjp(X, v=3.0)
    assert y == pytest.approx(kwv(X, 3.0))
    np.testing.assert_allclose(pullback(), reference)
    np.testing.assert_allclose(pullback(2.0), 2 * reference)


def test_adjoint_takes_the_cotangent_positionally_when_v_is_a_parameter():
    cot = np.array([0.5, -1.0, 2.0])
    reference = check_grads(kwv_vector, (X, 3.0), v=cot)
    d = srcad.differentiable(kwv_vector)
    np.testing.assert_allclose(d.adjoint(X, 3.0, cot), reference)
    np.testing.assert_allclose(d.adjoint(X, cot, v=3.0), reference)  # v= is the parameter
    np.testing.assert_allclose(srcad.adjoint(kwv_vector)(X, cot, v=3.0), reference)
    default = check_grads(kwv_vector, (X,), v=cot)
    np.testing.assert_allclose(d.adjoint(X, cot), default)  # the parameter keeps its default
    with pytest.raises(srcad.CotangentError, match="pass the cotangent"):
        d.adjoint(X, v=3.0)  # no cotangent for a vector output


def test_grad_takes_no_cotangent():
    d = srcad.differentiable(lambda x: np.sum(x * x))
    with pytest.raises(srcad.ArgumentError, match="unexpected keyword argument 'v'"):
        d.grad(X, v=2.0)


def test_hvp_takes_its_vector_last_even_with_a_parameter_named_v():
    t = np.array([1.0, -0.5, 0.25])
    hv = srcad.hvp(kwv)(X, 3.0, t)
    np.testing.assert_allclose(hv, -3.0 * np.sin(X) * t)
    check_jvp(srcad.grad(kwv), (X, 3.0), direction=t)


# ---- methods, partials, decorators -----------------------------------------------------


class Model:
    scale = 1.5

    def __init__(self, W):
        self.W = W

    def loss(self, x):
        return np.sum(np.tanh(x @ self.W))

    @srcad.differentiable
    def decorated_loss(self, x):
        return np.sum(np.tanh(x @ self.W))

    @classmethod
    def class_loss(cls, x):
        return np.sum(np.sin(x) * cls.scale)

    @srcad.differentiable
    @classmethod
    def decorated_class_loss(cls, x):
        return np.sum(np.sin(x) * cls.scale)

    @staticmethod
    def static_loss(x):
        return np.sum(np.sin(x) ** 2)

    @srcad.differentiable
    @staticmethod
    def decorated_static_loss(x):
        return np.sum(np.sin(x) ** 2)


def test_bound_method_holds_self_constant():
    model = Model(W)
    reference = check_grads(model.loss, (X,), v=1.0)
    np.testing.assert_allclose(srcad.grad(model.loss)(X), reference)
    np.testing.assert_allclose(model.decorated_loss.grad(X), reference)
    assert model.decorated_loss(X) == pytest.approx(model.loss(X))
    np.testing.assert_allclose(srcad.hessian(model.loss)(X), srcad.jacobian(srcad.grad(model.loss))(X), atol=1e-12)
    check_jvp(model.loss, (X,))
    other = Model(W * 2.0)  # the same compiled code, another self
    np.testing.assert_allclose(other.decorated_loss.grad(X), check_grads(other.loss, (X,), v=1.0))
    check_grads(other.decorated_loss, (X,), wrt="x")  # check_grads takes the bound method as it is


def test_bound_method_wrt_counts_arguments_after_self():
    model = Model(W)
    with pytest.raises(srcad.WrtError, match="bound already"):
        srcad.grad(model.loss, wrt="self")
    with pytest.raises(srcad.WrtError, match="takes 1 argument"):
        srcad.grad(model.loss, wrt=1)


def test_classmethods_and_staticmethods():
    reference = check_grads(Model.class_loss, (X,), v=1.0)
    np.testing.assert_allclose(Model.decorated_class_loss.grad(X), reference)
    np.testing.assert_allclose(Model(W).decorated_class_loss.grad(X), reference)
    reference = check_grads(Model.static_loss, (X,), v=1.0)
    np.testing.assert_allclose(Model.decorated_static_loss.grad(X), reference)
    np.testing.assert_allclose(Model(W).decorated_static_loss.grad(X), reference)


def scaled(x, a, b=1.0):
    return np.sum(np.sin(x * a) + b * x)


def test_partials_hold_their_arguments_constant():
    by_keyword = functools.partial(scaled, a=3.0)
    reference = check_grads(by_keyword, (X,), v=1.0)
    np.testing.assert_allclose(srcad.grad(by_keyword)(X), check_grads(scaled, (X, 3.0), v=1.0))
    np.testing.assert_allclose(srcad.grad(by_keyword)(X, a=2.0), check_grads(scaled, (X, 2.0), v=1.0))
    np.testing.assert_allclose(srcad.grad(by_keyword)(X), reference)
    check_jvp(by_keyword, (X,))
    positional = functools.partial(scaled, X)
    check_grads(positional, (3.0,), v=1.0)
    np.testing.assert_allclose(srcad.grad(positional)(3.0), check_grads(scaled, (X, 3.0), wrt=1, v=1.0))


def twice_any(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return 2.0 * fn(*args, **kwargs)
    return wrapper


def twice(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return 2.0 * fn(x)
    return wrapper


@twice_any
def doubled_any(x):
    return np.sum(np.sin(x))


@twice
def doubled(x):
    return np.sum(np.sin(x))


def test_a_decorated_function_is_differentiated_as_the_wrapper_that_runs():
    reference = check_grads(doubled, (X,), v=1.0)
    np.testing.assert_allclose(reference, 2.0 * np.cos(X))  # the wrapper's factor 2 is in it
    with pytest.raises(srcad.WrtError, match="wrapper another decorator made"):
        srcad.grad(doubled_any)  # never the inner function's gradient, silently half the truth
    with pytest.raises(srcad.WrtError, match="wrapper another decorator made"):
        srcad.grad(doubled_any, wrt="x")


def star(*xs):
    return np.sum(xs[0] * xs[1])


def test_star_args_is_one_tuple_parameter():
    # wrt positions inside *xs are a clear error where the transform is made; the whole tuple
    # is differentiated (issue 10: the function was refused at its def line before)
    with pytest.raises(srcad.WrtError, match=r"test_api_conventions.py:\d+.*wrt=0 falls in \*xs"):
        srcad.grad(star, wrt=(0, 1))
    g = srcad.grad(star, wrt="xs")(X, X + 1.0)
    np.testing.assert_allclose(g[0], X + 1.0)
    np.testing.assert_allclose(g[1], X)


def keyword_only(x, *, scale):
    return np.sum(np.sin(x) * scale)


def test_keyword_only_parameters_bind_by_name():
    g = srcad.grad(keyword_only)(X, scale=3.0)
    np.testing.assert_allclose(g, 3.0 * np.cos(X))


# ---- lambdas -----------------------------------------------------------------------------

square = lambda t: t ** 2  # noqa: E731
first, second = (lambda t: np.sin(t)), (lambda t: np.cos(t))  # noqa: E731
returns_lambda = lambda t: (lambda t: t * 3.0)  # noqa: E731
in_a_call = dict(
    key=lambda t: np.exp(t) * 2.0,
)


def calls_lambda(x):
    return np.sum(square(x))


def test_lambda_called_from_differentiated_code():
    np.testing.assert_allclose(check_grads(calls_lambda, (X,), v=1.0), 2 * X)
    check_jvp(calls_lambda, (X,))


def test_lambdas_are_cut_out_exactly():
    np.testing.assert_allclose(check_grads(in_a_call["key"], (X,), v=np.ones(3)), 2 * np.exp(X))
    inner = returns_lambda(None)  # the inner of two nested lambdas with the same parameters
    if not hasattr(inner.__code__, "co_positions"):  # Python 3.10 keeps no columns: look-alikes are refused
        for fn in (first, second, inner):
            with pytest.raises(srcad.SourceUnavailableError, match="several lambdas on the line"):
                srcad.grad(fn)(X)
        return
    np.testing.assert_allclose(check_grads(first, (X,), v=np.ones(3)), np.cos(X))
    np.testing.assert_allclose(check_grads(second, (X,), v=np.ones(3)), -np.sin(X))
    np.testing.assert_allclose(check_grads(inner, (X,), v=np.ones(3)), 3.0 * np.ones(3))


# ---- wrt is checked when the transform is made -------------------------------------------


def loss(x, M):
    return np.sum(np.tanh(x @ M))


@pytest.mark.parametrize("make", [srcad.differentiable, srcad.grad, srcad.value_and_grad, srcad.adjoint,
                                  srcad.jacobian, srcad.hessian, srcad.hvp])
def test_misspelled_wrt_fails_when_the_transform_is_made(make):
    with pytest.raises(srcad.WrtError, match="did you mean 'M'"):
        make(loss, wrt="m")
    with pytest.raises(srcad.WrtError, match="takes 2 arguments"):
        make(loss, wrt=2)


def test_wrt_must_be_positions_or_names_once():
    with pytest.raises(srcad.WrtError, match="twice"):
        srcad.grad(loss, wrt=(0, "x"))
    with pytest.raises(srcad.WrtError, match="position or name"):
        srcad.grad(loss, wrt=True)


def count(n, x):
    return np.sum(x ** n)


def test_integer_wrt_is_refused_with_a_hint_to_pass_floats():
    with pytest.raises(srcad.ArgumentError, match=r"argument 'n' is an integer \(3\).*pass 3.0"):
        srcad.grad(count)(3, X)
    with pytest.raises(srcad.ArgumentError, match="argument 'x' is an array of dtype int64"):
        srcad.grad(count, wrt=1)(3, np.arange(3))
    with pytest.raises(srcad.ArgumentError, match="list holding an integer"):
        srcad.grad(lambda p: p[0] * p[1])([2.0, 3])
    np.testing.assert_allclose(srcad.grad(count, wrt=1)(3, X), check_grads(count, (3, X), wrt=1, v=1.0))
    np.testing.assert_allclose(srcad.grad(count)(3.0, X), check_grads(count, (3.0, X), v=1.0))
