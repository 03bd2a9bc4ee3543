"""Round 26A's false refusals of ordinary code, fixed at their mechanisms (each program is
checked against finite differences in every mode that applies; the controls stay refused):

1. Items under distinct constant string keys of a dict srcad made (``{"S": ..., "I": ...}``,
   ``dict(S=..., I=...)``, a copy of one) are told apart by the memory analysis: recording
   ``c["I"]`` (``hist.append(c["I"])``, ``peak = max(peak, c["I"])``) no longer blocks
   ``c["S"] -= inf``. A refusal naming a list says to copy the value put in it.
2. A parameter bound again to a copy (``X = X.copy()``, ``np.copy(X)``) and then updated is a
   local: ``k(X, X)`` runs. A parameter bound again on one path only still holds the argument
   on the other (the memory analysis took the binding's memory on both: srcad wrote into the
   caller's array).
3. A checkpointed loop may index an array drawn before it from NumPy's generators
   (``Z = rng.standard_normal(...)``), as docs/checkpointing.md advises.
4. Second order of a power spectrum computed in a loop: popping a saved complex value is
   structural (what was pushed), and a zero adjoint of one is a constant.
5. ``scipy.spatial.distance.squareform`` has rules (``squareform(pdist(pos))``).
"""
import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform

import srcad
from lang_checks import check_all_modes
from srcad.testing import check_grads, check_jvp

TH = np.array([0.5, 0.1])


def refused(call, message):
    with pytest.raises(srcad.SrcadError) as info:
        call()
    assert message in str(info.value), str(info.value)
    return str(info.value)


def forward_over_reverse(f, x, seed=0):
    """hvp and hessian·u of ``f`` against central differences of ``srcad.grad(f)``."""
    u = np.random.default_rng(seed).normal(size=x.shape)
    gradient = srcad.grad(f)
    numeric = (gradient(x + 1e-6 * u) - gradient(x - 1e-6 * u)) / 2e-6
    np.testing.assert_allclose(srcad.hvp(f)(x, u), numeric, rtol=1e-5, atol=1e-6)
    hessian = srcad.hessian(f)(x)
    np.testing.assert_allclose(hessian.reshape(x.size, x.size) @ u.ravel(), numeric.ravel(), rtol=1e-5, atol=1e-6)


# ---- 1. items of a dict under distinct string keys --------------------------------------
def sir_history(th):
    c = {"S": 0.99, "I": 0.01}
    hist = []
    for t in range(12):
        inf = th[0] * c["S"] * c["I"]
        c["S"] -= inf
        c["I"] = c["I"] + inf - th[1] * c["I"]
        hist.append(c["I"])
    return sum(hist)


def sir_peak(th):
    c = {"S": 0.99, "I": 0.01}
    peak = 0.0
    for t in range(12):
        inf = th[0] * c["S"] * c["I"]
        c["S"] -= inf
        c["I"] = c["I"] + inf - th[1] * c["I"]
        peak = max(peak, c["I"])
    return peak + c["S"]


def seir_arrays(th):
    c = dict(S=np.full(3, 0.99), E=np.zeros(3), I=np.full(3, 0.01))
    peak = np.zeros(3)
    hist = []
    for t in range(8):
        inf = th[0] * c["S"] * c["I"]
        c["S"] -= inf
        c["E"] += inf - 0.3 * c["E"]
        c["I"] = c["I"] + 0.3 * c["E"] - th[1] * c["I"]
        peak = np.maximum(peak, c["I"])
        hist.append(c["I"])
    return np.sum(peak) + np.sum(np.stack(hist) ** 2)


@pytest.mark.parametrize("f", [sir_history, sir_peak, seir_arrays])
def test_items_under_distinct_keys_are_apart(f):
    check_all_modes(f, (TH,))


def same_array_twice(th):
    a = th * 1.0
    c = {"S": a, "I": a}
    hist = [c["I"]]
    c["S"] -= th
    return np.sum(hist[0]) + np.sum(c["S"])


def stored_under_a_variable_key(th):
    c = {"S": th * 1.0, "I": th * 2.0}
    for k in ["S"]:
        c[k] = c["I"]
    hist = [c["I"]]
    c["S"] -= th
    return np.sum(hist[0]) + np.sum(c["S"])


def _move_infected(d):
    d["S"] = d["I"]


def stored_by_a_helper(th):
    c = {"S": th * 1.0, "I": th * 2.0}
    _move_infected(c)
    hist = [c["I"]]
    c["S"] -= th
    return np.sum(hist[0]) + np.sum(c["S"])


def stored_on_one_path(th):
    c = {"S": th * 1.0, "I": th * 2.0}
    if th[0] > 0:
        c = {"S": c["I"], "I": c["I"]}
    hist = [c["I"]]
    c["S"] -= th
    return np.sum(hist[0]) + np.sum(c["S"])


