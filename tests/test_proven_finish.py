"""Proven finishes (``passes.proven_finish``): the joint adjoint returns ``dA`` where
``finish(dA, A)`` could only return ``dA``; and the cotangent in the output's dtype.

Every gradient of the joint adjoint (``f.adjoint``, where the call is dropped) is checked
against the split pair's (``vjp``, which keeps it), against finite differences in a random
direction, for its dtype and shape, and for memory of its own (not the cotangent's, not an
argument's, not another gradient's, not the last call's)."""
import importlib.util
import itertools

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads

SHAPES = {"X": (3, 4), "W": (4, 5), "b": (5,)}


def _random_expression(rng, depth):
    """An expression of shape (3, 5) in X (3, 4), W (4, 5) and b (5,)."""
    if depth == 0 or rng.random() < 0.25:
        left = ["X", "np.cos(X)", "X * 0.5", "(X.T).T"][rng.integers(4)]
        right = ["W", "W * 2.0", "np.tanh(W)", "-W"][rng.integers(4)]
        return f"({left} @ {right})"
    a, b = _random_expression(rng, depth - 1), _random_expression(rng, depth - 1)
    return [f"({a} + {b})", f"({a} * {b})", f"({a} - b)", f"(-{a})", f"np.tanh({a})", f"np.sin({a})",
            f"({a} + b)", f"({a} / (2.0 + {b} * {b}))", f"({a} * b)", f"(X @ (W * b) + {a})"][rng.integers(10)]


