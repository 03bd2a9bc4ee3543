"""Programs in the styles of users' own code (helper round 176): fields set on a record built
in the function, modules imported inside the function."""
import dataclasses

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes, refused


@dataclasses.dataclass
class Params:
    w: np.ndarray
    b: float = 0.5


@dataclasses.dataclass(frozen=True)
class Frozen:
    w: float


def set_field(x):
    p = Params(np.ones(3), 2.0)
    p.w = x * 2.0
    return np.sum(p.w * p.b)


def set_in_loop(x):
    p = Params(x, 0.1)
    for _ in range(3):
        p.w = np.tanh(p.w) + p.b * x  # the value read first, then set
        p.b = p.b + np.sum(p.w) * 0.1
    return np.sum(p.w ** 2) + p.b


def set_then_return(x):
    p = Params(np.zeros(3))
    if np.sum(x) > 0:
        p.w = np.sin(x)
    else:
        p.w = np.cos(x)
    p.b = np.sum(x)
    return np.sum(p.w * p.b)


def aliased(x):
    p = Params(np.zeros(3))
    q = p
    p.w = x
    return np.sum(q.w)


def augmented(x):
    p = Params(np.zeros(3))
    p.w += x
    return np.sum(p.w)


def frozen(x):
    p = Frozen(1.0)
    p.w = x
    return p.w


def not_a_field(x):
    p = Params(np.zeros(3))
    p.extra = x
    return np.sum(p.extra)


X = np.array([0.3, -0.5, 0.8])


@pytest.mark.parametrize("f", [set_field, set_in_loop, set_then_return])
def test_a_field_set_on_a_record_built_here(f):
    check_all_modes(f, (X.copy(),))


def built(x):
    p = Params(x)
    p.b = np.sum(x ** 2)
    return p  # (read whole only by the return)


def through_a_helper(x):
    q = built(np.sin(x))
    return np.sum(q.w) * q.b


def test_a_record_set_then_returned_by_a_helper():
    check_all_modes(through_a_helper, (X.copy(),))


@pytest.mark.parametrize("f, line, message", [
    (aliased, "p.w = x", "used otherwise than by reading its fields"),
    (augmented, "p.w += x", "write p.w = p.w + ... instead"),
    (frozen, "p.w = x", "is frozen"),
    (not_a_field, "p.extra = x", "'extra' is no field of Params"),
])
def test_a_field_store_other_names_may_see_is_refused(f, line, message):
    refused(f, X.copy() if f is not frozen else 0.3, line_text=line, message=message)
