"""Adjoints of values that are lists or tuples though nothing in the code says so: results of
library functions (``np.split``, ``np.linalg.slogdet``, ``np.linalg.eigh``), items of a list
whose structure changes, dicts reached through such lists.

Regression test: the adjoint of ``parts = np.split(x, 2)`` read both whole
(``np.stack(parts)``) and by item (``parts[0]``) was added with ``+=``, which concatenates
lists — a silent wrong gradient. Only a value known to be an array or a number is now added
with ``+``; anything else goes through ``add_grads`` (item by item), also when an adjoint
buffer of a list or dict is updated at an index. Checked against finite differences in
reverse mode (joint adjoint, pullback twice), forward mode and, for an array argument,
second order.
"""
import copy

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp


def check_every_mode(f, args, second_order=True):
    check_grads(f, args, modes=("rev",))
    check_jvp(f, args)
    if not second_order:
        return
    x = args[0]
    u = np.random.default_rng(4).standard_normal(np.shape(x))
    gradient = srcad.grad(f)
    eps = 1e-5
    numeric = (gradient(x + eps * u, *args[1:]) - gradient(x - eps * u, *args[1:])) / (2 * eps)
    np.testing.assert_allclose(srcad.hvp(f)(*args, u), numeric, rtol=1e-5, atol=1e-7)
    check_grads(gradient, args)


def split_read_whole_and_by_item(x):
    parts = np.split(x, 2)
    return np.sum(np.stack(parts, axis=1) * parts[0][:, None])


def split_of_concatenation(x):
    parts = np.split(np.concatenate([x, x * x]), 2)
    return np.sum(np.stack(parts, axis=1) * np.cos(parts[0])[:, None])


def split_items_and_sum_of_list(x):
    parts = np.array_split(np.sin(x), 3)
    total = parts[1].sum() * parts[0][0]
    return total + np.sum(np.concatenate(parts) ** 2)


def tuple_result_read_twice(x):
    m = np.outer(x, x) + np.eye(4) * 3.0
    r = np.linalg.slogdet(m)
    q = np.linalg.eigh(m)
    return r[1] * r[1] + r[1] * np.sum(q[0] * np.sin(q[0])) + np.sum(q[0] ** 2)


def changed_list_read_by_item(x):
    rows = [x * 1.0, np.sin(x)]
    rows.append(x * x)
    rows[0] = rows[0] * rows[2]
    return np.sum(rows[0] + np.stack(rows)[1])


def dicts_in_a_changed_list(x):
    layers = [{"w": x * 1.0, "s": 0.5}]
    layers.append({"w": np.cos(x), "s": 1.5})
    total = 0.0
    for layer in layers:
        total = total + np.sum(layer["w"] ** 2) * layer["s"]
    return total


X = np.array([0.3, -0.7, 1.1, 0.45])
FUNCTIONS = [split_read_whole_and_by_item, split_of_concatenation,
             changed_list_read_by_item, dicts_in_a_changed_list]


@pytest.mark.parametrize("f", FUNCTIONS, ids=[f.__name__ for f in FUNCTIONS])
def test_unannounced_lists_add_item_by_item(f):
    check_every_mode(f, (X,))


def test_tuple_results_read_by_item():
    # first order only: second order through item_grad (the rule of an item of slogdet's
    # result) is refused, srcad has no rule for that helper
    check_every_mode(tuple_result_read_twice, (X,), second_order=False)


def test_array_split_items():
    check_every_mode(split_items_and_sum_of_list, (np.array([0.3, -0.7, 1.1, 0.45, 0.2, -0.1]),))


def nested_params(p):
    total = 0.0
    for layer in p["layers"]:
        total = total + (layer["W"] ** 2).sum() * layer["s"]
    return total


def test_dict_items_of_a_list_parameter():
    p = {"layers": [{"W": np.array([[0.3, 1.0], [0.2, -0.4]]), "s": 0.5},
                    {"W": np.array([[2.0, -1.0], [0.5, 0.1]]), "s": 1.5}]}
    check_every_mode(nested_params, (p,), second_order=False)


def user_deepcopy(x):
    parts = {"a": [x * 1.0, np.sin(x)], "b": x ** 2}
    kept = copy.deepcopy(parts)
    return np.sum(kept["a"][1] * kept["b"]) + np.sum(kept["a"][0] ** 3)


@pytest.mark.parametrize("f", [dicts_in_a_changed_list, user_deepcopy])
def test_second_order_through_deep_copies(f):
    # regression: first-order code snapshots a list or dict whose items an update reaches with
    # copy.deepcopy (record_values); differentiating it again traced copy.py and was refused
    # ("'reductor' is a local variable"); copy.deepcopy is now passed through like copy_value
    # (test_reverse2_lists' nested_comprehension_then_loop_branch is another such case)
    check_every_mode(f, (X,))
