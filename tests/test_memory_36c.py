"""Two false refusals of the memory analysis found by the fuzzer (seed 113694), in every mode.

1. A helper updating in place a parameter whose default is a number (``acc *= e`` with
   ``acc=0.2``) rebinds the name: Python's one default object is left as it was. A call leaving
   ``acc`` out was refused as one that "updates in place the default of its parameter". Only a
   default no update in place can change (a number, NumPy number, string, ``None``, a tuple of
   them) is exempt: a list, a dict, an array (a 0-d one too), a tuple holding a list stay refused.
2. A ``return`` inside a nested loop, then an in-place update of the returned array in the outer
   loop after the inner one: the update runs only where the function has not returned (lowered
   to ``if not _skip1:``), but the flags were joined at the inner loop's exit, so the update was
   read as reaching the value returned. The rest of the block after a loop is now followed from
   each kind of exit where they differ in the flags it tests. Differentiated again (a return in
   one loop too), an ``if`` on a flag known on the path is no longer split into both branches.
"""
import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes
from srcad.passes.memory_calls import cannot_change_in_place

X = np.array([0.3, -0.7, 0.45, 0.9])


# ---- 1. defaults ---------------------------------------------------------------------------
def step(h, x, acc=0.2):
    acc *= np.tanh(x.sum())  # a float: rebinds acc, the default stays 0.2
    return h - acc * x, np.mean(x ** 2)


def stepped_twice(x):
    h, err = step(x, x)
    h, err2 = step(h, x * err)
    return np.sum(h ** 2) + err + err2


def test_a_number_default_updated_by_a_helper_is_rebound_not_shared():
    check_all_modes(stepped_twice, (X.copy(),))
    assert step.__defaults__ == (0.2,)


def scaled(h, x, acc=np.float64(0.5), tag="s", pair=(1.0, None)):
    acc += np.sum(x)
    tag += "!"
    pair += (2.0,)
    return h * acc


def scaled_twice(x):
    return np.sum(scaled(scaled(x, x), x))


def test_numpy_number_string_and_tuple_defaults_updated_by_a_helper():
    check_all_modes(scaled_twice, (X.copy(),))
    assert scaled.__defaults__ == (np.float64(0.5), "s", (1.0, None))


def log_into(y, hist=[]):  # noqa: B006  (the shared default is the point)
    hist.append(y)
    return y * 2.0


def logs(x):
    return np.sum(log_into(np.sin(x)))


def test_a_list_default_updated_by_a_helper_is_still_refused():
    with pytest.raises(srcad.SrcadSyntaxError, match="default of its parameter 'hist'"):
        srcad.grad(logs)(X.copy())


def accumulate(y, acc=np.array(0.0)):  # a 0-d array: += writes into the one default
    acc += np.sum(y)
    return y * 2.0


def test_an_array_default_updated_by_a_helper_is_still_refused():
    def f(x):
        return np.sum(accumulate(np.sin(x)))

    with pytest.raises(srcad.SrcadSyntaxError, match="default of its parameter 'acc'"):
        srcad.grad(f)(X.copy())


@pytest.mark.parametrize("value, unchangeable", [
    (0.2, True), (3, True), (None, True), ("s", True), (np.float64(0.5), True), (np.bool_(True), True),
    ((1.0, (None, "a")), True), (np.array(0.0), False), ([], False), ({}, False), ((1.0, []), False),
    (np.zeros(1, dtype=[("a", float)])[0], False),  # a structured scalar is a view of its array
])
def test_which_defaults_no_update_in_place_can_change(value, unchangeable):
    assert cannot_change_in_place(value) is unchangeable


# ---- 2. a return in a nested loop ------------------------------------------------------------
def returns_from_the_inner_loop(d):
    r = d * np.ones(3)
    for k in range(2):
        for a in range(2):
            if d > 5.0:
                return r
        r[0] = 0.21 * d
    return r


def returns_from_a_while_in_a_for(x):
    r = np.sin(x)
    for k in range(3):
        j = 0
        while j < 2:
            if np.sum(r) > 0.8 + 0.1 * k:
                return r
            j += 1
        r[1:] *= 1.5
    return r


def returns_from_the_loop(d):
    r = d * np.ones(3)
    for k in range(2):
        if d > 5.0:
            return r
        r[0] = 0.21 * d
    return r


@pytest.mark.parametrize("d", [-0.31, 6.2])
def test_a_return_in_a_loop_then_an_update_at_second_order(d):
    # differentiated again, the derivative's split at ``if _stop1: _stop2 = True`` followed the
    # branch a known flag rules out, so a path that had returned reached the update
    check_all_modes(lambda t: np.sum(returns_from_the_loop(t) ** 2), (d,))


@pytest.mark.parametrize("d", [-0.31, 6.2])
def test_an_update_after_an_inner_loop_that_returns(d):
    check_all_modes(lambda t: np.sum(returns_from_the_inner_loop(t) ** 2), (d,))


@pytest.mark.parametrize("x", [[0.7, 0.9, 1.1], [0.1, 0.2, 0.3], [0.05, 0.05, 0.05]])  # returns at k = 0, 2, never
def test_an_update_after_an_inner_while_that_returns(x):
    check_all_modes(lambda x: np.sum(np.cos(returns_from_a_while_in_a_for(x))), (np.array(x),))


def breaks_then_updates_a_shared_array(d):
    r = d * np.ones(3)
    y = d * np.ones(3)
    for k in range(2):
        for a in range(2):
            if d > 0.0:
                y = r  # y shares r from here on
                break
        r[0] = 0.21  # ... and this update reaches it
    return y


def test_an_update_reaching_a_value_bound_before_a_break_is_still_refused():
    with pytest.raises(srcad.SrcadSyntaxError, match="in-place update of 'r'"):
        srcad.grad(lambda t: np.sum(breaks_then_updates_a_shared_array(t)))(0.5)
