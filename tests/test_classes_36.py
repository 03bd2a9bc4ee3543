"""False refusals around classes (helper 186): a function stored in a named tuple's field used
as a helper's default or argument or called; an activation stored on a class (``act =
staticmethod(np.tanh)``, ``act = np.tanh``) called as ``self.act(z)``; a class method calling
another through ``cls``, and one called on an object."""
import collections
import typing

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes

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
