"""Ordinary programs srcad refused (helper 154), each checked against finite differences in every
mode, beside the near forms that stay refused, at the user's line, saying what to write:

- ``rng.shuffle(a)`` of a generator the function makes (``np.random.shuffle(a)``) of an array is
  the element store ``a[...] = a[order]`` with the same draws: a shuffled index array in a
  mini-batch loop, and a shuffle of a differentiated array (a permutation with its adjoint);
- ``x.flat[i]`` and ``for v in x.flat`` read as ``np.ravel(x)``; a store through ``.flat`` stays refused;
- loops over ``itertools.product``/``combinations`` of ranges and ``enumerate(zip(...))``;
- ``L.extend([a, b])`` of a display is two appends; ``L.extend(M)`` and ``L.insert(0, y)`` say what to write;
- ``FUNCS[1](x)`` of a module-level list of functions is the call of that item (``test_dispatch_tables``).
"""
import itertools

import numpy as np
import pytest

import srcad

from lang_checks import check_unchanged, refused

X = np.random.default_rng(3).normal(size=(4, 3))
W = np.array([0.3, -0.2, 0.5])
V = np.array([0.3, -0.5, 0.8, 1.1])


# ---- a. shuffles ---------------------------------------------------------------------------------

def minibatch_loss(X, w):
    rng = np.random.default_rng(0)
    n = X.shape[0]
    idx = np.arange(n)
    rng.shuffle(idx)
    loss = 0.0
    for start in range(0, n, 2):
        batch = idx[start:start + 2]
        loss = loss + np.sum((X[batch] @ w) ** 2) * (start + 1)
    return loss


def shuffled_features(x):
    rng = np.random.default_rng(2)
    z = np.sin(x)
    rng.shuffle(z)
    return np.sum(z * np.arange(z.shape[0]) ** 2)


def shuffled_rows_legacy(X):
    rng = np.random.RandomState(4)
    Z = X * 2.0
    rng.shuffle(Z)
    return np.sum(np.tanh(Z) * np.arange(12).reshape(4, 3))


def shuffled_global(x):
    np.random.seed(3)
    z = x ** 2
    np.random.shuffle(z)
    return np.sum(z * np.arange(4.0))


@pytest.mark.parametrize("wrt", [0, 1])
def test_shuffled_index_array(wrt):
    check_unchanged(minibatch_loss, X, W, wrt=wrt)


@pytest.mark.parametrize("f, x", [(shuffled_features, V), (shuffled_rows_legacy, X), (shuffled_global, V)])
def test_shuffle_of_a_differentiated_array_is_a_permutation(f, x):
    check_unchanged(f, x)


def shuffled_list_of_arrays(x):
    rng = np.random.default_rng(2)
    L = [x, 2 * x, 3 * x]
    rng.shuffle(L)
    return np.sum(L[0] * np.arange(4.0))


def shuffled_other_axis(X):
    rng = np.random.default_rng(2)
    Z = X * 1.0
    rng.shuffle(Z, axis=1)
    return np.sum(Z * np.arange(12).reshape(4, 3))


def shuffled_list_of_indices(x):
    rng = np.random.default_rng(2)
    order = list(range(4))
    rng.shuffle(order)
    return np.sum(x[order] * np.arange(4.0))


def test_shuffles_srcad_cannot_follow_stay_refused():
    refused(shuffled_list_of_arrays, V, line_text="rng.shuffle(L)", message="carries a derivative")
    refused(shuffled_other_axis, X, line_text="rng.shuffle(Z, axis=1)", message="write 'Z = Z[rng.permutation")
    with pytest.raises(srcad.SrcadError, match=r"test_real_refusals_32.py:\d+: .*here it is a list: write 'order = "
                                               r"\[order\[k\] for k in rng.permutation\(len\(order\)\)\]'"):
        srcad.grad(shuffled_list_of_indices)(V)


# ---- b. x.flat ---------------------------------------------------------------------------------

