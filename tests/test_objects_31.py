"""Objects, the leads left open: functions objects hold in attributes (``self.act = np.tanh``, a
function of yours, a lambda, a ``functools.partial``), called as ``self.act(z)``; a module-level
list of layers given an object of a class it did not hold (compiled again); lists of layers
longer than 64 items (scanned whole); local objects whose methods call other methods, or that
escape (still refused). Every mode against central finite differences, inputs unchanged
(``check_grads`` checks); a function rebound after compiling gives the new gradient."""
import functools

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes
from srcad import SrcadError, UnsupportedCaseError
from srcad.testing import check_grads, check_jvp

RNG = np.random.default_rng(31)
X = RNG.standard_normal((5, 3))
W = 0.7 * RNG.standard_normal((3, 3))


def cube(z, c=1.0):
    return c * z ** 3 + np.sin(z)


SOFT = lambda z: z * np.tanh(z)  # noqa: E731 (a module-level lambda)


class Dense:
    def __init__(self, W, act=np.tanh):
        self.W = W
        self.act = act

    def __call__(self, x):
        return self.act(x @ self.W)

    def loss(self, x):
        return np.sum(self(x) ** 2)


class Swish(Dense):
    """A subclass setting its own function in __init__."""

    def __init__(self, W):
        super().__init__(W)
        self.act = functools.partial(cube, c=0.5)


class Hidden(Dense):
    """A method named like the attribute: an attribute of the object hides it, as in Python."""

    def act(self, z):
        return 2.0 * z


class Model:
    def __init__(self, l1, l2):
        self.l1, self.l2 = l1, l2

    def forward(self, x):
        return self.l2(self.l1(x))


def model_loss(model, x):
    return np.sum(model.forward(x) ** 2)


ACTS = {"ufunc": np.tanh, "function": cube, "lambda": SOFT, "partial": functools.partial(cube, c=0.3),
        "rule partial": functools.partial(np.clip, a_min=-0.4, a_max=0.6), "another ufunc": np.sinh}


@pytest.mark.parametrize("name", sorted(ACTS))
def test_a_function_held_by_the_object_of_a_bound_method_every_mode(name):
    layer = Dense(W, ACTS[name])
    check_all_modes(layer.loss, (X,), second=name != "rule partial")


def test_functions_held_by_objects_an_argument_holds_every_mode():
    shared = Dense(W, np.sin)
    for model in (Model(Dense(W), Swish(W)), Model(shared, shared), Model(Dense(W, SOFT), Hidden(W, np.cos))):
        check_all_modes(model_loss, (model, X), wrt=1)


def test_a_function_rebound_after_compiling_gives_the_new_gradient():
    layer = Dense(W)
    grad = srcad.grad(layer.loss)
    grad(X)
    for act in (np.sin, cube, functools.partial(cube, c=2.0), np.tanh):
        layer.act = act
        np.testing.assert_allclose(grad(X), check_grads(layer.loss, (X,), v=1.0), rtol=1e-12)
        check_jvp(layer.loss, (X,))


def test_a_partial_changed_in_place_between_calls():
    clip = functools.partial(np.clip, a_min=-0.4)
    clip.keywords["a_max"] = 0.6
    layer = Dense(W, clip)
    grad = srcad.grad(layer.loss)
    grad(X)
    clip.keywords["a_min"] = -5.0  # a value: read when the code runs
    np.testing.assert_allclose(grad(X), check_grads(layer.loss, (X,), v=1.0), rtol=1e-12)
    del clip.keywords["a_max"]  # a keyword name: the code is made again
    clip.keywords["a_max"] = 0.2
    np.testing.assert_allclose(grad(X), check_grads(layer.loss, (X,), v=1.0), rtol=1e-12)


def test_an_attribute_hiding_a_method_is_the_function_python_calls():
    grad = srcad.grad(model_loss, wrt=1)
    hidden = Model(Hidden(W, np.sin), Dense(W))
    np.testing.assert_allclose(grad(hidden, X), check_grads(model_loss, (hidden, X), wrt=1, v=1.0), rtol=1e-12)
    plain = Model(Hidden.__new__(Hidden), Dense(W))  # no attribute 'act': the class's method
    plain.l1.W = W
    np.testing.assert_allclose(grad(plain, X), check_grads(model_loss, (plain, X), wrt=1, v=1.0), rtol=1e-12)


class Method:
    def __init__(self, W):
        self.W = W

    def act(self, z):
        return 2.0 * z

    def __call__(self, x):
        return self.act(x @ self.W)


def layer_loss(layer, x):
    return np.sum(layer(x) ** 2)


def test_a_function_attribute_added_after_calls_without_it_hides_the_method():
    grad = srcad.grad(layer_loss, wrt=1)
    layer = Method(W)
    grad(layer, X)
    grad(layer, X)  # (a second call of the same kind: the short path)
    layer.act = np.sin
    np.testing.assert_allclose(grad(layer, X), check_grads(layer_loss, (layer, X), wrt=1, v=1.0), rtol=1e-12)
    del layer.act
    np.testing.assert_allclose(grad(layer, X), 8.0 * (X @ W) @ W.T, rtol=1e-12)


GLOBAL_MODEL = Model(Dense(W), Dense(W.T, cube))


def global_loss(x):
    return np.sum(GLOBAL_MODEL.forward(x) ** 2)


