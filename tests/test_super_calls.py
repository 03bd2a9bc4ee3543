"""``super().method(...)`` in a method: differentiated as the method Python calls (the next
class's in the method resolution order), checked when the code runs, refused where a subclass
puts another class between them; checked against finite differences in every mode."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads

RNG = np.random.default_rng(7)
W0 = RNG.standard_normal((3, 3)) * 0.5
X = RNG.standard_normal(3)


class Layer:
    def __init__(self, W):
        self.W = W

    def forward(self, x):
        return np.tanh(self.W @ x)

    @staticmethod
    def squash(z):
        return z / (1.0 + z ** 2)


class Scaled(Layer):
    def forward(self, x):
        h = super().forward(x)
        return h * 2.0 + x


class Twice(Scaled):
    """Three classes deep: each ``super()`` goes one class up."""

    def forward(self, x):
        return super().forward(x) ** 2 + self.squash(x)


class Explicit(Layer):
    def forward(self, x):
        return super(Explicit, self).forward(x) * x


class Squashed(Layer):
    def forward(self, x):
        return super().squash(super().forward(x) * 3.0)


def truth(model, x):
    """The same model evaluated by Python itself."""
    return np.sum(np.sin(model.forward(x)))


def loss_of(model):
    def loss(x):
        return np.sum(np.sin(model.forward(x)))
    return loss


MODEL_S, MODEL_T, MODEL_E, MODEL_Q = Scaled(W0), Twice(W0), Explicit(W0), Squashed(W0)


def loss_scaled(x):
    return np.sum(np.sin(MODEL_S.forward(x)))


def loss_twice(x):
    return np.sum(np.sin(MODEL_T.forward(x)))


def loss_explicit(x):
    return np.sum(np.sin(MODEL_E.forward(x)))


def loss_squashed(x):
    return np.sum(np.sin(MODEL_Q.forward(x)))


def loss_param(model, x):
    return np.sum(np.sin(model.forward(x)))


CASES = [(loss_scaled, MODEL_S), (loss_twice, MODEL_T), (loss_explicit, MODEL_E), (loss_squashed, MODEL_Q)]


@pytest.mark.parametrize("loss,model", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_gradient_matches_finite_differences(loss, model):
    value, g = srcad.value_and_grad(loss)(X)
    assert np.isclose(value, truth(model, X))
    check_grads(loss, (X,))


@pytest.mark.parametrize("loss,model", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_forward_mode_matches_reverse(loss, model):
    assert np.allclose(srcad.jacobian(loss, mode="fwd")(X), srcad.grad(loss)(X))


@pytest.mark.parametrize("loss,model", CASES[:2], ids=lambda c: getattr(c, "__name__", ""))
def test_second_order_matches_finite_differences_of_the_gradient(loss, model):
    H = srcad.hessian(loss)(X)
    g = srcad.grad(loss)
    eps = 1e-6
    for u in RNG.standard_normal((2, 3)):
        fd = (g(X + eps * u) - g(X - eps * u)) / (2 * eps)
        assert np.allclose(H @ u, fd, rtol=1e-5, atol=1e-7)


def test_model_given_as_an_argument():
    check_grads(loss_param, (MODEL_T, X), wrt=1)
    check_grads(loss_param, (Twice(W0 * 0.3), X), wrt=1)


class Mixin(Layer):
    def forward(self, x):
        return np.cos(Layer.forward(self, x))


class Inserted(Scaled, Mixin):
    """Python's order: Inserted, Scaled, Mixin, Layer: ``super()`` in Scaled reaches Mixin."""


def test_a_class_put_between_by_a_subclass_is_the_one_python_calls():
    """Compiled for an ``Inserted`` object, ``super()`` in ``Scaled`` reaches ``Mixin``."""
    model = Inserted(W0)

    def loss(x):
        return np.sum(np.sin(model.forward(x)))

    assert np.isclose(srcad.value_and_grad(loss)(X)[0], truth(model, X))
    check_grads(loss, (X,))


class DoubleMixin:
    def forward(self, x):
        return 2.0 * super().forward(x)  # DoubleMixin's own order has no forward: the object's has


class Doubled(DoubleMixin, Layer):
    pass


def test_a_cooperative_mixin():
    model = Doubled(W0)

    def loss(x):
        return np.sum(np.sin(model.forward(x)))

    assert np.isclose(srcad.value_and_grad(loss)(X)[0], truth(model, X))
    check_grads(loss, (X,))


def test_an_object_whose_class_changes_after_first_use():
    model = Scaled(W0)

    def loss(x):
        return np.sum(np.sin(model.forward(x)))

    check_grads(loss, (X,))
    model.__class__ = Inserted  # Python now reaches Mixin.forward from Scaled's super()
    try:
        g = srcad.grad(loss)(X)
    except srcad.UnsupportedCaseError as error:  # the code made for a Scaled object: checked when it runs
        assert "super().forward(...) on this Inserted object calls Mixin.forward, not Layer.forward" in str(error)
    else:
        check_grads(loss, (X,))
        assert np.allclose(g, srcad.grad(lambda x: np.sum(np.sin(Inserted.forward(model, x))))(X))


class Doubling:
    def forward(self, x):
        return x * 2.0


class PlusOne(Doubling):
    def forward(self, x):
        return super().forward(x) + 1.0


def tripled(self, x):
    return x * 3.0


def test_base_method_redefined_after_first_use_recompiles():
    model = PlusOne()

    def loss(x):
        return np.sum(model.forward(x) ** 2)

    original = Doubling.forward
    assert np.allclose(srcad.grad(loss)(X), 2 * (2 * X + 1) * 2)
    try:
        Doubling.forward = tripled
        assert np.allclose(srcad.grad(loss)(X), 2 * (3 * X + 1) * 3)
    finally:
        Doubling.forward = original
    assert np.allclose(srcad.grad(loss)(X), 2 * (2 * X + 1) * 2)


class InLambda(Layer):
    def forward(self, x):
        f = lambda y: super().forward(y)  # noqa: E731  (super() of the lambda: not resolved)
        return f(x)


def test_super_in_a_nested_scope_is_not_taken_for_the_methods():
    model = InLambda(W0)

    def loss(x):
        return np.sum(model.forward(x))

    with pytest.raises(srcad.SrcadError):
        srcad.grad(loss)(X)
