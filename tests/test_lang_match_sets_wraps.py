"""Ordinary Python that was refused (found by a probe): ``match`` statements, set comprehensions
of values without derivative, and helpers wrapped by a pass-through ``functools.wraps``
decorator of the same module. Every mode against finite differences; what stays refused is
refused with a message naming it."""
import dataclasses
import enum
import functools
from typing import NamedTuple

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes, refused

X = np.array([0.5, -0.3, 1.2, 0.7])


# ---- match statements -------------------------------------------------------------------

class Kind(enum.Enum):
    RELU = 1
    TANH = 2


@dataclasses.dataclass
class Scaled:
    scale: float
    shift: float


class Pair(NamedTuple):
    first: float
    second: float


def activation(x, kind):
    match kind:
        case "relu":
            y = np.maximum(x, 0.0)
        case ("scaled", s):
            y = s * np.tanh(x)
        case None | "identity":
            y = x
        case _:
            y = x * x
    return np.sum(y * x)


def by_number(x, n):
    match n:
        case 0:
            return np.sum(x)
        case 1 | 2:
            return np.sum(np.sin(x) * n)
        case -1:
            return np.sum(x ** 3)
        case m if m > 10:
            return np.sum(np.exp(x / m))
        case True:  # (1 matched above: never reached for True)
            return 0.0
    return np.sum(np.cos(x))


def by_value_pattern(x, kind):
    match kind:
        case Kind.RELU:
            y = np.maximum(x, 0.0) * x
        case Kind.TANH:
            y = np.tanh(x)
    return np.sum(y)


def nested_sequences(x, spec):
    """Nested sequences, a guard reading a capture, ``as``, captures of the derivative's value."""
    match (spec, x[0]):
        case (("affine", a, b), first) if a > 0:
            y = a * x + b * first
        case ([name, (lo, hi) as bounds], _):
            y = np.clip(x, lo, hi) * len(bounds) * len(name)
        case (other, first):
            y = x * first
    return np.sum(y * np.cos(x))


def on_records(x, p):
    match p:
        case Scaled(scale, shift=0.0):
            return np.sum(np.sin(x) * scale)
        case Scaled(scale=s, shift=t) if t > 1.0:
            return np.sum(np.tanh(x * s + t))
        case Pair(a, b):
            return np.sum(x ** 2 * a + b * x)
    return np.sum(x)


def in_a_loop(x, steps):
    total = 0.0
    for i, step in enumerate(steps):
        match step:
            case ("scale", c):
                x = x * c
            case ("sin",):
                x = np.sin(x)
            case "stop":
                break
            case _:
                continue
        total = total + np.sum(x) * i
    return total + np.sum(x * x)


def helper_with_match(v, kind):
    match kind:
        case ("power", k):
            return np.cosh(v) ** k
        case _:
            return np.exp(v)


def calls_helpers(x, kinds):
    def local(v, kind):
        match kind:
            case "double":
                return 2.0 * v
        return v
    return np.sum(helper_with_match(x, kinds[0]) * local(x, kinds[1]) + helper_with_match(x, *kinds[2:]))


def subject_evaluated_once(x, log):
    match log.append(1) or len(log):
        case 2:
            y = x
        case 1:
            y = np.sin(x)
        case _:
            y = x * x
    return np.sum(y) * len(log)


MATCH_CASES = [
    (activation, "relu"), (activation, ("scaled", 2.0)), (activation, ["scaled", -1.5]), (activation, None),
    (activation, "identity"), (activation, ("scaled", 1.0, 2.0)), (activation, "scaled"),
    (by_number, 0), (by_number, 2), (by_number, -1), (by_number, 12), (by_number, 5), (by_number, True),
    (by_value_pattern, Kind.RELU), (by_value_pattern, Kind.TANH),
    (nested_sequences, ("affine", 2.0, 3.0)), (nested_sequences, ("affine", -2.0, 3.0)),
    (nested_sequences, ["ab", [-0.2, 0.4]]), (nested_sequences, "ab"),
    (on_records, Scaled(2.0, 0.0)), (on_records, Scaled(0.5, 2.0)), (on_records, Scaled(0.5, 0.5)),
    (on_records, Pair(1.5, -2.0)), (on_records, (1.5, -2.0)),
    (in_a_loop, [("scale", 2.0), ("sin",), "skip", ("scale", 0.5)]), (in_a_loop, [("sin",), "stop", ("scale", 3.0)]),
    (calls_helpers, [("power", 3), "double", "other"]), (calls_helpers, ["exp", "same", ("power", 2)]),
]