@pytest.mark.parametrize("f", [same_array_twice, stored_under_a_variable_key, stored_by_a_helper, stored_on_one_path])
def test_keys_that_may_hold_the_same_array_stay_refused(f):
    message = refused(lambda: srcad.grad(f)(TH), "'c['S'] -= ...' updates 'c['S']' in place, and 'hist'")
    # a list has no copy that helps: the value put in it must be one
    assert "'hist' holds a value that shares memory with 'c['S']'" in message
    assert "put a copy of that value in it" in message


def updated_through_update(th):
    c = {"S": th * 1.0, "I": th * 2.0}
    c.update({"S": c["I"]})
    hist = [c["I"]]
    c["S"] -= th
    return np.sum(hist[0]) + np.sum(c["S"])


def test_a_dict_changed_by_a_method_stays_refused():
    refused(lambda: srcad.grad(updated_through_update)(TH), "what the call .update() changes in 'c'")


# ---- 2. a parameter bound again to a copy --------------------------------------------------
def kernel_energy(X, Y):
    X = X.copy()
    X -= X.mean(axis=0)
    Y = Y - Y.mean(axis=0)
    return np.sum(np.exp(-0.5 * (X @ Y.T) ** 2))


def kernel_np_copy(X, Y):
    X = np.copy(X)
    X[0] = X[0] * 2.0
    X -= X.mean(axis=0)
    return np.sum(np.exp(-0.5 * (X @ Y.T) ** 2))


PTS = np.random.default_rng(0).standard_normal((4, 2))


@pytest.mark.parametrize("f", [kernel_energy, kernel_np_copy])
def test_parameter_bound_to_its_copy_is_local(f):
    X = PTS.copy()
    gram = srcad.grad(f, wrt=(0, 1))(X, X)  # the same array for both parameters
    renamed = srcad.grad(lambda A, B: f(A.copy(), B), wrt=(0, 1))(X, X.copy())
    np.testing.assert_allclose(gram[0], renamed[0])
    np.testing.assert_allclose(gram[1], renamed[1])
    check_all_modes(lambda Z: f(Z, Z), (X,))
    check_all_modes(f, (X, X + 0.1), wrt=1)
    assert np.array_equal(X, PTS)


def bound_to_a_view(X, Y):
    X = X[:]
    X -= X.mean(axis=0)
    return np.sum(np.exp(-0.5 * (X @ Y.T) ** 2))


def copied_on_one_path(X, Y):
    if X[0, 0] > 10:
        X = X.copy()
    X -= 0.5
    return np.sum(np.exp(-0.5 * (X @ Y.T) ** 2))


def copied_after_the_update(X, Y):
    for i in range(2):
        X[0] = X[0] * 2.0
        X = X.copy()
    return np.sum(np.exp(-0.5 * (X @ Y.T) ** 2))


@pytest.mark.parametrize("f", [bound_to_a_view, copied_on_one_path, copied_after_the_update])
def test_updates_reaching_the_argument_stay_refused(f):
    X = PTS.copy()
    refused(lambda: srcad.grad(f, wrt=(0, 1))(X, X), "updates its argument 'X' in place, and 'Y' shares memory")
    assert np.array_equal(X, PTS)


def viewed_after_a_copy_on_one_path(x):
    if x[0] > 10:
        x = x.copy()
    v = x
    v[0] = v[0] * 3.0
    return np.sum(v * v)


def test_a_copy_on_one_path_leaves_the_argument_on_the_other():
    x = np.array([1.0, 2.0, 3.0])
    refused(lambda: srcad.grad(viewed_after_a_copy_on_one_path)(x),
            "in-place update of 'v', which shares memory with the argument 'x'")
    assert np.array_equal(x, [1.0, 2.0, 3.0])  # (srcad wrote 3.0 into it)


# ---- 3. draws made before a checkpointed loop --------------------------------------------
GLOBAL_RNG = np.random.default_rng(3)


def monte_carlo(theta):
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((6, 5))
    S = np.full(5, 100.0)
    for t in srcad.checkpointed(range(6)):
        S = S * np.exp(theta[0] * 0.1 + theta[1] * 0.3 * Z[t])
    return np.mean(np.log(S) ** 2)


def monte_carlo_global(theta):
    Z = GLOBAL_RNG.normal(0.0, 1.0, size=(6, 5))
    S = np.full(5, 100.0)
    for t in srcad.checkpointed(range(6)):
        S = S * np.exp(theta[0] * 0.1 + theta[1] * 0.3 * Z[t])
    return np.mean(np.log(S) ** 2)


def monte_carlo_global_plain(theta):
    Z = GLOBAL_RNG.normal(0.0, 1.0, size=(6, 5))
    S = np.full(5, 100.0)
    for t in range(6):
        S = S * np.exp(theta[0] * 0.1 + theta[1] * 0.3 * Z[t])
    return np.mean(np.log(S) ** 2)


def test_drawn_array_indexed_in_a_checkpointed_loop():
    check_all_modes(monte_carlo, (np.array([0.05, 0.2]),))


def test_array_drawn_from_a_global_generator():
    th = np.array([0.05, 0.2])
    state = GLOBAL_RNG.bit_generator.state
    got = srcad.grad(monte_carlo_global)(th)
    GLOBAL_RNG.bit_generator.state = state  # (each call draws anew: the plain loop at the same state)
    np.testing.assert_allclose(got, srcad.grad(monte_carlo_global_plain)(th), rtol=1e-12)


