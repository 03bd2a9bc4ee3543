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
    check_grads(model.loss, (x,))
    check_jvp(model.loss, (x,))
    check_grads(Model.scaled, (x,))
    assert np.allclose(srcad.grad(Model.scaled)(x), 2 * (x - 0.5))


class Layer:
    def __init__(self):
        self.W = np.eye(3) * 0.5

    def features(self, x):
        return np.tanh(self.W @ x)

    def loss(self, x):
        return np.sum(self.features(x) ** 2)  # through self: srcad cannot tell which function


def test_a_method_called_through_self_says_to_call_it_through_the_class():
    for attempt in (lambda: srcad.grad(Layer().loss)(np.ones(3)),
                    lambda: srcad.jvp(Layer().loss, (np.ones(3),), (np.ones(3),))):
        try:
            attempt()
        except srcad.NoRuleError as error:
            assert "ClassName.features(obj, ...)" in str(error) and "register_method" not in str(error)
        else:
            raise AssertionError("a method called through self was differentiated without a rule")


def test_an_array_method_without_a_rule_points_at_register_method():
    from srcad.errors import no_method_rule

    assert "register_method" in no_method_rule("tofile")
    assert "register_method" not in no_method_rule("features")
