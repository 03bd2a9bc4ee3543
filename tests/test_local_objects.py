"""Local objects of plain classes of the module made in the differentiated function
(``acc = Accumulator(); acc.add(x * 2); return acc.total``, ``conv = Conv1D(w); conv(x)``):
their attributes become local names and their methods functions of them
(``passes.local_objects``). Every mode against central finite differences, inputs unchanged;
an object srcad cannot lower carrying a derivative is still refused."""
import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes
from srcad import SrcadError

RNG = np.random.default_rng(1430)
X = RNG.standard_normal(7)
W = RNG.standard_normal(3)


class Accumulator:
    def __init__(self, start=0.0):
        self.total = start
        self.count = 0

    def add(self, v):
        self.total = self.total + np.sum(v ** 2)
        self.count += 1

    def mean(self):
        return self.total / self.count


class Conv1D:
    def __init__(self, w, scale=1.0):
        self.w = w
        self.scale = scale

    def __call__(self, x):
        return self.scale * np.convolve(x, self.w, mode="valid")


class Clipped:
    """A method that sets an attribute and returns a value, with an early return."""

    def __init__(self, limit):
        self.limit = limit
        self.hits = 0.0

    def step(self, x):
        y = np.tanh(x) * self.limit
        if np.sum(y) > 100.0:
            return y
        self.hits = self.hits + np.sum(y)
        return y * 2.0


def accumulate(x):
    acc = Accumulator()
    acc.add(x * 2)
    acc.add(np.sin(x))
    return acc.total + acc.mean()


def convolve_twice(x, w):
    conv = Conv1D(w, scale=0.5)
    y = conv(x)
    conv.w = w * w  # an attribute set in the function
    return np.sum(conv(y) ** 2) + conv.scale


def stepped(x):
    c = Clipped(1.5)
    r = c.step(x)
    r = c.step(r)
    return np.sum(r) * c.hits


def in_a_loop(x, w):
    acc = Accumulator(np.sum(w))
    for i in range(3):
        acc.add(x * w[i])
    return acc.total


@pytest.mark.parametrize("f, args, wrt", [
    (accumulate, (X,), 0), (convolve_twice, (X, W), 0), (convolve_twice, (X, W), 1), (stepped, (X,), 0),
    (in_a_loop, (X, W), 0), (in_a_loop, (X, W), 1)])
def test_local_objects_every_mode(f, args, wrt):
    check_all_modes(f, args, wrt=wrt)


def outputs(x, w):
    conv = Conv1D(w)
    return conv(np.sin(x))


def test_jacobian_rev_of_a_vector_output():
    jac = srcad.jacobian(outputs, mode="rev")(X, W)
    eps, numeric = 1e-6, np.zeros((5, 7))
    for i in range(7):
        e = np.zeros(7)
        e[i] = eps
        numeric[:, i] = (outputs(X + e, W) - outputs(X - e, W)) / (2 * eps)
    np.testing.assert_allclose(jac, numeric, rtol=1e-6, atol=1e-8)


class Shown:
    def __init__(self, x):
        self.x = x

    def double(self):
        return self.x * 2.0


def show(obj):
    return obj.x


def passed_on(x):
    s = Shown(x)
    return np.sum(show(s) ** 2)


def mutated_in_an_expression(x):
    acc = Accumulator()
    return np.sum(x) + acc.add(x)


def test_an_object_passed_on_carrying_a_derivative_is_still_refused():
    with pytest.raises(SrcadError):
        srcad.grad(passed_on)(X)


def test_a_method_setting_attributes_inside_an_expression_is_still_refused():
    with pytest.raises(SrcadError):
        srcad.grad(mutated_in_an_expression)(X)


def constant_object(x):
    s = Shown(3.0)
    return np.sum(x * s.double())


def test_a_constant_object():
    check_all_modes(constant_object, (X,))
