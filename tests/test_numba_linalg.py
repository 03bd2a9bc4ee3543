"""backend="numba" where the adjoint branches on np.ndim: the outlined branches' names never
shadow a user's global. (The matrix programs themselves -- the Kalman filter, products of
every operand kind -- are in test_numba_backend's PROGRAMS.)"""
import numpy as np
import pytest

pytest.importorskip("numba")

import srcad  # noqa: E402
from test_numba_backend import check, is_compiled  # noqa: E402


_taken_adjoint_branch1 = "a user's global with the name an outlined branch would get"


def taken(A, x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] @ np.linalg.pinv(A) @ x[i]  # pinv: no shape rule, so np.ndim branches remain
    return s


def test_an_outlined_branch_never_shadows_a_users_global():
    from srcad.backends.numba_backend import BackendCompileError

    A, x = np.array([[0.9, 0.2], [-0.3, 0.7]]), np.array([[0.4, -0.8], [0.3, 0.1]])
    with pytest.raises(BackendCompileError, match=r"test_numba_linalg\.py:\d+: .*'_taken_adjoint_branch1', which the compiled adjoint needs for a branch it "
                       r"outlines, is taken by a global of your module; rename that global"):
        srcad.grad(taken, wrt=(0, 1), backend="numba")(A, x)
    d = srcad.differentiable(taken, wrt=(0, 1), backend="auto")
    check(taken, (A, x), (0, 1), d.grad(A, x))
    assert not is_compiled(d)
