"""Probe round 25B: a vjp pullback reads the values the forward pass saw, whatever way it
reached the user's globals (a row per loop pass, a view, a bound method, a rule's global);
defaults, negative argnums, a partial of a lambda, vjp with keywords."""
import functools
import types

import numpy as np
import pytest

import srcad

rng = np.random.default_rng(25)
X = np.array([0.3, -0.2, 0.5])


def fd_directional(f, x, d, eps=1e-6):
    return (f(x + eps * d) - f(x - eps * d)) / (2 * eps)


def check_against_fd(f, x, g):
    for _ in range(3):
        d = rng.standard_normal(x.shape)
        assert np.isclose(np.dot(g, d), fd_directional(f, x, d), rtol=1e-6, atol=1e-8)


M = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
W = np.array([1.0, 2.0, 3.0])
WS = [np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])]
OBJ = types.SimpleNamespace(M=np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
get_w = {"W": W}.get
CACHED = np.array([1.0, 2.0, 3.0])


@functools.lru_cache(None)
def weights():
    return CACHED


def rows_by_index(x):
    s = 0.0
    for i in range(2):
        s = s + np.sum(np.sin(x) * M[i])
    return s


def rows_iterated(x):
    s = 0.0
    for row in M:
        s = s + np.sum(np.sin(x) * row)
    return s


def view_method(x):
    return np.sum(np.sin(x) * W.view())


def bound_get(x):
    return np.sum(np.sin(x) * get_w("W"))


def cached_in_loop(x):
    s = 0.0
    for i in range(2):
        s = s + np.sum(np.sin(x * weights()))
    return s


def list_of_arrays(x):
    s = 0.0
    for w in WS:
        s = s + np.sum(np.sin(x * w))
    return s


def attribute_rows(x):
    s = 0.0
    for i in range(2):
        s = s + np.sum(np.sin(x) * OBJ.M[i])
    return s


def _closure():
    C = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])

    def closure_rows(x):
        s = 0.0
        for row in C:
            s = s + np.sum(np.cos(x) * row)
        return s
    return closure_rows, C


closure_rows, C = _closure()


@srcad.custom_vjp
def scale(x):
    return x * W


@scale.defvjp
def scale_vjp(y, x):
    d[x] += d[y] * W  # noqa: F821 (a rule template's names)


def rule_reading_global(x):
    return np.sum(np.sin(scale(x)))


def plain_global(x):  # control: a global read by name was snapshotted already
    return np.sum(np.sin(x * W))


def _reached():
    return [M, W, CACHED, OBJ.M, C] + WS


@pytest.mark.parametrize("fn", [rows_by_index, rows_iterated, view_method, bound_get, cached_in_loop,
                                list_of_arrays, attribute_rows, closure_rows, rule_reading_global, plain_global])
def test_pullback_reads_the_globals_as_the_forward_pass_saw_them(fn):
    arrays = _reached()
    kept = [a.copy() for a in arrays]
    try:
        want = srcad.grad(fn)(X)
        check_against_fd(fn, X, want)
        y, pullback = srcad.vjp(fn, X)
        for a in arrays:
            a[...] = 100.0  # changed after vjp, before the pullback runs
        got = pullback(1.0)
    finally:
        for a, k in zip(arrays, kept):
            a[...] = k
    assert np.isclose(y, fn(X))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_pullback_twice_and_argument_changed_after_vjp():  # control
    x = X.copy()
    want = srcad.grad(rows_iterated)(x)
    y, pullback = srcad.vjp(rows_iterated, x)
    x[:] = 9.0
    np.testing.assert_allclose(pullback(1.0), want)
    np.testing.assert_allclose(pullback(2.0), 2 * want)


class Box:
    def __init__(self):
        self.data = np.zeros(3)

    def copy(self):  # a "copy" returning its own array
        return self.data


def positional_default_box(x, box=Box()):
    a = box.copy()
    a[0] = 5.0 * x[1]
    return np.sum(box.data * x)


def keyword_only_default_box(x, *, box=Box()):  # control: refused so already
    a = box.copy()
    a[0] = 5.0 * x[1]
    return np.sum(box.data * x)


@pytest.mark.parametrize("fn", [positional_default_box, keyword_only_default_box])
def test_default_object_is_compiled_for_its_class(fn):
    with pytest.raises(srcad.SrcadError, match=r"in-place update of 'a', which shares memory with the argument 'box'"):
        srcad.grad(fn)(X.copy())


class Op:
    def __init__(self):
        self.s = 2.0

    def dot(self, v):
        return np.sin(v) * self.s


