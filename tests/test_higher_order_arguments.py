"""Keyword arguments through ``hessian``, ``hvp``, ``hessp`` and ``jacobian`` (bound as
``grad`` binds them: the ``wrt`` parameters differentiated, the others held constant), and
the derivatives srcad made that it does not differentiate again (``jacobian(hessian(f))``):
refused naming the user's function, not as "a wrapper another decorator made" (probes 23A
bug_07, 23B bug_04). Values are checked against central differences."""
import functools

import numpy as np
import pytest

import srcad

rng = np.random.default_rng(7)
X = rng.standard_normal((6, 3))
Y = rng.standard_normal(6)
W = rng.standard_normal(3)
V = rng.standard_normal(3)
EPS = 1e-6


def numeric_jacobian(fn, x):
    """∂fn/∂x by central differences, shaped ``fn(x).shape + x.shape``."""
    columns = [(np.asarray(fn(x + EPS * e)) - np.asarray(fn(x - EPS * e))) / (2 * EPS)
               for e in np.eye(x.size).reshape((x.size,) + x.shape)]
    return np.stack(columns, axis=-1).reshape(np.shape(fn(x)) + x.shape)


def numeric_hessian(loss, x, **keywords):
    """The Jacobian of the gradient (``srcad.grad``, checked against differences of the loss
    itself below) by central differences."""
    return numeric_jacobian(lambda z: srcad.grad(loss)(z, **keywords), x)


def keyword_only_loss(w, *, lam=0.1, X=None, y=None):
    r = X @ w - y
    return 0.5 * np.sum(r ** 2) + lam * np.sum(w ** 2) + np.sum(np.sin(w) * w[0])


def plain_loss(w, lam, X, y):
    r = X @ w - y
    return 0.5 * np.sum(np.tanh(r) ** 2) + lam * np.sum(w ** 4)


def options_loss(w, **options):
    return options["scale"] * np.sum(np.cos(w) * w ** 2) + options["shift"]


def features(w, *, X, power=2.0):
    return np.tanh(X @ w) ** power


