"""Methods of objects held in lists (a "Sequential" model): ``layer(h)`` and ``layer.forward(h)``
in ``for layer in self.layers``, ``self.layers[i](h)``, ``zip(self.layers, ...)``, on lists an
argument holds or a module-level list, the same class or several. Each call is one branch per
class the code is compiled for, checked when it runs; a list whose classes change compiles again
(an argument) or is refused (a global). Every mode against central finite differences, inputs
unchanged (``check_grads`` checks)."""
import copy
import dataclasses

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes
from srcad import SrcadSyntaxError, UnsupportedCaseError
from srcad.testing import check_grads

RNG = np.random.default_rng(143)
X = RNG.standard_normal((5, 3))
Y = RNG.standard_normal((5, 2))


class Dense:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def __call__(self, x):
        return np.tanh(x @ self.W + self.b)

    def forward(self, x):
        return self(x)


class Affine:
    """Another class with the same methods: its own derivative."""

    def __init__(self, W):
        self.W = W

    def __call__(self, x):
        return np.sin(x @ self.W) * 2.0

    def forward(self, x):
        return x @ self.W + 0.5 * x @ self.W ** 2


class MLP:
    def __init__(self, layers):
        self.layers = layers

    def loss(self, x, y):
        h = x
        for layer in self.layers:
            h = layer(h)
        return np.mean((h - y) ** 2)

    def loss_forward(self, x, y):
        h = x
        for layer in self.layers:
            h = layer.forward(h)
        return np.mean((h - y) ** 2)

    def loss_indexed(self, x, y):
        h = x
        for i in range(len(self.layers) - 1):
            h = self.layers[i](h)
        return np.mean((self.layers[-1].forward(h) - y) ** 2)

    def loss_zipped(self, x, y, scales):
        h = x
        for layer, s in zip(self.layers, scales):
            h = s * layer(h)
        return np.mean((h - y) ** 2)

    def outputs(self, x):
        h = x
        for layer in self.layers:
            h = layer(h)
        return h.sum(axis=0)


def dense(n, m):
    return Dense(RNG.standard_normal((n, m)), RNG.standard_normal(m))


def same_class():
    return MLP([dense(3, 4), dense(4, 4), dense(4, 2)])


def mixed():
    return MLP([dense(3, 4), Affine(0.5 * RNG.standard_normal((4, 4))), dense(4, 2)])


@pytest.mark.parametrize("make", [same_class, mixed])
@pytest.mark.parametrize("method", ["loss", "loss_forward", "loss_indexed"])
def test_sequential_every_mode(make, method):
    model = make()
    check_all_modes(getattr(model, method), (X, Y))
    check_all_modes(getattr(model, method), (X, Y), wrt=1, second=False)


def test_zip_of_layers_and_scales():
    model = mixed()
    scales = [1.5, 0.5, 2.0]
    check_all_modes(lambda x, y: model.loss_zipped(x, y, scales), (X, Y))


