"""Shapes that loop-carried values keep, so their adjoints need no run-time shape helpers:
``np.pad``'s result from its widths, ``np.linalg.slogdet``'s pair from the matrix, and a
running total started from a number (``total = 0.0``) joined with the NumPy scalars added to
it. Every program is checked against finite differences in both reverse modes (the pullback
called twice), forward mode and at second order; the generated code is checked for the
helpers the shapes let it leave out."""
import numpy as np
import pytest

from srcad.passes.shape_rules import pad_shape, slogdet_shape
from srcad.passes.shape_values import UNKNOWN, Spec, join
from loop_checks import adjoint_source, all_modes

rng = np.random.default_rng(12)


# ---- np.pad ---------------------------------------------------------------------------------

def stencil(u0, kappa, steps):
    u = u0
    for step in range(steps):
        lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
        u = u + kappa * np.pad(lap, 1, mode="constant")
    return np.sum(u * u)


def test_padded_loop_state_keeps_its_shape():
    args = (rng.standard_normal((7, 6)), 0.15, 3)
    source = adjoint_source(stencil, args, (0, 1))
    loop = source[source.index("reversed("):]
    for helper in ("unbroadcast", "add_grads", "grad_buffer"):
        assert helper not in loop
    all_modes(stencil, args, (0, 1))


def uneven_pad(x, w):
    y = x
    for i in range(2):
        y = np.tanh(np.pad(y, ((1, 2), (0, 1)), mode="constant", constant_values=w)[1:-2, :-1] * 1.5 + w)
    return np.sum(y * x)


def test_uneven_widths_and_a_differentiated_constant():
    args = (rng.standard_normal((3, 4)), 0.3)
    assert "unbroadcast" not in adjoint_source(uneven_pad, args, (0, 1)).split("reversed(")[1]
    all_modes(uneven_pad, args, (0, 1))


def edge_pad(x):
    y = x
    for i in range(2):
        y = np.pad(y, 1, mode="edge")[1:-1] * np.cos(y)
    return np.sum(y ** 2)


def test_other_modes_keep_their_adjoint():
    all_modes(edge_pad, (rng.standard_normal(5),))


@pytest.mark.parametrize("array, width, mode", [
    (Spec((3,), np.float64), -1, "constant"),  # NumPy refuses a negative width
    (Spec((3,), np.float64), Spec((), np.int64, int), "constant"),  # a width known only by its kind
    (Spec((3,), np.float64), 1.5, "constant"),
    (Spec((3,), np.float64), ((1, 2), (3, 4)), "constant"),  # two pairs for one axis
    (Spec((3,), np.float64), 1, Spec((), np.float64)),  # a mode not known when compiling
    (Spec((), np.float64, float), 1, "constant"),  # a Python number
])
def test_pad_shape_claims_only_what_numpy_computes(array, width, mode):
    assert pad_shape(array, width, mode=mode) is UNKNOWN


def test_pad_shape_matches_numpy():
    for width in (0, 2, (1, 3), ((1, 0), (2, 5))):
        for mode in ("constant", "edge", "reflect", "wrap"):
            got = pad_shape(Spec((4, 5), np.float32), width, mode=mode)
            want = np.pad(np.ones((4, 5), np.float32), width, mode=mode)
            assert got == Spec(want.shape, want.dtype)


# ---- slogdet and running totals ---------------------------------------------------------------

def filtered_logdets(A, B):
    total = 0.0
    S = A
    for t in range(3):
        S = S @ B + A
        total = total + np.linalg.slogdet(S)[1] + np.sum(S) * 0.01
    return total


def test_slogdet_and_a_total_from_zero_keep_their_shapes():
    n = 3
    A = np.eye(n) + 0.1 * rng.standard_normal((n, n))
    B = 0.5 * np.eye(n) + 0.1 * rng.standard_normal((n, n))
    loop = adjoint_source(filtered_logdets, (A, B), (0, 1)).split("reversed(")[1]
    assert "unbroadcast" not in loop and "grad_buffer" not in loop  # (the pair's item adds by add_grads)
    all_modes(filtered_logdets, (A, B), (0, 1))


