"""Each helper of srcad/batch_runtime.py computes, row by row, what its unbatched counterpart
(srcad/runtime.py or NumPy) computes for that row, or raises Unbatchable; never anything else."""
import itertools
import operator

import numpy as np
import pytest

from srcad import batch_runtime as B
from srcad import runtime as R
from srcad.batch_runtime import Unbatchable

rng = np.random.default_rng(3)
ROWS = 3


def batch(shape):
    return rng.standard_normal((ROWS,) + shape)


def rowwise(fn, g, *args, **kwargs):
    return np.stack([np.asarray(fn(row, *args, **kwargs)) for row in g])


def assert_rows(got, expected):
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("g_shape,x_shape", [
    ((3,), (3,)), ((2, 3), (3,)), ((2, 3), (1, 3)), ((2, 3), (2, 1)), ((4, 2, 3), (2, 1)), ((2, 3), ()),
    ((), ()), ((3,), (2, 3)), ((1, 3), (2, 3)),
])
def test_unbroadcast(g_shape, x_shape):
    g, x = batch(g_shape), np.zeros(x_shape)
    if len(g_shape) < len(x_shape) or any(a < b for a, b in zip(g_shape[::-1], x_shape[::-1])):
        expected = rowwise(lambda row: np.broadcast_to(row, x_shape), g)  # an adjoint smaller than x: spread
    else:
        expected = rowwise(R.unbroadcast, g, x)
    assert_rows(B.batched_unbroadcast(g, x), expected)


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv])
@pytest.mark.parametrize("g_shape,p_shape", [((3,), (3,)), ((3,), (2, 3)), ((2, 3), (3,)), ((), (2, 2)),
                                             ((2, 1), (2, 3)), ((3,), ())])
def test_elementwise(op, g_shape, p_shape):
    g, p = batch(g_shape), rng.uniform(1.0, 2.0, p_shape)
    assert_rows(B.batched_left(op, g, p), rowwise(lambda row: op(row, p), g))
    assert_rows(B.batched_right(op, p, g), rowwise(lambda row: op(p, row), g))
    h = batch(p_shape)
    assert_rows(B.batched_both(op, g, h), np.stack([op(a, b) for a, b in zip(g, h)]))


@pytest.mark.parametrize("x_ndim,y_ndim", list(itertools.product([1, 2], repeat=2)))
def test_matmul_adjoints(x_ndim, y_ndim):
    x = rng.standard_normal((3, 4)[-x_ndim:] if x_ndim == 1 else (3, 4))
    y = rng.standard_normal((4,) if y_ndim == 1 else (4, 2))
    if x_ndim == 1:
        x = rng.standard_normal(4)
    g = batch(np.shape(x @ y))
    assert_rows(B.batched_matmul_dx(g, x, y), rowwise(R.matmul_dx, g, x, y))
    assert_rows(B.batched_matmul_dy(g, x, y), rowwise(R.matmul_dy, g, x, y))


@pytest.mark.parametrize("p_shape,g_shape", [((3, 4), (4,)), ((3, 4), (4, 2)), ((4,), (4,)), ((4,), (4, 2))])
def test_matmul_with_an_unbatched_operand_on_the_left(p_shape, g_shape):
    p, g = rng.standard_normal(p_shape), batch(g_shape)
    try:
        got = B.batched_matmul_left(p, g)
    except Unbatchable:
        assert p_shape == (4,) and g_shape == (4, 2)  # the one case left to the fallback
        return
    assert_rows(got, rowwise(lambda row: p @ row, g))


@pytest.mark.parametrize("g_shape,p_shape", [((4,), (4, 3)), ((2, 4), (4, 3)), ((4,), (4,)), ((2, 4), (4,))])
def test_matmul_with_an_unbatched_operand_on_the_right(g_shape, p_shape):
    g, p = batch(g_shape), rng.standard_normal(p_shape)
    assert_rows(B.batched_matmul_right(g, p), rowwise(lambda row: row @ p, g))


def test_stacks_of_matrices_are_unbatchable():
    with pytest.raises(Unbatchable):
        B.batched_matmul_dx(batch((2, 3, 5)), np.ones((2, 3, 4)), np.ones((4, 5)))
    with pytest.raises(Unbatchable):
        B.batched_matmul_left(np.ones((2, 3, 4)), batch((4,)))


@pytest.mark.parametrize("x_shape,axis,keepdims", [((3, 4), 0, False), ((3, 4), 1, True), ((3, 4), -1, False),
                                                   ((2, 3, 4), (0, 2), False), ((3, 4), None, False),
                                                   ((3, 4), None, True)])
