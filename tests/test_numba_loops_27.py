"""backend="numba" on ordinary numeric loops (probe 27A): reductions, norms and products of
computed vectors, whose adjoints call srcad's derivative helpers (numba versions in
``backends/numba_derivatives.py``), and a state step followed by an element update, whose
snapshot before the update is saved on the value stack. Each compiled gradient equals the
NumPy backend's and finite differences; ties share the cotangent as in NumPy code.
"""
import numpy as np
import pytest

pytest.importorskip("numba")

import srcad  # noqa: E402
from test_numba_backend import check, is_compiled  # noqa: E402


def step_then_damp(y0):
    y = y0.copy()
    acc = 0.0
    for i in range(5):
        y = y + 0.05 * np.array([y[1], -y[0], y[2]])
        y[2] = y[2] * 0.99  # y[2] is read, snapshotted, then stored into
        acc += y[0]
    return acc


def rows_step_then_damp(m0):  # the snapshot of a row: a view the store changes
    m = m0.copy()
    acc = 0.0
    for i in range(3):
        m = m + 0.1 * m[::-1]
        m[1] = np.sin(m[1]) * m[2]
        acc += np.sum(m[0] * m[1])
    return acc


def running_max(y0):
    y = y0.copy()
    acc = 0.0
    for i in range(5):
        y = y * 0.9 + 0.1 * y[::-1]
        acc += np.max(y) - 0.5 * np.min(y)
    return acc


def running_norm(y0):
    y = y0.copy()
    acc = 0.0
    for i in range(5):
        y = y * 0.9 + 0.05 * y * y
        acc += np.linalg.norm(y) + 0.3 * np.linalg.norm(y, 1) + 0.2 * np.linalg.norm(y, 2)
    return acc


def rhs(y):
    return np.array([y[1], -y[0], y[2]])


def running_dot(y0):
    y = y0.copy()
    acc = 0.0
    for i in range(5):
        d = rhs(y)
        y = y + 0.05 * d
        acc += np.dot(y, d)
    return acc


def matrix_steps(a0, x):  # np.dot of a computed matrix and vector, the Frobenius norm, the max of a matrix
    a = a0.copy()
    acc = 0.0
    for i in range(3):
        a = a * 0.95 + 0.05 * np.outer(x, x)
        acc += np.sum(np.dot(a, x)) + np.linalg.norm(a) + np.max(a)
    return acc


def column_sums(m0):  # the adjoint of a sum over one axis spreads it back along that axis
    m = m0.copy()
    acc = 0.0
    for i in range(3):
        m = np.tanh(m)
        acc += np.sum(np.sum(m, axis=0) * np.array([1.0, 2.0, 3.0])) + np.sum(np.sum(m, axis=1) ** 2)
    return acc


def moments(y0):
    y = y0.copy()
    acc = 0.0
    for i in range(4):
        y = np.sin(y) + 0.1 * y
        acc += np.mean(y) * np.std(y) + np.var(y) + np.sum(np.cumsum(y) * y)
    return acc


def soft_maximum(y0):
    y = y0.copy()
    acc = 0.0
    for i in range(4):
        y = 0.8 * y + 0.3
        acc += np.logaddexp(y[0], y[1]) + np.sum(np.logaddexp(y, 0.5 * y))
    return acc


rng = np.random.default_rng(27)

PROGRAMS = {
    "step_then_damp": (step_then_damp, lambda: (np.array([0.3, -0.2, 0.5]),), (0,)),
    "rows_step_then_damp": (rows_step_then_damp, lambda: (rng.standard_normal((3, 2)),), (0,)),
    "running_max": (running_max, lambda: (rng.standard_normal(4),), (0,)),
    "running_norm": (running_norm, lambda: (rng.standard_normal(4),), (0,)),
    "running_dot": (running_dot, lambda: (np.array([0.3, -0.2, 0.5]),), (0,)),
    "matrix_steps": (matrix_steps, lambda: (rng.standard_normal((3, 3)), rng.standard_normal(3)), (0, 1)),
    "column_sums": (column_sums, lambda: (rng.standard_normal((4, 3)),), (0,)),
    "moments": (moments, lambda: (rng.standard_normal(5),), (0,)),
    "soft_maximum": (soft_maximum, lambda: (rng.standard_normal(3),), (0,)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_loop_compiles_and_its_gradient_equals_numpy_and_finite_differences(name):
    f, make_args, wrt = PROGRAMS[name]
    args = make_args()
    d = srcad.differentiable(f, wrt=wrt, backend="numba")
    check(f, args, wrt, d.grad(*args))
    assert is_compiled(d)
    _, pullback = srcad.vjp(f, *args, wrt=wrt, backend="numba")  # the split pair: its stacks cross into Python
    for a, b in zip(pullback(1.0), srcad.grad(f, wrt=wrt)(*args)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_ties_share_the_cotangent_as_in_numpy_code():
    y0 = np.array([0.5, -1.0, 0.5, 0.5])  # y[::-1] keeps the ties of 0.5 at positions 0 and 3
    expected = srcad.grad(running_max)(y0)
    np.testing.assert_array_equal(srcad.grad(running_max, backend="numba")(y0), expected)
    a0 = np.array([[0.7, 0.1, 0.7], [0.2, 0.7, 0.4], [0.1, 0.2, 0.4]])  # three tied maxima
    x = np.zeros(3)
    for numba_grad, numpy_grad in zip(srcad.grad(matrix_steps, wrt=(0, 1), backend="numba")(a0, x),
                                      srcad.grad(matrix_steps, wrt=(0, 1))(a0, x)):
        np.testing.assert_allclose(numba_grad, numpy_grad, rtol=1e-14)
    assert expected[0] == expected[3] != 0


def nuclear_norm_loop(a0):
    a = a0.copy()
    acc = 0.0
    for i in range(2):
        a = a * 0.9
        acc += np.linalg.norm(a, "nuc")
    return acc


def test_a_norm_without_a_numba_adjoint_is_refused_at_the_users_line():
    from srcad.backends.numba_backend import BackendCompileError

    a0 = np.array([[1.0, 0.2], [0.3, 0.8]])
    with pytest.raises(BackendCompileError, match=r"(?s)test_numba_loops_27\.py:\d+: .*norm_slope.*acc \+= np\.linalg\.norm"):
        srcad.grad(nuclear_norm_loop, backend="numba")(a0)
    d = srcad.differentiable(nuclear_norm_loop, backend="auto")
    np.testing.assert_allclose(d.grad(a0), srcad.grad(nuclear_norm_loop)(a0), rtol=1e-12)
