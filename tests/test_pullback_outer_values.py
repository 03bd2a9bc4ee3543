"""A pullback uses the values of its forward pass, the user's globals and closure variables
included: ``y, pb = srcad.vjp(f, x)``, then a global rebound or an array changed in place,
then ``pb(v)`` gives the gradient at the forward pass's values (it gave a mix of old and new
values: ``2 · 1.5 · 7 · x`` for a scale changed from 1.5 to 7). Found by an adversarial probe."""
import numpy as np
import pytest

import srcad

SCALE = 1.5
W = np.array([1.0, 2.0, 3.0])
X = np.array([0.3, -0.5, 0.8])


def scaled(x):
    return np.sum((SCALE * x) ** 2)


def weighted(x):
    return np.sum(np.sin(W * x))


def loop_scaled(x):
    t = 0.0
    for i in range(x.shape[0]):
        t = t + SCALE * x[i] ** 2
    return t


def closure_over(c):
    def h(x):
        return np.sum(np.sin(c * x))
    return h


@pytest.fixture
def restore_globals():
    global SCALE
    saved_scale, saved_w = SCALE, W.copy()
    yield
    SCALE = saved_scale
    W[:] = saved_w


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_rebound_global_scalar(restore_globals, backend):
    global SCALE
    if backend == "numba":
        pytest.importorskip("numba")
    f = loop_scaled if backend == "numba" else scaled
    y, pullback = srcad.vjp(f, X, backend=backend)
    SCALE = 7.0
    np.testing.assert_allclose(pullback(1.0), 2 * 1.5 ** (1 if f is loop_scaled else 2) * X)
    # a new call sees the new value, compiled code included
    np.testing.assert_allclose(srcad.grad(f, backend=backend)(X), 2 * 7.0 ** (1 if f is loop_scaled else 2) * X)


def test_global_array_changed_in_place(restore_globals):
    y, pullback = srcad.vjp(weighted, X)
    old = W.copy()
    W[:] = 5.0
    np.testing.assert_allclose(pullback(1.0), old * np.cos(old * X))
    np.testing.assert_allclose(pullback.batched(np.ones((2,))), np.stack([old * np.cos(old * X)] * 2))
    np.testing.assert_allclose(srcad.grad(weighted)(X), W * np.cos(W * X))


def test_closure_array_changed_in_place():
    c = np.array([1.0, 2.0, 3.0])
    h = closure_over(c)
    y, pullback = srcad.vjp(h, X)
    c[:] = 5.0
    old = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(pullback(1.0), old * np.cos(old * X))


W0 = np.array([1.0, 2.0, 3.0])
P0 = {"w": np.array([1.0, 2.0, 3.0])}


def with_default(x, w=W0):
    return np.sum(w * x ** 2)


def helper_with_default(x, w=W0):
    return w * x ** 2


def calls_helper_with_default(x):
    return np.sum(helper_with_default(x)) + np.sum(x)


def with_dict_default(x, p=P0):
    return np.sum(p["w"] * x ** 2)


@pytest.mark.parametrize("f", [with_default, calls_helper_with_default, with_dict_default])
def test_default_arrays_changed_in_place(f):
    """A default array (``w=W0``, a helper's, a dict default) changed in place between
    ``vjp`` and the pullback: the pullback read the new values (found by an adversarial probe)."""
    old = W0.copy()
    y, pullback = srcad.vjp(f, X)
    try:
        W0[:] = 10.0
        P0["w"][:] = 10.0
        extra = 1.0 if f is calls_helper_with_default else 0.0
        np.testing.assert_allclose(pullback(1.0), 2 * old * X + extra)
    finally:
        W0[:] = old
        P0["w"][:] = old


CFG = __import__("types").SimpleNamespace(A=np.array([1.0, 2.0, 3.0]), scale=1.5)
PARAMS = [np.array([1.0, -1.0, 0.5])]


def reads_attributes_and_items(x):
    return np.sum(np.exp(x * CFG.A) * CFG.scale) + np.sum(np.exp(x * PARAMS[0]))


def test_attributes_and_list_items_changed_in_place():
    """``CFG.A *= 2`` (an attribute of a global namespace) and ``PARAMS[0] *= 4`` (an item of
    a global list) after ``vjp``: the pullback mixed the forward pass's ``exp`` with the new
    values (found by an adversarial probe)."""
    A, P = CFG.A.copy(), PARAMS[0].copy()
    y, pullback = srcad.vjp(reads_attributes_and_items, X)
    try:
        CFG.A *= 2.0
        PARAMS[0] *= 4.0
        np.testing.assert_allclose(pullback(1.0), A * np.exp(X * A) * 1.5 + P * np.exp(X * P))
    finally:
        CFG.A[:] = A
        PARAMS[0][:] = P
