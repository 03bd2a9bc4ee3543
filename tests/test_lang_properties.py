"""Properties of models: ``m.W`` (``self.W`` in a method, ``model.l1.W``) where ``W`` is a
``@property`` of the object's class computed from its fields is read as the call of its getter,
``Dense.W.fget(m)``, and differentiated like a method (probe 27A bug_04: it was refused in every
mode). When the code runs, the object's class must still have that property. Every mode
against finite differences; a cached_property and a property srcad cannot resolve are refused."""
import dataclasses
import functools
import typing

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes, check_second_order
from srcad.testing import check_grads, check_jvp

RNG = np.random.default_rng(27)
X = RNG.standard_normal(3)


@dataclasses.dataclass
class Dense:
    W_raw: np.ndarray
    gain: float = 0.8

    @property
    def W(self):
        return self.W_raw * self.gain

    def __call__(self, x):
        return np.tanh(self.W @ x)


@dataclasses.dataclass
class Scaled:
    """A property reading another property (a log-parametrised scale)."""
    raw: np.ndarray
    log_sigma: np.ndarray

    @property
    def sigma(self):
        return np.exp(self.log_sigma)

    @property
    def W(self):
        return self.raw * self.sigma

    def energy(self, x):
        return np.sum((self.W @ x) ** 2) + np.sum(self.sigma)


class Gaussian(typing.NamedTuple):
    mu: np.ndarray
    log_s: np.ndarray

    @property
    def s(self):
        return np.exp(self.log_s)


@dataclasses.dataclass
class TwoLayers:
    l1: Dense
    l2: Dense


def dense():
    return Dense(RNG.standard_normal((2, 3)), 0.7)


def read_on_a_parameter(m, x):
    return np.sum(np.tanh(m.W @ x))


def read_in_a_method(m, x):
    return np.sum(m(x) ** 2)


def scaled_energy(m, x):
    return m.energy(x) * m.sigma[0]


def gaussian_nll(g, x):
    return np.sum(((x - g.mu) / g.s) ** 2 + 2.0 * np.log(g.s))


def held_layers(model, x):
    h = np.tanh(model.l1.W @ x)
    return np.sum(model.l2.W[:, :2] @ h)


# second order: the records built in the function from one vector (a local record's class is known too)
def dense_read_on_a_parameter(v, x):
    m = Dense(v[:6].reshape(2, 3), v[6])
    return read_on_a_parameter(m, x)


def dense_read_in_a_method(v, x):
    m = Dense(v[:6].reshape(2, 3), v[6])
    return np.sum(np.tanh(m.W @ x)) + read_in_a_method(m, x)


def scaled_from_vector(v, x):
    m = Scaled(v[:6].reshape(2, 3), v[6:])
    return scaled_energy(m, x)


def gaussian_from_vector(log_s, x):
    g = Gaussian(x * 0.5, log_s)
    return gaussian_nll(g, x)


SECOND_ORDER = {read_on_a_parameter: dense_read_on_a_parameter, read_in_a_method: dense_read_in_a_method}


@pytest.mark.parametrize("fn", [read_on_a_parameter, read_in_a_method])
def test_a_dataclass_property_is_differentiated_through_its_getter(fn):
    check_grads(fn, (dense(), X), wrt=(0, 1), modes=("rev",))
    check_jvp(fn, (dense(), X), wrt=(0, 1))
    check_second_order(SECOND_ORDER[fn], (RNG.standard_normal(7), X))
    got = srcad.grad(fn)(dense(), X)
    assert isinstance(got, Dense) and got.W_raw.shape == (2, 3)


def test_the_probe_reproducer_gradient_matches_its_hand_derivative():
    m = dense()
    got = srcad.grad(read_on_a_parameter)(m, X)
    d = 1.0 - np.tanh(m.W @ X) ** 2
    np.testing.assert_allclose(got.W_raw, m.gain * np.outer(d, X), rtol=1e-12)
    np.testing.assert_allclose(got.gain, np.sum(d * (m.W_raw @ X)), rtol=1e-12)


def test_a_property_reading_another_property():
    m = Scaled(RNG.standard_normal((2, 3)), RNG.standard_normal(3) * 0.3)
    check_grads(scaled_energy, (m, X), wrt=(0, 1), modes=("rev",))
    check_jvp(scaled_energy, (m, X), wrt=(0, 1))
    check_second_order(scaled_from_vector, (RNG.standard_normal(9) * 0.3, X))


def test_a_named_tuple_property():
    g = Gaussian(RNG.standard_normal(3), RNG.standard_normal(3) * 0.2)
    check_grads(gaussian_nll, (g, X), modes=("rev",))
    check_jvp(gaussian_nll, (g, X))
    check_all_modes(gaussian_from_vector, (g.log_s, X))


def test_properties_of_objects_held_in_fields():
    model = TwoLayers(dense(), Dense(RNG.standard_normal((3, 3)), 1.3))
    check_grads(held_layers, (model, X), modes=("rev",))
    check_jvp(held_layers, (model, X))


def test_redefining_the_property_on_the_class_recompiles(monkeypatch):
    m = dense()
    before = srcad.grad(read_on_a_parameter)(m, X)
    monkeypatch.setattr(Dense, "W", property(lambda self: self.W_raw * self.gain * 2.0))
    after = srcad.grad(read_on_a_parameter)(m, X)
    assert not np.allclose(before.W_raw, after.W_raw)
    check_grads(read_on_a_parameter, (m, X))


def test_an_object_whose_class_lost_the_property_is_refused_when_the_code_runs():
    from srcad.errors import check_property

    class Other:
        W = 1.0

    check_property(dense(), "W", Dense.W.fget, "here.py:3: ", "m")
    with pytest.raises(srcad.SrcadError, match=r"here.py:3: m.W on this .*Other object reads a float, not the "
                                               r"property Dense.W, which srcad differentiated"):
        check_property(Other(), "W", Dense.W.fget, "here.py:3: ", "m")


@dataclasses.dataclass
class Cached:
    raw: np.ndarray

    @functools.cached_property
    def W(self):
        return self.raw * 2.0


def read_cached(m):
    return np.sum(m.W ** 2)


def test_a_cached_property_is_refused_clearly():
    with pytest.raises(srcad.SrcadError, match=r"test_lang_properties.py:\d+: reads the cached_property .W of a "
                                               r"Cached it differentiates: .*make it a @property"):
        srcad.grad(read_cached)(Cached(np.ones(2)))


def read_in_a_loop(layers, x):
    for layer in layers:
        x = np.tanh(layer.W @ x)
    return np.sum(x)


def test_a_property_of_an_object_of_unknown_class_is_refused_clearly():
    layers = [Dense(RNG.standard_normal((3, 3)))]
    with pytest.raises(srcad.SrcadError, match=r"reads the property .W of a Dense it differentiates where srcad "
                                               r"cannot tell the object's class"):
        srcad.grad(read_in_a_loop)(layers, X)


def read_plain_fields(m, x):
    return np.sum(m.W_raw @ x) * m.gain


def test_control_fields_still_read_as_fields():
    check_grads(read_plain_fields, (dense(), X), wrt=(0, 1), modes=("rev",))
    check_jvp(read_plain_fields, (dense(), X), wrt=(0, 1))