def test_a_module_level_object_whose_function_is_rebound():
    kept = GLOBAL_MODEL.l2.act
    try:
        check_all_modes(global_loss, (X,))
        grad = srcad.grad(global_loss)
        grad(X)
        GLOBAL_MODEL.l2.act = np.sin
        np.testing.assert_allclose(grad(X), check_grads(global_loss, (X,), v=1.0), rtol=1e-12)
    finally:
        GLOBAL_MODEL.l2.act = kept


def test_the_check_when_the_code_runs_names_both_functions():
    from srcad.held_objects import HeldFunction, check_held_function

    layer = Dense(W, np.sin)
    check_held_function(layer, "act", HeldFunction(np.sin), "f.py:3: ", "self")
    with pytest.raises(UnsupportedCaseError, match=r"f.py:3: self.act\(...\) .* calls numpy.cos, .* made this "
                                                   r"code for numpy.tanh"):
        check_held_function(Dense(W, np.cos), "act", HeldFunction(np.tanh), "f.py:3: ", "self")


class Sequential:
    def __init__(self, layers):
        self.layers = layers

    def loss(self, x):
        h = x
        for layer in self.layers:
            h = layer(h)
        return np.sum(h ** 2)


class Scale:
    def __init__(self, s):
        self.s = s

    def __call__(self, x):
        return np.sin(x) * self.s


class Affine:
    """Layers of lists (whose functions held in attributes stay refused) call theirs by name."""

    def __init__(self, W):
        self.W = W

    def __call__(self, x):
        return np.tanh(x @ self.W) + 0.5 * x


class Cubic(Affine):
    def __call__(self, x):
        return cube(x @ self.W, 0.2)


def test_a_function_held_by_objects_in_a_list_is_refused_saying_where_it_is_differentiated():
    model = Sequential([Dense(W, np.sin), Dense(W, np.tanh)])
    with pytest.raises(SrcadError, match="a function an object holds in an attribute"):
        srcad.grad(model.loss)(X)


class Bound:
    def __init__(self, other):
        self.act = other.__call__  # a bound method: not a function the object holds

    def loss(self, x):
        return np.sum(self.act(x))


def test_a_bound_method_held_is_refused():
    with pytest.raises(SrcadError):
        srcad.grad(Bound(Scale(2.0)).loss)(X)


def long_stack(n, odd_at):
    layers = [Scale(0.9 + 0.1 * RNG.random()) for _ in range(n)]
    layers[odd_at] = Affine(W)
    return layers


def sequential(layers, x):
    h = x
    for layer in layers:
        h = layer(h)
    return np.sum(h ** 2)


def test_a_list_of_100_layers_with_one_of_another_class_at_80():
    layers = long_stack(100, 80)
    check_grads(sequential, (layers, X), wrt=1, modes=("rev",))
    check_jvp(sequential, (layers, X), wrt=1)
    check_grads(Sequential(layers).loss, (X,))
    grad = srcad.grad(sequential, wrt=1)
    grad(layers, X)
    layers[90] = Affine(W.T)  # another object, of a class seen
    layers[95] = Cubic(W)  # another class, past 64
    np.testing.assert_allclose(grad(layers, X), check_grads(sequential, (layers, X), wrt=1, v=1.0), rtol=1e-12)


LONG = long_stack(100, 80)


def global_long(x):
    h = x
    for layer in LONG:
        h = layer(h)
    return np.sum(h ** 2)


def test_a_module_level_list_of_100_layers():
    check_grads(global_long, (X,))


def tail_sequential(items, x):
    h = x
    for layer in items[70:]:
        h = layer(h)
    return np.sum(h ** 2)


def test_a_long_list_whose_first_items_are_arrays_is_not_scanned_and_refused():
    items = [np.ones(3) for _ in range(70)] + [Affine(W)]  # (no class scanned for: no method resolved)
    with pytest.raises(SrcadError, match="'layer' is a local variable"):
        srcad.grad(tail_sequential, wrt=1)(items, X)


LAYERS = [Affine(W), Scale(1.5)]


def global_sequential(x):
    h = x
    for layer in LAYERS:
        h = layer(h)
    return np.sum(h ** 2)


def test_a_module_level_list_given_a_class_it_did_not_hold_compiles_again_every_mode():
    kept = list(LAYERS)
    try:
        grad = srcad.grad(global_sequential)
        grad(X)
        LAYERS.append(Cubic(W))
        np.testing.assert_allclose(grad(X), check_grads(global_sequential, (X,), v=1.0), rtol=1e-12)
        check_all_modes(global_sequential, (X,))
        LAYERS[1] = Cubic(W.T)
        np.testing.assert_allclose(grad(X), check_grads(global_sequential, (X,), v=1.0), rtol=1e-12)
    finally:
        LAYERS[:] = kept


class Accumulator:
    def __init__(self):
        self.total = 0.0

    def _squares(self, v):
        return np.sum(v ** 2)

    def add(self, v):
        self.total = self.total + self._squares(v)


def helper_method(x):
    acc = Accumulator()
    acc.add(x)
    return acc.total


def escapes(x):
    acc = Accumulator()
    acc.add(x)
    box = [acc]
    return box[0].total


def test_a_local_object_whose_method_calls_a_helper_method_every_mode():
    check_all_modes(helper_method, (X,))  # (lowered since tests/test_local_objects_32.py)


def test_a_local_object_escaping_into_a_list_stays_refused():
    with pytest.raises(SrcadError):
        srcad.grad(escapes)(X)
