"""break, continue and early return in loop nests, at every depth, with for and while.

Regression tests of issue 9: a jump in an inner loop whose outer loops do not jump was left
in place (a wrong gradient for ``break``, a refusal for ``continue``). Each function is
checked against finite differences in reverse mode (joint adjoint, and the pullback called
twice) and in forward mode.
"""
import gast
import numpy as np
import pytest

import srcad
from srcad.errors import SrcadSyntaxError
from srcad.passes.jumps import check_jumps_eliminated
from srcad.testing import check_grads, check_jvp

NEVER = 1e9


def check_both_modes(f, args, wrt=0):
    check_grads(f, args, wrt=wrt, modes=("rev",))
    check_jvp(f, args, wrt=wrt)


def inner_break_only(x):
    s = 0.0
    for i in range(4):
        for j in range(4):
            if j > i:
                break
            s = s + x[j] * 2.0
    return s


def inner_continue_only(x):
    s = 0.0
    for i in range(4):
        for j in range(4):
            if j > i:
                continue
            s = s + x[j] * 2.0
    return s


def innermost_jumps_only(x):
    s = 0.0
    for i in range(3):
        for j in range(3):
            for k in range(4):
                if k == j:
                    continue
                if k > i + 1:
                    break
                s = s + x[i] * x[j] * x[k]
    return s


def middle_jumps_only(x):
    s = 0.0
    for i in range(3):
        for j in range(4):
            if j == 1:
                continue
            if j > i + 1:
                break
            for k in range(3):
                s = s + x[k] * x[j] * 0.5
    return s


def innermost_return_only(x, limit):
    s = 0.0
    for i in range(3):
        for j in range(3):
            for k in range(3):
                if s > limit:
                    return s * 2.0
                s = s + x[i] * x[j] * x[k]
    return s


def for3_jumps(x, t1, t2, t3):
    s = 0.0
    for i in range(4):
        if i == 1:
            continue
        for j in range(4):
            if j > i:
                break
            for k in range(4):
                if k == j:
                    continue
                if k > 2:
                    break
                if s > t3:
                    return s * 2.0
                s = s + x[i] * x[j] * x[k]
            if j == 2:
                continue
            if s > t2:
                return s - 1.0
            s = s * 1.1
        if i == 3:
            break
        if s > t1:
            return s + 3.0
        s = s + x[i]
    return s


def while3_jumps(x, t1, t2, t3):
    s = 0.0
    i = 0
    while i < 4:
        i = i + 1
        if i == 2:
            continue
        j = 0
        while True:
            j = j + 1
            if j > i:
                break
            k = 0
            while k < 4:
                k = k + 1
                if k == j:
                    continue
                if k > 3:
                    break
                if s > t3:
                    return s * 2.0
                s = s + x[i - 1] * x[j - 1] * x[k - 1]
            if j == 2:
                continue
            if s > t2:
                return s - 1.0
            s = s * 1.1
        if i == 4:
            break
        if s > t1:
            return s + 3.0
        s = s + x[i - 1]
    return s


def mixed3_jumps(x, t1, t2, t3):
    s = 0.0
    i = 0
    while i < 3:
        i = i + 1
        for j in range(4):
            if j == i:
                continue
            k = 0
            while True:
                k = k + 1
                if k > j:
                    break
                if s > t3:
                    return s * 2.0
                s = s + np.sin(x[i]) * x[j] * x[k - 1]
            if s > t2:
                return s - 1.0
            if j > 2:
                break
        if s > t1:
            return s + 3.0
        s = s * 0.9
    return s


def sq_until(v, limit):
    out = v
    for i in range(5):
        for j in range(2):
            if j > i:
                break
            out = out * 1.2
        if np.sum(out) > limit:
            break
    return out


def helper_with_loop_jumps(x):
    return np.sum(sq_until(x, 4.0) * x)


def local_helper_with_loop_jumps(x):
    def grow(v):
        out = v
        for i in range(4):
            for j in range(3):
                if j > i:
                    break
                if j == 1:
                    continue
                out = out * 1.3
        return out
    return np.sum(grow(x) * x)