@pytest.mark.parametrize("f,arg", MATCH_CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(MATCH_CASES)])
def test_match_statements(f, arg):
    check_all_modes(f, (X, arg))
    assert np.allclose(srcad.value_and_grad(f)(X, arg)[0], f(X, arg))


def test_match_subject_is_evaluated_once():
    np.testing.assert_allclose(srcad.grad(subject_evaluated_once)(X, []), np.cos(X))


def test_a_capture_binds_only_when_its_case_matches():
    def leaks(x, kind):
        s = 3.0
        match kind:
            case (1, s, "no"):  # s is not bound: the third item does not match
                pass
            case _:
                pass
        return np.sum(x * s)
    np.testing.assert_allclose(srcad.grad(leaks)(X, (1, 7.0, "yes")), np.full(4, 3.0))


def test_a_sequence_pattern_does_not_match_a_string_or_an_array():
    def seq(x, kind):
        match kind:
            case (a, b):
                return np.sum(x) * 2.0
        return np.sum(x * x)
    np.testing.assert_allclose(srcad.grad(seq)(X, "ab"), 2 * X)
    np.testing.assert_allclose(srcad.grad(seq)(X, np.array([1.0, 2.0])), 2 * X)
    np.testing.assert_allclose(srcad.grad(seq)(X, range(2)), np.full(4, 2.0))


def mapping_pattern(x, d):
    match d:
        case {"scale": s}:
            return np.sum(x * s)
    return np.sum(x)


def star_pattern(x, d):
    match d:
        case [first, *rest]:
            return np.sum(x * first)
    return np.sum(x)


def captures_in_alternatives(x, d):
    match d:
        case (s, 0) | (0, s):
            return np.sum(x * s)
    return np.sum(x)


class Plain:
    def __init__(self, s):
        self.s = s


def class_pattern(x, d):
    match d:
        case Plain(s=s):
            return np.sum(x * s)
    return np.sum(x)


@pytest.mark.parametrize("f,arg,line_text,message", [
    (mapping_pattern, {"scale": 2.0}, 'case {"scale": s}', "srcad does not support mapping patterns (case {...}) "
     "in match statements; test the keys with if/elif"),
    (star_pattern, [1.0, 2.0], "*rest", "srcad does not support star patterns (case [first, *rest]) in match "
     "statements"),
    (captures_in_alternatives, (2.0, 0), "case (s, 0) | (0, s)", "srcad does not support alternatives that "
     "capture names"),
    (class_pattern, Plain(2.0), "case Plain(s=s)", "srcad does not support class patterns but of dataclasses "
     "and named tuples (records) in match statements"),
])
def test_match_patterns_still_refused(f, arg, line_text, message):
    refused(f, X, arg, line_text=line_text, message=message)


# ---- set comprehensions ------------------------------------------------------------------

def set_of_indices(x):
    idx = {i % 3 for i in range(len(x))}
    return sum(x[i] ** 2 for i in sorted(idx))


def loop_over_a_set(x):
    total = 0.0
    for i in {i % 2 for i in range(len(x)) if i > 0}:
        total = total + np.sin(x[i]) * x[i]
    return total


def labels_and_membership(x):
    labels = {int(v > 0) for v in x}
    scale = float(len(labels))
    return np.sum(x ** 2) * scale + (np.sum(np.exp(x)) if 1 in labels else 0.0)