class Draws:
    def standard_normal(self, shape):
        return [np.ones(shape[1])] * shape[0]


def drawn_by_yours(theta):
    rng = Draws()
    Z = rng.standard_normal((6, 5))
    S = np.full(5, 100.0)
    for t in srcad.checkpointed(range(6)):
        S = S * np.exp(theta[0] * 0.1 + theta[1] * 0.3 * Z[t])
    return np.mean(np.log(S) ** 2)


def chosen_items(theta):
    rng = np.random.default_rng(0)
    Z = rng.choice([np.ones(5), np.zeros(5)], 6)
    S = np.full(5, 100.0)
    for t in srcad.checkpointed(range(6)):
        S = S * np.exp(theta[0] * 0.1 + theta[1] * 0.3 * Z[t])
    return np.mean(np.log(S) ** 2)


@pytest.mark.parametrize("f", [drawn_by_yours, chosen_items])
def test_values_of_unknown_type_stay_refused_in_a_checkpointed_loop(f):
    refused(lambda: srcad.grad(f)(np.array([0.05, 0.2])), "indexing 'Z' may run code of yours")


def drawn_inside(theta):
    rng = np.random.default_rng(0)
    S = np.full(5, 100.0)
    for t in srcad.checkpointed(range(6)):
        S = S * np.exp(theta[0] * 0.1 + theta[1] * 0.3 * rng.standard_normal(5))
    return np.mean(np.log(S) ** 2)


def test_a_draw_inside_a_checkpointed_loop_stays_refused():
    refused(lambda: srcad.grad(drawn_inside)(np.array([0.05, 0.2])), "draws random numbers")


# ---- 4. second order of complex values saved in a loop -----------------------------------
def stft_energy(x):
    s = 0.0
    for t in range(3):
        s = s + np.sum(np.abs(np.fft.rfft(x[2 * t: 2 * t + 8])) ** 2)
    return s


def stft_preallocated(x):
    spec = np.zeros(3)
    for t in range(3):
        spec[t] = np.sum(np.abs(np.fft.rfft(x[2 * t: 2 * t + 8])) ** 2)
    return np.sum(spec * np.arange(1.0, 4.0))


def stft_frames(x):
    frames = []
    for t in range(3):
        frames.append(np.abs(np.fft.rfft(x[2 * t: 2 * t + 8])) ** 2)
    return np.sum(np.log1p(np.stack(frames)))


def stft_popped(x):
    frames = []
    for t in range(3):
        frames.append(np.fft.rfft(x[2 * t: 2 * t + 8]))
    s = 0.0
    while frames:
        z = frames.pop()
        s = s + np.sum(np.abs(z) ** 2)
    return s


SIGNAL = np.random.default_rng(0).standard_normal(12)


@pytest.mark.parametrize("f", [stft_energy, stft_preallocated, stft_frames, stft_popped])
def test_power_spectrum_in_a_loop_second_order(f):
    check_grads(f, (SIGNAL,), modes=("rev",))
    check_jvp(f, (SIGNAL,))
    forward_over_reverse(f, SIGNAL)


def popped_into_exp(x):
    frames = []
    for t in range(3):
        frames.append(np.fft.rfft(x[2 * t: 2 * t + 8]))
    s = 0.0
    while frames:
        z = frames.pop()
        s = s + np.sum(np.exp(z)).real
    return s


def complex_product_in_a_loop(x):
    s = 0.0
    for t in range(3):
        z = np.fft.rfft(x[2 * t: 2 * t + 8])
        s = s + np.real(np.sum(z * z))
    return s


@pytest.mark.parametrize("f", [popped_into_exp, complex_product_in_a_loop])
def test_complex_rules_not_right_for_complex_stay_refused(f):
    for run in (lambda: srcad.grad(f)(SIGNAL), lambda: srcad.hvp(f)(SIGNAL, SIGNAL)):
        refused(run, "may have a complex operand or result")


# ---- 5. squareform -------------------------------------------------------------------------
def morse(pos, De=1.0, a=1.5, re=1.1):
    D = squareform(pdist(pos))
    mask = ~np.eye(len(pos), dtype=bool)
    V = De * (1 - np.exp(-a * (D - re))) ** 2
    return 0.5 * np.sum(V[mask])


def condensed_again(pos):
    D = squareform(pdist(pos)) ** 2
    return np.sum(np.sin(squareform(D * pos[:, :1], checks=False)) * np.arange(6.0))


@pytest.mark.parametrize("f", [morse, condensed_again])
def test_squareform(f):
    pos = np.random.default_rng(1).standard_normal((4, 3))
    check_all_modes(f, (pos,))
    forward_over_reverse(f, pos)


def test_squareform_of_a_vector_forced():
    check_all_modes(lambda w: np.sum(squareform(w, force="tomatrix") ** 3), (np.arange(1.0, 7.0),))
