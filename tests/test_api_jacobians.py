"""Jacobians and Hessians over several arguments (JAX's nesting: a tuple per argument, the
output's structure around the arguments') and over structured arguments, and float32 kept.
Every block is checked against finite differences (``check_jvp`` along unit directions)."""
import collections
import dataclasses

import numpy as np
import pytest

import srcad
from srcad.pytrees import leaves, rebuild
from srcad.testing import check_jvp

rng = np.random.default_rng(3)
Dense = collections.namedtuple("Dense", "w b")


@dataclasses.dataclass(frozen=True)
class Affine:
    a: np.ndarray
    shift: float


def numeric_jacobian(fun, args, position):
    """Blocks ∂y/∂(leaf of argument ``position``): for each leaf of the argument, the jvp
    along each of its unit directions, checked against central differences by ``check_jvp``."""
    x = args[position]
    x_leaves = leaves(x)
    y = fun(*args)
    out = []
    for j, leaf in enumerate(x_leaves):
        columns = []
        for e in np.eye(max(int(np.size(leaf)), 1))[: int(np.size(leaf))]:
            direction = [np.zeros(np.shape(other)) if m != j else e.reshape(np.shape(leaf))
                         for m, other in enumerate(x_leaves)]
            direction = [d if np.ndim(other) else float(d) for d, other in zip(direction, x_leaves)]
            tangent = check_jvp(fun, args, wrt=position, direction=rebuild(x, direction) if len(x_leaves) > 1 or not
                                isinstance(leaf, type(x)) else direction[0])
            columns.append(leaves(tangent))
        out.append([np.stack([c[i] for c in columns], axis=-1).reshape(np.shape(y_leaf) + np.shape(leaf))
                    for i, y_leaf in enumerate(leaves(y))])
    return out  # out[j][i]: output leaf i by argument leaf j


def two_inputs(x, w):
    return np.tanh(w @ x) * np.sum(x)


def structured_out(x, w):
    h = w @ x
    return {"h": np.sin(h), "total": np.sum(h ** 2)}


def through_fields(p, x):
    return np.tanh(x @ p.w + p.b)


def scalar_two(x, w):
    return np.sum(np.tanh(w @ x) ** 2) + np.sum(x ** 3) * np.sum(w)


