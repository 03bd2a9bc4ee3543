"""Programs Python runs that srcad refused (probes 24A and 24B), now differentiated, each checked
against finite differences in every mode, beside the near cases that must stay refused:

- a helper returning a tuple of new arrays (``dr, r2 = pair_distances(pos)``): each item keeps
  memory of its own where the helper's summary shows it made the item anew, apart from the
  others; items that may share (``return a, a``, two views of one array, a view of an argument)
  still do;
- the same for srcad's own ``kernel_forward`` (result, saved values) met when a gradient is
  differentiated again, whose result is no view of the argument the saved values hold;
- a shallow copy of a list (``L[:]``, ``list(L)``) or a list iterated
  (``for w in ws``) is a new list of the same items: rebinding an item of one does not change
  the other, while an in-place update of an item array does.
"""
import inspect

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

from lang_checks import check_all_modes

RNG = np.random.default_rng(24)
POS = RNG.normal(size=(4, 2))
X = np.array([0.3, -0.5, 0.8])


def check_every_mode(f, args, wrt=0, eps=1e-6):
    """grad (joint, split), jvp, hvp, grad-of-grad, jacobian (rev, fwd) and hessian of a scalar ``f``."""
    check_all_modes(f, args, wrt=wrt)
    x = args[wrt]

    def moved(fn, t, u):
        shifted = list(args)
        shifted[wrt] = x + t * u
        return np.asarray(fn(*shifted), dtype=float)

    basis = np.eye(x.size).reshape((x.size,) + x.shape)
    numeric = np.array([(moved(f, eps, u) - moved(f, -eps, u)) / (2 * eps) for u in basis]).reshape(x.shape)
    for mode in ("rev", "fwd"):
        np.testing.assert_allclose(srcad.jacobian(f, wrt=wrt, mode=mode)(*args), numeric, rtol=1e-5, atol=1e-6,
                                   err_msg=f"jacobian {mode}")
    gradient = srcad.grad(f, wrt=wrt)
    second = np.array([(moved(gradient, eps, u) - moved(gradient, -eps, u)) / (2 * eps) for u in basis])
    hessian = np.asarray(srcad.hessian(f, wrt=wrt)(*args)).reshape(x.size, x.size)
    np.testing.assert_allclose(hessian, second.reshape(x.size, x.size), rtol=1e-5, atol=1e-6, err_msg="hessian")


def refused_at(f, text, args=(X,)):
    """srcad refuses ``f`` at the user's line holding ``text``, naming the file and that line."""
    lines, first = inspect.getsourcelines(f)
    line = first + next(k for k, source in enumerate(lines) if text in source)
    with pytest.raises(srcad.SrcadError) as caught:
        srcad.grad(f)(*args)
    assert f"{__file__}:{line}:" in str(caught.value)
    return str(caught.value)


# ---- a helper's tuple of new arrays ------------------------------------------------------------

def pair_distances(pos):
    dr = pos[:, None, :] - pos[None, :, :]  # a new array
    r2 = np.sum(dr ** 2, axis=-1)  # another
    return dr, r2


def energy_fill_diagonal(pos):
    dr, r2 = pair_distances(pos)
    np.fill_diagonal(r2, 1.0)
    return np.sum(dr[..., 0] ** 2 / r2) + np.sum(1.0 / r2)


def energy_item_store(pos):
    dr, r2 = pair_distances(pos)
    r2[0, 0] = 1.0
    r2[1, 1] = 1.0
    return np.sum(dr[0:2, 0:2] / r2[0:2, 0:2, None]) + np.sum(dr[..., 1] / (1.0 + r2))


def trajectory(pos):
    """The same in a loop: each pass's items are new, apart from the last pass's."""
    total = 0.0
    for _ in range(3):
        dr, r2 = pair_distances(pos)
        np.fill_diagonal(r2, 1.0)
        total = total + np.sum(1.0 / r2)
        pos = pos + 0.01 * np.sum(dr / r2[..., None], axis=1)
    return total


@pytest.mark.parametrize("f", [energy_fill_diagonal, energy_item_store])
def test_items_of_a_helpers_tuple_of_new_arrays_are_apart(f):
    check_every_mode(f, (POS,))


def test_items_of_a_helpers_tuple_of_new_arrays_are_apart_in_a_loop():
    check_grads(trajectory, (POS,), modes=("rev",))
    check_jvp(trajectory, (POS,))


