"""A named tuple whose class has a ``__new__`` of its own (the idiom for defaults and
checks: ``def __new__(cls, value, scale=1.0): return super().__new__(cls, value * scale,
scale)``) is never made again through it: srcad copies arguments, checks cotangents, hands
out outputs and builds gradients of such tuples with their items as they are."""
import collections

import numpy as np
import pytest

import srcad


class Scaled(collections.namedtuple("Scaled", "value scale")):
    __slots__ = ()

    def __new__(cls, value, scale=1.0):
        return super().__new__(cls, value * scale, scale)


class Checked(collections.namedtuple("Checked", "weights bias")):
    """Counts its constructions: srcad must not construct it (the count is the user's)."""
    made = 0

    def __new__(cls, weights, bias):
        cls.made += 1
        return super().__new__(cls, np.asarray(weights) + 0.0, bias)


def identity(p, x):
    return p


def scaled_product(p, x):
    return p.value * x


def loss(p, x):
    return np.sum(p.value * x) * p.scale


def layer(params, x):
    return np.tanh(params.weights @ x + params.bias)


@pytest.fixture
def arguments():
    return Scaled(np.ones(3), 2.0), np.array([0.1, 0.2, 0.3])


def test_outputs_and_argument_copies_keep_their_items(arguments):
    p, x = arguments
    y, pullback = srcad.vjp(identity, p, x, wrt=1)
    assert type(y) is Scaled
    np.testing.assert_array_equal(y.value, p.value)
    y, pullback = srcad.vjp(scaled_product, p, x, wrt=1)
    np.testing.assert_allclose(y, p.value * x, rtol=1e-15)
    np.testing.assert_allclose(pullback(np.ones(3)), p.value, rtol=1e-15)


def test_the_gradient_of_such_a_tuple(arguments):
    p, x = arguments
    g = srcad.grad(loss, wrt=0)(p, x)
    assert type(g) is Scaled
    np.testing.assert_allclose(g.value, x * p.scale, rtol=1e-15)
    np.testing.assert_allclose(g.scale, np.sum(p.value * x), rtol=1e-15)
    u = np.random.default_rng(1).standard_normal(3)  # a direction in p.value (Python's deepcopy would scale it again)
    moved = [loss(tuple.__new__(Scaled, (p.value + s * 1e-6 * u, p.scale)), x) for s in (1, -1)]
    np.testing.assert_allclose(np.dot(g.value, u), (moved[0] - moved[1]) / 2e-6, rtol=1e-7)


def test_a_cotangent_of_such_a_tuple(arguments):
    p, x = arguments
    _, pullback = srcad.vjp(identity, p, x, wrt=0)
    g = pullback(Scaled(np.full(3, 0.5), 1.0))  # the user's own construction scales it: v.value is 0.5
    np.testing.assert_allclose(g.value, np.full(3, 0.5), rtol=1e-15)


def test_srcad_constructs_none_of_them():
    rng = np.random.default_rng(0)
    params = Checked(rng.standard_normal((2, 3)), rng.standard_normal(2))
    x = rng.standard_normal(3)
    before = Checked.made
    y, pullback = srcad.vjp(layer, params, x, wrt=(0, 1))
    grads = pullback(np.ones(2))
    srcad.grad(lambda p, x: np.sum(layer(p, x)))  # made, not called: nothing constructed either
    assert Checked.made == before
    assert type(grads[0]) is Checked
    h = np.tanh(params.weights @ x + params.bias)
    np.testing.assert_allclose(grads[0].weights, np.outer(1 - h ** 2, x), rtol=1e-12)
    np.testing.assert_allclose(grads[1], params.weights.T @ (1 - h ** 2), rtol=1e-12)


def test_check_grads_copies_them_without_their_new():
    """``srcad.testing.check_grads`` runs the function on deep copies of its arguments;
    ``copy.deepcopy`` builds a named tuple again through its ``__new__``, which scaled ``value``
    once more, so the finite differences were of another function (a false failure, or a false
    pass where srcad is wrong the same way). Inside a list and a dict too."""
    p = Scaled(np.array([1.0, 2.0]), 2.0)
    x = np.array([0.3, 0.4])
    for args in [(p, x), ([p], x), ({"p": p}, x)]:
        def f(q, x):
            q = q[0] if isinstance(q, list) else q["p"] if isinstance(q, dict) else q
            return np.sum(np.sin(q.value * x))
        g = srcad.testing.check_grads(f, args, wrt=1, v=1.0, mode="joint")
        np.testing.assert_allclose(g, p.value * np.cos(p.value * x))
        np.testing.assert_array_equal(p.value, [2.0, 4.0])