X = rng.standard_normal(3)
W = rng.standard_normal((2, 3))


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_jacobian_over_two_arguments_is_a_tuple(mode):
    jx, jw = srcad.jacobian(two_inputs, argnums=(0, 1), mode=mode)(X, W)
    assert jx.shape == (2, 3) and jw.shape == (2, 2, 3)
    np.testing.assert_allclose(jx, numeric_jacobian(two_inputs, (X, W), 0)[0][0], rtol=1e-10)
    np.testing.assert_allclose(jw, numeric_jacobian(two_inputs, (X, W), 1)[0][0], rtol=1e-10)
    (only_w,) = srcad.jacobian(two_inputs, wrt=(1,), mode=mode)(X, W)
    np.testing.assert_allclose(only_w, jw, rtol=1e-12)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_jacobian_of_a_structured_output(mode):
    jac = srcad.jacobian(structured_out, argnums=(0, 1), mode=mode)(X, W)
    assert set(jac) == {"h", "total"}
    assert jac["h"][0].shape == (2, 3) and jac["h"][1].shape == (2, 2, 3) and jac["total"][1].shape == (2, 3)
    numeric_x, numeric_w = numeric_jacobian(structured_out, (X, W), 0)[0], numeric_jacobian(structured_out, (X, W), 1)[0]
    for i, key in enumerate(sorted(jac)):  # leaves in sorted key order
        np.testing.assert_allclose(jac[key][0], numeric_x[i], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(jac[key][1], numeric_w[i], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_jacobian_with_respect_to_a_named_tuple(mode):
    p = Dense(rng.standard_normal((3, 2)), rng.standard_normal(2))
    x = rng.standard_normal((4, 3))
    jac = srcad.jacobian(through_fields, mode=mode)(p, x)
    assert isinstance(jac, Dense) and jac.w.shape == (4, 2, 3, 2) and jac.b.shape == (4, 2, 2)
    numeric = numeric_jacobian(through_fields, (p, x), 0)
    np.testing.assert_allclose(jac.w, numeric[0][0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(jac.b, numeric[1][0], rtol=1e-9, atol=1e-12)


def affine_loss(p, x):
    return np.sum(np.exp(p.a * x) + p.shift * x ** 2)


def test_hessian_over_two_arguments_nests_like_jax():
    h = srcad.hessian(scalar_two, argnums=(0, 1))(X, W)
    assert h[0][0].shape == (3, 3) and h[0][1].shape == (3, 2, 3)
    assert h[1][0].shape == (2, 3, 3) and h[1][1].shape == (2, 3, 2, 3)
    for i in range(2):
        gradient = srcad.grad(scalar_two, argnums=i)
        for j in range(2):
            np.testing.assert_allclose(h[i][j], numeric_jacobian(gradient, (X, W), j)[0][0], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(h[0][1], np.moveaxis(h[1][0], -1, 0), rtol=1e-10)  # symmetric blocks


def test_hessian_with_respect_to_a_dataclass():
    p, x = Affine(rng.standard_normal(3), 0.4), rng.standard_normal(3)
    h = srcad.hessian(affine_loss)(p, x)
    assert isinstance(h, Affine) and isinstance(h.a, Affine) and h.a.a.shape == (3, 3) and np.shape(h.shift.a) == (3,)
    gradient = srcad.grad(affine_loss)
    numeric = numeric_jacobian(gradient, (p, x), 0)  # numeric[j][i]: gradient leaf i by argument leaf j
    np.testing.assert_allclose(h.a.a, numeric[0][0], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(h.a.shift, numeric[1][0], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(h.shift.a, numeric[0][1], rtol=1e-8, atol=1e-10)


def test_hvp_over_two_arguments_takes_a_tuple_of_vectors():
    u, U = rng.standard_normal(3), rng.standard_normal((2, 3))
    hx, hw = srcad.hvp(scalar_two, argnums=(0, 1))(X, W, (u, U))
    h = srcad.hessian(scalar_two, argnums=(0, 1))(X, W)
    np.testing.assert_allclose(hx, h[0][0] @ u + np.tensordot(h[0][1], U, 2), rtol=1e-10)
    np.testing.assert_allclose(hw, h[1][0] @ u + np.tensordot(h[1][1], U, 2), rtol=1e-10)


def float32_loss(x, w):
    return np.sum(np.tanh(w @ x) ** 2)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_float32_in_float32_out(mode):
    x, w = X.astype(np.float32), W.astype(np.float32)
    jac = srcad.jacobian(two_inputs, argnums=(0, 1), mode=mode)(x, w)
    assert jac[0].dtype == np.float32 and jac[1].dtype == np.float32
    np.testing.assert_allclose(jac[0], srcad.jacobian(two_inputs, mode=mode)(X, W), rtol=2e-5, atol=1e-6)
    h = srcad.hessian(float32_loss)(x, w)
    assert h.dtype == np.float32
    np.testing.assert_allclose(h, srcad.hessian(float32_loss)(X, W), rtol=2e-4, atol=1e-5)
    mixed = srcad.jacobian(two_inputs, mode=mode)(x, W)  # float64 anywhere: float64
    assert mixed.dtype == np.float64


def copied(x):
    return x * 1.0


def unit_scaled(x, w):
    return np.tanh(w @ x) * 2.0


def test_reverse_jacobians_are_the_callers_own():
    """The identity whose rows are pulled back is shared between calls: no Jacobian is a view
    of it, and writing into one leaves the next one right."""
    x = np.array([0.3, -0.2, 0.9])
    first = srcad.jacobian(copied)(x)
    assert first.flags.writeable
    first[...] = 7.0
    np.testing.assert_array_equal(srcad.jacobian(copied)(x), np.eye(3))
    w = np.array([[0.5, -0.1, 0.2], [0.3, 0.8, -0.6]])
    for _ in range(2):
        np.testing.assert_allclose(srcad.jacobian(unit_scaled, 0)(x, w), numeric_jacobian(unit_scaled, (x, w), 0)[0][0],
                                   rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(srcad.jacobian(unit_scaled, (0, 1))(x, w)[1],
                                   numeric_jacobian(unit_scaled, (x, w), 1)[0][0], rtol=1e-6, atol=1e-8)
