"""Checkpointed loops with parameters read off an object, and with state kept in a dict.

* A state array scaled by a dataclass field or a dict item (``x = x - 0.1 * p.k * x``) and
  then indexed (``x[0] = ...``): ``p.k`` is checked to be a number or an array where it is
  read (``runtime.numeric_constant``), so arithmetic on it makes one, and indexing that runs
  no code of yours. The checkpoint allowlist (``checkpoint_kinds``) reads the same check. A
  value that is not checked is still refused; the check lets no class or function of yours
  through (a tuple of classes repeated by an int, then an item's attribute read, would run
  your code).
* State in a dict written into a trajectory array each step (``state["u"] = ...; traj[i] =
  state["u"]``) at second order: the adjoint restores ``traj`` from a stack of arrays, which
  the memory analysis of the adjoint, differentiated again, knows is an array.

Values are checked against central finite differences in every reverse mode: the joint
adjoint and the pullback (``check_grads``), the reverse Jacobian, and, at second order,
``hvp``, ``hessian`` and reverse-over-reverse against finite differences of srcad's gradient.
"""
import dataclasses
import inspect

import numpy as np
import pytest

import srcad
from srcad.held_objects import object_classes
from srcad.errors import CheckpointReplayError, SrcadSyntaxError, UnsupportedCaseError
from srcad.pipeline import Options, transform
from srcad.testing import check_grads


@dataclasses.dataclass
class Params:
    k: float
    c: float


GLOBAL_PARAMS = Params(1.3, 0.1)


def scaled_by_a_dataclass_field(x0, k):
    p = Params(k, 0.1)
    x = x0.copy()
    for t in srcad.checkpointed(range(6)):
        x = x - 0.1 * p.k * x
        x[0] = x[0] * 0.999
    return np.sum(x ** 2)


def scaled_by_a_dict_item(x0, k):
    p = {"k": k}
    x = x0.copy()
    for t in srcad.checkpointed(range(6)):
        x = x - p["k"] * x * 0.1
        x[0] = x[0] * 0.999
    return np.sum(x ** 2)


def scaled_by_a_field_of_an_argument(x0, p):
    x = x0.copy()
    for t in srcad.checkpointed(range(6), segment=2):
        x = x - p.k * x * p.c
        x[1] = x[0] * 0.999 + x[2]
    return np.sum(x ** 2)


def scaled_by_a_field_of_a_global(x0):
    x = x0.copy()
    for t in srcad.checkpointed(range(6)):
        x = x - GLOBAL_PARAMS.k * np.sin(x) * 0.1
        x[1] = x[0] * 0.999
    return np.sum(x ** 2)


def leapfrog(q0, v0, p):
    q = q0.copy()
    v = v0.copy()
    for t in srcad.checkpointed(range(8), segment=3):
        v = v - 0.5 * p.c * p.k * q
        q = q + p.c * v
        v = v - 0.5 * p.c * p.k * q
        q[0] = q[0] * 0.99
    return np.sum(q ** 2) + np.sum(v * q)


def trajectory_of_a_dict_state(u):
    traj = np.zeros((4, u.size))
    state = {"u": u}
    for i in srcad.checkpointed(range(4)):
        state["u"] = np.sin(state["u"])
        traj[i] = state["u"]
    return np.sum(traj ** 2)


def leapfrog_in_a_dict(q0, v0):
    s = {"q": q0, "v": v0}
    traj = np.zeros((6, q0.size))
    for i in srcad.checkpointed(range(6), segment=2):
        s["v"] = s["v"] - 0.1 * np.sin(s["q"])
        s["q"] = s["q"] + 0.1 * s["v"]
        traj[i] = s["q"]
    return np.sum(traj ** 2) + np.sum(s["v"] ** 3)


X = np.array([0.5, -1.0, 2.0])
SCALED = [
    (scaled_by_a_dataclass_field, (X, 1.3)),
    (scaled_by_a_dict_item, (X, 1.3)),
    (scaled_by_a_field_of_an_argument, (X, Params(1.3, 0.1))),
]
DICT_STATE = [
    (trajectory_of_a_dict_state, (X,)),
    (leapfrog_in_a_dict, (X, X[::-1].copy())),
]
ids = lambda case: case.__name__ if callable(case) else ""