def test_the_gradient_the_references_use_is_the_losses_derivative():
    for loss, keywords in ((keyword_only_loss, dict(lam=0.2, X=X, y=Y)), (plain_loss, dict(lam=0.3, X=X, y=Y))):
        numeric = numeric_jacobian(lambda w: loss(w, **keywords), W)
        np.testing.assert_allclose(srcad.grad(loss)(W, **keywords), numeric, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("loss, keywords", [
    (keyword_only_loss, dict(lam=0.2, X=X, y=Y)),
    (plain_loss, dict(lam=0.3, X=X, y=Y)),
    (options_loss, dict(scale=1.5, shift=2.0)),
])
def test_second_derivatives_take_keyword_arguments(loss, keywords):
    H = numeric_hessian(loss, W, **keywords)
    np.testing.assert_allclose(srcad.hessian(loss)(W, **keywords), H, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(srcad.hvp(loss)(W, V, **keywords), H @ V, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(srcad.hessp(loss)(W, V, **keywords), H @ V, rtol=1e-6, atol=1e-6)
    for mode in ("rev", "fwd"):
        np.testing.assert_allclose(srcad.jacobian(srcad.grad(loss), mode=mode)(W, **keywords), H,
                                   rtol=1e-6, atol=1e-6)


def test_the_argument_differentiated_may_be_passed_by_keyword():
    keywords = dict(X=X, y=Y)
    H = numeric_jacobian(lambda lam: srcad.grad(plain_loss, wrt="lam")(W, lam, **keywords), np.array(0.3))
    assert float(srcad.hessian(plain_loss, wrt="lam")(W, lam=0.3, **keywords)) == pytest.approx(float(H), rel=1e-6)
    assert float(srcad.hvp(plain_loss, wrt=1)(W, 2.0, lam=0.3, **keywords)) == pytest.approx(2 * float(H), rel=1e-6)
    Hw = numeric_hessian(plain_loss, W, lam=0.3, **keywords)
    np.testing.assert_allclose(srcad.hessian(plain_loss)(w=W, lam=0.3, **keywords), Hw, rtol=1e-6, atol=1e-6)


def test_hessian_blocks_over_two_arguments_with_keywords():
    def loss(w, b, *, X, y):
        return 0.5 * np.sum(np.tanh(X @ w + b - y) ** 2)

    blocks = srcad.hessian(loss, wrt=(0, 1))(W, 0.5, X=X, y=Y)
    Hww = numeric_jacobian(lambda w: srcad.grad(loss)(w, 0.5, X=X, y=Y), W)
    Hwb = numeric_jacobian(lambda b: srcad.grad(loss)(W, b, X=X, y=Y), np.array(0.5))
    np.testing.assert_allclose(blocks[0][0], Hww, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(blocks[0][1], Hwb, rtol=1e-6, atol=1e-6)
    vectors = srcad.hvp(loss, wrt=(0, 1))(W, 0.5, (V, 1.0), X=X, y=Y)
    np.testing.assert_allclose(vectors[0], Hww @ V + Hwb, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_jacobian_takes_keyword_arguments(mode):
    J = numeric_jacobian(lambda w: features(w, X=X, power=3.0), W)
    np.testing.assert_allclose(srcad.jacobian(features, mode=mode)(W, X=X, power=3.0), J, rtol=1e-6, atol=1e-7)
    J2 = numeric_jacobian(lambda w: features(w, X=X), W)  # power left to its default
    np.testing.assert_allclose(srcad.jacobian(features, mode=mode)(W, X=X), J2, rtol=1e-6, atol=1e-7)


class Model:
    def __init__(self, X):
        self.X = X

    def loss(self, w, *, lam, y):
        return 0.5 * np.sum((self.X @ w - y) ** 2) + lam * np.sum(w ** 4)


def test_methods_and_partials_with_keywords():
    model = Model(X)
    H = numeric_hessian(model.loss, W, lam=0.2, y=Y)
    np.testing.assert_allclose(srcad.hessian(model.loss)(W, lam=0.2, y=Y), H, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(srcad.hvp(model.loss)(W, V, lam=0.2, y=Y), H @ V, rtol=1e-6, atol=1e-6)
    fixed = functools.partial(keyword_only_loss, X=X, y=Y)
    H = numeric_hessian(keyword_only_loss, W, lam=0.4, X=X, y=Y)
    np.testing.assert_allclose(srcad.hessian(fixed)(W, lam=0.4), H, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(srcad.hvp(fixed)(W, V, lam=0.4), H @ V, rtol=1e-6, atol=1e-6)
    # a keyword given to the call overrides the partial's, as Python's partial does
    other_y = Y[::-1].copy()
    H = numeric_hessian(plain_loss, W, lam=0.4, X=X, y=other_y)
    partial_plain = functools.partial(plain_loss, lam=0.4, X=X, y=Y)
    np.testing.assert_allclose(srcad.hessian(partial_plain)(W, y=other_y), H, rtol=1e-6, atol=1e-6)


def test_what_cannot_bind_is_refused_at_the_users_function():
    where = f"{__file__}:{keyword_only_loss.__code__.co_firstlineno}: keyword_only_loss"
    with pytest.raises(srcad.ArgumentError, match="unexpected keyword argument 'lamda'") as caught:
        srcad.hvp(keyword_only_loss)(W, V, lamda=0.2, X=X, y=Y)
    assert str(caught.value).startswith(where)
    with pytest.raises(srcad.WrtError, match="take the argument they differentiate by position") as caught:
        srcad.hessian(keyword_only_loss, wrt="lam")(W, lam=0.2, X=X, y=Y)
    assert str(caught.value).startswith(where)


def test_an_argument_to_differentiate_left_out_is_refused():
    """It was an IndexError ("tuple index out of range")."""
    where = f"{__file__}:{plain_loss.__code__.co_firstlineno}: plain_loss"
    for make in (srcad.hessian, srcad.jacobian, srcad.hvp):
        with pytest.raises(srcad.WrtError, match="jacobian, hessian and hvp find it by position"):
            make(lambda w, lam=0.3: plain_loss(w, lam, X, Y), wrt="lam")(W, *([V] if make is srcad.hvp else []))
    with pytest.raises(srcad.WrtError, match="find it by position") as caught:  # after a parameter the partial fixes
        srcad.hessian(functools.partial(plain_loss, lam=0.3), wrt="y")(W, X=X, y=Y)
    assert str(caught.value).startswith(where)


def test_positional_calls_unchanged():
    H = numeric_hessian(plain_loss, W, lam=0.3, X=X, y=Y)
    np.testing.assert_allclose(srcad.hessian(plain_loss)(W, 0.3, X, Y), H, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(srcad.hessp(plain_loss)(W, V, 0.3, X, Y), H @ V, rtol=1e-6, atol=1e-6)


# ---- derivatives of derivatives -------------------------------------------------------------


def energy(x):
    return np.sum(x ** 4) / 4 + np.sum(np.sin(x) * x)


def along(x, u):
    return np.sum(srcad.grad(energy)(x) * u)


ENERGY_AT = f"{__file__}:{energy.__code__.co_firstlineno}: energy: "


@pytest.mark.parametrize("make, what", [
    (lambda: srcad.jacobian(srcad.hessian(energy)), "srcad.hessian(energy)"),
    (lambda: srcad.jacobian(srcad.hessian(energy), mode="fwd"), "srcad.hessian(energy)"),
    (lambda: srcad.jacobian(srcad.jacobian(srcad.grad(energy))), "srcad.jacobian(srcad.grad(energy))"),
    (lambda: srcad.jacobian(srcad.hvp(energy)), "srcad.hvp(energy)"),
    (lambda: srcad.hessian(srcad.hessian(energy)), "srcad.hessian(energy)"),
    (lambda: srcad.grad(srcad.hessp(energy)), "srcad.hessp(energy)"),
    (lambda: srcad.grad(srcad.value_and_grad(energy)), "srcad.value_and_grad(energy)"),
    (lambda: srcad.jacobian(srcad.adjoint(energy)), "srcad.adjoint(energy)"),
    (lambda: srcad.jacobian(srcad.vjp(energy, W)[1]), "the pullback of srcad.vjp(energy)"),
    (lambda: srcad.jacobian(srcad.differentiable(energy).grad), "energy.grad"),
    (lambda: srcad.jvp(srcad.hessian(energy), (W,), (V,)), "srcad.hessian(energy)"),
    (lambda: srcad.jvp(srcad.hvp(energy), (W, V), (V, None)), "srcad.hvp(energy)"),
])
def test_a_derivative_srcad_made_is_not_differentiated_again(make, what):
    with pytest.raises(srcad.SourceUnavailableError) as caught:
        make()
    message = str(caught.value)
    assert message.startswith(f"{ENERGY_AT}{what} is srcad's own API"), message
    assert "srcad.hessian(along)(x, u)" in message and "another decorator" not in message


def test_what_the_refusal_offers_gives_third_derivatives():
    u = np.array([1.0, 2.0, -1.0])
    third = numeric_jacobian(srcad.hessian(energy), W)  # third[i, j, k]: d/dx[k] of H[i, j]
    np.testing.assert_allclose(srcad.hessian(along)(W, u), np.einsum("ijk,k->ij", third, u), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(srcad.jacobian(srcad.grad(along))(W, u), np.einsum("ijk,k->ij", third, u),
                               rtol=1e-5, atol=1e-6)


def test_grad_of_grad_and_jacobian_of_grad_still_work():
    def wave(t):
        return t ** 3 * np.sin(t)

    second = srcad.grad(srcad.grad(wave))
    third = (second(0.7 + EPS) - second(0.7 - EPS)) / (2 * EPS)
    assert float(srcad.grad(srcad.grad(srcad.grad(wave)))(0.7)) == pytest.approx(float(third), rel=1e-6)
    np.testing.assert_allclose(srcad.jacobian(srcad.grad(energy))(W), numeric_hessian(energy, W), rtol=1e-6, atol=1e-6)
