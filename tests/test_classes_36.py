"""False refusals around classes (helper 186): a function stored in a named tuple's field used
as a helper's default or argument or called; an activation stored on a class (``act =
staticmethod(np.tanh)``, ``act = np.tanh``) called as ``self.act(z)``; a class method calling
another through ``cls``, and one called on an object."""
import collections
import typing

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes, refused
from srcad.testing import check_grads

X = np.array([0.3, -0.5, 0.8])


def checked(f, *args):
    """Every mode against finite differences, the arguments left as they were."""
    before = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    check_all_modes(f, args)
    for a, b in zip(args, before):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)


# --- a function held by a named tuple's field -------------------------------------------------

def squares(x):
    return np.sum(x ** 2)


def sines(x):
    return np.sum(np.sin(x))


Config = collections.namedtuple("Config", ["loss", "scale"])
config = Config(squares, 2.0)


class TypedConfig(typing.NamedTuple):
    act: typing.Callable
    scale: float


typed_config = TypedConfig(np.tanh, 2.0)


def scaled(x, fn=config.loss):
    return fn(x) * 2.0


def by_field_default(x):
    return scaled(x)


def summed(x, fn):
    return np.sum(fn(x))


def by_field_argument(x):
    return summed(x, config.loss)


def activated(x, fn=typed_config.act):
    return np.sum(fn(x) * x)


def by_typed_field_default(x):
    return activated(x)


def by_field_call(x):
    return config.loss(x) * config.scale


@pytest.mark.parametrize("f", [by_field_default, by_field_argument, by_typed_field_default, by_field_call])
def test_a_function_held_by_a_named_tuple_field(f):
    checked(f, X.copy())


def test_a_named_tuple_rebound_after_compiling_compiles_anew():
    global config
    gradient = srcad.grad(by_field_call)
    np.testing.assert_allclose(gradient(X.copy()), 4.0 * X)
    original = config
    config = Config(sines, 3.0)
    try:
        np.testing.assert_allclose(gradient(X.copy()), 3.0 * np.cos(X))
        np.testing.assert_allclose(srcad.grad(by_field_argument)(X.copy()), np.cos(X))
    finally:
        config = original


class Pair(collections.namedtuple("Pair", "w b")):
    def loss(self, x):
        return np.sum(self.w * x ** 2) + self.b


PAIR = Pair(np.array([1.0, 2.0, 3.0]), 1.0)
PAIR_LOSS = PAIR.loss  # a stored method of a named tuple


def doubled(x, fn=PAIR.loss):
    return fn(x) * 2.0


def doubled_stored(x, fn=PAIR_LOSS):
    return fn(x) * 2.0


def by_method_default(x):
    return doubled(x)


def by_stored_method_default(x):
    return doubled_stored(x)


def by_method_argument(x):
    return doubled_stored(x, PAIR.loss)


def by_method_call(x):
    return PAIR.loss(x) * PAIR_LOSS(x)


@pytest.mark.parametrize("f", [by_method_default, by_stored_method_default, by_method_argument, by_method_call])
def test_a_named_tuple_method_as_a_default_or_argument(f):
    checked(f, X.copy())


# --- an activation stored on a class, called as self.act(z) ----------------------------------

class Layer:
    act = staticmethod(np.tanh)

    def __init__(self, w):
        self.w = w

    def __call__(self, z):
        return self.act(z * self.w)


class PlainLayer:
    act = np.tanh  # a ufunc binds nothing: self.act is np.tanh itself

    def __init__(self, w):
        self.w = w

    def __call__(self, z):
        return self.act(z * self.w) + z


class Holder:
    def __init__(self, layers):
        self.layers = layers


def on_argument(x, layer):
    return np.sum(layer(x) * x)


def on_list(x, layers):
    for layer in layers:
        x = layer(x)
    return np.sum(x)


def on_held_list(x, holder):
    for layer in holder.layers:
        x = layer(x)
    return np.sum(x ** 2)


global_layer = Layer(1.5)


def on_global(x):
    return np.sum(global_layer(x) ** 2)


