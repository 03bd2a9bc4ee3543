"""Values read only for their shape (passes/record_values.py): a loop that rebinds an array the
reverse sweep reads only through ``zeros_like`` (the zero adjoint its slices accumulate into)
keeps no copy of it per trip, and stays right in every mode where the name is bound in one
branch only, is read for its value too, or changes shape between trips (then it is kept).
And the dispatch (dispatch.py): a call that passes every parameter is not guarded on the
function's defaults, and a call that leaves one to its default still is."""
import numpy as np
import pytest

import srcad
from loop_checks import all_modes
from srcad.compile import _CACHE


def gates(W, xs):
    h = np.zeros((xs.shape[1], 2))
    for t in range(xs.shape[0]):
        a = xs[t] @ W + np.tanh(h @ W[:2])  # (batch, 4): two gates in one array, read by slices
        i = 1.0 / (1.0 + np.exp(-a[:, :2]))
        h = i * np.tanh(a[:, 2:])
    return np.sum(h * h)


def gates_in_one_branch(W, xs):
    h = np.zeros((xs.shape[1], 2))
    for t in range(xs.shape[0]):
        if t % 2 == 0:
            a = xs[t] @ W
            h = h + np.sin(a[:, :2]) * np.cos(a[:, 2:])
        else:
            h = h * 0.5
    return np.sum(h ** 2)


def gates_read_whole(W, xs):
    total = 0.0
    for t in range(xs.shape[0]):
        a = xs[t] @ W
        total = total + np.sum(np.tanh(a[:, 1:])) + np.sum(a * a)  # a's value: kept
    return total


def growing(x):
    total = 0.0
    for t in range(1, x.shape[0]):
        a = np.sin(x[:t])  # another shape every trip: kept
        total = total + np.sum(a[1:] * 2.0)
    return total


def _arguments(seed=3):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((3, 4)) * 0.5, rng.standard_normal((5, 2, 3))


@pytest.mark.parametrize("fn", [gates, gates_in_one_branch, gates_read_whole])
def test_gradients_in_every_mode(fn):
    all_modes(fn, _arguments(), wrt=(0, 1))


def test_growing_shapes_in_every_mode():
    all_modes(growing, (np.linspace(-1.0, 1.0, 6),))


def _source(fn, *args):
    d = srcad.differentiable(fn, wrt=0)
    d.adjoint(*args)
    return d.adjoint_source


def test_an_array_read_for_its_shape_alone_is_not_kept_per_trip():
    source = _source(gates, *_arguments())
    assert "zeros_like(a)" in source and "_a_stack" not in source, source
    assert "_a_stack" in _source(gates_read_whole, *_arguments())
    assert "_a_stack" in _source(growing, np.linspace(-1.0, 1.0, 6))


def _scaled(x, c=2.0):
    return np.sum(np.sin(x) * c)


def test_defaults_rebound_change_the_calls_that_read_them_and_only_those():
    d = srcad.differentiable(_scaled, wrt=0)
    x = np.linspace(0.0, 1.0, 4)
    np.testing.assert_allclose(d.adjoint(x), 2.0 * np.cos(x))
    np.testing.assert_allclose(d.adjoint(x, 3.0, 1.0), 3.0 * np.cos(x))
    try:
        _scaled.__defaults__ = (5.0,)
        made = _CACHE.made_in_this_thread()
        np.testing.assert_allclose(d.adjoint(x, 3.0, 1.0), 3.0 * np.cos(x))  # every parameter passed: the same code
        assert _CACHE.made_in_this_thread() == made
        np.testing.assert_allclose(d.adjoint(x), 5.0 * np.cos(x))  # the default read: the new one
    finally:
        _scaled.__defaults__ = (2.0,)
    np.testing.assert_allclose(d.adjoint(x), 2.0 * np.cos(x))