def log_ls_kernel(X, log_ls):
    Z = X / np.exp(log_ls)  # new: no view of log_ls
    return Z @ Z.T


def gp_objective(log_ls, X):
    K = log_ls_kernel(X, log_ls)
    K[np.diag_indices_from(K)] += 0.1
    K[0, 0] = K[0, 0] + 1.0
    return np.sum(K ** 2)


def test_second_order_of_a_helpers_result_updated_in_place():
    # the gradient calls srcad's kernel_forward, which returns (K, saved values holding log_ls)
    check_every_mode(gp_objective, (np.array([0.3, -0.2]), RNG.normal(size=(4, 2))))


def same_array_twice(x):
    a = x * 2.0
    return a, a


def update_one_of_the_same(x):
    p, q = same_array_twice(x)
    q[0] = 1.0  # p changes too
    return np.sum(p * x)


def two_rows_of_one(x):
    a = x * 2.0
    return a[0:2], a[1:3]


def update_one_of_overlapping(x):
    u, v = two_rows_of_one(x)
    v[0] = 5.0  # u[1] changes too
    return np.sum(u * x)


def view_and_new(x):
    return x[1:], x * 2.0


def update_a_view_of_the_argument(x):
    v, w = view_and_new(x)
    v[0] = 1.0  # the caller's x
    return np.sum(v * w)


@pytest.mark.parametrize("f, text, said", [
    (update_one_of_the_same, "q[0] = 1.0", "shares memory with 'p'"),
    (update_one_of_overlapping, "v[0] = 5.0", "shares memory with 'u'"),
    (update_a_view_of_the_argument, "v[0] = 1.0", "shares memory with the argument 'x'"),
])
def test_items_that_may_share_stay_refused(f, text, said):
    assert said in refused_at(f, text)


# ---- shallow copies of a list or dict, and a list iterated -----------------------------------------

def slice_copy_item_rebound(x):
    L = [x * 1.0, x ** 2]
    L2 = L[:]
    L2[0] = L2[0] * 3.0  # rebinds an item of the new list; L is as it was
    return np.sum(L[0] * L[1]) + np.sum(L2[0] * L2[1])


def list_copy_item_rebound(x):
    L = [x * 1.0, x ** 2]
    L2 = list(L)
    L2[1] = np.sin(L2[1])
    return np.sum(L[0] * L[1]) + np.sum(L2[0] * L2[1])


def item_rebound_then_old_item_read(x):
    L = [x * 1.0, x ** 2]
    a = L[0]
    L[0] = a * 3.0  # a is still the old item
    return np.sum(a * L[0]) + np.sum(L[1])


def iterated_item_rebound_iterated(x):
    ws = [x * 1.0, x ** 2]
    total = 0.0
    for w in ws:
        total = total + np.sum(w)
    ws[0] = ws[0] * 3.0
    for w in ws:
        total = total + np.sum(w ** 2)
    return total


@pytest.mark.parametrize("f", [slice_copy_item_rebound, list_copy_item_rebound, item_rebound_then_old_item_read,
                               iterated_item_rebound_iterated])
def test_rebinding_an_item_of_a_list_changes_no_other_list(f):
    check_every_mode(f, (X,))


def slice_copy_item_updated(x):
    L = [x * 1.0, x ** 2]
    L2 = L[:]
    L2[0] += 1.0  # the array L[0] too
    return np.sum(L[0] * L[1])


def slice_copy_item_updated_by_name(x):
    L = [x * 1.0, x ** 2]
    L2 = L[1:]
    r = L2[0]
    r[:] = 0.0  # the array L[1] too
    return np.sum(L[0] * L[1])


def iterated_item_updated(x):
    ws = [x * 1.0, x ** 2]
    total = 0.0
    for w in ws:
        total = total + np.sum(w)
    ws[1] *= 3.0  # the array w is too
    return total + np.sum(w)


@pytest.mark.parametrize("f, text", [(slice_copy_item_updated, "L2[0] += 1.0"),
                                     (slice_copy_item_updated_by_name, "r[:] = 0.0"),
                                     (iterated_item_updated, "ws[1] *= 3.0")])
def test_an_item_array_updated_in_place_stays_refused(f, text):
    refused_at(f, text)