def set_of_values_only_counted(x):
    values = {x[i] * 2 for i in range(len(x))}  # a derivative reaches the set, but only len() is read
    return np.sum(x ** 3) * len(values)


@pytest.mark.parametrize("f", [set_of_indices, loop_over_a_set, labels_and_membership, set_of_values_only_counted])
def test_set_comprehensions(f):
    check_all_modes(f, (X,))
    assert np.isclose(srcad.value_and_grad(f)(X)[0], f(X))


def test_a_set_comprehension_is_computed_where_it_is_written():
    def order(x):
        k = 1
        s = {i * k for i in range(3)}
        k = 2
        return np.sum(x) * sum(s) * k
    np.testing.assert_allclose(srcad.grad(order)(X), np.full(4, 6.0))


def sum_of_a_set_of_values(x):
    return sum({x[i] for i in range(2)})


def test_a_derivative_through_a_set_is_refused():
    message = ("srcad does not differentiate a set of values that carry a derivative; a set has no order, so no "
               "item's derivative can be told from another's: keep the values in a list")
    refused(sum_of_a_set_of_values, X, line_text="return sum({x[i] for i in range(2)})", message=message)
    with pytest.raises(srcad.SrcadError, match="a set of values that carry a derivative"):
        srcad.jvp(sum_of_a_set_of_values, (X,), (X,))


# ---- helpers wrapped by a functools.wraps decorator -----------------------------------------

def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


def documented(fn):
    @functools.wraps(fn)
    def inner(*a, **kw):
        """Calls fn."""
        return fn(*a, **kw)
    return inner


def doubling(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return 2.0 * fn(*args, **kwargs)
    return wrapper


def printing(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        print("calling", fn.__name__)
        return fn(*args, **kwargs)
    return wrapper


def swapped(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return np.cos(*args, **kwargs)  # not the function it says it wraps
    return wrapper


@logged
def softplus(v):
    return np.log1p(np.exp(v))


@documented
@logged
def scaled_tanh(v, scale=1.0, *, shift=0.0):
    return scale * np.tanh(v + shift)


@doubling
def doubled(v):
    return np.sin(v)


@printing
def printed(v):
    return np.sin(v)


@swapped
def not_what_it_wraps(v):
    return np.sin(v)


def uses_softplus(x):
    return np.sum(softplus(x) * x)


def uses_nested_wrappers(x):
    return np.sum(scaled_tanh(x, 2.0, shift=x[0]) * softplus(x ** 2)) + np.sum(scaled_tanh(x))


def wrapped_in_a_loop(x):
    total = 0.0
    for i in range(3):
        total = total + np.sum(softplus(x * i))
    return total


@pytest.mark.parametrize("f", [uses_softplus, uses_nested_wrappers, wrapped_in_a_loop])
def test_pass_through_wrappers(f):
    check_all_modes(f, (X,))
    assert np.isclose(srcad.value_and_grad(f)(X)[0], f(X))


def uses_doubled(x):
    return np.sum(doubled(x))


def uses_printed(x):
    return np.sum(printed(x))


def uses_not_what_it_wraps(x):
    return np.sum(not_what_it_wraps(x))


@pytest.mark.parametrize("f,line_text,name", [
    (uses_doubled, "return np.sum(doubled(x))", "doubled"),
    (uses_printed, "return np.sum(printed(x))", "printed"),
    (uses_not_what_it_wraps, "return np.sum(not_what_it_wraps(x))", "not_what_it_wraps"),
])
def test_wrappers_doing_more_stay_refused(f, line_text, name):
    message = (f"this call passes a value that carries a derivative into the *args or **kwargs of {name}, a "
               "decorator's wrapper that does more than `return f(*args, **kwargs)` of the function it wraps")
    refused(f, X, line_text=line_text, message=message)
    with pytest.raises(srcad.SrcadError, match="does more than"):
        srcad.jvp(f, (X,), (X,))
