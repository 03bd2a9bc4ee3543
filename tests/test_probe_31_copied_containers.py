"""What probe 31 found in optimiser-style code that copies its parameters before changing them:

- ``p = copy.deepcopy(params); p["w"] = ...`` crashed at second order (reverse over reverse,
  forward over reverse) with NumPy's IndexError: the transpose of ``stored_adjoint`` built a
  zero *array* shaped like the adjoint of ``p`` and indexed it with the key ``"w"``; the adjoint
  of a dict (or list) is a dict (or list), which gets ``h`` in its slot.
- ``p = copy.copy(params); p["w"] = ...`` of a dict parameter was refused as an update of the
  argument (suggesting ``copy.copy(params).copy()``), though ``params.copy()`` is accepted: a
  shallow copy of a dict is a new dict holding the same items.
"""
import copy

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

W = np.array([0.7, -1.2, 0.4])
X = np.array([[1.0, 0.5, -0.3], [0.2, -0.8, 1.1]])


def deepcopied_dict(params, x):
    p = copy.deepcopy(params)
    p["w"] = p["w"] * 3.0
    return np.sum(np.tanh(x @ p["w"])) * np.sum(params["w"] ** 2) + params["b"] * np.sum(p["w"])


def deepcopied_list(ws, x):
    p = copy.deepcopy(ws)
    p[1] = p[1] * 3.0 + p[0][:2]
    return np.sum(np.sin(p[1]) ** 2) * np.sum(ws[0] ** 2)


def shallow_copied_dict(params, x):
    p = copy.copy(params)
    for step in range(3):
        p["w"] = p["w"] - 0.1 * x.T @ np.tanh(x @ p["w"] + p["b"])
    return np.sum(p["w"] ** 2) + np.sum(params["w"]) * p["b"]


def dict_args():
    return ({"w": W.copy(), "b": 0.3}, X.copy())


def list_args():
    return ([W.copy(), np.array([0.5, -0.4])], X.copy())


def _moved(args, direction, t):
    tree = args[0]
    keys = tree.keys() if isinstance(tree, dict) else range(len(tree))
    moved = type(tree)(tree)
    for k in keys:
        moved[k] = tree[k] + t * direction[k]
    return (moved,) + tuple(args[1:])


@pytest.mark.parametrize("f, make", [(deepcopied_dict, dict_args), (deepcopied_list, list_args)])
def test_second_order_through_a_store_into_a_copied_container(f, make):
    args = make()
    kept = copy.deepcopy(args)
    check_grads(f, args)
    check_grads(srcad.grad(f), args, rtol=1e-4, atol=1e-6)  # reverse over reverse
    rng = np.random.default_rng(0)
    grad = srcad.grad(f)
    tree = args[0]
    keys = tree.keys() if isinstance(tree, dict) else range(len(tree))
    for _ in range(2):
        u = type(tree)(tree)
        for k in keys:
            u[k] = rng.standard_normal(np.shape(tree[k])) if np.ndim(tree[k]) else float(rng.standard_normal())
        e = 1e-5
        plus, minus = grad(*_moved(args, u, e)), grad(*_moved(args, u, -e))
        hv = srcad.hvp(f)(*args, u)  # forward over reverse
        for k in keys:
            np.testing.assert_allclose(hv[k], (np.asarray(plus[k]) - np.asarray(minus[k])) / (2 * e),
                                       rtol=1e-5, atol=1e-7)
    for k in keys:
        np.testing.assert_array_equal(args[0][k], kept[0][k])
    np.testing.assert_array_equal(args[1], kept[1])


def test_shallow_copy_of_a_dict_parameter_then_a_store():
    args = dict_args()
    kept = copy.deepcopy(args)
    value, gradient = srcad.value_and_grad(shallow_copied_dict)(*args)
    assert value == shallow_copied_dict(*copy.deepcopy(kept))
    check_grads(shallow_copied_dict, args, wrt=(0, 1), modes=("rev",))
    check_jvp(shallow_copied_dict, args, wrt=(0, 1))
    np.testing.assert_array_equal(args[0]["w"], kept[0]["w"])
    assert args[0]["b"] == kept[0]["b"]
