"""backend="numba" on matrix programs: products of every operand kind (matrix @ matrix,
matrix @ vector, vector @ matrix, vector @ vector), transposes, np.linalg.inv and det in a
loop, whose adjoints branch on np.ndim (outlined so numba prunes them) and transpose by
axes folded to literals. Compiled gradients equal the NumPy backend's and finite
differences, in the joint adjoint and the pullback called twice."""
import numpy as np
import pytest

pytest.importorskip("numba")

import srcad  # noqa: E402
from test_numba_backend import _benchmark_module, check, is_compiled  # noqa: E402

benchmarks = _benchmark_module("numba_loops")


def mixed_products(A, x, w):
    s = 0.0
    for i in range(3):
        B = np.linalg.inv(A + 2.0 * np.eye(2))  # a shape srcad leaves to run time: its products branch on ndim
        y = B @ x
        z = x @ B.T
        s = s + y @ z + np.log(np.linalg.det(B @ B.T))
        x = np.tanh(y) * w
    return s


PROGRAMS = {
    "kalman": (benchmarks.kalman, lambda: benchmarks.kalman_args(steps=3), (0, 1, 2)),
    "mixed_products": (mixed_products, lambda: (np.array([[0.9, 0.2], [-0.3, 0.7]]), np.array([0.4, -0.8]),
                                                np.array([1.1, 0.6])), (0, 1, 2)),
}


@pytest.fixture(scope="module", params=sorted(PROGRAMS))
def program(request):
    f, make_args, wrt = PROGRAMS[request.param]
    return f, make_args(), wrt, srcad.differentiable(f, wrt=wrt, backend="numba")


def test_joint_adjoint_equals_numpy_and_finite_differences(program):
    f, args, wrt, d = program
    check(f, args, wrt, d.grad(*args))
    assert is_compiled(d)


def test_pullback_called_twice_equals_the_joint_adjoint(program):
    f, args, wrt, d = program
    y, pullback = d.vjp(*args)
    assert y == pytest.approx(f(*args), rel=1e-12)
    first, again = pullback(), pullback(2.0)
    check(f, args, wrt, first)
    for a, b in zip(first, again):
        np.testing.assert_allclose(2.0 * a, b, rtol=1e-12)


_taken_adjoint_branch1 = "a user's global with the name an outlined branch would get"


def taken(A, x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] @ np.linalg.pinv(A) @ x[i]  # pinv: no shape rule, so np.ndim branches remain
    return s


def test_an_outlined_branch_never_shadows_a_users_global():
    from srcad.backends.numba_backend import BackendCompileError

    A, x = np.array([[0.9, 0.2], [-0.3, 0.7]]), np.array([[0.4, -0.8], [0.3, 0.1]])
    with pytest.raises(BackendCompileError, match=r"test_numba_linalg\.py:\d+: .*'_taken_adjoint_branch1' is taken"):
        srcad.grad(taken, wrt=(0, 1), backend="numba")(A, x)
    d = srcad.differentiable(taken, wrt=(0, 1), backend="auto")
    check(taken, (A, x), (0, 1), d.grad(A, x))
    assert not is_compiled(d)
