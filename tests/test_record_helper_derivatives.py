"""A method of a dataclass object whose derivative a helper returns (a dataclass object of
derivatives), met where the adjoint code keeps that object's adjoint as a buffer: a loop that
reads a field of the object after the call (fuzz seed 113712341263 raised a TypeError there:
the helper's derivative was taken for a number). Right in every mode."""
import dataclasses

import numpy as np
import pytest

from loop_checks import all_modes


@dataclasses.dataclass(frozen=True)
class Pair:
    first: object
    second: object = 0.5

    def scaled(self):
        return 0.5 * self.second

    def weighted(self):
        return np.sum(self.first) * self.second


def constant_method_then_loop(e):
    p = Pair(e.sum(keepdims=True), 0.91)
    for _ in (4, 3):
        a = p.first
    return Pair.scaled(p) + np.sum(a * a)


def method_in_loop(e):
    p = Pair(e * 2.0, 0.7)
    total = 0.0
    for k in range(3):
        total = total + p.weighted() * k + np.sum(p.first ** 2)
    return total


@pytest.mark.parametrize("fn", [constant_method_then_loop, method_in_loop])
def test_gradients_in_every_mode(fn):
    all_modes(fn, (np.array([-0.28, 0.68, -0.19, 0.47]),))