@pytest.mark.parametrize("kind", [Layer, PlainLayer])
def test_an_activation_stored_on_the_class(kind):
    checked(on_argument, X.copy(), kind(2.0))
    checked(on_list, X.copy(), [kind(2.0), kind(0.5)])
    checked(on_list, X.copy(), [kind(2.0), Layer(0.5), PlainLayer(-1.0)])
    checked(on_held_list, X.copy(), Holder([kind(2.0), kind(0.5)]))
    checked(on_global, X.copy())


def test_an_activation_rebound_on_the_class_after_compiling_compiles_anew():
    gradient = srcad.grad(on_argument)
    layer = Layer(2.0)
    check_grads(on_argument, (X.copy(), layer))
    gradient(X.copy(), layer)
    through_list = srcad.grad(on_list)
    through_list(X.copy(), [layer, Layer(0.5)])
    original = Layer.__dict__["act"]
    Layer.act = staticmethod(np.sin)
    try:
        np.testing.assert_allclose(through_list(X.copy(), [Layer(1.0)]), np.cos(X))
        checked(on_argument, X.copy(), layer)
        expected = np.sin(2.0 * X) + 2.0 * X * np.cos(2.0 * X)
        np.testing.assert_allclose(gradient(X.copy(), layer), expected)
    finally:
        Layer.act = original


def test_an_activation_set_on_the_object_after_compiling_is_the_one_differentiated():
    gradient = srcad.grad(on_argument)
    layer = Layer(2.0)
    gradient(X.copy(), layer)
    layer.act = np.sin  # Python calls the object's own attribute, not the class's
    np.testing.assert_allclose(gradient(X.copy(), layer), np.sin(2.0 * X) + 2.0 * X * np.cos(2.0 * X))
    checked(on_argument, X.copy(), layer)


# --- class methods: one calling another through cls, one called on an object -----------------

class Model:
    def __init__(self, w, k=1.0):
        self.w = w
        self.k = k

    @classmethod
    def make(cls, w, k):
        v = w * 2.0
        return cls(v, k=k)

    @classmethod
    def from_params(cls, w, k=3.0):
        return cls.make(np.sin(w), k)

    @classmethod
    def from_twice(cls, w):
        return cls.from_params(w * w, 0.5)

    def loss(self, x):
        return np.sum(self.w * x) * self.k


class Scaled(Model):
    @classmethod
    def make(cls, w, k):
        return cls(w * 5.0, k=k + 1.0)


def built_through_cls(x):
    m = Model.from_params(x)
    return m.loss(x)


def built_through_two(x):
    m = Model.from_twice(x)
    return m.loss(x) + np.sum(m.w)


def built_by_subclass(x):
    m = Scaled.from_params(x)  # cls is Scaled: Scaled.make, then Scaled(...)
    return m.loss(x)


@pytest.mark.parametrize("f", [built_through_cls, built_through_two, built_by_subclass])
def test_a_class_method_calling_another_through_cls(f):
    checked(f, X.copy())
    assert srcad.value_and_grad(f)(X.copy())[0] == pytest.approx(f(X.copy()))


def test_the_class_method_reached_through_cls_rebound_after_compiling_compiles_anew():
    gradient = srcad.grad(built_through_cls)
    gradient(X.copy())
    original = Model.__dict__["make"]
    Model.make = classmethod(lambda cls, w, k: cls(w, k=k))
    try:
        np.testing.assert_allclose(gradient(X.copy()), 3.0 * (np.cos(X) * X + np.sin(X)))
    finally:
        Model.make = original


def called_on_an_object(x, m):
    made = m.from_params(x)
    return made.loss(x)


def called_on_its_class(x, m):
    made = Model.from_params(x)  # what the refusal says to write
    return made.loss(x)


def test_a_class_method_called_on_an_object_names_the_form_that_works():
    # named at the user's call, the line to change, not at the class method's return cls(...)
    message = refused(called_on_an_object, X.copy(), Model(X.copy()), line_text="made = m.from_params(x)",
                      message="in a statement m = ClassName.method(...)")
    assert "calls a class method through an object" in message
    assert f"met at {__file__}:{Model.make.__code__.co_firstlineno + 3}" in message
    checked(called_on_its_class, X.copy(), Model(X.copy()))
