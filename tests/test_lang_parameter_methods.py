"""Methods of objects passed as arguments: ``model.predict(x)`` and ``model(x)`` on a parameter
are differentiated as ``C.predict(model, x)`` / ``C.__call__(model, x)``, ``C`` the class of the
argument the code is compiled for (a new class compiles new code). When the code runs, the
object must really call that function (an attribute shadowing the method is refused). A
dataclass model is differentiated through its fields. Every mode against finite differences."""
import dataclasses

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes
from srcad.testing import check_grads, check_jvp

RNG = np.random.default_rng(7)
X = RNG.standard_normal((4, 3))


class Net:
    """Parameters held in attributes; a method and ``__call__`` that calls it."""

    def __init__(self, W, b):
        self.W, self.b = W, b

    def predict(self, x):
        return np.tanh(x @ self.W + self.b)

    def __call__(self, x):
        return self.predict(x) * 2.0


class Quadratic:
    """Another class with a method of the same name: its own code."""

    def __init__(self, W, b):
        self.W, self.b = W, b

    def predict(self, x):
        return (x @ self.W) ** 2 - self.b


@dataclasses.dataclass
class Dense:
    W: np.ndarray
    b: np.ndarray

    def __call__(self, x):
        return np.tanh(x @ self.W + self.b)

    def penalty(self):
        return np.sum(self.W ** 2)


def net_loss(net, x):
    return np.sum(net.predict(x) ** 2) + np.sum(net(x))


def stepped(net, x):
    total = 0.0
    for _ in range(3):
        x = x + net.predict(x) @ np.ones((2, 3)) * 0.3
        total = total + np.sum(x ** 2)
    return total


def dense_loss(model, x):
    return np.sum(model(x) ** 2) + 0.1 * model.penalty()


def read_by_helper_and_caller(model, x):
    return np.sum(scaled(model, x) ** 2) + np.sum(model.b)


def scaled(model, x):
    return np.tanh(x @ model.W) * model.b


def through_a_helper(net, x):
    return run(net, x) + np.sum(x)


def run(model, x):
    return np.sum(model.predict(x) ** 2)  # compiled for the class of the object the caller passes


def dense_through_a_helper(model, x):
    return np.sum(apply(model, x) ** 2)


def apply(model, x):
    return model(x)


def _net(cls=Net):
    return cls(RNG.standard_normal((3, 2)) * 0.5, RNG.standard_normal(2) * 0.1)


def _dense():
    return Dense(RNG.standard_normal((3, 2)) * 0.5, RNG.standard_normal(2) * 0.1)


@pytest.mark.parametrize("fn", [net_loss, stepped], ids=["method_and_call", "stepped_in_a_loop"])
def test_a_method_of_an_object_argument(fn):
    check_all_modes(fn, (_net(), X), wrt=1)


def test_a_helper_given_the_object_calls_its_method():
    check_all_modes(through_a_helper, (_net(), X), wrt=1)
    model = _dense()
    assert isinstance(check_grads(dense_through_a_helper, (model, X), wrt=0), Dense)
    check_jvp(dense_through_a_helper, (model, X), wrt=0)


def test_two_classes_with_the_same_method_name_get_their_own_code():
    first, second = _net(), _net(Quadratic)
    gradient = srcad.grad(lambda_free_loss, wrt=1)
    for obj in (first, second, first):
        check_grads(lambda_free_loss, (obj, X), wrt=1)
    assert not np.allclose(gradient(first, X), gradient(Quadratic(first.W, first.b), X))


def lambda_free_loss(net, x):
    return np.sum(net.predict(x))


@pytest.mark.parametrize("fn", [dense_loss, read_by_helper_and_caller], ids=["methods", "helper_and_caller"])
def test_a_dataclass_model_differentiated_through_its_fields(fn):
    model = _dense()
    got = check_grads(fn, (model, X), wrt=0)
    assert isinstance(got, Dense)
    check_jvp(fn, (model, X), wrt=0)
    check_all_modes(fn, (model, X), wrt=1)


def test_an_attribute_shadowing_the_method_is_the_function_python_calls():
    net = _net()
    grad = srcad.grad(net_loss, wrt=1)
    before = grad(net, X)
    net.predict = lambda x: x  # a function the object holds (passes.held_calls): the code is made for it
    after = check_grads(net_loss, (net, X), wrt=1, v=1.0)
    np.testing.assert_allclose(grad(net, X), after, rtol=1e-12)
    assert not np.allclose(before, after)


def test_redefining_the_method_on_the_class_recompiles(monkeypatch):
    net = _net()
    before = srcad.grad(lambda_free_loss, wrt=1)(net, X)
    monkeypatch.setattr(Net, "predict", lambda self, x: x * x)
    after = srcad.grad(lambda_free_loss, wrt=1)(net, X)
    np.testing.assert_allclose(after, 2 * X, rtol=1e-12)
    assert not np.allclose(before, after)


def test_a_class_the_module_cannot_name_is_refused_as_before():
    class Local:
        def predict(self, x):
            return x * 2.0

    with pytest.raises(srcad.NoRuleError, match=r"no derivative rule for the method .predict\(\)"):
        srcad.grad(lambda_free_loss, wrt=1)(Local(), X)


@dataclasses.dataclass
class TwoLayers:
    """Layers held in attributes, called through them (``self.l2.forward(h)``, ``self.l1(h)``)."""
    l1: Dense
    l2: Dense

    def forward(self, x):
        h = self.l1(x)
        return self.l2(h) + 0.1 * self.l1.penalty()


class Scaled(Dense):
    """A subclass overriding the layer's call: an object of it in the same attribute is its own code."""

    def __call__(self, x):
        return 3.0 * np.sin(x @ self.W) + self.b


class Encoder:
    """A plain class holding a dataclass model two levels down."""

    def __init__(self, body):
        self.body = body

    def encode(self, x):
        return self.body.forward(x) * 0.5


def layered_loss(model, x):
    return np.sum(model.forward(x) ** 2)


def encoded_loss(encoder, x):
    return np.sum(np.cos(encoder.encode(x)))


def _layers(second=Dense):
    return TwoLayers(Dense(RNG.standard_normal((3, 4)), RNG.standard_normal(4)),
                     second(RNG.standard_normal((4, 2)), RNG.standard_normal(2)))


def test_methods_of_objects_held_in_attributes():
    model = _layers()
    check_grads(layered_loss, (model, X), modes=("rev",))
    check_jvp(layered_loss, (model, X))
    check_all_modes(layered_loss, (model, X), wrt=1)
    check_all_modes(encoded_loss, (Encoder(model), X), wrt=1)
    grads = srcad.grad(layered_loss)(model, X)
    assert isinstance(grads, TwoLayers) and isinstance(grads.l2, Dense)


def test_an_attribute_of_another_class_is_its_own_code():
    plain, scaled = _layers(), _layers(Scaled)
    gradient = srcad.grad(layered_loss, wrt=1)
    for model in (plain, scaled, plain):  # the class of model.l2 is part of what the code is made for
        eps, u = 1e-6, RNG.standard_normal(X.shape)
        numeric = (layered_loss(model, X + eps * u) - layered_loss(model, X - eps * u)) / (2 * eps)
        np.testing.assert_allclose(np.vdot(gradient(model, X), u), numeric, rtol=1e-5)
