"""The per-call fast path (plain positional parameters, arguments by position, v last or
absent) gives exactly what the general path (inspect-style binding) gives, and both agree
with finite differences; the guards it checks per call still catch a rebinding."""
import functools

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads

RNG = np.random.default_rng(7)
X = RNG.standard_normal((1, 2))
M = RNG.standard_normal((2, 2))
V = RNG.standard_normal((1, 2))


def product(x, M):
    return np.dot(x, M).sum()


def scaled(x, M, scale=2.0):
    return np.tanh(np.dot(x, M) * scale)


def with_v(x, v):
    return np.sin(x) * v


def pair(xs, M):
    return np.sum(np.dot(xs[0], M) * xs[1])


class Model:
    def __init__(self, M):
        self.M = M

    def loss(self, x):
        return np.sum(np.cos(np.dot(x, self.M)))


def _general(d):
    """The same transform with the fast path switched off: every call binds as inspect does."""
    d._plain = False
    return d


def _both(make):
    return make(), _general(make())


CASES = {
    "plain": (lambda: srcad.differentiable(product), (X, M), None),
    "defaults omitted": (lambda: srcad.differentiable(scaled), (X, M), V),
    "defaults given": (lambda: srcad.differentiable(scaled), (X, M, 0.5), V),
    "wrt by name": (lambda: srcad.differentiable(scaled, wrt=("x", "M")), (X, M), V),
    "parameter named v": (lambda: srcad.differentiable(with_v, wrt=(0, 1)), (X, V), V),
    "partial": (lambda: srcad.differentiable(functools.partial(scaled, scale=3.0)), (X, M), V),
    "partial positional": (lambda: srcad.differentiable(functools.partial(product, X), wrt=0), (M,), None),
    "bound method": (lambda: srcad.differentiable(Model(M).loss), (X,), None),
    "container": (lambda: srcad.differentiable(pair, wrt=(0, 1)), ([X, X * 2.0], M), None),
}


def _close(a, b):
    if isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for ai, bi in zip(a, b):
            _close(ai, bi)
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_and_general_paths_agree(name):
    make, args, v = CASES[name]
    fast, general = _both(make)
    tail = () if v is None else (v,)
    for _ in range(2):  # the second call runs on the cached code
        _close(fast.adjoint(*args, *tail), general.adjoint(*args, *tail))
        if v is None:
            _close(fast.grad(*args), general.grad(*args))
        y_fast, pull_fast = fast.vjp(*args)
        y_general, pull_general = general.vjp(*args)
        _close(y_fast, y_general)
        _close(pull_fast(v), pull_general(v))
        _close(pull_fast(v), pull_general(v))  # a pullback may be called again


@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_path_matches_finite_differences(name):
    make, args, v = CASES[name]
    d = make()
    check_grads(d, args, wrt=d._wrt if not d._single else d._wrt[0], v=v)


def test_keyword_cotangent_and_keyword_arguments_take_the_general_path():
    d = srcad.differentiable(scaled)
    expected = d.adjoint(X, M, V)
    _close(d.adjoint(X, M, v=V), expected)
    _close(d.adjoint(X, M=M, v=V), expected)
    _close(d.adjoint(X, M, 2.0, V), expected)
    _close(d.adjoint(X, M, scale=2.0, v=V), expected)


def test_fast_path_still_refuses_what_the_allowlist_refuses():
    d = srcad.differentiable(product)
    with pytest.raises(srcad.errors.ArgumentError):
        d.adjoint(np.ones((1, 2), dtype=np.int64), M)
    with pytest.raises(TypeError):
        d.adjoint(X)  # too few arguments: the general path's error


def test_fast_path_checks_the_cotangent():
    d = srcad.differentiable(scaled)
    d.adjoint(X, M, V)
    with pytest.raises(srcad.errors.CotangentError):
        d.adjoint(X, M, np.ones((1, 2), dtype=complex))
    with pytest.raises(srcad.errors.CotangentError):
        d.adjoint(X, M, np.ones((3,)))


def test_vjp_fast_path_snapshots_the_arguments():
    d = srcad.differentiable(scaled)
    x = X.copy()
    _, pullback = d.vjp(x, M)
    before = pullback(V)
    x[...] = 5.0  # the caller changes its array after the forward pass
    _close(pullback(V), before)


act = np.sin


def activated(x):
    return np.sum(act(x))


def test_guards_checked_per_call_on_the_fast_path(monkeypatch):
    d = srcad.differentiable(activated)
    x = RNG.standard_normal(3)
    _close(d.grad(x), np.cos(x))
    _close(d.grad(x), np.cos(x))  # cached code, guards hold
    monkeypatch.setitem(globals(), "act", np.cos)
    np.testing.assert_allclose(d.grad(x), -np.sin(x))  # act rebound: new code, never the old one
    check_grads(d, (x,))


def test_a_deleted_global_is_caught_by_the_per_call_check(monkeypatch):
    """The identity tests run per call read the global: when it is gone they answer "changed"
    (not an exception out of the check), and the call is refused at the user's line."""
    d = srcad.differentiable(activated)
    companion = srcad.adjoint(activated)
    x = RNG.standard_normal(3)
    _close(d.grad(x), np.cos(x))
    _close(companion(x, 1.0), np.cos(x))
    monkeypatch.delitem(globals(), "act")
    with pytest.raises(srcad.SrcadSyntaxError, match="'act' is not defined"):
        d.grad(x)
    with pytest.raises(srcad.SrcadSyntaxError, match="'act' is not defined"):
        companion(x, 1.0)
    monkeypatch.setitem(globals(), "act", np.tanh)
    _close(d.grad(x), 1.0 - np.tanh(x) ** 2)
    _close(companion(x, 1.0), 1.0 - np.tanh(x) ** 2)


def test_companion_adjoint_keeps_the_users_function_identity_and_checks_v():
    companion = srcad.adjoint(scaled, wrt=(0, 1))
    assert companion.__name__ == "scaled" and companion.__wrapped__ is scaled
    dx, dM = companion(X, M, V)
    check_grads(srcad.differentiable(scaled, wrt=(0, 1)), (X, M), v=V)
    _close(dx, srcad.differentiable(scaled, wrt=(0, 1)).adjoint(X, M, V)[0])
    _close(dM, srcad.differentiable(scaled, wrt=(0, 1)).adjoint(X, M, V)[1])
    for bad in (np.ones((2, 1)), np.ones(2), [[1.0, 2.0]]):  # the wrong shape, or not an array
        with pytest.raises(srcad.CotangentError):
            companion(X, M, bad)
    again = companion(X, M, V)[0]
    again[...] = 0.0  # the caller owns what it gets: a later call is not changed by it
    _close(companion(X, M, V)[0], dx)