def test_slogdet_shape_matches_numpy():
    for dtype in (np.float64, np.float32, np.complex128):
        a = np.eye(3, dtype=dtype)[None].repeat(2, axis=0)
        sign, logdet = np.linalg.slogdet(a)
        want = (Spec(sign.shape, sign.dtype), Spec(logdet.shape, logdet.dtype))
        assert slogdet_shape(Spec(a.shape, a.dtype)) == want
    assert slogdet_shape(Spec((3, 2), np.float64)) is UNKNOWN


def test_numbers_join_scalars_of_their_kind_only():
    assert join(0.0, Spec((), np.float64)) == Spec((), np.float64)  # a Python float or a NumPy scalar
    assert join(Spec((), np.float64, float), 2.5) == Spec((), np.float64, float)
    assert join(0.0, 1.0) == Spec((), np.float64, float)
    assert join(0.0, Spec((3,), np.float64)) is UNKNOWN
    assert join(0, Spec((), np.float64)) is UNKNOWN  # an int and a float differ in kind
    assert join(0.0, np.zeros(()) + 1j) is UNKNOWN


# ---- a rule reads what the forward sweep computed ----------------------------------------------

def kalman_like(F, Q, R, zs):
    x = zs[0] * 0.0
    P = Q
    total = 0.0
    for t in range(zs.shape[0]):
        x = F @ x
        P = F @ P @ F.T + Q
        S = P + R
        Si = np.linalg.inv(S)
        y = zs[t] - x
        x = x + P @ Si @ y
        P = P - P @ Si @ P
        total = total + y @ Si @ y + np.linalg.slogdet(S)[1]
    return total


def kalman_inputs(n=3, steps=4):
    F = np.eye(n) + 0.1 * rng.standard_normal((n, n))
    A, B = rng.standard_normal((2, n, n))
    return F, 0.2 * (A @ A.T / n + np.eye(n)), 0.3 * (B @ B.T / n + np.eye(n)), rng.standard_normal((steps, n))


def code_of_reverse_loop(fn, args, wrt):
    loop = adjoint_source(fn, args, wrt).split("reversed(")[1]
    return "\n".join(line for line in loop.splitlines() if not line.strip().startswith("#"))


def test_slogdets_rule_reads_the_forward_inverse():
    args = kalman_inputs()
    loop = code_of_reverse_loop(kalman_like, args, (0, 1, 2))
    assert "inv(" not in loop and "*Si.T" in "".join(loop.split())  # slogdet's rule inverts S: the forward sweep's Si is that inverse
    all_modes(kalman_like, args, (0, 1, 2))


def rebound_between(A, B):
    total = 0.0
    for t in range(2):
        Ai = np.linalg.inv(A)
        A = A @ B  # A is another matrix when slogdet reads it
        total = total + np.linalg.slogdet(A)[1] + np.sum(Ai)
    return total


def updated_between(A, c):
    total = 0.0
    M = A * 1.0
    for t in range(2):
        e = np.exp(M)
        M[0, 0] = c * t  # updated in place: np.exp(M) below is another value
        total = total + np.sum(np.exp(M) * A) + np.sum(e)
    return total


def test_a_rebound_or_updated_operand_is_computed_again():
    n = 3
    A = np.eye(n) + 0.2 * rng.standard_normal((n, n))
    B = np.eye(n) + 0.1 * rng.standard_normal((n, n))
    assert "np.linalg.inv(A).T" in "".join(code_of_reverse_loop(rebound_between, (A, B), (0, 1)).split())  # not Ai
    all_modes(rebound_between, (A, B), (0, 1))
    all_modes(updated_between, (0.3 * A, 0.5), (0, 1))
