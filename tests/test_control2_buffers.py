"""Adjoints updated in place are owned, writable buffers (issue 9).

A 0-d array stored into (``out[...] = e``, ``out[()] = e``) crashed in reverse mode: the
adjoint of a 0-d array may be a Python float (the cotangent as given) or a NumPy scalar
(NumPy arithmetic on 0-d arrays gives scalars), and neither can be indexed or written into.
Making an adjoint a buffer (``own``) now also makes it an ndarray wherever the variable may be
0-d. Each function is checked against finite differences in reverse mode (joint adjoint and
the pullback called twice), forward mode and second order.
"""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

rng = np.random.default_rng(21)


def vec(*shape):
    return rng.uniform(0.2, 1.0, shape)


def store_ellipsis_into_0d(s):
    out = np.zeros(())
    out[...] = np.cos(s)
    return out


def store_empty_tuple_into_0d(s):
    out = np.zeros(())
    out[()] = np.cos(s) * s
    return out * 2.0


def update_0d_in_loop(x):
    acc = np.zeros(())
    for i in range(3):
        acc[...] = acc * x[i] + np.sin(x[i])
    return acc


def read_and_store_0d_in_loop(x):
    acc = np.ones(())
    for i in range(3):
        acc[()] = acc[()] * np.cos(x[i]) + x[i]
    return np.sum(acc * acc)


def read_item_of_numpy_scalar(x):
    s = np.sum(x ** 2)
    return s[()] * 3.0 + s


def store_into_0d_from_arithmetic(x):
    out = np.array(np.sum(x)) * 1.0  # a NumPy scalar, not an array: wrapped again below
    box = np.asarray(out + 0.0).copy()
    box[...] = box * x[0]
    return box + out


def stored_0d_read_twice(x):
    out = np.zeros(())
    out[...] = x[1] ** 2
    y = out * 3.0
    out[...] = out + x[0]
    return y * out


def store_0d_into_itself(x):
    out = np.array(x[0] * 2.0)
    out[...] = out * out
    return out


def add_at_into_0d(x):
    out = np.zeros(())
    np.add.at(out, (), x[0] ** 2)
    return out * 3.0


CASES = [
    (store_ellipsis_into_0d, (0.3,)),
    (store_empty_tuple_into_0d, (0.7,)),
    (update_0d_in_loop, (vec(3),)),
    (read_and_store_0d_in_loop, (vec(3),)),
    (read_item_of_numpy_scalar, (vec(4),)),
    (store_into_0d_from_arithmetic, (vec(3),)),
    (stored_0d_read_twice, (vec(2),)),
    (store_0d_into_itself, (vec(2),)),
    (add_at_into_0d, (vec(2),)),
]


@pytest.mark.parametrize("f,args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_0d_store_reverse(f, args):
    check_grads(f, args)


@pytest.mark.parametrize("f,args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_0d_store_reverse_with_array_cotangent(f, args):
    # the cotangent as a 0-d array, not a float: the caller's array is never written into
    v = np.array(0.7)
    check_grads(f, args, v=v)
    assert v == 0.7


@pytest.mark.parametrize("f,args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_0d_store_forward(f, args):
    check_jvp(f, args)


@pytest.mark.parametrize("f,args", [c for c in CASES if np.ndim(c[1][0])],
                         ids=[f.__name__ for f, a in CASES if np.ndim(a[0])])
def test_0d_store_second_order(f, args):
    check_jvp(srcad.grad(f), args)  # forward over reverse
    check_grads(srcad.grad(f), args, v=vec(*np.shape(args[0])))  # reverse over reverse
