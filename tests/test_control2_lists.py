"""Lists built by ``append`` passed to NumPy functions (issue 9).

``np.sum(acc)`` on a list built by ``append`` crashed in reverse mode ("ndarray has no
attribute pop"): a NumPy function's rule treats the list as an array and gives an array
adjoint, while the reverse of ``append`` pops the adjoint item by item. The adjoint of a list
or tuple is now always laid out like it (``runtime.container_grad`` splits an array adjoint
into rows, item by item). A ufunc (``np.clip``, ``np.average``) computes with its operands in
its rules (``x > y``, ``t * 2`` repeats a list): it gets ``np.asarray`` of a list
(``passes.array_arguments``). Each function is checked against finite differences in reverse mode
(joint adjoint and the pullback called twice), forward mode and second order.
"""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

rng = np.random.default_rng(22)


def vec(*shape):
    return rng.uniform(0.2, 1.0, shape)


def sum_of_appended_scalars(x):
    acc = []
    for i in range(3):
        acc.append(x[i] * x[i + 1])
    return np.sum(acc)


def sum_of_appended_rows(x):
    acc = []
    for i in range(3):
        acc.append(np.sin(x[i:i + 2]))
    return np.sum(acc) + np.mean(acc) * 2.0


def reductions_with_axis(x):
    acc = []
    for i in range(3):
        acc.append(x[i:i + 2] ** 2)
    return np.sum(np.max(acc, axis=0) * np.prod(acc, axis=1)[:2])


def array_then_sum_order(x):
    acc = []
    for i in range(3):
        acc.append(np.cos(x[i:i + 2]))
    return np.sum(np.concatenate(acc) ** 2) + np.sum(acc) + np.sum(np.array(acc) * 3.0)


def stack_and_dot(x):
    rows = []
    for i in range(2):
        rows.append(x[i:i + 3] * (i + 1.0))
    return np.dot(np.mean(rows, axis=0), np.stack(rows)[1])


def list_of_scalars_mean_then_pop(x):
    acc = []
    for i in range(4):
        acc.append(np.sin(x[i]))
    m = np.mean(acc)
    last = acc.pop()
    return m * last + np.sum(acc)


def tuple_argument_summed(x):
    pair = (x * 2.0, np.sin(x))
    return np.sum(pair) + np.sum(np.mean(pair, axis=0))


def list_comprehension_summed(x):
    parts = [np.exp(x[i]) for i in range(3)]
    return np.sum(parts) * np.sum(np.square(parts))


def ufuncs_compare_list_items(x):
    acc = []
    for i in range(3):
        acc.append(x[i:i + 2] * (i + 1.0))
    return np.sum(np.maximum(acc, 0.9)) + np.sum(np.square(acc) * np.hypot(acc, 0.5))


def clip_and_average_of_a_list(x):
    acc = []
    for i in range(3):
        acc.append(x[i:i + 2] * (i + 1.0))
    return np.sum(np.clip(acc, 0.5, 1.5)) + np.sum(np.average(acc, axis=0, weights=[0.2, 0.3, 0.5]) ** 2)


CASES = [
    (sum_of_appended_scalars, (vec(4),)),
    (sum_of_appended_rows, (vec(4),)),
    (reductions_with_axis, (vec(4),)),
    (array_then_sum_order, (vec(4),)),
    (stack_and_dot, (vec(4),)),
    (list_of_scalars_mean_then_pop, (vec(4),)),
    (tuple_argument_summed, (vec(3),)),
    (list_comprehension_summed, (vec(3),)),
    (ufuncs_compare_list_items, (vec(4),)),
    (clip_and_average_of_a_list, (vec(4),)),
]
IDS = [f.__name__ for f, _ in CASES]


@pytest.mark.parametrize("f,args", CASES, ids=IDS)
def test_appended_list_into_numpy_reverse(f, args):
    check_grads(f, args)


@pytest.mark.parametrize("f,args", CASES, ids=IDS)
def test_appended_list_into_numpy_forward(f, args):
    check_jvp(f, args)


# second order through np.average is refused (its helper average_slope has no rule)
SECOND = [(f, args) for f, args in CASES if f is not clip_and_average_of_a_list]


@pytest.mark.parametrize("f,args", SECOND, ids=[f.__name__ for f, _ in SECOND])
def test_appended_list_into_numpy_second_order(f, args):
    check_jvp(srcad.grad(f), args)  # forward over reverse
    check_grads(srcad.grad(f), args, v=vec(*np.shape(args[0])))  # reverse over reverse


def test_list_argument_gets_a_list_gradient():
    xs = [vec(3), vec(3)]
    g = check_grads(lambda_free_sum, (xs,))
    assert isinstance(g, list) and len(g) == 2


def lambda_free_sum(xs):
    return np.sum(np.sin(xs)) + np.sum(xs[0] * xs[1])
