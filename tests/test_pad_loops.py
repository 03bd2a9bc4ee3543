"""np.pad in loops: a loop that pads a temporary each step (the heat stencil) gets right
gradients in every mode, with in-place updates of the padded value and of the loop's state."""
import numpy as np
import pytest

from loop_checks import all_modes


def heat(u0, kappa):
    u = u0
    for _ in range(3):
        lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
        u = u + kappa * np.pad(lap, 1, mode="constant")
    return np.sum(u * u)


def heat_in_place(u0, kappa):
    u = u0.copy()
    for _ in range(3):
        lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
        padded = np.pad(lap, 1, mode="constant")
        lap *= 2.0  # the padded value is a copy: changing lap afterwards does not reach it
        u[1:-1, 1:-1] += kappa * lap
        u = u + kappa * padded
    return np.sum(u * u)


def reflect_loop(x):
    y = x
    for _ in range(2):
        y = np.sin(np.pad(y, (1, 2), mode="reflect"))[1:-2] * y
    return np.sum(y ** 2)


@pytest.mark.parametrize("fn", [heat, heat_in_place])
def test_heat_gradients_in_every_mode(fn):
    rng = np.random.default_rng(0)
    all_modes(fn, (rng.standard_normal((6, 6)), 0.1), wrt=(0, 1))


def test_reflect_pad_in_a_loop_in_every_mode():
    all_modes(reflect_loop, (np.random.default_rng(1).standard_normal(7),))
