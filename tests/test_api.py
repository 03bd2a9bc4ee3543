"""The public API contract."""
import inspect
import textwrap
import traceback

import numpy as np
import pytest

import srcad
from srcad import compile as compiled


def loss(x, M):
    return np.tanh(x @ M).sum()


def scaled(x, scale=2.0):
    return (x * scale) ** 2


def test_decorator_forms_and_original_call():
    f = srcad.differentiable(loss)
    g = srcad.differentiable(wrt="M")(loss)
    h = srcad.differentiable(wrt=(0, 1))(loss)
    x, M = np.ones((1, 2)), np.arange(4.0).reshape(2, 2)
    assert f(x, M) == loss(x, M) and f.__name__ == "loss" and f.__doc__ == loss.__doc__
    s = 1 - np.tanh(x @ M) ** 2
    np.testing.assert_allclose(f.grad(x, M), s @ M.T)
    np.testing.assert_allclose(g.grad(x, M), x.T @ s)
    gx, gM = h.grad(x, M)
    np.testing.assert_allclose(gx, s @ M.T)
    np.testing.assert_allclose(gM, x.T @ s)


def test_function_transformations():
    x, M = np.ones((1, 2)), np.arange(4.0).reshape(2, 2)
    s = 1 - np.tanh(x @ M) ** 2
    np.testing.assert_allclose(srcad.grad(loss)(x, M), s @ M.T)
    value, grad = srcad.value_and_grad(loss, wrt=1)(x, M)
    assert value == loss(x, M)
    np.testing.assert_allclose(grad, x.T @ s)
    y, pullback = srcad.vjp(loss, x, M, wrt=(0, 1))
    assert y == loss(x, M)
    gx, gM = pullback(2.0)
    np.testing.assert_allclose(gx, 2 * s @ M.T)
    np.testing.assert_allclose(srcad.adjoint(loss)(x, M, 3.0), 3 * s @ M.T)


def test_pullback_reusable_like_retain_graph():
    f = srcad.differentiable(scaled)
    x = np.array([1.0, -2.0])
    y, pullback = f.vjp(x)
    first = pullback(np.array([1.0, 0.0]))
    second = pullback(np.array([0.0, 1.0]))
    np.testing.assert_allclose(first + second, pullback(np.ones(2)))
    np.testing.assert_allclose(first, [8.0, 0.0])


def test_v_with_defaults():
    f = srcad.differentiable(scaled)
    x = np.array([1.0, -2.0])
    v = np.array([1.0, 1.0])
    np.testing.assert_allclose(f.adjoint(x, v), 8 * x)            # scale defaulted
    np.testing.assert_allclose(f.adjoint(x, 3.0, v), 18 * x)      # scale given, v last
    np.testing.assert_allclose(f.adjoint(x, 3.0, v=v), 18 * x)    # v by keyword


def test_python_float_in_float_out():
    g = srcad.grad(lambda a: a * a * 3.0)(2.0)
    assert type(g) is float and g == 12.0


def test_value_and_grad_method():
    f = srcad.differentiable(loss)
    x, M = np.ones((1, 2)), np.eye(2)
    value, grad = f.value_and_grad(x, M)
    assert value == loss(x, M)
    np.testing.assert_allclose(grad, f.grad(x, M))


def test_generated_source_is_inspectable(capsys):
    f = srcad.differentiable(loss)
    assert f.adjoint_source.startswith("def loss_adjoint(x, M, v=None):")
    assert "# line" in f.adjoint_source
    srcad.show(f)
    assert "loss_adjoint" in capsys.readouterr().out
    joint = f._functions((np.ones((1, 2)), np.eye(2)))[0]
    assert textwrap.dedent(inspect.getsource(joint)).strip() == f.adjoint_source.strip()


def test_tracebacks_show_generated_lines():
    f = srcad.differentiable(loss)
    try:
        f.adjoint(np.ones((1, 2)), np.eye(2), np.ones((5, 5)))
    except srcad.CotangentError:
        pass
    bad = srcad.differentiable(lambda x: np.sqrt(x).sum())
    with np.errstate(all="raise"), pytest.raises(FloatingPointError) as info:
        bad.grad(np.array([0.0, 1.0]))
    text = "".join(traceback.format_exception(info.value))
    assert "srcad-generated" in text and "/ (2 * " in text


