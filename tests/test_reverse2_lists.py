"""Lists built by ``append`` or a comprehension of bare names, constants and parameters,
whose elements' adjoints are zero, ``None`` or a value depending on the path taken, in
every mode: reverse (joint adjoint, pullback called twice), forward, and second order
(forward over reverse, reverse over reverse) where the result is a scalar.

Regression test of fuzz finding F4 (``TypeError: NoneType + float`` from
``dw += d_list1.pop()``): an adjoint that may be ``None`` after a branch entered a reverse
loop that updates it in place, and the conversion to a buffer at the loop's entry was
computed from the state at the loop's end, so it was left out. Found with it: a slot of a
list cleared to ``0`` in the reverse sweep of ``S[i] = value`` (the next adjoint added to it
item by item), and ``L.pop()`` for its effect refused (generated code does it, so second
order through such a list was refused).
"""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp


def check_every_mode(f, args, wrt):
    check_grads(f, args, wrt=wrt, modes=("rev",))
    check_jvp(f, args, wrt=wrt)
    if np.ndim(f(*args)) or isinstance(f(*args), (list, tuple)):
        return
    for k in (wrt if isinstance(wrt, tuple) else (wrt,)):
        if not isinstance(args[k], np.ndarray):
            continue
        u = np.random.default_rng(3).standard_normal(np.shape(args[k]))
        gradient = srcad.grad(f, wrt=k)
        moved = lambda t: [a + t * u if i == k else a for i, a in enumerate(args)]  # noqa: E731
        eps = 1e-5
        numeric = (gradient(*moved(eps)) - gradient(*moved(-eps))) / (2 * eps)
        np.testing.assert_allclose(srcad.hvp(f, wrt=k)(*args, u), numeric, rtol=1e-5, atol=1e-7)
        check_grads(gradient, args, wrt=k)


def stack_of_name_then_branch(c, w):  # fuzz finding F4
    y = np.stack([w for q in range(4)])
    if c > 0.5:
        y = y + w
    return y[0, -2]


def stack_of_name_then_augmented_branch(c, w):
    y = np.stack([w for q in range(4)])
    if c > 0.5:
        y += w * c
    return np.sum(y[1:] * y[:-1])


def comprehension_in_branch_not_taken(c, w):
    y = w * 1.0
    if c > 0.5:
        y = np.stack([w * q for q in range(3)]).sum(axis=0)
    return np.sum(y * w)


def appends_of_name_and_constant(c, w):
    items = []
    for i in range(4):
        if w[i % 3] > 0.3:
            items.append(w)
        else:
            items.append(np.ones(3) * 0.5)
    y = np.stack(items)
    if c > 0.5:
        y = y * c
    return np.sum(y[1:] * w)


def append_of_name_rebound_on_some_passes(c, w):
    acc = []
    t = w * 1.0
    for i in range(3):
        acc.append(t)
        if w[i] > 0.4:
            t = t * w
    if c > 0.5:
        return np.sum(acc[0] * acc[-1])
    return np.sum(np.stack(acc)[1])


def display_of_names_and_constants(c, w):
    items = [c, 2.0, c * w[0], w[1]]
    if c > 0.5:
        s = items[0] * items[2]
    else:
        s = items[1] * items[3]
    return s + items[3]


def popped_items_in_branch(c, w):
    items = [w, w * 2.0, np.sin(w)]
    a = items.pop()
    if c > 0.5:
        a = a + items.pop()
    return np.sum(a * w)


def discarded_pops_in_branch(c, w):
    items = [w, w * 2.0, np.sin(w)]
    items.pop()
    if c > 0.5:
        items.pop()
    return np.sum(items[-1] * w)


def only_some_items_read(c, w):
    items = [w * c for q in range(4)]
    if c > 0.5:
        return np.sum(items[0] * items[2])
    return np.sum(items[1])


def list_parameter_items(ws, c):
    items = [w for w in ws]
    y = items[0] * 1.0
    if c > 0.5:
        y = y + items[1] * c
    return np.sum(y * y)


def nested_comprehension_then_loop_branch(c, w):
    rows = [[w[i] * w[j] for j in range(3)] for i in range(2)]
    s = 0.0
    for r in range(2):
        if w[r] > 0.4:
            s = s + rows[r][r + 1]
    if c > 0.5:
        s = s * c
    return s


W = np.array([0.2, 0.6, 0.45])
CASES = [
    (stack_of_name_then_branch, (0.7, W), (0, 1)),
    (stack_of_name_then_branch, (0.3, W), 1),
    (stack_of_name_then_augmented_branch, (0.7, W), (0, 1)),
    (stack_of_name_then_augmented_branch, (0.3, W), 1),
    (comprehension_in_branch_not_taken, (0.7, W), 1),
    (comprehension_in_branch_not_taken, (0.3, W), (0, 1)),
    (appends_of_name_and_constant, (0.7, W), (0, 1)),
    (appends_of_name_and_constant, (0.3, W), 1),
    (append_of_name_rebound_on_some_passes, (0.7, W), 1),
    (append_of_name_rebound_on_some_passes, (0.3, W), (0, 1)),
    (display_of_names_and_constants, (0.7, W), (0, 1)),
    (display_of_names_and_constants, (0.3, W), (0, 1)),
    (popped_items_in_branch, (0.7, W), 1),
    (popped_items_in_branch, (0.3, W), (0, 1)),
    (discarded_pops_in_branch, (0.7, W), 1),
    (discarded_pops_in_branch, (0.3, W), (0, 1)),
    (only_some_items_read, (0.7, W), (0, 1)),
    (only_some_items_read, (0.3, W), 1),
    (list_parameter_items, ([W, W[::-1] * 2.0], 0.7), (0, 1)),
    (list_parameter_items, ([W, W[::-1] * 2.0], 0.3), 0),
    (nested_comprehension_then_loop_branch, (0.7, W), (0, 1)),
    (nested_comprehension_then_loop_branch, (0.3, W), 1),
]


@pytest.mark.parametrize("f, args, wrt", CASES, ids=[f"{f.__name__}-{k}" for k, (f, _, _) in enumerate(CASES)])
def test_list_items_with_zero_or_none_adjoints(f, args, wrt):
    check_every_mode(f, args, wrt)
