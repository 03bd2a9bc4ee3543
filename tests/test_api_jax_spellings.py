"""Conveniences users arrive with from JAX and SciPy: ``argnums=``, ``has_aux=True``, a
cotangent with None for outputs not differentiated, ``srcad.hessp`` for
``scipy.optimize.minimize``. Every derivative is checked against finite differences."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

X = np.array([0.3, -0.7, 1.1])
W = np.array([[0.5, -0.2], [0.1, 0.9], [-0.4, 0.3]])


def two_args(x, w):
    return np.sum(np.tanh(x @ w) ** 2) + np.sum(x ** 3)


def vector_out(x, w):
    return np.sin(x @ w)


# ---- argnums= is wrt= ---------------------------------------------------------------------


@pytest.mark.parametrize("argnums", [1, "w", (0, 1), (1,)])
def test_argnums_is_wrt_for_every_reverse_transform(argnums):
    reference = check_grads(two_args, (X, W), wrt=argnums, v=1.0)  # finite differences
    if isinstance(argnums, tuple) and len(argnums) == 1:
        reference = (reference,) if not isinstance(reference, tuple) else reference

    def same(got):
        for a, b in zip(got if isinstance(got, tuple) else (got,), reference if isinstance(reference, tuple) else (reference,)):
            np.testing.assert_allclose(a, b, rtol=1e-12)

    same(srcad.grad(two_args, argnums=argnums)(X, W))
    same(srcad.value_and_grad(two_args, argnums=argnums)(X, W)[1])
    same(srcad.adjoint(two_args, argnums=argnums)(X, W, 1.0))
    same(srcad.vjp(two_args, X, W, argnums=argnums)[1](1.0))
    same(srcad.differentiable(argnums=argnums)(two_args).grad(X, W))
    same(srcad.differentiable(two_args, argnums=argnums).grad(X, W))


def test_argnums_for_jacobian_hessian_and_hvp():
    np.testing.assert_allclose(srcad.jacobian(vector_out, argnums=1)(X, W), srcad.jacobian(vector_out, wrt=1)(X, W))
    u = np.array([[0.2, -0.1], [0.4, 0.3], [-0.5, 0.6]])
    # the Hessian along u is the derivative of the gradient along u (finite differences)
    hu = check_jvp(srcad.grad(two_args, argnums=1), (X, W), wrt=1, direction=u)
    np.testing.assert_allclose(np.tensordot(srcad.hessian(two_args, argnums=1)(X, W), u, 2), hu, rtol=1e-7)
    np.testing.assert_allclose(srcad.hvp(two_args, argnums=1)(X, W, u), hu, rtol=1e-7)


@pytest.mark.parametrize("make", [
    lambda: srcad.grad(two_args, 0, argnums=1),
    lambda: srcad.grad(two_args, wrt=0, argnums=0),
    lambda: srcad.value_and_grad(two_args, wrt="x", argnums=1),
    lambda: srcad.adjoint(two_args, wrt=0, argnums=1),
    lambda: srcad.vjp(two_args, X, W, wrt=0, argnums=1),
    lambda: srcad.jacobian(vector_out, wrt=0, argnums=1),
    lambda: srcad.hessian(two_args, wrt=0, argnums=1),
    lambda: srcad.hvp(two_args, wrt=0, argnums=1),
    lambda: srcad.differentiable(two_args, wrt=0, argnums=1),
    lambda: srcad.differentiable(wrt=0, argnums=1),
])
def test_wrt_and_argnums_together_are_refused(make):
    with pytest.raises(srcad.WrtError, match="argnums is JAX's spelling of wrt"):
        make()


def test_a_misspelled_argnums_name_fails_when_the_transform_is_made():
    with pytest.raises(srcad.WrtError, match="did you mean 'w'"):
        srcad.grad(two_args, argnums="W")


# ---- has_aux=True ------------------------------------------------------------------------


def loss_with_aux(x, w):
    h = np.tanh(x @ w)
    loss = np.sum(h ** 2) + np.sum(x ** 3)
    return loss, {"hidden": h, "label": "layer", "n": 3, "best": np.argmax(h)}


def test_grad_with_aux_returns_the_gradient_and_aux():
    for argnums in (0, (0, 1)):
        g, aux = srcad.grad(loss_with_aux, argnums=argnums, has_aux=True)(X, W)
        reference = check_grads(two_args, (X, W), wrt=argnums, v=1.0)  # the same loss, no aux
        for a, b in zip(g if isinstance(g, tuple) else (g,), reference if isinstance(reference, tuple) else (reference,)):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        np.testing.assert_allclose(aux["hidden"], np.tanh(X @ W))
        assert (aux["label"], aux["n"], aux["best"]) == ("layer", 3, np.argmax(np.tanh(X @ W)))


def test_value_and_grad_with_aux_has_jaxs_shape():
    (value, aux), g = srcad.value_and_grad(loss_with_aux, has_aux=True)(X, W)
    assert value == pytest.approx(two_args(X, W))
    np.testing.assert_allclose(g, check_grads(two_args, (X, W), v=1.0), rtol=1e-12)
    np.testing.assert_allclose(aux["hidden"], np.tanh(X @ W))


def aux_feeds_nothing_back(x):
    y = np.sin(x)
    return np.sum(y), y * 100.0  # aux depends on x: its derivative must not leak into the gradient


def test_aux_gets_no_derivative():
    g, aux = srcad.grad(aux_feeds_nothing_back, has_aux=True)(X)
    np.testing.assert_allclose(g, check_grads(lambda x: np.sum(np.sin(x)), (X,), v=1.0), rtol=1e-12)
    np.testing.assert_allclose(aux, 100 * np.sin(X))


def test_has_aux_wants_a_pair_and_a_scalar_output():
    with pytest.raises(srcad.ArgumentError, match=r"has_aux=True but the function returned a float64.*pair"):
        srcad.grad(two_args, has_aux=True)(X, W)
    with pytest.raises(srcad.CotangentError, match="shape \\(2,\\)"):
        srcad.grad(lambda x, w: (vector_out(x, w), 1.0), has_aux=True)(X, W)


def test_a_gradient_with_aux_is_not_differentiated_again():
    with pytest.raises(srcad.SrcadError):
        srcad.grad(lambda x: srcad.grad(loss_with_aux, has_aux=True)(x, W)[0].sum())(X)
    with pytest.raises(srcad.ArgumentError, match="has_aux=True returns \\(gradient, aux\\) and is not differentiated"):
        srcad.grad(srcad.grad(loss_with_aux, has_aux=True))(X, W)


# ---- None in a cotangent: an output that is not differentiated -----------------------------


def layer(x, w):
    out = np.tanh(x @ w)
    cache = (x, w, (out, 2))
    return out, cache


def test_vjp_takes_none_for_a_cache_output():
    v = np.array([0.7, -1.3])
    reference = check_grads(lambda x, w: np.tanh(x @ w), (X, W), wrt=(0, 1), v=v)
    y, pullback = srcad.vjp(layer, X, W, argnums=(0, 1))
    for cot in [(v, None), [v, None], (v, (None, None, None)), (v, (None, None, (None, None)))]:
        for got, want in zip(pullback(cot), reference):
            np.testing.assert_allclose(got, want, rtol=1e-12)
    for got, want in zip(srcad.adjoint(layer, argnums=(0, 1))(X, W, (v, None)), reference):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_cache_cotangent_still_counts_when_given():
    v, vx = np.array([0.7, -1.3]), np.array([1.0, 2.0, 3.0])
    y, pullback = srcad.vjp(layer, X, W)
    # the cache returns x itself: its cotangent adds to x's gradient
    np.testing.assert_allclose(pullback((v, (vx, None, None))), pullback((v, None)) + vx, rtol=1e-12)


def test_a_tuple_output_asks_for_a_tuple_and_says_none_is_allowed():
    _, pullback = srcad.vjp(layer, X, W)
    with pytest.raises(srcad.CotangentError, match=r"tuple of 2 cotangents \(None for an item"):
        pullback(np.ones(2))
    with pytest.raises(srcad.CotangentError, match="has shape \\(3,\\) but the output has shape \\(2,\\)"):
        pullback((np.ones(3), None))


# ---- scipy.optimize.minimize with jac= and hessp= ------------------------------------------


def rosen(x, a):
    return np.sum(a * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def test_hessp_takes_scipys_order():
    x, p = np.array([0.3, -0.2, 0.8, 1.1]), np.array([0.5, 1.0, -0.3, 0.2])
    hp = srcad.hessp(rosen)(x, p, 100.0)
    np.testing.assert_allclose(hp, check_jvp(srcad.grad(rosen), (x, 100.0), direction=p), rtol=1e-7)
    np.testing.assert_allclose(hp, srcad.hvp(rosen)(x, 100.0, p), rtol=1e-12)


@pytest.mark.parametrize("method", ["trust-ncg", "Newton-CG", "trust-krylov"])
def test_minimize_with_srcad_jac_and_hessp_reaches_the_optimum(method):
    from scipy.optimize import minimize

    x0 = np.array([-1.2, 1.0, -0.5, 0.8])
    check_grads(rosen, (x0, 100.0), v=1.0)
    result = minimize(rosen, x0, args=(100.0,), jac=srcad.grad(rosen), hessp=srcad.hessp(rosen), method=method,
                      options={"gtol": 1e-10} if method != "Newton-CG" else {"xtol": 1e-10})
    assert result.success, result.message
    np.testing.assert_allclose(result.x, np.ones(4), atol=1e-6)


def gradient_norm_by_argnums(x, w):
    return np.sum(srcad.grad(two_args, argnums=1)(x, w) ** 2)


def test_argnums_inside_differentiated_code():
    check_grads(gradient_norm_by_argnums, (X, W), wrt=(0, 1), v=1.0, modes=("rev",))  # reverse over reverse
    check_jvp(gradient_norm_by_argnums, (X, W), wrt=(0, 1))
