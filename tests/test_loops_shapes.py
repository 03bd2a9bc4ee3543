"""Shape inference inside loops: index arithmetic keeps its kind, a tuple of shapes is not a
changing container, helpers' results are read from their source (and their adjoints
specialised on the caller's shapes), np.linalg results come from shape rules, never from
running on stand-in zeros. Every program is checked against finite differences in both
reverse modes, forward mode and at second order; the generated code is checked for what the
shapes let it leave out."""
import os
import sys

import numpy as np
import pytest

from srcad.astutil import anno
from srcad.passes.normalize import normalize
from srcad.passes.resolve_calls import resolve_calls
from srcad.passes.activity import activity
from srcad.passes.shapes import Spec, arg_spec, infer_shapes
from srcad.source import capture
from loop_checks import adjoint_source, all_modes

rng = np.random.default_rng(7)


def specs_of(fn, *args, wrt=("x",)):
    src = capture(fn)
    node = normalize(resolve_calls(src.node, src), src)
    node = activity(node, src, wrt, ())
    params = [a.id for a in node.args.args]
    return anno(infer_shapes(node, {p: arg_spec(a) for p, a in zip(params, args)}), "specs")


# ---- Python integer arithmetic ---------------------------------------------------------------

def shifted_pairs(x, y):
    n = x.shape[0]
    total = 0.0
    for i in range(1, n):
        for j in range(1, n):
            d = (x[i - 1] - y[j - 1]) ** 2
            total = total + d * x[i] + np.sin(y[j - 1] * x[i // 2])
    return total


def test_index_arithmetic_keeps_int_shapes():
    x, y = rng.standard_normal(4), rng.standard_normal(4)
    specs = specs_of(shifted_pairs, x, y)
    ints = [k for k, v in specs.items() if v == Spec((), np.int64, int)]
    assert {"i", "j"} <= set(ints) and len(ints) >= 5  # i, j, i - 1, j - 1, i // 2
    assert all(specs[k] == Spec((), np.float64) for k in ("d",))
    assert "unbroadcast" not in adjoint_source(shifted_pairs, (x, y), (0, 1))
    all_modes(shifted_pairs, (x, y), (0, 1))


def powers(x, k):
    total = x[0]
    for i in range(k):
        total = total + x[1] * 2 ** (i - 1) + x[0] * (i / 2) + (i % 3) * x[1]
    return total


def test_python_arithmetic_kinds():
    """``2 ** (i - 1)`` may be a float (negative exponent): not claimed to be an int."""
    x = rng.standard_normal(2)
    specs = specs_of(powers, x, 3)
    pow_results = _names_of_power(powers)
    assert pow_results and all(specs.get(n) != Spec((), np.int64, int) for n in pow_results)
    assert any(v == Spec((), np.float64, float) for v in specs.values())  # i / 2
    all_modes(powers, (x, 3))
    all_modes(powers, (x, 0))  # a loop that runs zero times


def _names_of_power(fn):
    src = capture(fn)
    node = normalize(resolve_calls(src.node, src), src)
    import gast

    return {s.targets[0].id for s in gast.walk(node) if isinstance(s, gast.Assign)
            and isinstance(s.value, gast.BinOp) and isinstance(s.value.op, gast.Pow)}


# ---- shapes and tuples ---------------------------------------------------------------------

def grid_from_shape(x):
    n = x.shape[0]
    R = np.full((n + 1, n + 1), 2.0)
    for i in range(1, n + 1):
        R[i, i] = R[i - 1, i - 1] * x[i - 1]
    return R[n, n]


def test_a_grid_built_from_a_shape_is_known():
    x = rng.uniform(0.5, 1.5, 5)
    specs = specs_of(grid_from_shape, x)
    assert specs["R"] == Spec((6, 6), np.float64)
    src = adjoint_source(grid_from_shape, (x,))
    assert "unbroadcast" not in src and "cleared_slot" not in src
    all_modes(grid_from_shape, (x,))


# ---- helpers -------------------------------------------------------------------------------

# soft-DTW and its soft-min helper: the benchmark's program (one copy; make bench times it)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
from numba_loops import soft_dtw  # noqa: E402


def test_soft_dtw_helper_result_and_specialised_helper():
    x, y = rng.standard_normal(4), rng.standard_normal(3)
    specs = specs_of(soft_dtw, x, y, 0.5, wrt=("x", "y"))
    assert specs["_t20"] == Spec((), np.float64)  # softmin3's result, read from its source
    src = adjoint_source(soft_dtw, (x, y, 0.5), (0, 1))
    assert src.count("unbroadcast") == 0 and "container_grad" not in src
    all_modes(soft_dtw, (x, y, 0.5), (0, 1))


def scaled(a, s):
    return a * s + np.sum(a)


def helper_at_two_shapes(x):
    u = scaled(x, 2.0)  # a vector
    v = scaled(x[0], x[1])  # a scalar: the helper is specialised per shape
    w = scaled(x[:2].reshape(2, 1), x[2:4])  # broadcasts inside the helper
    return np.sum(u * v) + np.sum(w ** 2)


def test_helper_specialised_per_call_site():
    x = rng.standard_normal(5)
    specs = specs_of(helper_at_two_shapes, x)
    assert specs["u"] == Spec((5,), np.float64) and specs["v"] == Spec((), np.float64)
    assert specs["w"] == Spec((2, 2), np.float64)
    all_modes(helper_at_two_shapes, (x,))
    all_modes(helper_at_two_shapes, (rng.standard_normal(4),))  # another specialisation


def two_returns(a, flag):
    if flag:
        return a * 2.0
    return a[:1]


def helper_with_two_returns(x, flag):
    total = 0.0
    for i in range(2):
        total = total + np.sum(two_returns(x, flag) * x[i])
    return total


def test_helper_whose_result_shape_depends_on_a_branch():
    x = rng.standard_normal(3)
    all_modes(helper_with_two_returns, (x, True))
    all_modes(helper_with_two_returns, (x, False))


def counted(a, n):
    out = a
    for k in range(n):
        out = out * 0.5 + 1.0
    return out


def helper_with_loop(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(counted(x, i) * x)
    return s


def test_helper_with_loop_whose_trip_count_varies():
    all_modes(helper_with_loop, (rng.standard_normal(3),))


# ---- np.linalg shape rules -----------------------------------------------------------------

def linalg_in_loop(A, b):
    x = b
    total = 0.0
    for t in range(3):
        M = A @ A.T + np.eye(A.shape[0])
        Minv = np.linalg.inv(M)
        x = Minv @ x + np.linalg.solve(M, b)
        L = np.linalg.cholesky(M)
        total = total + np.log(np.linalg.det(M)) + x @ x + np.sum(L)
    return total


def test_linalg_results_have_shapes_without_running_on_standins():
    A, b = rng.standard_normal((3, 3)), rng.standard_normal(3)
    specs = specs_of(linalg_in_loop, A, b, wrt=("A", "b"))
    assert specs["Minv"] == Spec((3, 3), np.float64) and specs["L"] == Spec((3, 3), np.float64)
    assert specs["x"] == Spec((3,), np.float64)
    src = adjoint_source(linalg_in_loop, (A, b), (0, 1))
    assert "np.ndim(" not in src  # every branch on a rank decided when the code was made
    all_modes(linalg_in_loop, (A, b), (0, 1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linalg_shape_rules(dtype):
    from srcad.passes.shape_rules import LINALG_SHAPES

    a = Spec((2, 3, 3), dtype)
    for fn, args in [(np.linalg.inv, (a,)), (np.linalg.det, (a,)), (np.linalg.cholesky, (a,)),
                     (np.linalg.solve, (a, Spec((3,), dtype))), (np.linalg.solve, (a, Spec((2, 3, 4), dtype))),
                     (np.linalg.solve, (Spec((3, 3), dtype), Spec((5, 3, 2), np.float64)))]:
        values = [np.broadcast_to(np.eye(3, dtype=s.dtype), s.shape) if s.shape[-2:] == (3, 3)
                  else np.ones(s.shape, s.dtype) for s in args]
        expected = np.asarray(fn(*values))
        assert LINALG_SHAPES[fn](*args) == Spec(expected.shape, expected.dtype), fn
    assert not isinstance(LINALG_SHAPES[np.linalg.inv](Spec((2, 3), dtype)), Spec)  # not square: unknown
    assert not isinstance(LINALG_SHAPES[np.linalg.solve](Spec((3, 3), dtype), Spec((4,), dtype)), Spec)


def kalman(F, Q, H, R, zs, x0, P0):
    x = x0
    P = P0
    nll = 0.0
    for t in range(zs.shape[0]):
        x = F @ x
        P = F @ P @ F.T + Q
        r = zs[t] - H @ x
        S = H @ P @ H.T + R
        Sinv = np.linalg.inv(S)
        K = P @ H.T @ Sinv
        x = x + K @ r
        P = P - K @ H @ P
        nll = nll + r @ Sinv @ r + np.log(np.linalg.det(S))
    return nll


def test_kalman_filter_state_keeps_its_shapes():
    k = 3
    F = np.eye(k) + 0.1 * rng.standard_normal((k, k))
    args = (F, 0.2 * np.eye(k), rng.standard_normal((k, k)), 0.5 * np.eye(k), rng.standard_normal((4, k)),
            np.zeros(k), np.eye(k))
    specs = specs_of(kalman, *args, wrt=("F", "Q"))
    assert specs["x"] == Spec((k,), np.float64) and specs["P"] == Spec((k, k), np.float64)
    assert specs["nll"] == Spec((), np.float64)
    src = adjoint_source(kalman, args, (0, 1))
    assert "unbroadcast" not in src and "add_grads" not in src and "_t5_stack" not in src  # F.T: not saved
    all_modes(kalman, args, (0, 1))