def flat_items(A):
    return np.sum(A.flat[[0, 4, 5]] ** 2) + A.flat[-1] * A.T.flat[1] + np.sum(np.tanh(A.flat[2:5]))


def flat_iterated(A):
    s = 0.0
    for k, v in enumerate(A.T.flat):
        s = s + np.sin(v) * (k + 1)
    return s


@pytest.mark.parametrize("f", [flat_items, flat_iterated])
def test_flat_reads(f):
    check_unchanged(f, X)


def flat_store(A):
    B = (A * 1.0).T
    it = B.flat
    it[0] = 0.0
    return np.sum(B * np.arange(12).reshape(3, 4))


def flat_read_after_store(x):
    z = x * 2.0
    it = z.flat
    z[0] = 5.0
    return it[0] * x[1]


def test_stores_through_flat_stay_refused():
    refused(flat_store, X, line_text="it[0] = 0.0", message="shares memory with 'B'")
    refused(flat_read_after_store, V, line_text="z[0] = 5.0", message="shares memory with 'it'")


# ---- c. loops over index products ---------------------------------------------------------------

def conv_valid(img, k):
    H, W_ = img.shape
    out = np.zeros((H - 2, W_ - 2))
    for i, j in itertools.product(range(H - 2), range(W_ - 2)):
        out[i, j] = np.sum(img[i:i + 3, j:j + 3] * k)
    for i, j in itertools.combinations(range(H - 2), 2):
        out[i, 0] = out[i, 0] + out[j, 0] * 0.5
    return np.sum(np.tanh(out))


def pairwise(x):
    s = 0.0
    for k, (a, b) in enumerate(zip(x, x[::-1])):
        s = s + a * b * k
    return s


@pytest.mark.parametrize("wrt", [0, 1])
def test_loops_over_index_products(wrt):
    img = np.random.default_rng(5).normal(size=(5, 6))
    check_unchanged(conv_valid, img, np.random.default_rng(6).normal(size=(3, 3)), wrt=wrt)
    check_unchanged(pairwise, V)


# ---- d. extend and insert ----------------------------------------------------------------------

def extended_in_order(x):
    L = [x]
    L.extend([L[-1] * 2, np.sin(L[0])])  # both items read L before either is appended
    L.extend((x ** 2,))
    return np.sum(np.stack(L) ** 2 * np.arange(4)[:, None])


def extended_in_a_loop(x):
    L = []
    for k in range(3):
        L.extend([x * k, np.cos(x + k)])
    return sum(np.sum(v ** 2) for v in L)


@pytest.mark.parametrize("f", [extended_in_order, extended_in_a_loop])
def test_extend_by_a_display(f):
    check_unchanged(f, V)


def extended_by_a_name(x):
    L = [x]
    M = [x * 2, x * 3]
    L.extend(M)
    return np.sum(np.stack(L))


def inserted_at_front(x):
    L = [x * 3]
    L.insert(0, np.cos(x))
    return np.sum(sum(L) * L[0])


def test_extend_and_insert_refusals_say_what_to_write():
    refused(extended_by_a_name, V, line_text="L.extend(M)",
            message="write 'L.append(item)' for each item, or 'L.extend([item1, item2])' instead")
    refused(inserted_at_front, V, line_text="L.insert(0, np.cos(x))",
            message="write 'L.append(v)' for each item and read 'L[::-1]' instead")


# ---- e. an item of a module-level list of functions ------------------------------------------------

def _square(x):
    return x ** 2


def _cube(x):
    return x ** 3


LAYERS = [_square, _cube, lambda x: x * 2]


def item_called(x):
    return np.sum(LAYERS[1](*(x,)))


def lambda_item_called(x):
    return np.sum(LAYERS[2](x))


def test_item_of_a_module_list_is_that_function_every_mode():
    check_unchanged(item_called, V)
    check_unchanged(lambda_item_called, V)
