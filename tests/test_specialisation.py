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


def _rk2(y, n=3, dt=0.05, scale=(1.0, 0.5)):
    for _ in range(n):
        k1 = np.array([y[1], -np.sin(y[0])]) * np.array(scale)
        mid = y + dt * k1
        k2 = np.array([mid[1], -np.sin(mid[0])]) * np.array(scale)
        y = y + 0.5 * dt * (k1 + k2)
    return np.sum(y ** 2)


def test_parameters_left_to_their_defaults_are_specialised_on_them():
    # before, a call leaving n and dt to their defaults got the generic code (shapes decided
    # at run time: slower, and its second order was refused by srcad's own alias check)
    f = srcad.differentiable(_rk2)
    y = np.array([0.3, -0.2])
    f.adjoint(y, 1.0)
    assert "unbroadcast" not in f.adjoint_source and "cotangent_like" in f.adjoint_source
    check_grads(_rk2, (y,))
    eps = 1e-5
    numeric = np.array([(srcad.grad(_rk2)(y + eps * e) - srcad.grad(_rk2)(y - eps * e)) / (2 * eps)
                        for e in np.eye(2)])
    np.testing.assert_allclose(srcad.hessian(_rk2)(y), numeric, rtol=1e-5, atol=1e-8)
    # given by name, and with one default replaced
    np.testing.assert_allclose(srcad.grad(_rk2)(y, dt=0.1), srcad.grad(_rk2)(y, 3, 0.1))


def _weighted(x, w=np.ones(3)):
    return np.sum(np.tanh(x) * w)


def test_a_rebound_default_is_seen():
    f = srcad.grad(_weighted)
    x = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(f(x), 1 - np.tanh(x) ** 2)
    kept = _weighted.__defaults__
    try:
        _weighted.__defaults__ = (np.array([2.0, 0.0, -1.0]),)
        np.testing.assert_allclose(f(x), (1 - np.tanh(x) ** 2) * [2.0, 0.0, -1.0])
        _weighted.__defaults__ = (np.ones(4),)  # another shape: Python's error, not a stale shape
        with pytest.raises(ValueError):
            f(x)
        np.testing.assert_allclose(f(np.ones(4) * 0.5), (1 - np.tanh(0.5) ** 2) * np.ones(4))
    finally:
        _weighted.__defaults__ = kept


def _weights_of(k):
    def weighted(x, k=k):
        return np.sum(np.tanh(x[:len(k)]) * np.array(k))
    return weighted


def test_code_specialised_on_a_default_is_not_reused_for_another_default():
    # probe 20D: functions of one code with defaults of other shapes (a factory), and a function
    # whose defaults are rebound, were given the code compiled for the first one's default
    x = np.array([0.1, 0.2, 0.3])
    two, three = _weights_of((1.0, 2.0)), _weights_of((1.0, 2.0, 3.0))
    np.testing.assert_allclose(srcad.grad(two)(x), [1 - np.tanh(0.1) ** 2, 2 * (1 - np.tanh(0.2) ** 2), 0.0])
    np.testing.assert_allclose(srcad.grad(three)(x), (1 - np.tanh(x) ** 2) * [1.0, 2.0, 3.0])
    f = srcad.grad(two)
    two.__defaults__ = ((3.0,),)
    np.testing.assert_allclose(f(x), [3 * (1 - np.tanh(0.1) ** 2), 0.0, 0.0])


def _reshaped_default(x, W=np.ones((3, 1))):
    return np.sum(np.tanh(x) * W)


def test_an_array_default_reshaped_in_place_is_read_at_run_time():
    x = np.array([0.1, 0.2, 0.3])
    g = srcad.grad(_reshaped_default)
    g(x)
    W = _reshaped_default.__defaults__[0]
    try:
        W.shape = (3,)
        np.testing.assert_allclose(g(x), 1 - np.tanh(x) ** 2)
    finally:
        W.shape = (3, 1)