def test_second_use_does_no_transformation(monkeypatch):
    f = srcad.differentiable(loss)
    f.grad(np.ones((1, 2)), np.eye(2))
    from srcad import pipeline

    def fail(*a, **k):
        raise AssertionError("transformed again")

    monkeypatch.setattr(pipeline, "transform", fail)
    g = srcad.differentiable(loss)  # a new wrapper of the same function: compiled code is shared
    g.grad(np.ones((1, 2)), np.eye(2))
    assert any(key[1] is loss.__code__ for key in compiled._CACHE)


def test_closures_are_live():
    def make(w):
        def f(x):
            return (x * w).sum()
        return f

    f1, f2 = make(np.array([1.0, 2.0])), make(np.array([3.0, 4.0]))
    np.testing.assert_allclose(srcad.grad(f1)(np.zeros(2)), [1.0, 2.0])
    np.testing.assert_allclose(srcad.grad(f2)(np.zeros(2)), [3.0, 4.0])


WEIGHTS = np.array([1.0, 2.0])


def uses_global(x):
    return (x * WEIGHTS).sum()


def test_module_globals_are_live():
    global WEIGHTS
    g = srcad.grad(uses_global)
    np.testing.assert_allclose(g(np.zeros(2)), [1.0, 2.0])
    WEIGHTS = np.array([5.0, 6.0])
    try:
        np.testing.assert_allclose(g(np.zeros(2)), [5.0, 6.0])
    finally:
        WEIGHTS = np.array([1.0, 2.0])


def test_scipy_optimize_uses_the_gradient():
    from scipy.optimize import minimize

    def rosen(x):
        return ((1 - x[:-1]) ** 2).sum() + 100 * ((x[1:] - x[:-1] ** 2) ** 2).sum()

    result = minimize(rosen, np.zeros(4), jac=srcad.grad(rosen), method="BFGS")
    np.testing.assert_allclose(result.x, np.ones(4), atol=1e-4)


def test_wrt_errors():
    with pytest.raises(ValueError, match="not a parameter"):
        srcad.grad(loss, wrt="y")(np.ones((1, 2)), np.eye(2))
    with pytest.raises(IndexError):
        srcad.grad(loss, wrt=5)(np.ones((1, 2)), np.eye(2))


def test_one_element_wrt_tuple_gives_a_tuple():
    x, M = np.ones((1, 2)), np.eye(2)
    (gx,) = srcad.grad(loss, wrt=(0,))(x, M)
    np.testing.assert_allclose(gx, srcad.grad(loss)(x, M))
    y, pullback = srcad.vjp(loss, x, M, wrt=("M",))
    assert isinstance(pullback(), tuple) and len(pullback()) == 1


def identity(x):
    return x


def plus(x, y):
    return x + y


def test_gradients_never_alias_the_cotangent_or_each_other():
    x, v = np.ones(3), np.arange(3.0)
    g = srcad.differentiable(identity).adjoint(x, v)
    assert not np.shares_memory(g, v)
    gx, gy = srcad.differentiable(plus, wrt=(0, 1)).adjoint(x, x, v)
    assert not np.shares_memory(gx, v) and not np.shares_memory(gx, gy)
    np.testing.assert_array_equal(gx, v)
    y, y_dot = srcad.jvp(identity, (x,), (v,))
    assert not np.shares_memory(y_dot, v)


def make_activation_sum(act):
    def f(x):
        return np.sum(act(x))
    return f


ACTIVATION = np.tanh


def global_activation_sum(x):
    return np.sum(ACTIVATION(x))


def test_code_is_not_reused_for_other_bindings():
    global ACTIVATION
    x = np.linspace(0.1, 1.0, 3)
    np.testing.assert_allclose(srcad.grad(make_activation_sum(np.tanh))(x), 1 - np.tanh(x) ** 2)
    np.testing.assert_allclose(srcad.grad(make_activation_sum(np.sin))(x), np.cos(x))
    g = srcad.grad(global_activation_sum)
    np.testing.assert_allclose(g(x), 1 - np.tanh(x) ** 2)
    ACTIVATION = np.sin
    try:
        np.testing.assert_allclose(g(x), np.cos(x))
    finally:
        ACTIVATION = np.tanh
