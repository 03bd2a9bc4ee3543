"""Common subexpressions are reused only while nothing they read may have changed in place."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp


def read_after_scatter(x):
    S = x * 1.0
    a = S[0] * 2.0
    np.add.at(S, [0], 1.0)
    b = S[0] * 3.0
    return a + b


def read_after_store_in_loop(x):
    S = x * 1.0
    total = 0.0
    for i in range(2):
        total = total + S[0] * S[1]
        S[0] = S[1] * 2.0
        total = total + S[0] * S[1]
    return total


def read_through_alias_after_store(x):
    S = x * 1.0
    a = S[0] * 2.0
    V = S
    V[0] = 5.0
    return a


@pytest.mark.parametrize("fn", [read_after_scatter, read_after_store_in_loop])
def test_read_after_in_place_update_is_recomputed(fn):
    x = np.array([0.3, 0.4])
    y, _ = srcad.vjp(fn, x)
    assert y == pytest.approx(fn(x), rel=1e-14)
    check_grads(fn, (x,))
    check_jvp(fn, (x,))


def read_through_alias_read_after(x):
    S = x * 1.0
    a = S[0] * 2.0
    V = S
    V[0] = 5.0
    b = S[0] * 3.0
    return a + b


def test_alias_read_after_update_is_refused_not_reused():
    """Once ``S[0]`` after the update is no longer replaced by the stale temporary, the
    aliasing check sees the read and refuses."""
    with pytest.raises(srcad.SrcadSyntaxError, match="shares memory"):
        srcad.grad(read_through_alias_read_after)(np.array([0.3, 0.4]))
    check_grads(read_through_alias_after_store, (np.array([0.3, 0.4]),))
