"""Operators on objects of your classes (probe 21D): srcad's rules for ``*``, ``+``, ``@``...
are those of numbers and arrays; an object with its own ``__mul__`` (a schedule, a linear
operator) made ``S * x`` something else and the rule called that method again on the
cotangent: a plausible wrong gradient. Such an operator is refused, at the user's line for a
global or closure value or an argument's object."""
import numpy as np
import pytest

import srcad
from srcad import SrcadSyntaxError

X = np.array([0.5, 1.2])


class Schedule:
    """Each use advances it."""

    def __init__(self):
        self.n = 0

    def __mul__(self, other):
        self.n += 1
        return other * (1.0 + 0.1 * self.n)

    __rmul__ = __mul__


class Operator:
    def __init__(self, M):
        self.M = M

    def __mul__(self, x):
        return self.M @ x

    __rmul__ = __mul__


SCHEDULE = Schedule()
OPERATOR = Operator(np.array([[1.0, 2.0], [0.0, 3.0]]))


def scheduled(x):
    for t in range(3):
        x = SCHEDULE * x
    return np.sum(x)


def applied(x):
    y = OPERATOR * x
    return y @ np.array([1.0, -1.0])


@pytest.mark.parametrize("f,name", [(scheduled, "SCHEDULE"), (applied, "OPERATOR")])
def test_an_operator_on_a_global_object_of_yours_is_refused(f, name):
    # before: [105.31, 138.38] for [5.77, 5.77] (the schedule), M @ v for M.T @ v (the operator)
    for differentiate in (lambda: srcad.grad(f)(X), lambda: srcad.jvp(f, (X,), (np.ones(2),))):
        with pytest.raises(SrcadSyntaxError, match=f"'{name}' is an object of your class") as info:
            differentiate()
        assert info.value.filename == __file__


def applied_to(x, op):
    return np.sum(op * x)


def test_an_operator_on_a_parameter_object_of_yours_is_refused():
    # the code is made for the classes of its arguments' objects: refused at the user's line
    for differentiate in (lambda: srcad.grad(applied_to)(X, OPERATOR),
                          lambda: srcad.jvp(applied_to, (X, OPERATOR), (np.ones(2), None))):
        with pytest.raises(SrcadSyntaxError, match="'op' is an object of your class Operator") as info:
            differentiate()
        assert info.value.filename == __file__


@pytest.mark.parametrize("w", [np.array([2.0, 3.0]), 2.0, np.float64(2.0)])
def test_numbers_and_arrays_are_differentiated(w):
    np.testing.assert_allclose(srcad.grad(applied_to)(X, w), np.broadcast_to(w, X.shape))
    np.testing.assert_allclose(srcad.jvp(applied_to, (X, w), (np.array([1.0, -1.0]), None))[1],
                               np.sum(np.broadcast_to(w, X.shape) * np.array([1.0, -1.0])))
