"""NumPy calls that change an array in place (probe 23A bug_09, bug_10; 23B bug_03):

- ``np.fill_diagonal(a, v)`` and ``np.copyto(a, v)`` on a named array are element stores
  (``runtime_stores``), differentiated in every mode; aliased arrays stay refused;
- the calls srcad does not differentiate (``np.put``, ``a.sort()``, ``rng.shuffle``...) are
  refused with the assignment to write instead, which works;
- ``rm = self.running_mean; rm *= m`` is refused naming ``self.running_mean``; a global
  object's advice copies the array, not the object;
- forward mode compiles a function of yours knowing which arguments are arrays, so its
  ``y = M.copy()`` is new memory as in reverse mode.
"""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

from lang_checks import check_all_modes

POS = np.array([[0.1, 0.2], [0.5, -0.3], [1.0, 0.4]])
A3 = np.arange(9.0).reshape(3, 3) / 10 + 0.05
G = np.ones((3, 3))


def check_hessian(f, x):
    hessian = srcad.hessian(f)(x).reshape(x.size, x.size)
    gradient, eps = srcad.grad(f), 1e-6
    columns = [((gradient(x + eps * u.reshape(x.shape)) - gradient(x - eps * u.reshape(x.shape))) / (2 * eps)).ravel()
               for u in np.eye(x.size)]
    np.testing.assert_allclose(hessian, np.array(columns).T, rtol=1e-5, atol=1e-6)


def every_mode(f, x):
    check_all_modes(f, (x,))
    check_hessian(f, x)
    np.testing.assert_allclose(srcad.jacobian(f, mode="fwd")(x), srcad.jacobian(f)(x), rtol=1e-10, atol=1e-12)


# ---- np.fill_diagonal and np.copyto are element stores -----------------------------------------

def pair_energy(pos):
    r2 = pos @ pos.T + 0.1
    np.fill_diagonal(r2, 0.0)
    return np.sum(r2 ** 2)


def pair_energy_copied(pos):  # the old refusal's advice
    r2 = pos @ pos.T + 0.1
    r2 = r2.copy()
    np.fill_diagonal(r2, 0.0)
    return np.sum(r2 ** 2)


def coulomb(pos):  # the diagonal masked twice, once after a value whose rule may keep it
    d = pos[:, None, :] - pos[None, :, :]
    r2 = np.sum(d ** 2, -1)
    np.fill_diagonal(r2, 1.0)
    inv = 1.0 / np.sqrt(r2)
    np.fill_diagonal(inv, 0.0)
    return 0.5 * np.sum(inv)


def diagonal_carrying_a_derivative(pos):
    K = np.exp(-(pos @ pos.T))
    np.fill_diagonal(K, pos[0, 0] ** 2)
    return np.sum(K * K)


def diagonal_one_per_position(pos):
    K = np.tanh(pos @ pos.T)
    np.fill_diagonal(K, pos[:, 0])
    return np.sum(K ** 3)


def tall_wrapped_diagonal(pos):
    K = np.concatenate([pos, pos ** 2, pos * 3], 0)  # (9, 2): wrap=True starts again below the square
    np.fill_diagonal(K, -1.0, wrap=True)
    return np.sum(np.sin(K))


def copied_into_buffer(pos):
    buf = np.zeros_like(pos)
    np.copyto(buf, np.tanh(pos))
    buf *= pos
    return np.sum(buf ** 2)


def copied_broadcast(pos):
    buf = np.exp(pos)
    np.copyto(buf, pos[0])
    return np.sum(buf * pos)


@pytest.mark.parametrize("f", [pair_energy, pair_energy_copied, coulomb, diagonal_carrying_a_derivative,
                               diagonal_one_per_position, tall_wrapped_diagonal, copied_into_buffer,
                               copied_broadcast])
def test_fill_diagonal_and_copyto_in_every_mode(f):
    every_mode(f, POS.copy())


def test_fill_diagonal_of_a_value_neither_one_nor_one_per_position_is_refused_when_it_runs():
    def f(x):
        K = x * 2
        np.fill_diagonal(K, [1.0, 2.0])  # NumPy repeats it: [1, 2, 1]
        return np.sum(K)

    with pytest.raises(srcad.UnsupportedCaseError, match=r"np\.resize\(val, 3\)"):
        srcad.grad(f)(A3)


