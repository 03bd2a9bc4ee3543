"""Fuzz campaign 30 (seeds 113640...): regressions for what it found."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp


# ---- a try body may count with `k += 1`: a number has no memory anyone else sees change ----------
# (seed 113640340975: a helper with a `while` counter, inlined into a try body because it was called
# with *args, was refused as "updates ... in place other than those the body made itself")

def counter_in_try(x):
    try:
        k = 0
        while k < 2:
            k += 1
        y = x * k
    except ValueError:
        y = x
    return np.sum(y * y)


def running_sum_in_try(x):
    try:
        s = 0.0
        for v in x:
            s += v * v
        y = s
    except ValueError:
        y = np.sum(x)
    return y


def counted_scaling(m, u):
    k = 0
    while k < 2:
        k += 1
        u = u * 2.0 + m
    return u


def helper_inlined_into_try(x):
    try:
        y = counted_scaling(*[x], u=np.sin(x))
    except ValueError:
        y = x
    return np.sum(y)


def made_array_updated_in_try(x):
    try:
        y = np.zeros(3)
        y += x
        y *= 2.0
        z = y
    except ValueError:
        z = x
    return np.sum(np.sin(z))


def tuple_extended_in_try(x):  # (seed 113643341002)
    try:
        t = (x, x * 2.0)
        t += (np.cos(x),)
        y = t[0] * t[2]
    except ValueError:
        y = x
    return np.sum(y * y)


@pytest.mark.parametrize("fn", [counter_in_try, running_sum_in_try, helper_inlined_into_try,
                                made_array_updated_in_try, tuple_extended_in_try])
def test_counters_and_own_arrays_updated_in_a_try_body_are_differentiated(fn):
    x = np.array([0.3, -0.7, 1.1])
    check_grads(fn, (x,), modes=("rev",))
    check_jvp(fn, (x,))


def argument_counted_into(x):
    try:
        k = 0
        a = x
        for v in x:
            if v > 0.5:
                break
            k = a
        k += 1.0  # k may be x here: this would change the caller's array
        z = k
    except ValueError:
        z = x
    return np.sum(z)


def argument_updated_after_counting(x):
    try:
        k = 0
        k += 1
        x += k
        z = x
    except ValueError:
        z = x
    return np.sum(z)


def item_of_own_tuple_updated(x):
    try:
        t = (x, x * 2.0)
        t[0] += 1.0  # t[0] is x: this would change the caller's array
        y = t[0]
    except ValueError:
        y = x
    return np.sum(y)


@pytest.mark.parametrize("fn", [argument_counted_into, argument_updated_after_counting, item_of_own_tuple_updated])
def test_an_update_of_memory_the_body_did_not_make_is_still_refused(fn):
    with pytest.raises(srcad.SrcadSyntaxError, match="try body"):
        srcad.grad(fn)(np.array([0.1, 0.2, 0.3]))


# ---- a return in a nested branch of a loop: the memory check follows its stop flag ----------------
# (seed 113641340938: `if ...: if ...: return c` then `c -= ...` was refused as "'c -= ...' updates
# 'c' in place, and 'the value returned', which shares memory with it, is read after it": the flag
# set in the inner `if` was not followed past the outer one, so the loop's next pass met the update)

def returns_state_from_nested_branch(x):
    c = np.sin(x)
    for i in range(3, -1, -1):
        if np.sum(x) < 10.0:
            if i <= 1:
                return c
            c *= x
    return x


def breaks_from_nested_branch(x):
    c = np.sin(x)
    d = x
    for i in range(4):
        if np.sum(x) < 10.0:
            if i == 2:
                d = c
                break
            c += x * x
    return d * 2.0


@pytest.mark.parametrize("fn", [returns_state_from_nested_branch, breaks_from_nested_branch])
def test_a_jump_out_of_a_nested_branch_meets_no_later_update(fn):
    x = np.array([0.3, -0.7, 1.1])
    check_grads(fn, (x,), modes=("rev",))
    check_jvp(fn, (x,))


def shares_state_from_nested_branch(x):
    c = np.sin(x)
    d = x
    for i in range(4):
        if np.sum(x) < 10.0:
            if i == 1:
                d = c  # no jump: the next pass updates d's memory through c
            c += x
    return d * 2.0


def test_an_alias_made_in_a_nested_branch_without_a_jump_is_still_refused():
    with pytest.raises(srcad.SrcadSyntaxError, match="shares memory"):
        srcad.vjp(shares_state_from_nested_branch, np.array([0.1, 0.2, 0.3]))


# ---- forward mode knows a number default left out, as reverse mode does ---------------------------
# (seed 113642340937: `r = c; r /= ...` of a parameter `c=1.45` the call leaves out was refused by
# jvp only, as "'r /= ...' updates 'r' in place, and 'c', which shares memory with it, is read after
# it": jvp took the kinds of the arguments given, not of the defaults, so c might be an array)

def rescaled_by_default(x, n, c=1.45):
    for i in range(n):
        r = c
        r /= 1.5 + c ** 2
        x = x * r + np.sin(x)
    return x


def test_jvp_reads_a_number_default_as_a_number():
    x = np.array([0.3, -0.7, 1.1])
    check_jvp(rescaled_by_default, (x, 3))
    check_grads(rescaled_by_default, (x, 3))
    tangent = np.array([1.0, 0.5, -2.0])
    _, by_jvp = srcad.jvp(rescaled_by_default, (x, 3), (tangent, None))
    _, pullback = srcad.vjp(rescaled_by_default, x, 3)
    for row in np.eye(3):  # the same linear map both ways: rowᵀ J u
        np.testing.assert_allclose(row @ by_jvp, pullback(row) @ tangent, rtol=1e-12)


def updates_a_default_array(x, n, c=np.ones(3)):
    for i in range(n):
        r = c
        r /= 2.0  # would change the default itself
    return x * c


def test_jvp_still_refuses_an_update_of_an_array_default():
    with pytest.raises(srcad.SrcadError):
        srcad.jvp(updates_a_default_array, (np.ones(3), 2), (np.ones(3), None))
    np.testing.assert_array_equal(updates_a_default_array.__defaults__[0], np.ones(3))


# ---- a class method inherited, called on self in a method srcad inlines -----------------------------
# (seed 113644341034: refused as "self.num(...) on this B object calls A.num, not A.num": the
# check compares the class a class method binds, which the message did not say)

class Gained:
    GAIN = 0.5

    @classmethod
    def gained(cls, z):
        return z * cls.GAIN

    def step(self, x):
        return self.gained(x)


class MoreGained(Gained):
    GAIN = 2.0


more_gained = MoreGained()


def steps_through_star_call(x):
    return np.sum(more_gained.step(*[x]))


def steps_through_plain_call(x):
    return np.sum(np.sin(more_gained.step(x)))


def test_a_class_method_bound_to_a_subclass_is_the_subclasss():
    # (it was refused, saying so, until the inlined method was made for its object's class: campaign 31)
    x = np.array([0.3, -0.7, 1.1])
    check_grads(steps_through_star_call, (x,))
    np.testing.assert_allclose(srcad.grad(steps_through_star_call)(x), 2.0)  # compiled for MoreGained: GAIN 2
    check_grads(steps_through_plain_call, (x,))


def test_the_generator_unpacks_a_sequence_of_one_item_with_a_trailing_comma():
    """Seed 113647341013 wrote ``x = t`` for a one-item tuple ``t``, then indexed ``x`` as the array
    it was meant to hold (TypeError: tuple indices must be integers...): an invalid program. (The
    seed's program changes with srcad's rule tables, whose names the generator draws: the writer
    of unpackings is checked instead.)"""
    from fuzz.program import unpacked

    for targets in (["x"], ["x", "y"], ["x", "y", "z"]):
        scope = {"t": tuple(range(len(targets)))}
        exec(f"{unpacked(targets)} = t", scope)
        assert [scope[name] for name in targets] == list(range(len(targets)))
