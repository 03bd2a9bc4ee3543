"""Forward mode where a value carries a tangent that is exactly zero and its slope is infinite
(probe 16A): a time ``0.0`` kept beside the state and stepped by a helper, a velocity starting
at zero read through a norm. An input that does not move moves nothing: the tangent is 0,
never 0 · ∞ = NaN, as JAX gives. Every value against finite differences of the function, or
of srcad's gradient at second order."""
import dataclasses

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

X = np.array([0.5, -1.0])


def step(state):
    y, t = state
    return (y + np.sqrt(t) * 0.1 * y ** 2, t + 0.1)


def simulate(x):
    state = (x, 0.0)
    for i in range(3):
        state = step(state)
    return np.sum(state[0] ** 2)


def simulate_dict(x):
    s = {"x": x, "t": 0.0}
    for i in range(3):
        s["x"] = s["x"] + np.sqrt(s["t"]) * 0.1 * s["x"] ** 2
        s["t"] = s["t"] + 0.1
    return np.sum(s["x"] ** 2)


@dataclasses.dataclass
class State:
    x: np.ndarray
    t: float


def with_record(x):
    s = State(x, 0.0)
    return np.sum(s.x ** 2 + np.sqrt(s.t) * s.x + np.arcsin(s.t) * s.x)


def drag(c):
    v = np.zeros(2)
    s = 0.0
    for i in range(2):
        s = s + np.linalg.norm(v)
        v = v + c
    return s


def hessian_fd(f, x, eps=1e-5):
    g = srcad.grad(f)
    return np.array([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(x.size)]).T


@pytest.mark.parametrize("f", [simulate, simulate_dict, with_record])
def test_a_constant_time_beside_the_state(f):
    check_grads(f, (X,), modes=("rev",))
    check_jvp(f, (X,))  # before: NaN
    np.testing.assert_allclose(srcad.hessian(f)(X), hessian_fd(f, X), rtol=1e-5, atol=1e-6)


def test_a_norm_of_a_state_starting_at_zero():
    # the first step's velocity is the constant zero: ‖v‖ moves from the second step on (√2 per unit c)
    np.testing.assert_allclose(srcad.jvp(drag, (0.7,), (1.0,))[1], np.sqrt(2.0), rtol=1e-12)
    np.testing.assert_allclose(srcad.jacobian(drag, mode="fwd")(0.7), np.sqrt(2.0), rtol=1e-12)
    np.testing.assert_allclose(srcad.grad(drag)(0.7), np.sqrt(2.0), rtol=1e-12)


def root(x):
    return np.sqrt(x)


def test_a_moving_input_at_an_infinite_slope_still_gives_infinity():
    # a tangent that is not zero is not masked: sqrt'(0) · 1 is inf, as in NumPy and JAX
    with np.errstate(divide="ignore"):
        tangent = srcad.jvp(root, (np.array([0.0, 1.0]),), (np.array([1.0, 0.0]),))[1]
    assert np.isinf(tangent[0]) and tangent[1] == 0.0