def test_copyto_keeps_numpys_casting_error():
    def f(x):
        k = np.zeros(3, dtype=int)
        np.copyto(k, x[0])
        return np.sum(x) * k[0]

    with pytest.raises(TypeError, match="same_kind"):
        srcad.grad(f)(A3)


def _other_name(x):
    r = x
    np.fill_diagonal(r, 0.0)
    return np.sum(r ** 2)


def _view_of_argument(x):
    v = x[:2, :2]
    np.fill_diagonal(v, 0.0)
    return np.sum(x ** 2)


def _global(x):
    np.fill_diagonal(G, 0.0)
    return np.sum(x * G)


def _view_of_local_read_later(x):
    K = np.exp(x)
    V = K[:2, :2]
    np.fill_diagonal(V, 0.0)
    return np.sum(K * x)


def _copyto_view_of_argument(x):
    r = x.T
    np.copyto(r, 1.0)
    return np.sum(x)


@pytest.mark.parametrize("f, message", [
    (_other_name, r"'r', which shares memory with the argument 'x'.*\('r = x\.copy\(\)'\)"),
    (_view_of_argument, r"'v', which shares memory with the argument 'x'.*\('v = x\[:2, :2\]\.copy\(\)'\)"),
    (_global, r"'G', which shares memory with the global 'G'.*'G_copy = G\.copy\(\)', then update that"),
    (_view_of_local_read_later, r"'V', which shares memory with 'K'"),
    (_copyto_view_of_argument, r"'r', which shares memory with the argument 'x'.*\('r = x\.T\.copy\(\)'\)"),
])
def test_an_aliased_array_stays_refused(f, message):
    for differentiate in (srcad.grad(f), lambda x: srcad.jvp(f, (x,), (np.ones_like(x),))):
        with pytest.raises(srcad.SrcadSyntaxError, match=message):
            differentiate(A3.copy())


# ---- the calls srcad does not differentiate: the advice written out works ----------------------

RNG = np.random.default_rng(0)


def _put(x):
    r = x @ x.T + 0.1
    np.put(r, [0, 4], 0.0)
    return np.sum(r ** 2)


def _place(x):
    r = x @ x.T + 0.1
    np.place(r, r > 0.5, 0.0)
    return np.sum(r ** 2)


def _putmask(x):
    r = x @ x.T + 0.1
    np.putmask(r, r > 0.5, 0.0)
    return np.sum(r ** 2)


def _sort(x):
    r = x @ x.T + 0.1
    r.sort()
    return np.sum(r ** 2 * np.arange(3))


def _shuffle(x):
    r = x @ x.T + 0.1
    RNG.shuffle(r)
    return np.sum(r ** 2)


def _copyto_where(x):
    b = np.exp(x)
    np.copyto(b, x, where=x > 0.3)
    return np.sum(b)


def _sort_a_copy(x):  # new memory, carrying a derivative: the reverse sweep's refusal
    r = (x @ x.T).copy()
    r.sort()
    return np.sum(r)


@pytest.mark.parametrize("f, written", [
    (_put, "r[np.unravel_index(ind, r.shape)] = v"), (_place, "r[mask] = vals"),
    (_putmask, "r = np.where(mask, values, r)"), (_sort, "r = np.sort(r)"),
    (_shuffle, "r = r[RNG.permutation(len(r))]"), (_copyto_where, "b = np.where(where, src, b)"),
    (_sort_a_copy, "r = np.sort(r)")])
def test_a_call_srcad_does_not_differentiate_says_what_to_write(f, written):
    with pytest.raises(srcad.SrcadSyntaxError) as refused:
        srcad.grad(f)(A3)
    message = str(refused.value).splitlines()[0]
    assert f"write '{written}' instead" in message
    assert "earlier statement read" not in message and ".copy()' first" not in message


def put_written(x):
    r = x @ x.T + 0.1
    r[np.unravel_index([0, 4], r.shape)] = 0.0
    return np.sum(r ** 2)


