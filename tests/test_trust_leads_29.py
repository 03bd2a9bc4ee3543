"""What compiled code depends on and can change in place after it is compiled: a global
``functools.partial``'s keywords (and a frozen scipy.stats distribution's ``kwds``), whose
names the code passes on one by one, and the closure cell a pass-through ``functools.wraps``
wrapper calls. A change is seen (the code is made again) or refused, never differentiated
stale. Every gradient against finite differences."""
import functools

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes
from srcad.testing import check_grads, check_jvp

X = np.array([[0.5, -0.3, 1.2], [0.7, 0.2, -0.9]])


# ---- a global functools.partial of a NumPy function ---------------------------------------

TOTAL = functools.partial(np.sum, axis=0)
CLIP = functools.partial(np.clip, a_min=-0.4, a_max=None)
POWER = functools.partial(np.power, 2.0)


def squared_total(x):
    return np.sum(TOTAL(x) ** 2 * np.arange(1.0, 4.0))


def clipped(x):
    return np.sum(CLIP(x) ** 3)


def powered(x):
    return np.sum(POWER(x))


def test_a_keyword_added_to_a_global_partial_is_seen(monkeypatch):
    """The code passes the partial's keywords by name: one added later (``where=``) was left
    out, a silent stale gradient."""
    made = srcad.differentiable(squared_total)
    made.grad(X)
    monkeypatch.setitem(TOTAL.keywords, "where", np.array([True, False, True]))
    expected = 2 * np.sum(X * [True, False, True], axis=0) * [1.0, 2.0, 3.0] * [True, False, True]
    np.testing.assert_allclose(made.grad(X), np.broadcast_to(expected, X.shape))
    np.testing.assert_allclose(srcad.grad(squared_total)(X), np.broadcast_to(expected, X.shape))
    check_all_modes(squared_total, (X,))


def test_a_keyword_deleted_from_a_global_partial_is_seen(monkeypatch):
    """A key the code reads by name deleted: it failed with a KeyError inside generated code."""
    made = srcad.differentiable(squared_total)
    made.grad(X)
    monkeypatch.delitem(TOTAL.keywords, "axis")
    np.testing.assert_allclose(made.grad(X), np.full(X.shape, 2 * np.sum(X) * 6.0))
    check_all_modes(squared_total, (X,))


def test_a_keyword_value_changed_in_place_is_read_when_the_code_runs(monkeypatch):
    """Values, unlike names, are read from the partial as the code runs: no new code needed."""
    made = srcad.differentiable(squared_total)
    made.grad(X)
    monkeypatch.setitem(TOTAL.keywords, "axis", 1)
    x = X.T.copy()  # three rows: the sums over axis 1 meet the three weights
    expected = 2 * np.sum(x, axis=1) * [1.0, 2.0, 3.0]
    np.testing.assert_allclose(made.grad(x), np.broadcast_to(expected[:, None], x.shape))
    check_all_modes(squared_total, (x,))
    clipping = srcad.differentiable(clipped)
    clipping.grad(X)
    monkeypatch.setitem(CLIP.keywords, "a_max", 0.6)
    np.testing.assert_allclose(clipping.grad(X), 3 * np.clip(X, -0.4, 0.6) ** 2 * ((X > -0.4) & (X < 0.6)))
    check_all_modes(clipped, (X,))


def test_a_partials_arguments_replaced_are_seen(monkeypatch):
    """``partial.args`` is a tuple, replaced whole (``__setstate__``), so guarded by identity."""
    made = srcad.differentiable(powered)
    np.testing.assert_allclose(made.grad(X), np.log(2.0) * 2.0 ** X)
    state = POWER.__reduce__()[2]
    try:
        POWER.__setstate__((np.power, (3.0,), {}, None))
        np.testing.assert_allclose(made.grad(X), np.log(3.0) * 3.0 ** X)
        check_all_modes(powered, (X,))
    finally:
        POWER.__setstate__(state)


# ---- a frozen scipy.stats distribution's kwds ---------------------------------------------

def test_a_keyword_added_to_a_frozen_distribution_is_seen(monkeypatch):
    stats = pytest.importorskip("scipy.stats")
    monkeypatch.setitem(globals(), "PRIOR", stats.norm(loc=0.5))
    made = srcad.differentiable(log_prior)
    np.testing.assert_allclose(made.grad(X), -(X - 0.5))
    monkeypatch.setitem(PRIOR.kwds, "scale", 2.0)
    np.testing.assert_allclose(made.grad(X), -(X - 0.5) / 4.0)
    check_grads(log_prior, (X,))
    check_jvp(log_prior, (X,))


def log_prior(x):
    return np.sum(PRIOR.logpdf(x))  # noqa: F821 (bound by the test)
