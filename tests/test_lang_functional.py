"""Functions as values and checks (issue 10): ``map``/``filter`` with a lambda or a function,
``functools.reduce``, ``operator.add``-style functions, ``assert`` statements and
``np.testing.assert_*`` calls (checks without derivatives). Checked against finite
differences in reverse (joint and pullback twice), forward and second order."""
import functools
import operator

import numpy as np
import pytest

import srcad
from srcad.errors import SrcadSyntaxError
from lang_checks import check_all_modes
import lang_programs

X = np.array([0.5, -1.2, 2.0])
Y = np.array([0.3, 0.8, -0.4])


def square(t):
    return t * t


def map_lambda(x):
    ys = list(map(lambda t: np.sin(t) * 2.0, [x[0], x[1], x[2]]))
    return ys[0] * ys[1] + ys[2]


def map_function(x):
    return sum(map(square, [x[0], x[1], x[2] * x[0]]))


def map_two_iterables(x, y):
    return np.sum(np.array(list(map(operator.mul, x, y)))) + sum(map(lambda a, b: a * np.exp(b), x, y))


def map_in_a_loop(x):
    total = 0.0
    for v in map(np.tanh, [x, x * 2.0]):
        total = total + np.sum(v * x)
    return total


def filter_lambda(x):
    kept = list(filter(lambda t: t > 0, [x[0], x[1], x[2]]))
    return sum(kept) * x[0]


def filter_none(x):
    return sum(filter(None, [x[0], 0.0, x[2]]))


def local_function_map(x):
    def layer(row):
        return np.tanh(row @ np.ones(3))
    return sum(map(layer, [x, x * x]))


def reduce_product(x):
    return functools.reduce(operator.mul, [x[0], x[1], x[2]])


def reduce_with_start(x, y):
    return np.sum(functools.reduce(lambda acc, m: acc @ m, [np.outer(x, y), np.diag(x)], np.eye(3)))


def operator_calls(x, y):
    return np.sum(operator.add(operator.mul(x, y), operator.neg(x)) ** 2) + operator.getitem(x, 1) * operator.truediv(
        x[0], y[1])


def reversed_items(x):
    """``reversed`` gives an iterator that runs out: the consumers' derivatives read their argument again."""
    return sum(reversed([x[0], x[1] ** 2])) + max(reversed([x[2], x[0] * x[1]])) + sum(tuple(reversed([x[1], x[2]])))


def dict_views_consumed(x):
    """A builtin consuming a dict view: the view has no rule, a loop over it is differentiated."""
    d = {"a": x[0] ** 2, "b": np.sin(x[1]), "c": x[2] * x[0]}
    pairs = list(d.items())
    return sum(d.values()) + max(d.values()) * min(list(d.values())) + sum(v for _, v in pairs) + sum(
        v * len(k) for k, v in d.items())


def reversed_rows(x):
    rows = [r * r for r in np.outer(x, x)]
    return sum(reversed(x * x)) + sum(reversed(rows))[1]


@pytest.mark.parametrize("f", [map_lambda, map_function, map_in_a_loop, filter_lambda, filter_none,
                               local_function_map, reduce_product, lang_programs.checked_norm,
                               lang_programs.tested_energy, reversed_items, reversed_rows,
                               dict_views_consumed])
def test_one_argument(f):
    check_all_modes(f, (X,))


@pytest.mark.parametrize("f", [map_two_iterables, reduce_with_start, operator_calls])
@pytest.mark.parametrize("wrt", [0, 1])
def test_two_arguments(f, wrt):
    check_all_modes(f, (X, Y), wrt=wrt)


def test_checks_still_fail_when_they_should():
    with pytest.raises(AssertionError, match="a vector"):
        srcad.grad(lang_programs.checked_norm)(np.ones((2, 2)))
    with pytest.raises(AssertionError):
        srcad.grad(lang_programs.tested_energy)(np.ones(4))
    with pytest.raises(AssertionError):
        srcad.jvp(lang_programs.tested_energy, (np.ones(4),), (np.ones(4),))


def test_map_kept_in_a_variable_refused():
    def f(x):
        doubled = map(lambda t: t * 2.0, [x[0], x[1]])
        return sum(doubled)

    with pytest.raises(SrcadSyntaxError, match=r"srcad takes map\(...\) where one pass consumes it") as e:
        srcad.grad(f)(X)
    assert e.value.lineno == f.__code__.co_firstlineno + 1


def test_function_held_in_a_local_variable_refused():
    def f(x, act):
        return sum(map(act, [x[0], x[1]]))

    with pytest.raises(SrcadSyntaxError, match="'act' is a local variable"):
        srcad.grad(f)(X, np.tanh)


def test_a_def_inside_the_function_used_as_a_value_refused():
    # srcad inlines it where it is called; stored in a list, the generated code raised NameError
    def f(x):
        fs = []

        def g(y):
            return np.sin(y)
        fs.append(g)
        return np.sum(x ** 2) * len(fs)

    with pytest.raises(SrcadSyntaxError, match="cannot use it as a value") as e:
        srcad.grad(f)(X)
    assert e.value.lineno == f.__code__.co_firstlineno + 5
