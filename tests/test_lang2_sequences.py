"""``+`` and ``*`` of lists and tuples join and repeat them: the adjoint of an item is not the
item-by-item sum the array rules give. Once a silently wrong gradient; now refused when the
reverse sweep meets it (a sequence adjoint longer or shorter than the operand's), unless
srcad knows both lengths where it joins them (``passes.sequence_joins``: then it is the
display of their items)."""
import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes
from srcad.testing import check_jvp

X = np.array([0.4, -0.7, 1.1])


def tuple_joined(x):
    t = (x[0], x[1])
    e = t + (x[2] * 2.0,)
    return e[0] * e[2]


def list_joined(x):
    e = [x[0], x[1]] + [x[2] * 2.0]
    return e[0] * e[2]


def list_repeated(x):
    e = [x[0], x[1]] * 2
    return e[0] * e[3]


def tuple_grown_in_a_loop(x):
    e = (x[0],)
    for k in range(2):
        e = e + (x[k + 1] * 2.0,)
    return e[0] * e[2]


def list_grown_in_a_loop(x):
    e = [x[0]]
    for k in range(2):
        e = e + [x[k + 1] * 2.0]
    return e[0] * e[2]


@pytest.mark.parametrize("fn", [tuple_joined, list_joined], ids=lambda f: f.__name__)
def test_joining_sequences_of_known_lengths_is_differentiated(fn):
    check_all_modes(fn, (X,))


@pytest.mark.parametrize("fn", [tuple_grown_in_a_loop, list_grown_in_a_loop, list_repeated],
                         ids=lambda f: f.__name__)
def test_joining_or_repeating_sequences_with_derivatives_is_refused(fn):
    with pytest.raises(srcad.SrcadError, match=r"srcad does not differentiate \+ or \* of lists or tuples"):
        srcad.grad(fn)(X)
    with pytest.raises(srcad.SrcadError, match=r"srcad does not differentiate \+ or \* of lists or tuples"):
        srcad.vjp(fn, X)[1](1.0)


@pytest.mark.parametrize("fn", [tuple_grown_in_a_loop, list_grown_in_a_loop], ids=lambda f: f.__name__)
def test_joined_sequences_are_refused_in_forward_mode_too(fn):
    # was a NumPy broadcasting error from the tangent of the joined sequence
    with pytest.raises(srcad.SrcadError, match=r"srcad does not differentiate \+ or \* of lists or tuples"):
        srcad.jvp(fn, (X,), (np.ones(3),))


def test_a_repeated_sequence_has_the_right_tangent():
    check_jvp(list_repeated, (X,))  # the tangent list repeats with the list


def displayed(x):
    t = (x[0], x[1])
    e = (t[0], t[1], x[2] * 2.0)  # what the message says to write
    return e[0] * e[2]


def test_the_display_the_message_suggests_is_differentiated():
    check_all_modes(displayed, (X,))