def for_else(x, limit):
    s = 0.0
    for i in range(4):
        if s > limit:
            break
        s = s + x[i] ** 2
    else:
        s = s * 3.0
    return s


def while_else_continue_only(x):
    s = 0.0
    k = 0
    while k < 4:
        k = k + 1
        if k == 2:
            continue
        s = s + np.sin(x[k - 1])
    else:
        s = s * x[0]
    return s


def inner_else_breaks_outer(x, limit):
    s = 0.0
    for i in range(4):
        for j in range(3):
            if s > limit:
                break
            s = s + x[i] * x[j]
        else:
            s = s + 1.0
            if i == 2:
                break
            continue
        s = s * 0.5
    else:
        return s * x[3]
    return s


def else_returns(x, limit):
    for i in range(4):
        if x[i] > limit:
            break
    else:
        return np.sum(x ** 2)
    return x[i] * 2.0


def while_compound_test_break(x):
    s = 0.0
    k = 0
    while k < 4 and x[k] < 5.0:  # x[4] would fail: the test is not recomputed after the break
        k = k + 1
        if k == 4:
            break
        s = s + x[k] ** 2
    return s


rng = np.random.default_rng(7)
SMALL = rng.uniform(0.2, 1.0, 4)


@pytest.mark.parametrize("f", [inner_break_only, inner_continue_only, innermost_jumps_only, middle_jumps_only,
                               helper_with_loop_jumps, local_helper_with_loop_jumps])
def test_jumps_in_inner_loops_only(f):
    check_both_modes(f, (SMALL.copy(),))


@pytest.mark.parametrize("limit", [NEVER, 3.0])
def test_return_from_innermost_loop_only(limit):
    check_both_modes(innermost_return_only, (SMALL.copy(), limit))


# thresholds: never return, or return from the outer, middle or inner loop
THRESHOLDS = [(NEVER, NEVER, NEVER), (2.0, NEVER, NEVER), (NEVER, 2.0, NEVER), (NEVER, NEVER, 2.0)]


@pytest.mark.parametrize("f", [for3_jumps, while3_jumps, mixed3_jumps])
@pytest.mark.parametrize("thresholds", THRESHOLDS)
def test_depth_three_jumps_at_every_level(f, thresholds):
    x = rng.uniform(0.5, 1.5, 4)
    assert f(x, *thresholds) != f(x, NEVER, NEVER, NEVER) or thresholds[0] == NEVER == thresholds[2]
    check_both_modes(f, (x,) + thresholds)


@pytest.mark.parametrize("f,limit", [(for_else, NEVER), (for_else, 0.5), (inner_else_breaks_outer, NEVER),
                                     (inner_else_breaks_outer, 1.0), (inner_else_breaks_outer, 3.0),
                                     (else_returns, NEVER), (else_returns, 0.6)])
def test_loop_else_runs_when_no_break(f, limit):
    x = rng.uniform(0.2, 1.0, 4)
    check_both_modes(f, (x, limit))


def test_while_with_a_compound_test_and_break():
    check_both_modes(while_compound_test_break, (SMALL.copy(),))


def test_while_else_with_continue():
    check_both_modes(while_else_continue_only, (SMALL.copy(),))


def nonlinear_nest(x):
    s = 0.0
    for i in range(3):
        for j in range(4):
            if j > i + 1:
                break
            if j == i:
                continue
            s = s + np.sin(x[i] * x[j])
    return s


def test_second_order_through_nested_jumps():
    # forward over reverse: the tangent of the gradient against differences of the gradient
    check_jvp(srcad.grad(nonlinear_nest), (SMALL.copy(),))


def test_a_surviving_jump_is_an_error_not_a_guess():
    class Source:
        def syntax_error(self, message, node=None):
            return SrcadSyntaxError(message, "f.py", 1)

    loop = gast.parse("for i in r:\n    continue").body
    with pytest.raises(SrcadSyntaxError, match="internal error"):
        check_jumps_eliminated(loop, Source())
    stray = gast.parse("for i in r:\n    if s:\n        break\n    f(x)").body
    with pytest.raises(SrcadSyntaxError, match="internal error"):
        check_jumps_eliminated(stray, Source())
