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
    check_grads(fn, (x,), modes=("rev",))
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


# ---- a name bound twice, or read before its binding, is never merged with another --------------
# ``a and b`` normalises to ``_t = a; if _t: _t = b``: merging ``_t`` with an earlier name holding
# ``a`` rebound that name (any name beginning ``_t``: ``_top`` here, a rule's ``_taken1`` in
# srcad's own code differentiated again), a silent wrong value and gradient.

def user_name_like_a_temporary(x):
    s = np.sin(x[0])
    _top = s > 0.0
    both = s > 0.0 and x[1] > 5.0
    return x[2] * _top + x[1] * both


def either_after_a_temporary_name(x):
    s = np.cos(x[1])
    _tally = s < 0.5
    one = s < 0.5 or x[0] > 2.0
    return (x[2] + x[0]) * _tally + x[1] * one * x[0]


def read_before_bound_in_a_loop(x):
    s = x[0] * 1.0
    _tail = x[1] * 1.0
    total = 0.0
    for k in range(3):
        _tnew = s * 2.0
        total = total + _tail * x[2]
        _tail = s * 2.0
        s = s * 0.5 + x[1]
    return total + _tnew


def min_of_one_value_three_times(x):
    s = np.sin(x[0])
    return min(s, s, s) * x[1]


@pytest.mark.parametrize("fn", [user_name_like_a_temporary, either_after_a_temporary_name,
                                read_before_bound_in_a_loop, min_of_one_value_three_times])
def test_names_bound_twice_or_read_early_keep_their_values(fn):
    for x in (np.array([0.3, -0.7, 1.2]), np.array([-0.4, 6.0, 0.9]), np.array([2.5, 0.2, -1.1])):
        value, _ = srcad.vjp(fn, x)
        assert value == pytest.approx(fn(x), rel=1e-14)
        check_grads(fn, (x,), modes=("rev",))
        check_jvp(fn, (x,))
        check_grads(srcad.grad(fn), (x,), rtol=1e-4, atol=1e-6)
