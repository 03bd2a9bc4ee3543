"""Records built inside differentiated code (``passes.records``): a dataclass or named tuple
made from its fields (``State(x, v)``), stepped by helpers, read by field and by method,
returned. Every mode against central finite differences; what cannot be built from its
fields alone is refused at the call."""
import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes

X = np.array([0.3, -0.4, 0.9])


@dataclasses.dataclass
class State:
    pos: np.ndarray
    vel: np.ndarray

    def energy(self):
        return 0.5 * np.sum(self.vel ** 2) + np.sum(np.cos(self.pos))


class Pair(NamedTuple):
    a: np.ndarray
    b: np.ndarray


@dataclasses.dataclass(frozen=True)
class Config:
    scale: float
    shift: float = 0.25


@dataclasses.dataclass
class Made:
    w: np.ndarray
    log: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Checked:
    w: np.ndarray

    def __post_init__(self):
        self.w = np.abs(self.w)


def leapfrog(s, dt):
    vel = s.vel - dt * np.sin(s.pos)
    return State(s.pos + dt * vel, vel)


def simulate(x):
    s = State(x, 0.5 * x)
    for _ in range(4):
        s = leapfrog(s, 0.1)
    return State.energy(s) + np.sum(s.pos ** 2)  # s is rebound: its method is named through the class


def rotate(p, c):
    return Pair(c * p.a - 0.5 * p.b, p.a * np.tanh(p.b))


def named_tuple_steps(x):
    p = Pair(x, x ** 2)
    for _ in range(3):
        p = rotate(p, 0.9)
    return np.sum(p.a * p.b)


def only_one_field_read(x):
    p = rotate(Pair(x, 2.0 * x), 1.1)
    return np.sum(p.a ** 3)


def keywords_and_defaults(x):
    cfg = Config(shift=np.sum(x) * 0.1, scale=2.0)
    plain = Config(1.5)
    s = State(vel=x * cfg.scale, pos=x + cfg.shift + plain.shift)
    return np.sum(s.pos * s.vel) * plain.scale


def returns_a_record(x):
    return State(np.sin(x), x * x)


@pytest.mark.parametrize("fn", [simulate, named_tuple_steps, only_one_field_read, keywords_and_defaults],
                         ids=["dataclass_stepped", "named_tuple_stepped", "one_field_read", "keywords_defaults"])
def test_a_record_built_in_the_function(fn):
    check_all_modes(fn, (X,))


def test_a_record_returned_takes_a_cotangent_of_its_fields():
    v = State(np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.2, -1.0]))
    y, pullback = srcad.vjp(returns_a_record, X)
    assert isinstance(y, State)
    eps = 1e-6
    u = np.array([0.2, -0.7, 0.4])
    moved = [returns_a_record(X + s * eps * u) for s in (1, -1)]
    numeric = sum(np.vdot(getattr(v, f), (getattr(moved[0], f) - getattr(moved[1], f)) / (2 * eps))
                  for f in ("pos", "vel"))
    np.testing.assert_allclose(np.vdot(pullback(v), u), numeric, rtol=1e-6)
    np.testing.assert_allclose(pullback({"pos": v.pos, "vel": v.vel}), pullback(v), rtol=1e-12)


def test_a_method_of_a_record_built_in_the_function():
    def energy_of(x):
        s = State(x, 0.5 * x)
        return s.energy()

    check_all_modes(energy_of, (X,))


def made_by_factory(x):
    return np.sum(Made(x).w)


def unpacked(x):
    parts = (x, x)
    return np.sum(Pair(*parts).a)


def post_init(x):
    return np.sum(Checked(x).w)


def test_what_a_record_would_add_is_refused():
    with pytest.raises(srcad.SrcadSyntaxError, match=r"the default of Made.log is not a literal"):
        srcad.grad(made_by_factory)(X)
    with pytest.raises(srcad.SrcadSyntaxError, match=r"write them out instead of \* or \*\*"):
        srcad.grad(unpacked)(X)
    with pytest.raises(srcad.NoRuleError, match=r"Checked .* has no derivative rule"):
        srcad.grad(post_init)(X)  # __post_init__ may change the fields: not a record built from them
