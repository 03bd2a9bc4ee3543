"""Fuzz campaign 32 (seeds 113656...): regressions for what it found."""
import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes

W = np.linspace(-0.5, 0.7, 4)


# ---- a local list's method is the list's, whatever the classes of objects in lists define ---------
# (seed 113656340991: out = [h]; out.append(y) in a method of a class that defines append and
# whose objects the function reads from a module-level list (x[0].m(...)) was resolved as
# Stack.append(out, y): refused at compile time ("missing argument 'buffer' in call to 'append'")
# or when the code ran ("out.append(...) on this list object calls list.append"))

class Stack:
    def __init__(self, scale):
        self.W = np.linspace(0.64, 1.45, 4) * scale

    def m(self, z):
        return z * self.W

    def append(self, a, buffer):
        out = [np.sin(buffer)]
        seen = (STACKS[0].m(buffer),)
        out.append(buffer * self.W)
        pairs = {"first": out[0], "second": seen[0]}
        return np.sum(out[0] * out[1] + pairs["second"]) * a

    def gather(self, buffer):
        out = []
        for layer in STACKS:
            out.append(layer.m(buffer))
        return np.sum(np.cos(out[0]) * out[1])


STACKS = [Stack(0.69), Stack(1.3)]
SHAPE = Stack(0.99)


def appends_to_a_local_list(a, buffer):
    return SHAPE.append(a, buffer)


def appends_to_a_local_list_in_a_loop_over_layers(buffer):
    return SHAPE.gather(buffer)


@pytest.mark.parametrize("wrt", [0, 1])
def test_a_local_lists_method_is_the_lists(wrt):
    check_all_modes(appends_to_a_local_list, (0.3, W), wrt=wrt)
    check_all_modes(SHAPE.append, (0.3, W), wrt=wrt)


def test_a_local_lists_method_in_a_loop_over_objects_of_a_class_defining_it():
    check_all_modes(appends_to_a_local_list_in_a_loop_over_layers, (W,))
    w0, w1 = STACKS[0].W, STACKS[1].W
    expected = -np.sin(W * w0) * w0 * W * w1 + np.cos(W * w0) * w1
    np.testing.assert_allclose(srcad.grad(appends_to_a_local_list_in_a_loop_over_layers)(W), expected)