def assert_checkpointed(fn, args):
    """The adjoint, made for the classes of ``args``, really is checkpointed."""
    classes = object_classes(list(inspect.signature(fn).parameters), args)
    assert "checkpoint_segments" in transform(fn, Options(wrt=(0,), param_classes=classes)).joint_source


def gradient_differences(fn, args, direction, eps=1e-5):
    """(∇f(x + εd) - ∇f(x - εd)) / 2ε, with srcad's gradient: the Hessian times d."""
    grad = srcad.grad(fn)
    return (grad(args[0] + eps * direction, *args[1:]) - grad(args[0] - eps * direction, *args[1:])) / (2 * eps)


def jacobian_differences(fn, args, eps=1e-6):
    return np.array([(fn(args[0] + eps * e, *args[1:]) - fn(args[0] - eps * e, *args[1:])) / (2 * eps)
                     for e in np.eye(args[0].size)])


@pytest.mark.parametrize("fn, args", SCALED + [(leapfrog, (X, X[::-1].copy(), Params(1.3, 0.1)))], ids=ids)
def test_a_state_scaled_by_a_field_or_item_then_indexed_first_order(fn, args):
    assert_checkpointed(fn, args)
    check_grads(fn, args)  # the joint adjoint and the pullback, called twice
    np.testing.assert_allclose(srcad.jacobian(fn, mode="rev")(*args), jacobian_differences(fn, args),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn, args", SCALED + DICT_STATE, ids=ids)
def test_second_order(fn, args):
    direction = np.random.default_rng(3).standard_normal(args[0].size)
    expected = gradient_differences(fn, args, direction)
    np.testing.assert_allclose(srcad.hvp(fn)(*args, direction), expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(srcad.hessian(fn)(*args) @ direction, expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(srcad.jacobian(srcad.grad(fn))(*args) @ direction, expected, rtol=1e-5, atol=1e-7)


# ---- controls

@pytest.mark.parametrize("fn, args", DICT_STATE + [(scaled_by_a_field_of_a_global, (X,))], ids=ids)
def test_first_order_already_right(fn, args):
    assert_checkpointed(fn, args)
    check_grads(fn, args)
    direction = np.ones(args[0].size)
    if fn is scaled_by_a_field_of_a_global:  # a global's field, read now: second order too
        np.testing.assert_allclose(srcad.hvp(fn)(*args, direction), gradient_differences(fn, args, direction),
                                   rtol=1e-5, atol=1e-7)


class Counted:
    """An object whose length counts its calls: state no snapshot holds."""

    def __init__(self):
        self.n = 0

    def __len__(self):
        self.n += 1
        return self.n


def reads_hidden_state_after_scaling(x0, p, items):
    x = x0.copy()
    for t in srcad.checkpointed(range(6), segment=2):
        x = x - 0.1 * p.k * x
        x[0] = x[0] * len(items[0])
    return np.sum(x ** 2)


def test_each_recomputed_segment_is_still_checked():
    with pytest.raises(CheckpointReplayError, match="'x' came out different"):
        srcad.grad(reads_hidden_state_after_scaling)(X, Params(1.3, 0.1), [Counted()])


def line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def unchecked_field_then_indexed(x0, p):
    x = x0.copy()
    z = np.ones(3)
    for t in srcad.checkpointed(range(3)):
        w = p.k * z  # p.k reaches no operator carrying a derivative: it is not checked
        n = w[0]
        x = x * 2.0
    return np.sum(x)


@pytest.mark.parametrize("fn, p", [(unchecked_field_then_indexed, Params(1.5, 0.1))], ids=ids)
def test_what_is_not_known_a_number_is_still_refused(fn, p):
    with pytest.raises(SrcadSyntaxError, match="indexing 'w' may run code of yours") as info:
        srcad.grad(fn)(X, p)
    assert info.value.lineno == line_of(fn, "w[0]")


class Descriptor:
    def __get__(self, obj, cls):
        return 2.0


class Holder:
    s = Descriptor()


def scaled_by_a_checked_tuple(x0, p):
    x = x0.copy()
    for t in srcad.checkpointed(range(3)):
        x = x - p.k * 2 * x  # a tuple of a class of yours, repeated, is no number
        x[0] = x[0].s
    return np.sum(x)


def test_a_class_of_yours_is_no_checked_number():
    with pytest.raises(UnsupportedCaseError, match="'p.k' is a type"):
        srcad.grad(scaled_by_a_checked_tuple)(X, Params((Holder,), 0.1))
