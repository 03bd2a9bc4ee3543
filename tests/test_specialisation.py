"""Generated code is specialised on argument shapes and dtypes: every specialisation, and
the generic fallback, must give the same (right) gradients."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads


def affine(x, b):
    return ((x * b + b) ** 2).sum()


def growing(x):
    h = x
    for _ in range(3):
        h = np.concatenate([h, h[-1:] * 2.0])
    return (h * h).sum()


def mixed_list(ws, x):
    h = x
    for w in ws:
        h = np.tanh(h @ w)
    return h.sum()


def test_each_shape_combination_is_right():
    f = srcad.differentiable(affine, wrt=(0, 1))
    rng = np.random.default_rng(0)
    for xs, bs in [((4, 3), (3,)), ((4, 3), (4, 3)), ((4, 3), (1, 3)), ((3,), ()), ((2, 1), (1, 5))]:
        x, b = rng.standard_normal(xs), rng.standard_normal(bs)
        gx, gb = f.grad(x, b)
        assert gx.shape == x.shape and np.shape(gb) == np.shape(b)
        check_grads(affine, (x, b), wrt=(0, 1))


def test_broadcast_reduction_is_decided_from_the_shapes():
    f = srcad.differentiable(affine, wrt=1)
    f.grad(np.ones((4, 3)), np.ones(3))
    assert "np.sum(" in f.adjoint_source and "axis=(0,)" in f.adjoint_source
    f.grad(np.ones((4, 3)), np.ones((1, 3)))
    assert "keepdims=True" in f.adjoint_source
    f.grad(np.ones((4, 3)), np.ones((4, 3)))
    assert "np.sum(" not in f.adjoint_source and "unbroadcast" not in f.adjoint_source
    generic = srcad.differentiable(affine, wrt=1)
    assert "unbroadcast" in generic.adjoint_source  # shapes unknown: decided at run time


def test_generic_after_many_shapes():
    f = srcad.differentiable(affine, wrt=(0, 1))
    for n in range(1, 12):
        x, b = np.linspace(0, 1, n), np.linspace(1, 2, n)
        gx, gb = f.grad(x, b)
        np.testing.assert_allclose(gx, 2 * (x * b + b) * b)
        np.testing.assert_allclose(gb, 2 * (x * b + b) * (x + 1))
    assert len(f._bound) == 11


def test_shapes_that_change_in_a_loop():
    check_grads(growing, (np.array([1.0, -2.0]),))


def test_list_items_of_different_shapes():
    rng = np.random.default_rng(1)
    check_grads(mixed_list, ([rng.standard_normal((3, 3)), rng.standard_normal((3, 2))], rng.standard_normal((2, 3))))


def test_dtypes_are_part_of_the_specialisation():
    f = srcad.differentiable(affine)
    g64 = f.grad(np.ones(3), np.ones(3))
    g32 = f.grad(np.ones(3, np.float32), np.ones(3, np.float32))
    gint = f.grad(np.ones(3), np.ones(3, int))  # an integer constant; an integer x is refused
    assert g64.dtype == np.float64 and g32.dtype == np.float32 and gint.dtype == np.float64
    np.testing.assert_allclose(g32, g64)
    np.testing.assert_allclose(gint, g64)
    with pytest.raises(srcad.ArgumentError, match="dtype int64"):
        f.grad(np.ones(3, int), np.ones(3))
