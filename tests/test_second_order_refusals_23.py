"""Second derivatives of programs whose first-order derivative srcad computes: srcad must
take its own generated adjoint code (round 23 probes). Each is checked against finite
differences of srcad's gradient and of the function itself, in every second-order mode."""
import numpy as np
import pytest

import srcad
from srcad import SrcadSyntaxError
from srcad.testing import check_grads


def _fd_hessian_of_function(f, x, eps=1e-4):
    """Central differences of central differences of ``f`` (small inputs only)."""
    n = x.size
    h = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            ei = np.zeros(n)
            ej = np.zeros(n)
            ei[i] = ej[j] = eps
            ei, ej = ei.reshape(x.shape), ej.reshape(x.shape)
            h[i, j] = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)) / (4 * eps * eps)
    return h


def _assert_second_order(f, x, seed=0):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(x.shape)
    hess = np.asarray(srcad.hessian(f)(x)).reshape(x.size, x.size)
    grad = srcad.grad(f)
    eps = 1e-6
    fd_of_grad = np.array([((grad(x + eps * e.reshape(x.shape)) - grad(x - eps * e.reshape(x.shape))) / (2 * eps)).ravel()
                           for e in np.eye(x.size)]).T
    np.testing.assert_allclose(hess, fd_of_grad, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hess, _fd_hessian_of_function(f, x), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(srcad.hvp(f)(x, v).ravel(), hess @ v.ravel(), rtol=1e-8, atol=1e-10)
    along_v = srcad.grad(lambda y: np.sum(srcad.grad(f)(y) * v))(x)
    np.testing.assert_allclose(along_v.ravel(), hess @ v.ravel(), rtol=1e-8, atol=1e-10)
    check_grads(lambda y: np.sum(srcad.grad(f)(y) * v), (x,))


# --- a try body binding a name on some of its paths (bug_01) ---

def robust_loss(w, kind="huber"):
    r = w - 0.1
    try:
        if kind == "huber":
            a = np.abs(r)  # a local bound in one branch only: generated code binds '_try1_a' before the try
            out = np.sum(np.where(a < 1.0, 0.5 * r ** 2, a - 0.5))
        else:
            out = np.sum(r ** 2)
    except FloatingPointError:
        out = 0.0
    return out


def cube_on_one_branch(w):
    try:
        if w[0] > 0:
            a = w * 1.5
            return np.sum(a ** 3)  # the return binds '_retval1' on this path only
        out = np.sum(w ** 2)
    except ValueError:
        out = 0.0
    return out


def bound_before_and_on_one_branch(w):
    a = w * 2
    try:
        if w[0] > 0:
            a = np.sin(w)
    except ValueError:
        a = w
    return np.sum(a ** 3)


@pytest.mark.parametrize("f", [robust_loss, cube_on_one_branch, bound_before_and_on_one_branch])
@pytest.mark.parametrize("w", [np.array([0.3, -2.0, 0.5]), np.array([-0.3, -2.0, 0.5])])
def test_try_body_binding_a_name_on_some_paths(f, w):
    _assert_second_order(f, w)


def test_try_body_name_unbound_before_still_refused():
    def f(x):
        try:
            if x[0] > 0:
                y = x * 2.0
        except ValueError:
            y = x
        if x[1] > 0:
            y = x
        return np.sum(y)

    with pytest.raises(SrcadSyntaxError, match="'y' is bound on some paths of this try body only") as e:
        srcad.grad(f)(np.array([1.0, 2.0]))
    assert e.value.lineno == f.__code__.co_firstlineno + 1


# --- a store whose right-hand side is a view of the array stored into (bug_02) ---

W3 = np.arange(9.0).reshape(3, 3) / 4


def symmetrised(x):
    M = np.outer(x, np.arange(3.0))
    M[:] = M.T  # the adjoint reads the view '_t2 = M.T' again, for its shape only
    return np.sum(M ** 2 * W3)


def symmetrised_twice(x):
    M = np.outer(x, np.arange(3.0)) + np.eye(3)
    M[:] = 0.5 * (M + M.T)
    M[:] = M.T
    return np.sum(np.tanh(M) * W3)


@pytest.mark.parametrize("f", [symmetrised, symmetrised_twice])
def test_store_of_a_view_of_the_stored_array(f):
    _assert_second_order(f, np.array([0.5, -1.0, 2.0]))


def test_view_read_for_its_values_after_the_store_still_refused():
    def f(x):
        M = np.outer(x, np.arange(3.0))
        t = M.T
        M[:] = t
        return np.sum(t * M)

    with pytest.raises(SrcadSyntaxError, match="in-place update of 'M', which shares memory with 't'") as e:
        srcad.grad(f)(np.array([0.5, -1.0, 2.0]))
    assert e.value.lineno == f.__code__.co_firstlineno + 3


# --- an update through an index array inside a loop (round 21A bug_06, Kalman) ---

def kalman_like(x):
    n = 3
    P = np.eye(n) * 0.5
    s = 0.0
    for t in range(3):
        P = P * x[0] + np.outer(x, x)
        P[np.diag_indices(n)] += x[1] ** 2
        s = s + np.sum(P ** 2)
    return s


def row_swaps(x):
    A = np.outer(x, x + 1.0)
    for k in range(2):
        A[[k, 2]] = A[[2, k]]
    return np.sum(A ** 3)


def masked_scaling(x):
    y = x * 1.0
    for k in range(3):
        y = y * 1.5 - 0.3
        y[y > 0] *= 0.5
    return np.sum(np.sin(y) * y)


def sorted_update(x):
    y = x ** 2
    for k in range(2):
        idx = np.argsort(y)
        y[idx] = y[idx] * np.arange(1.0, 4.0) + x
    return np.sum(y ** 2)


def pivoting(x):
    A = np.outer(x, x + 1.0) + np.diag(x)
    for k in range(2):
        p = k + int(np.argmax(np.abs(A[k:, k])))
        A[[k, p]] = A[[p, k]]
        A[k + 1:] = A[k + 1:] - np.outer(A[k + 1:, k] / A[k, k], A[k])
    return np.sum(np.diag(A) ** 2)


@pytest.mark.parametrize("f", [kalman_like, row_swaps, masked_scaling, sorted_update, pivoting])
def test_index_array_update_in_a_loop(f):
    _assert_second_order(f, np.array([0.5, -1.0, 2.0]))


def test_view_index_bound_on_some_paths_still_a_view():
    def f(x):
        A = np.outer(x, x)
        idx = [0, 1]
        if x[0] > 0:
            idx = slice(0, 2)  # on this path A[idx] is a view of A
        r = A[idx]
        A[idx] = 0.0
        return np.sum(r * A)

    with pytest.raises(SrcadSyntaxError, match="shares memory with 'r'"):
        srcad.grad(f)(np.array([0.5, -1.0, 2.0]))


# --- a checkpointed loop whose state is a dict or list, storing into a trajectory (bug_04) ---

def dict_state_trajectory(u):
    traj = np.zeros((4, u.size))
    state = {"u": u}
    for i in srcad.checkpointed(range(4)):
        state["u"] = np.sin(state["u"])
        traj[i] = state["u"]  # the recomputation pops 'traj' from srcad's stack of saved arrays
    return np.sum(traj ** 2)


def two_field_state(u):
    traj = np.zeros((5, u.size))
    state = {"u": u, "v": u * 0.5}
    for i in srcad.checkpointed(range(5), segment=2):
        state["v"] = state["v"] - 0.1 * state["u"]
        state["u"] = state["u"] + 0.1 * np.tanh(state["v"])
        traj[i] = state["u"] * state["v"]
    return np.sum(traj ** 2)


def list_state_trajectory(u):
    traj = np.zeros((4, u.size))
    st = [u, u * 2]
    for i in srcad.checkpointed(range(4)):
        st[0] = np.sin(st[1]) * st[0]
        traj[i] = st[0]
    return np.sum(traj ** 2)


@pytest.mark.parametrize("f", [dict_state_trajectory, two_field_state, list_state_trajectory])
def test_checkpointed_container_state_with_trajectory(f):
    _assert_second_order(f, np.array([0.3, -0.8, 1.1]))


def _array_popped_and_updated(x):
    L = []
    a = x * 2
    L.append(a)
    b = L.pop()
    b[0] = 5.0  # changes 'a' too
    return np.sum(a * b)


def _dict_popped_and_updated(x):
    L = []
    a = {"a": x * 1.0}
    L.append(a)
    b = L.pop()
    b["a"] = x * 2  # changes 'a' too
    return np.sum(a["a"])


@pytest.mark.parametrize("f", [_array_popped_and_updated, _dict_popped_and_updated])
def test_value_popped_from_a_list_still_shares_with_what_was_pushed(f):
    with pytest.raises(SrcadSyntaxError, match="in-place update of 'b', which shares memory with 'a'") as e:
        srcad.grad(f)(np.array([0.3, -0.8, 1.1]))
    assert e.value.lineno == f.__code__.co_firstlineno + 5