def test_reductions(x_shape, axis, keepdims):
    x = rng.standard_normal(x_shape)
    g = batch(x_shape)
    assert_rows(B.batched_sum(g, axis=axis, keepdims=keepdims),
                rowwise(np.sum, g, axis=axis, keepdims=keepdims))
    reduced = batch(np.shape(np.sum(x, axis=axis, keepdims=keepdims)))
    assert_rows(B.batched_sum_to_reduced(reduced, x, axis, keepdims),
                rowwise(R.sum_to_reduced, reduced, x, axis, keepdims))
    assert_rows(np.broadcast_to(B.batched_expand_reduced(reduced, x, axis, keepdims), (ROWS,) + x_shape),
                rowwise(lambda row: np.broadcast_to(R.expand_reduced(row, x, axis, keepdims), x_shape), reduced))


def test_shapes():
    g = batch((3, 4))
    assert_rows(B.batched_reshape(g, (4, 3)), rowwise(np.reshape, g, (4, 3)))
    assert_rows(B.batched_reshape(g, -1), rowwise(np.reshape, g, -1))
    with pytest.raises(Unbatchable):
        B.batched_reshape(g, (12,), "F")
    assert_rows(B.batched_transpose(g), rowwise(np.transpose, g))
    h = batch((2, 3, 4))
    assert_rows(B.batched_transpose(h, (2, 0, 1)), rowwise(np.transpose, h, (2, 0, 1)))
    assert_rows(B.batched_transpose_back(h, (2, 0, 1)), rowwise(R.transpose_back, h, (2, 0, 1)))
    s = batch(())
    assert_rows(B.batched_full_of((2, 3), s), rowwise(lambda row: R.full_of((2, 3), row), s))
    v = batch((3,))
    assert_rows(B.batched_broadcast_to(v, (2, 3)), rowwise(np.broadcast_to, v, (2, 3)))


def test_where():
    condition = rng.standard_normal((2, 3)) > 0
    g = batch((3,))
    assert_rows(B.batched_where(condition, g, 0.0), rowwise(lambda row: np.where(condition, row, 0.0), g))
    assert_rows(B.batched_where_else(condition, 0.0, g), rowwise(lambda row: np.where(condition, 0.0, row), g))


def test_indexed_updates():
    buffer = np.zeros((ROWS, 4, 3))
    expected = np.zeros((ROWS, 4, 3))
    g = batch((3,))
    B.batched_add_at(buffer, (slice(None), B.batched_index_part(1)), g)
    for k in range(ROWS):
        expected[k][1] += g[k]
    assert_rows(buffer, expected)
    B.batched_scatter_add(buffer, (slice(1, 3), 0), batch(()) * 0 + 1.0)
    for k in range(ROWS):
        R.scatter_add(expected[k], (slice(1, 3), 0), 1.0)
    assert_rows(buffer, expected)
    for index in (np.array([0, 0]), [1, 2], (0, np.array([1]))):
        with pytest.raises(Unbatchable):
            B.batched_scatter_add(buffer, index, batch(()))
    for part in (np.array([1]), [0], True, (0, 1), 1.0):
        with pytest.raises(Unbatchable):
            B.batched_index_part(part)


def test_finish_copies_and_casts():
    x = np.zeros(3, np.float32)
    v = batch((3,))
    got = B.batched_finish(v, x, v)
    assert got.dtype == np.float32 and got.shape == (ROWS, 3)
    same = B.batched_finish(v, np.zeros(3), v, True)
    assert not np.shares_memory(same, v)
    zero = B.batched_finish(None, 2.0, v)
    assert zero.shape == (ROWS,) and not zero.any()
    g = batch((2, 3))
    assert_rows(B.batched_finish(g, np.zeros(3), v), rowwise(R.finish, g, np.zeros(3)))
    s = batch(())
    assert_rows(B.batched_finish(s, np.zeros((2, 2)), v), rowwise(R.finish, s, np.zeros((2, 2))))
    with pytest.raises(Unbatchable):
        B.batched_finish(v, [np.zeros(3)], v)
    with pytest.raises(Unbatchable):
        B.batched_finish(v, np.zeros(3, complex), v)


def test_factor_of_an_in_place_scaling():
    g = batch((3,))
    assert B.batched_factor(2.0, g) == 2.0
    with pytest.raises(Unbatchable):
        B.batched_factor(np.ones((ROWS, 3)), g)  # would meet the batch axis


def test_stored_adjoint():
    g = batch((4, 3))
    for index, value in (((1, slice(None)), np.zeros(3)), ((slice(0, 2), 0), 0.0), ((2, 1), np.zeros(()))):
        assert_rows(B.batched_stored_adjoint(g, index, value), rowwise(R.stored_adjoint, g, index, value))
    with pytest.raises(Unbatchable):
        B.batched_stored_adjoint(g, (np.array([0, 0]), 1), np.zeros(2))


def test_container_grad():
    g = batch((3,))
    assert B.batched_container_grad(g, np.zeros(3)) is g
    with pytest.raises(Unbatchable):
        B.batched_container_grad(g, [np.zeros(()), np.zeros(())])