def default_op(x, op=Op()):
    return np.sum(op.dot(x)) ** 2


def test_default_object_method_called():
    g = srcad.grad(default_op)(X)
    check_against_fd(default_op, X, g)
    d = rng.standard_normal(3)
    assert np.isclose(srcad.jvp(default_op, (X,), (d,))[1], fd_directional(default_op, X, d))
    np.testing.assert_allclose(srcad.vjp(default_op, X)[1](1.0), g)


def with_default(x, w, b=0.5):
    return np.sum(np.sin(x * w) + b * x ** 2)


def without_default(x, w):
    return np.sum(np.sin(x * w) + x ** 2)


def test_negative_argnums_where_a_call_may_pass_fewer_is_refused():
    w = np.array([1.1, 0.4, -0.6])
    for kw in ({"argnums": -1}, {"wrt": -1}, {"argnums": (0, -1)}):
        with pytest.raises(srcad.WrtError, match=r"JAX counts a negative position from the last argument a call "
                                                 r"passes.*give the position from the front or the parameter's name"):
            srcad.grad(with_default, **kw)(X, w)
    g = srcad.grad(with_default, argnums=1)(X, w)  # control
    np.testing.assert_allclose(g, np.cos(X * w) * X)


def test_negative_argnums_without_defaults():  # control: every call passes every parameter
    w = np.array([1.1, 0.4, -0.6])
    g = srcad.grad(without_default, argnums=-1)(X, w)
    np.testing.assert_allclose(g, np.cos(X * w) * X)


lambda_partial = functools.partial(lambda x, w: np.sum(np.sin(x) * w), w=W)


def calls_lambda_partial(x):
    return lambda_partial(x) ** 2


def test_global_partial_of_a_lambda():
    g = srcad.grad(calls_lambda_partial)(X)
    check_against_fd(calls_lambda_partial, X, g)
    d = rng.standard_normal(3)
    assert np.isclose(srcad.jvp(calls_lambda_partial, (X,), (d,))[1], fd_directional(calls_lambda_partial, X, d))
    kept = W.copy()
    try:
        y, pullback = srcad.vjp(calls_lambda_partial, X)
        W[:] = 100.0
        np.testing.assert_allclose(pullback(1.0), g)
    finally:
        W[:] = kept


def two_arguments(x, w):
    return np.sum(np.sin(x) * w ** 2)


def test_vjp_with_keyword_arguments():
    w = np.array([1.0, -2.0, 0.5])
    y, pullback = srcad.vjp(two_arguments, X, w=w)
    assert np.isclose(y, two_arguments(X, w))
    np.testing.assert_allclose(pullback(1.0), np.cos(X) * w ** 2)
    y, pullback = srcad.vjp(two_arguments, X, w=w, wrt="w")
    np.testing.assert_allclose(pullback(1.0), np.sin(X) * 2 * w)


GBOX = Box()


def helper_default_box(x, box=GBOX):
    a = box.copy()
    a[0] = 5.0 * x[1]
    return np.sum(box.data * x)


def calls_helper_default_box(x):
    return helper_default_box(x)


def helper_default_op(x, op=Op()):
    return np.sum(op.dot(x))


def calls_helper_default_op(x):
    return helper_default_op(x) ** 2


def test_helper_default_object_is_compiled_for_its_class():
    with pytest.raises(srcad.SrcadError, match=r"in-place update of 'a', which shares memory with the argument 'box'"):
        srcad.grad(calls_helper_default_box)(X.copy())
    with pytest.raises(srcad.SrcadError, match=r"in-place update of 'a', which shares memory with the argument 'box'"):
        srcad.jvp(calls_helper_default_box, (X.copy(),), (np.ones(3),))
    g = srcad.grad(calls_helper_default_op)(X)
    check_against_fd(calls_helper_default_op, X, g)
    d = rng.standard_normal(3)
    assert np.isclose(srcad.jvp(calls_helper_default_op, (X,), (d,))[1], fd_directional(calls_helper_default_op, X, d))


def default_number_rebound(x, w=0.5):
    s = 0.0
    for i in range(3):
        w = w * 1.1
        s = s + np.sum(np.sin(x) * w)
    return s


def test_numba_pair_with_a_default_pushed_per_pass():  # control: numba copies no list
    pytest.importorskip("numba")
    y, pullback = srcad.differentiable(default_number_rebound, backend="numba").vjp(X)
    g = srcad.grad(default_number_rebound)(X)
    check_against_fd(default_number_rebound, X, g)
    np.testing.assert_allclose(pullback(1.0), g)