def _module(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text("import numpy as np\n\n\n" + text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _arguments(rng, dtypes):
    return tuple((rng.standard_normal(SHAPES[n]) * 0.5).astype(d) for n, d in zip("XWb", dtypes))


def _check_joint_against_pair(d, args, v, wrt=(0, 1, 2)):
    joint = d.adjoint(*args, v)
    again = d.adjoint(*args, v)
    y, pullback = d.vjp(*args)
    pair = pullback(v)
    for i, g, h, g2 in zip(wrt, joint, pair, again):
        assert g.__class__ is np.ndarray and g.dtype == args[i].dtype and g.shape == args[i].shape
        assert h.dtype == g.dtype
        np.testing.assert_allclose(g, h, rtol=1e-5 if g.dtype == np.float32 else 1e-12, atol=1e-6)
        assert not np.shares_memory(g, v) and not any(np.shares_memory(g, a) for a in args)
        assert not np.shares_memory(g, g2), "a second call returned the first call's memory"
        assert g.flags.writeable and g.flags.owndata
    for g, h in itertools.combinations(joint, 2):
        assert not np.shares_memory(g, h)
    return joint


def test_random_straight_line_programs(tmp_path):
    rng = np.random.default_rng(2026)
    proven = 0
    for index in range(40):
        text = f"def f(X, W, b):\n    return {_random_expression(rng, 2)}\n"
        fn = getattr(_module(tmp_path, f"straight_{index}", text), "f")
        d = srcad.differentiable(fn, wrt=(0, 1, 2))
        dtypes = [(np.float64, np.float32)[k] for k in rng.integers(2, size=3)]
        args = _arguments(rng, dtypes)
        y = fn(*args)
        for vdtype in (y.dtype, np.float32, np.float64, np.longdouble):
            v = rng.standard_normal(y.shape).astype(vdtype)
            _check_joint_against_pair(d, args, v)
        proven += 3 - d.adjoint_source.strip().splitlines()[-1].count("finish(")
        if all(dt == np.float64 for dt in dtypes):
            check_grads(fn, args, wrt=(0, 1, 2), mode="joint")
    assert proven >= 30, f"the pass applied {proven} times: the test checks little new"


@pytest.mark.parametrize("body, dropped", [
    ("return X @ W", 2),
    ("return np.tanh(X @ W + b)", 2),  # db is a sum: not proven
    ("return X.T", 0),  # the cotangent's transpose: a view of v
    ("return X @ W * 1.0 + X @ W", 2),
])
def test_which_calls_are_dropped(tmp_path, body, dropped):
    rng = np.random.default_rng(3)
    fn = getattr(_module(tmp_path, "which", f"def f(X, W, b):\n    {body}\n"), "f")
    d = srcad.differentiable(fn, wrt=(0, 1, 2))
    args = _arguments(rng, (np.float64,) * 3)
    v = rng.standard_normal(np.shape(fn(*args)))
    _check_joint_against_pair(d, args, v)
    returned = d.adjoint_source.strip().splitlines()[-1]
    assert returned.count("finish(") == 3 - dropped, d.adjoint_source


def test_cotangents_of_other_dtypes(tmp_path):
    """For a float64 output, v becomes float64 first (exact for float32 v): the gradient is
    that of v.astype(float64). For a float32 or float16 output, v keeps its dtype (a float64
    v of 1e5 is no inf for a float16 output) and the gradient takes the argument's dtype."""
    fn = getattr(_module(tmp_path, "mixed", "def f(X, W, b):\n    return X @ W\n"), "f")
    half = getattr(_module(tmp_path, "half", "def f(X):\n    return (X * 2.0).astype(np.float16)\n"), "f")
    rng = np.random.default_rng(5)
    args = _arguments(rng, (np.float64,) * 3)
    v32 = rng.standard_normal((3, 5)).astype(np.float32)
    dX, dW, db = srcad.differentiable(fn, wrt=(0, 1, 2)).adjoint(*args, v32)
    assert dX.dtype == dW.dtype == db.dtype == np.float64
    np.testing.assert_array_equal(dX, v32.astype(np.float64) @ args[1].T)
    np.testing.assert_array_equal(db, np.zeros(5))
    args32 = _arguments(rng, (np.float32,) * 3)
    v = rng.standard_normal((3, 5))
    dX, dW, _ = srcad.differentiable(fn, wrt=(0, 1, 2)).adjoint(*args32, v)
    assert dX.dtype == dW.dtype == np.float32
    np.testing.assert_array_equal(dX, (v @ args32[1].T.astype(np.float64)).astype(np.float32))
    X = rng.standard_normal(3)
    g = srcad.adjoint(half)(X, np.full(3, 1e5))
    np.testing.assert_array_equal(g, np.full(3, 2e5))


def test_a_gradient_returned_twice_is_not_one_array(tmp_path):
    fn = getattr(_module(tmp_path, "twice", "def f(X, Y):\n    return X @ Y.T + Y @ X.T\n"), "f")
    rng = np.random.default_rng(6)
    X, Y = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    v = rng.standard_normal((3, 3))
    dX, dY = srcad.differentiable(fn, wrt=(0, 1)).adjoint(X, Y, v)
    assert not np.shares_memory(dX, dY)
    np.testing.assert_allclose(dX, v @ Y + v.T @ Y, rtol=1e-12)
    np.testing.assert_allclose(dY, v.T @ X + v @ X, rtol=1e-12)


def test_second_order_through_a_dropped_call(tmp_path):
    fn = getattr(_module(tmp_path, "second", "def f(X, W):\n    return np.sum(np.tanh(X @ W) ** 2)\n"), "f")
    rng = np.random.default_rng(7)
    X, W = rng.standard_normal((3, 4)) * 0.5, rng.standard_normal((4, 2)) * 0.5
    for wrt in (0, 1):
        check_grads(srcad.grad(fn, wrt=wrt), (X, W), wrt=(0, 1))


def test_dask_cotangent_stays_lazy(tmp_path):
    da = pytest.importorskip("dask.array")
    fn = getattr(_module(tmp_path, "lazy", "def f(X, W):\n    return X @ W\n"), "f")
    rng = np.random.default_rng(8)
    X, W = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    v = rng.standard_normal((3, 5)).astype(np.float32)
    d = srcad.differentiable(fn, wrt=(0, 1))
    dX, dW = d.adjoint(X, W, da.from_array(v))
    assert isinstance(dX, da.Array) and dX.dtype == np.float64 and dX.shape == X.shape
    np.testing.assert_allclose(dX.compute(), v.astype(np.float64) @ W.T, rtol=1e-12)
    np.testing.assert_allclose(dW.compute(), X.T @ v.astype(np.float64), rtol=1e-12)