def place_written(x):
    r = x @ x.T + 0.1
    r[r > 0.5] = 0.0
    return np.sum(r ** 2)


def putmask_written(x):
    r = x @ x.T + 0.1
    r = np.where(r > 0.5, 0.0, r)
    return np.sum(r ** 2)


def sort_written(x):
    r = x @ x.T + 0.1
    r = np.sort(r)
    return np.sum(r ** 2 * np.arange(3))


def shuffle_written(x):
    r = x @ x.T + 0.1
    r = r[np.random.default_rng(0).permutation(len(r))]
    return np.sum(r ** 2 * np.arange(3)[:, None])


def fill_diagonal_written(x):
    r = x @ x.T + 0.1
    r = np.where(np.eye(*r.shape, dtype=bool), 0.0, r)
    return np.sum(r ** 2)


@pytest.mark.parametrize("f", [put_written, place_written, putmask_written, sort_written, shuffle_written,
                               fill_diagonal_written])
def test_the_advised_assignment_is_differentiated(f):
    check_all_modes(f, (A3,))


# ---- an update through a part of an object names that part --------------------------------------

class BatchNorm:
    def __init__(self, n):
        self.running_mean = np.zeros(n)
        self.momentum = 0.9

    def forward(self, x):
        mu = x.mean(0)
        rm = self.running_mean
        rm *= self.momentum
        rm += (1 - self.momentum) * mu
        return (x - mu) + rm


def test_an_update_through_an_attribute_names_the_attribute_not_the_operand():
    def loss(x, layer):
        return np.sum(layer.forward(x) ** 2)

    with pytest.raises(srcad.SrcadSyntaxError) as refused:
        srcad.grad(loss)(A3[:, :2], BatchNorm(2))
    message = str(refused.value).splitlines()[0]
    assert "with it 'self.running_mean', which 'rm' is" in message
    assert "'self.momentum[...]" not in message and "write 'rm = rm * ...'" in message


BN = BatchNorm(2)


def test_a_global_objects_array_is_copied_not_the_object():
    def loss(x):
        rm = BN.running_mean
        rm *= BN.momentum
        return np.sum((x - rm) ** 2)

    with pytest.raises(srcad.SrcadSyntaxError, match=r"copy first \('rm = BN\.running_mean\.copy\(\)'\)"):
        srcad.grad(loss)(A3[:, :2])

    def as_advised(x):  # (checked to be an array when the code runs: passes.array_receivers)
        rm = BN.running_mean.copy()
        rm *= BN.momentum
        return np.sum((x - rm) ** 2)

    check_grads(as_advised, (A3[:, :2],))


def test_an_update_through_a_dict_item_names_the_item():
    def loss(x, state):
        m = state["m"]
        m *= 0.9
        return np.sum(x * state["m"])

    with pytest.raises(srcad.SrcadSyntaxError, match=r"with it 'state\['m'\]', which 'm' is .*'state', which holds it"):
        srcad.grad(loss)(A3[:, :2], {"m": np.ones(2)})


# ---- forward mode: a function of yours knows its array arguments --------------------------------

def advance(M):
    y = M.copy()
    y[1] += M[2]
    y[0] *= M[1]
    return y


def through_helper(M):
    return np.sum(advance(M) ** 2)


def twice(M):
    return advance(M) * 2


def through_two_helpers(M):
    return np.sum(twice(M) ** 2)


def helper_of_a_local(M):
    z = np.sin(M)
    return np.sum(advance(z) ** 2)


@pytest.mark.parametrize("f", [through_helper, through_two_helpers, helper_of_a_local])
def test_forward_mode_helper_copying_its_array_argument(f):
    check_jvp(f, (A3,))
    every_mode(f, A3)


def test_forward_mode_helper_given_a_list_still_refuses_the_shared_item():
    def advance_rows(M):
        y = M.copy()  # of a list: its rows are M's
        y[1] += M[2]
        y[0] *= M[1]
        return y

    def f(x):
        rows = [x[0] * 1.0, x[1] * 1.0, x[2] * 1.0]
        return np.sum(advance_rows(rows)[0])

    with pytest.raises(srcad.SrcadError):
        srcad.jvp(f, (A3,), (np.ones_like(A3),))
