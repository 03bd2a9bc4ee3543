"""Returns and breaks several loops deep, then in-place updates: the memory analysis follows
the rest of a block apart per kind of loop exit, bounded by the paths followed apart at once
(``memory_state.MAX_PATHS``), not by the splits of a whole function (16 of them, spent on
the passes of nested loops, refused these)."""
import numpy as np
import pytest

import srcad
from lang_checks import check_unchanged


def returns_three_loops_deep(x):
    r = np.sin(x)
    for i in range(2):
        for j in range(2):
            for k in range(2):
                if np.sum(r) > 2.5 + 0.1 * (i + j + k):
                    return r
            r[0] *= 1.1
        r[1:] *= 1.2
    return r


def returns_four_loops_deep(x):
    r = np.sin(x)
    for i in range(2):
        for j in range(2):
            for k in range(2):
                for m in range(2):
                    if np.sum(r) > 2.5 + 0.1 * (i + j + k + m):
                        return r
                r[2] *= 1.05
            r[0] *= 1.1
        r[1:] *= 1.2
    return r


def breaks_and_returns_in_a_while(x):
    r = np.sin(x)
    for i in range(3):
        for j in range(2):
            k = 0
            while k < 3:
                if np.sum(r) > 2.4 + 0.1 * i:
                    return r
                if r[0] > 1.5:
                    break
                k += 1
                r[1] *= 1.05
            r[0] *= 1.1
        r[2:] *= 1.2
    return r


def loops_one_after_another(x):
    r = np.sin(x)
    for a in range(2):
        for b in range(2):
            for c in range(2):
                if np.sum(r) > 2.5 + c:
                    return r
            r[0] *= 1.1
    for a in range(2):
        for b in range(2):
            for c in range(2):
                if r[0] > 1.2 + c:
                    return r
            r[1] *= 1.1
    for a in range(2):
        for b in range(2):
            for c in range(2):
                if r[1] > 1.3 + c:
                    return r
            r[2] *= 1.1
    return r


def returns_early_in_a_helper(r, t):
    for i in range(2):
        for j in range(2):
            for k in range(2):
                if r[0] > t + k:
                    return r
            r[2] *= 1.1
    return r


def helpers_that_return_early(x):
    r = np.sin(x)
    r = returns_early_in_a_helper(r, 1.3)
    r = returns_early_in_a_helper(r, 1.5)
    for i in range(2):
        for j in range(2):
            if np.sum(r) > 3.0:
                return r
            r[1] *= 0.9
        r[0] *= 0.95
    return r


@pytest.mark.parametrize("f", [returns_three_loops_deep, returns_four_loops_deep, breaks_and_returns_in_a_while,
                               loops_one_after_another])
@pytest.mark.parametrize("x", [[0.7, 0.9, 1.1], [0.1, 0.2, 0.3]])  # returns part way, never
def test_an_update_after_a_return_several_loops_deep(f, x):
    check_unchanged(lambda v: np.sum(np.cos(f(v))), np.array(x))


@pytest.mark.parametrize("x", [[0.7, 0.9, 1.1], [0.1, 0.2, 0.3]])
def test_helpers_that_return_early_several_loops_deep(x):
    # (second order: the helper's derivative, differentiated again, is refused as a limit of srcad
    # at that order, whatever the paths followed apart)
    check_unchanged(lambda v: np.sum(np.cos(helpers_that_return_early(v))), np.array(x), second=False)


def shares_three_loops_deep(d):
    r = d * np.ones(3)
    y = d * np.ones(3)
    for i in range(2):
        for j in range(2):
            for k in range(2):
                if d > 0.0:
                    y = r  # y shares r from here on, on this path only
                    break
            r[0] = 0.21 * d  # ... and this update reaches it
        r[1] *= 1.5
    return y


def shares_before_a_return_four_loops_deep(d):
    r = d * np.ones(3)
    y = d * np.ones(3)
    for i in range(2):
        for j in range(2):
            for k in range(2):
                for m in range(2):
                    if d > 1.0:
                        return y
                    if d > 0.0:
                        y = r
                        break
                r[2] *= 1.05
            r[0] *= 1.1
    return y


@pytest.mark.parametrize("f", [shares_three_loops_deep, shares_before_a_return_four_loops_deep])
def test_an_update_reaching_a_value_shared_on_one_path_only_is_still_refused(f):
    with pytest.raises(srcad.SrcadSyntaxError, match="in-place update of 'r'|updates 'r\\["):
        srcad.grad(lambda t: np.sum(f(t)))(0.5)


def returns_from_seven_loops_one_after_another(x):
    r = np.sin(x)
    for k in range(2):
        if r[0] > 0.80 + k:
            return r
    r[0] *= 1.1
    for k in range(2):
        if r[0] > 0.82 + k:
            return r
    r[0] *= 1.1
    for k in range(2):
        if r[0] > 0.84 + k:
            return r
    r[0] *= 1.1
    for k in range(2):
        if r[0] > 0.86 + k:
            return r
    r[0] *= 1.1
    for k in range(2):
        if r[0] > 0.88 + k:
            return r
    r[0] *= 1.1
    for k in range(2):
        if r[0] > 0.90 + k:
            return r
    r[0] *= 1.1
    for k in range(2):
        if r[0] > 0.92 + k:
            return r
    r[0] *= 1.1
    return r


@pytest.mark.parametrize("x", [[0.7, 0.9, 1.1], [0.1, 0.2, 0.3]])  # returns after the third loop, never
def test_past_the_paths_followed_apart_the_exits_are_joined(x):
    # 2 ** 7 kinds of exit, past MAX_PATHS: the last loops' exits are joined (where that loses
    # the flags an acceptance needs, the check refuses); what it accepts is right
    check_unchanged(lambda v: np.sum(np.cos(returns_from_seven_loops_one_after_another(v))), np.array(x),
                    second=False)
