"""Fuzz seeds 113669-113673 and their class: a call whose last argument spreads a tuple or list
display (``obj.step(*(t,))``, ``helper(*[q])``) binds the display's items to the parameters.

srcad inlined such a call by building the display, a ``list`` of it and ``len`` checks, and took
each parameter to be an item of that list: a value of unknown type, so whatever the callee made
of it (``z * self.W``, ``z.copy()``) might share memory with the caller's array, and updating that
array afterwards was refused ("'e', which shares memory with it, is read after it"), as was an
in-place update of a loop variable iterating over a row of it (seed 113669341022). Python binds
``f(*(a, b))`` exactly as ``f(a, b)``: srcad now reads the display's items as the arguments.
A callee returning its argument itself still shares it, and is still refused.
"""
import numpy as np
import pytest

from lang_checks import check_all_modes, refused

W = np.linspace(0.5, 1.5, 3)


class Scaler:
    def __init__(self, scale):
        self.W = W * scale

    def scaled(self, z):
        return z * self.W

    def same(self, z):
        return z


scaler = Scaler(0.8)


def row_scalars_updated_in_place(q):
    t = 0.0
    for p in q[-1, :]:
        p /= 2.0  # p is a number: this rebinds it, the row is left as it was
        t = t + p * p
    return t


def method_of_a_module_object_given_a_tuple_display(x):
    t = np.full(3, x) * W
    e = scaler.scaled(*(t,))
    t[0] -= 1.0
    return np.sum(e * t)


def method_result_copied(x):
    t = np.full(3, x)
    e = scaler.scaled(*[t]).copy()
    t[1:] *= np.tanh(x)
    return np.sum(e * t)


def helper_given_a_list_display_with_a_leading_argument(x):
    q = x * np.ones((3, 4))
    return np.sin(x) + _helper_rows(1.5, *[q])


def _helper_rows(scale, q):
    return row_scalars_updated_in_place(q * scale)


def method_returning_its_argument(x):
    t = np.full(3, x)
    e = scaler.same(*(t,))  # e is t itself
    t[0] -= 1.0
    return np.sum(e * t)


@pytest.mark.parametrize("f, args", [
    (method_of_a_module_object_given_a_tuple_display, (0.7,)),
    (method_result_copied, (0.4,)),
    (helper_given_a_list_display_with_a_leading_argument, (0.6,)),
], ids=lambda a: getattr(a, "__name__", ""))
def test_a_spread_display_binds_its_items(f, args):
    check_all_modes(f, args)


def test_a_callee_returning_the_spread_argument_still_shares_it():
    refused(method_returning_its_argument, 0.5, line_text="t[0] -= 1.0",
            message="'e', which shares memory with it")
