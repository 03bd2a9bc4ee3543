"""Fuzz seed 113697 (program 113697341096) and its class: a method of an object held in a list
whose name is also an array's method (``copy``, ``mean``, ``dot``, ...).

``for layer in layers: layer.copy()`` ran the class's ``copy`` but srcad differentiated it as
``ndarray.copy``: the derivative of the array's method, not of the user's. A ``copy`` returning
``Layer(2.0 * self.W)`` got half its gradient (silent), a ``mean`` over a list of dataclasses
crashed in the reverse sweep (``dataclasses.fields`` of an array), ``LAYERS[0].dot(x)`` raised
``TypeError`` in the generated code, and the fuzzer's ``item.copy(x)`` was refused as ``np.copy``
given a differentiated ``order``. Such a call is now the class's method (differentiated as
methods of objects in lists are) where the receiver is exactly of that class, and the array's
method otherwise: an array keeps the array's derivative. A loop variable over a list of the
module holding only objects, and an item of one, are read as objects only.
"""
import dataclasses

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes
from srcad.testing import check_grads

X = np.array([0.3, -0.7, 0.45])


@dataclasses.dataclass
class Part:
    W: np.ndarray

    def copy(self):
        return Part(2.0 * self.W)  # not a plain copy: its derivative is 2

    def mean(self):
        return np.sum(self.W ** 3)


class Layer:
    def __init__(self, scale):
        self.W = np.linspace(0.5, 1.0, 3) * scale

    def dot(self, x):
        return np.sin(self.W * x)

    def forward(self, x):
        return np.tanh(self.W * x)

    def copy(self, x):
        return np.cos(self.W) * x ** 2  # (an array's copy would take x as its order)


LAYERS = [Layer(1.0), Layer(0.7)]


def copies_of_parts(parts):
    t = 0.0
    for part in parts:
        t = t + np.sum(np.sin(part.copy().W))
    return t


def means_of_parts(parts, x):
    t = 0.0
    for part in parts:
        t = t + part.mean() * np.sum(x)
    return t


def dot_of_an_item(x):
    return np.sum(LAYERS[0].dot(x) * LAYERS[-1].dot(x))


def copies_through_a_loop(x):
    t = 0.0
    for layer in LAYERS:
        t = t + layer.copy(np.tanh(x))
    return np.sum(t * x)


def arrays_beside_layers(x):
    h = np.sin(x)
    t = 0.0
    for layer in LAYERS:
        t = t + np.sum(layer.forward(h))
        h = h.copy()  # an array: the array's copy, in a function whose list's class has one too
        h[0] = h[1] * h[2]
    return t + np.sum(h.copy() ** 2)


def _parts():
    return [Part(np.array([0.5, 0.9, 1.2])), Part(np.array([1.0, -0.3, 0.7]))]


def test_an_item_method_named_as_an_arrays_gets_the_classes_derivative():
    parts = _parts()
    grads = srcad.grad(copies_of_parts)(parts)
    for g, p in zip(grads, parts):
        np.testing.assert_allclose(g.W, 2.0 * np.cos(2.0 * p.W), rtol=1e-12)
    check_grads(copies_of_parts, (parts,))


def test_an_item_method_named_mean_over_a_list_of_dataclasses():
    check_grads(means_of_parts, (_parts(), X.copy()), wrt=(0, 1))


def test_an_item_of_a_global_list_and_arrays_beside_it():
    check_all_modes(dot_of_an_item, (X.copy(),))
    check_all_modes(copies_through_a_loop, (X.copy(),))
    check_all_modes(arrays_beside_layers, (X.copy(),))


def test_an_array_put_in_the_list_later_is_refused_where_the_code_runs():
    # the loop's items were read as objects only (no array's method beside the class's): an array
    # there later would be given the class's derivative, so the call is refused when it runs
    grad = srcad.grad(copies_through_a_loop)
    grad(X.copy())
    LAYERS.append(np.ones(3))
    try:
        with pytest.raises(srcad.UnsupportedCaseError, match="ndarray.copy"):
            grad(X.copy())
    finally:
        LAYERS.pop()
