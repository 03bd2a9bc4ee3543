"""Red team of the memory analysis's path splits (helper 185), in every mode.

The refusing check follows names known to hold True or False (jump flags) path by path. A name
bound again other than by ``name = True``/``False`` must lose what was known of it: a loop's
target (``for done in range(1):``) kept the flag it held before, so the branch the flag seemed
to rule out, with an in-place update of an array another name shares and reads afterwards, was
never read: a wrong value and gradient with no error (on a2ae706 too). Likewise a ``try``
whose body sets a flag tested after it (a ``return`` in the body): followed path by path, the
region's flag (``_try1``, False where the body raises) was kept True, so its handler, updating
an array another name shares, was never read.
"""
import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes

X = np.array([0.3, -0.7, 0.45])


def rebound_by_a_loop_target(x):
    r = np.sin(x)
    y = r
    done = True
    for done in range(1):  # done is 0 after the loop
        pass
    if not done:
        r[0] = 2.0 * x[1]  # reaches y
    return np.sum(y * x)


def rebound_by_a_loop_target_to_true(x):
    r = np.sin(x)
    y = r
    done = False
    for done in range(2):  # done is 1 after the loop
        pass
    if done:
        r[0] = 2.0 * x[1]
    return np.sum(y * x)


@pytest.mark.parametrize("f", [rebound_by_a_loop_target, rebound_by_a_loop_target_to_true])
def test_a_flag_rebound_by_a_loop_target_is_not_known_after_it(f):
    with pytest.raises(srcad.SrcadSyntaxError, match="in-place update of 'r'"):
        srcad.grad(f)(X.copy())


def breaks_with_a_user_flag(x):
    r = np.sin(x)
    y = np.cos(x)
    found = False
    for k in range(3):
        if x[k] > 0.4:
            y = r
            found = True
            break
    if not found:  # runs only where y does not share r
        r[0] = 2.0 * x[0]
    return np.sum(y * x)


@pytest.mark.parametrize("x", [X, np.array([0.1, 0.2, 0.3])])
def test_an_update_where_a_user_flag_rules_out_the_sharing_still_differentiates(x):
    check_all_modes(breaks_with_a_user_flag, (x.copy(),))


def returns_in_a_try_then_updates_in_the_handler(x):
    r = np.sin(x)
    y = r
    try:
        if x[0] > 0.5:
            return np.sum(y * x)
        if x[1] < 0.0:
            raise ValueError("negative")
    except ValueError:
        r[0] = 2.0 * x[2]  # reaches y
    return np.sum(y * x)


def test_a_handler_after_a_return_in_its_try_body_is_read():
    with pytest.raises(srcad.SrcadSyntaxError, match="in-place update of 'r'"):
        srcad.grad(returns_in_a_try_then_updates_in_the_handler)(X.copy())


def returns_in_a_try_then_updates_a_fresh_array_in_the_handler(x):
    r = np.sin(x)
    y = r
    try:
        if x[0] > 0.5:
            return np.sum(y * x)
        if x[1] < 0.0:
            raise ValueError("negative")
    except ValueError:
        y = r * 1.0
        y[0] = 2.0 * x[2]
    return np.sum(y * x)


@pytest.mark.parametrize("x", [X, np.array([0.6, -0.7, 0.45]), np.array([0.1, 0.2, 0.3])])
def test_a_return_in_a_try_body_and_a_handler_updating_its_own_copy(x):
    check_all_modes(returns_in_a_try_then_updates_a_fresh_array_in_the_handler, (x.copy(),))
