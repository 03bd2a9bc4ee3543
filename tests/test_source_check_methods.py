"""Regression: a method that names its own class (``Model.features(self, x)``, a classmethod's
``Model(...)``) was refused as "edited after import". The source check compiles the method
inside a stand-in class; the class name must stay a global read there, as it is in the module."""
import numpy as np

import srcad
from srcad.testing import check_grads, check_jvp


class Model:
    def __init__(self):
        self.W = np.arange(6.0).reshape(2, 3) / 10

    def features(self, x):
        return np.tanh(self.W @ x)

    def loss(self, x):
        h = Model.features(self, x)
        return np.sum(h ** 2)

    @staticmethod
    def scaled(x):
        return np.sum(Model.shift(x) ** 2)

    @staticmethod
    def shift(x):
        return x - 0.5


def test_a_method_that_names_its_class_is_differentiated():
    model, x = Model(), np.array([0.1, -0.3, 0.5])
    check_grads(model.loss, (x,), modes=("rev",))
    check_jvp(model.loss, (x,))
    check_grads(Model.scaled, (x,))
    assert np.allclose(srcad.grad(Model.scaled)(x), 2 * (x - 0.5))


class Layer:
    def __init__(self):
        self.W = np.eye(3) * 0.5

    def features(self, x):
        return np.tanh(self.W @ x)

    def loss(self, x):
        return np.sum(self.features(x) ** 2)  # through self: differentiated as Layer.features(self, x)


def test_a_method_called_through_self_is_differentiated():
    # once refused with a hint to write Layer.features(self, x); now resolved through the class (issue 10)
    layer, x = Layer(), np.array([0.2, -0.4, 0.9])
    check_grads(layer.loss, (x,), modes=("rev",))
    check_jvp(layer.loss, (x,))


def test_an_array_method_without_a_rule_points_at_register_method():
    from srcad.errors import no_method_rule

    assert "register_method" in no_method_rule("tofile")
    assert "register_method" not in no_method_rule("features")