def test_jacobian_rev_of_a_vector_output():
    model = mixed()
    jac = srcad.jacobian(model.outputs, mode="rev")(X)
    fwd = srcad.jacobian(model.outputs, mode="fwd")(X)
    eps, numeric = 1e-6, np.zeros((2,) + X.shape)
    for idx in np.ndindex(X.shape):
        e = np.zeros_like(X)
        e[idx] = eps
        numeric[(slice(None),) + idx] = (model.outputs(X + e) - model.outputs(X - e)) / (2 * eps)
    np.testing.assert_allclose(jac, numeric, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(fwd, numeric, rtol=1e-6, atol=1e-8)


def sequential_loss(model, x, y):
    return model.loss(x, y)


def test_model_as_an_argument_and_a_changed_list_compiles_again():
    model = same_class()
    check_grads(sequential_loss, (model, X, Y), wrt=1)
    model.layers.append(Affine(RNG.standard_normal((2, 2))))  # one more layer, of another class
    check_grads(sequential_loss, (model, X, Y), wrt=1)
    model.layers[1] = Affine(RNG.standard_normal((4, 4)))  # an item replaced by another class
    check_grads(sequential_loss, (model, X, Y), wrt=1)
    model.layers.pop()
    check_grads(sequential_loss, (model, X, Y), wrt=1)


def test_the_same_derivative_object_follows_the_list():
    model = same_class()
    grad = srcad.grad(sequential_loss, wrt=1)
    first = grad(model, X, Y)
    model.layers[2] = Affine(RNG.standard_normal((4, 2)))
    second = grad(model, X, Y)
    expected = check_grads(sequential_loss, (model, X, Y), wrt=1, v=1.0)
    np.testing.assert_allclose(second, expected, rtol=1e-12)
    assert not np.allclose(first, second)


def loss_of_list(layers, x):
    h = x
    for layer in layers:
        h = layer(h)
    return np.sum(h ** 2)


def test_a_list_of_layers_as_an_argument():
    layers = [dense(3, 4), Affine(RNG.standard_normal((4, 2)))]
    check_all_modes(loss_of_list, (layers, X), wrt=1)
    layers[0] = Affine(RNG.standard_normal((3, 4)))  # same length, another class: compiled again
    check_grads(loss_of_list, (layers, X), wrt=1)
    layers.append(dense(2, 3))
    check_grads(loss_of_list, (layers, X), wrt=1)


LAYERS = [dense(3, 4), Affine(RNG.standard_normal((4, 2)))]


def global_sequential(x):
    h = x
    for layer in LAYERS:
        h = layer.forward(h)
    return np.sum(np.tanh(h))


def test_a_module_level_list_of_layers():
    check_all_modes(global_sequential, (X,))


def test_a_module_level_list_given_an_object_of_another_class_compiles_again():
    kept = list(LAYERS)
    try:
        grad = srcad.grad(global_sequential)
        grad(X)
        LAYERS.append(dense(2, 2))  # a class the code was made for: runs its branch
        check_grads(global_sequential, (X,))
        LAYERS[0] = Other()  # a class it was not made for: made again, by the same derivative object
        np.testing.assert_allclose(grad(X), check_grads(global_sequential, (X,), v=1.0), rtol=1e-12)
    finally:
        LAYERS[:] = kept


class Other:
    def forward(self, x):
        return np.concatenate([x, x[:, :1]], axis=1) ** 2


@dataclasses.dataclass
class DenseField:
    W: np.ndarray
    b: np.ndarray

    def __call__(self, x):
        return np.tanh(x @ self.W + self.b)


@dataclasses.dataclass
class ScaleField:
    s: np.ndarray

    def __call__(self, x):
        return x * self.s


@dataclasses.dataclass
class Stack:
    layers: list

    def loss(self, x, y):
        h = x
        for layer in self.layers:
            h = layer(h)
        return np.mean((h - y) ** 2)


def stack_loss(model, x, y):
    return model.loss(x, y)


def test_gradients_of_the_parameters_of_a_dataclass_model():
    model = Stack([DenseField(RNG.standard_normal((3, 4)), RNG.standard_normal(4)),
                   ScaleField(RNG.standard_normal(4)),
                   DenseField(RNG.standard_normal((4, 2)), RNG.standard_normal(2))])
    kept = copy.deepcopy(model)
    grads = check_grads(stack_loss, (model, X, Y), wrt=0, v=1.0)
    assert isinstance(grads, Stack) and isinstance(grads.layers[1], ScaleField)
    assert grads.layers[0].W.shape == (3, 4) and grads.layers[1].s.shape == (4,)
    jvp_out = srcad.jvp(stack_loss, (model, X, Y), (grads, np.zeros_like(X), np.zeros_like(Y)))[1]
    assert jvp_out == pytest.approx(sum(np.vdot(g, g) for layer in grads.layers for g in vars(layer).values()))
    np.testing.assert_array_equal(model.layers[0].W, kept.layers[0].W)  # inputs unchanged


class Shadowed(Dense):
    """An instance attribute named like the method: Python's layer.forward(h) calls it."""


def test_an_attribute_hiding_the_method_is_refused_when_it_runs():
    model = same_class()
    model.layers[1].forward = lambda x: x
    with pytest.raises(UnsupportedCaseError, match="layer.forward"):
        srcad.grad(model.loss_forward)(X, Y)


def test_a_call_on_a_local_with_no_class_known_is_still_refused():
    def loss(x):
        f = np.tanh
        return np.sum(f(x))

    with pytest.raises(SrcadSyntaxError, match="'f' is a local variable"):
        srcad.grad(loss)(X)


def test_an_array_method_on_a_local_stays_an_array_method():
    model = MLP([dense(3, 3)])

    def loss(x):
        h = model.layers[0](x)
        return h.sum() + np.sum(x)

    check_all_modes(loss, (X,))
