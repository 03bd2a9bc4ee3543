"""Copies of views. Forward mode: a tangent that is (a view of) another tangent where the primal
made new memory (``old = y[0].copy()``: ``old_dot = y_dot[0]``) is never changed by an in-place
update of the other (probe 10B found the tangents, hvp and hessian wrong). Every mode: a copy of
what a view-returning call gives is new memory. Checked against finite differences."""
import numpy as np
import pytest

from loop_checks import all_modes

W = np.arange(6.0).reshape(3, 2)


def swap_rows(M):
    A = M * 1.0
    A[1], A[2] = A[2].copy(), A[1].copy()
    return np.sum(A * W)


def keep_old(y0):
    y = y0 * 1.0
    old = y[0].copy()  # the recipe docs/limitations.md gives for keeping an item
    y[0] = 2.0 * y[1]
    return np.sum(y ** 2) + np.sum(old ** 3)


def relax(y0, shift):
    y = y0 * 1.0
    prev = y[0] + shift  # new memory in the primal; its tangent is y's row
    y[0] = 0.5 * (y[0] + y[1])
    return np.sum(y ** 2) + np.sum(prev ** 2)


def record(x0, drift):
    x = x0 * 1.0
    trajectory = []
    for _ in range(3):
        trajectory.append(x[:2] + drift)
        x[0] = x[0] + 0.1 * x[1]
        x[1] = x[1] - 0.1 * np.sin(x[0])
    return np.sum(np.stack(trajectory) ** 2)


def first_row(y):
    return y[0].astype(float)


def through_a_helper(y0):
    y = y0 * 1.0
    old = first_row(y)  # the helper returns a copy of its tangent's row (finish_tangent)
    y[0] = np.cos(y[1])
    return np.sum(old * y[0]) + np.sum(y ** 2)


def chained_views(y0):
    y = y0 * 1.0
    row = y[1]
    part = row[1:]  # a view of a view
    kept = part.flatten()
    for k in range(2):
        y[1] = y[1] * 1.5 + np.sin(y[0])
    return np.sum(kept ** 2 * y[1, 1:]) + np.sum(y)


rng = np.random.default_rng(5)


@pytest.mark.parametrize("fn, args", [
    (swap_rows, (rng.standard_normal((3, 2)),)),
    (keep_old, (rng.standard_normal((2, 3)),)),
    (relax, (rng.standard_normal((2, 3)), np.array([0.1, 0.2, 0.3]))),
    (record, (rng.standard_normal(3), np.array([0.3, -0.2]))),
    (through_a_helper, (rng.standard_normal((2, 3)),)),
    (chained_views, (rng.standard_normal((2, 3)),)),
], ids=lambda a: getattr(a, "__name__", ""))
def test_tangents_of_copies_survive_in_place_updates(fn, args):
    all_modes(fn, args, wrt=0)


def copy_of_a_view_call(y0):
    y = y0 * 1.0
    old = np.asarray(y[0]).copy()
    mid = y[1].reshape(1, 3).copy()
    flat = np.ravel(y[:1]).copy()
    y[0] = 2.0 * y[1]
    y[1] = np.sin(y[0])
    return np.sum(y) + 10.0 * np.sum(old * flat) + np.sum(mid ** 2)


def test_a_copy_of_what_a_view_returning_call_gives_is_new_memory():
    """``np.asarray(y[0]).copy()`` and ``y[0].reshape(1, 3).copy()`` were refused as sharing
    memory with ``y``, the message asking for the ``.copy()`` already there (probe 10B): the
    result of a view-returning call on an array is an array, whose copy holds nothing."""
    all_modes(copy_of_a_view_call, (np.random.default_rng(3).standard_normal((2, 3)),))


def stays_shared(y0):
    y = y0 * 1.0
    view = np.asarray(y[0]).reshape(3)
    y[0] = 2.0 * y[1]
    return np.sum(view)


def test_a_view_returning_call_still_shares_memory():
    import srcad

    with pytest.raises(srcad.SrcadSyntaxError, match="shares memory"):
        srcad.grad(stays_shared)(np.ones((2, 3)))


def list_copy_then_store(x):
    L = [x * 1.0, x * 2.0]
    M = L.copy()
    M[0] = x * 5.0
    return np.sum(np.sin(L[0] + M[0]))


def dict_copy_then_store(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    e = d.copy()
    e["a"] = x * 3.0
    return np.sum((d["a"] + e["a"]) ** 2)


def list_copy_then_pop_and_append(x):
    L = [x * 1.0, x * 2.0]
    M = L.copy()
    z = M.pop()
    M.append(x * 7.0)
    return np.sum(np.cos(L[1] + z + M[1]))


def state_kept_as_a_copy(x):
    state = {"h": x * 1.0}
    prev = state.copy()
    for _ in range(2):
        prev = state.copy()
        state["h"] = np.tanh(state["h"] * 1.5 + prev["h"])
    return np.sum(state["h"] + prev["h"])


@pytest.mark.parametrize("fn", [list_copy_then_store, dict_copy_then_store, list_copy_then_pop_and_append,
                                state_kept_as_a_copy], ids=lambda f: f.__name__)
def test_a_container_copy_has_a_tangent_of_its_own(fn):
    """Forward mode: ``M = L.copy()`` gave M the list of L's tangents itself, so storing into,
    popping from or appending to M changed L's tangent (probe 11A: jvp 6t where it is 4t,
    hessians wrong)."""
    # (the second order of the dict state kept as a copy is still refused: the alias check of the
    # code differentiated again reads an item's copy as sharing the dict's items)
    all_modes(fn, (np.array([0.3, -0.7, 1.2]),), second_order=fn is not state_kept_as_a_copy)


def views_kept_in_a_list(x):
    s = x * 1.0
    L = []
    for i in range(3):
        L.append(s[1:3])
        s[i] = s[i] * 2.0
    return np.sum(L[0] * L[1] * L[2])


def test_a_view_kept_in_a_list_is_refused_with_advice_that_works():
    """The advice was 'write L = ([]).copy()' (a copy of the list shares its items: probe 11B)."""
    import srcad

    with pytest.raises(srcad.SrcadSyntaxError, match=r"'L' holds a value that shares memory with 's'.*put a copy"):
        srcad.grad(views_kept_in_a_list)(np.array([0.1, 0.2, 0.3, 0.4]))


def recurrence(x, y):
    R = np.zeros((x.shape[0] + 1, y.shape[0] + 1))
    for i in range(1, x.shape[0] + 1):
        for j in range(1, y.shape[0] + 1):
            up, left, diag = R[i - 1, j], R[i, j - 1], R[i - 1, j - 1]  # items: numbers of their own
            R[i, j] = (x[i - 1] - y[j - 1]) ** 2 + np.sin(up) * 0.3 + left * diag * 0.2
    return R[-1, -1]


def rows_of_a_recurrence(x):
    R = np.zeros((4, x.shape[0]))
    R[0] = x
    for i in range(1, 4):
        prev = R[i - 1]  # a row: a view, changed by the next pass's store
        last = R[i - 1, -1]
        R[i] = np.sin(prev) * 1.5 + last
    return np.sum(R * R)


@pytest.mark.parametrize("fn, args", [
    (recurrence, (np.array([0.3, -1.2, 0.8]), np.array([0.5, 0.1]))),
    (rows_of_a_recurrence, (np.array([0.3, -1.2, 0.8]),)),
], ids=lambda a: getattr(a, "__name__", ""))
def test_items_and_views_of_arrays_updated_later(fn, args):
    all_modes(fn, args, wrt=0 if len(args) == 1 else (0, 1))

