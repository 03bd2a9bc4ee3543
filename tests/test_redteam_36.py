"""Red-team programs written the way other people write them (classes holding parameters,
simulations, records with operators of their own): each checked in every mode against central
finite differences and Python's value, inputs unchanged, or refused clearly."""
import functools
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pytest

import srcad
from srcad import SrcadError

import lang_checks

X = np.array([0.33, -0.47, 1.13, 0.71])


check_unchanged = functools.partial(lang_checks.check_unchanged, value=True)


def refused_at(f, *args, line_text):
    """``srcad.grad(f)(*args)`` raises a srcad error naming the line of ``f``'s file holding
    ``line_text``; returns the message."""
    with pytest.raises(SrcadError) as info:
        srcad.grad(f)(*args)
    message = str(info.value)
    assert f.__code__.co_filename in message and line_text in message, message
    return message


# ---- records whose class writes its own operators, items or construction ------------------

@dataclass
class Vec:
    a: np.ndarray

    def __add__(self, other):
        return Vec(self.a + 2 * other.a)  # not the fields' sum

    def __mul__(self, other):
        return float(np.dot(self.a, other.a))

    def __getitem__(self, i):
        return self.a[-1 - i]


class Pair(NamedTuple):
    a: np.ndarray
    b: np.ndarray

    def __add__(self, other):  # not the tuples' concatenation
        return Pair(self.a + other.a, self.b - other.b)


@dataclass
class Doubling:
    w: np.ndarray

    def __setattr__(self, name, value):  # the dataclass's __init__ stores through it
        object.__setattr__(self, name, 2 * value)


def sum_of_records(x):
    s = Vec(x) + Vec(x ** 2)
    return np.sum(s.a ** 2)


def builtin_sum_of_records(x):
    s = sum([Vec(x), Vec(x ** 2)], Vec(np.zeros(4)))
    return np.sum(s.a ** 2)


def named_tuples_added(x):
    s = Pair(x, x ** 2) + Pair(x * 3, x)
    return np.sum(s.a * s.b)


def record_stored_through_setattr(x):
    d = Doubling(np.sin(x))
    return np.sum(d.w ** 2)


def add_records(p, q):
    return p + q


def records_added_by_a_helper(x):
    s = add_records(Vec(x), Vec(x * 2))
    return np.sum(s.a ** 2)


@pytest.mark.parametrize("f, line_text", [
    (sum_of_records, "s = Vec(x) + Vec(x ** 2)"),
    (builtin_sum_of_records, "s = sum([Vec(x), Vec(x ** 2)], Vec(np.zeros(4)))"),
    (named_tuples_added, "s = Pair(x, x ** 2) + Pair(x * 3, x)"),
    (record_stored_through_setattr, "d = Doubling(np.sin(x))"),
    (records_added_by_a_helper, "s = add_records(Vec(x), Vec(x * 2))"),
])
def test_a_record_class_writing_its_own_special_methods_is_no_record(f, line_text):
    # srcad built these as records (the derivative of Vec(x) + Vec(y) was the fields' sum's)
    refused_at(f, X, line_text=line_text)


def item_of_a_record_argument(s):
    return s[0] * 3 + s[1]


def test_an_item_of_an_argument_whose_class_writes_getitem_is_refused():
    # (the cotangent of a dataclass argument is by field: d[s][0] raised KeyError)
    message = refused_at(item_of_a_record_argument, Vec(X.copy()), line_text="return s[0] * 3 + s[1]")
    assert "__getitem__" in message


@dataclass
class Plain:
    q: np.ndarray
    p: np.ndarray

    def __repr__(self):
        return f"Plain({self.q}, {self.p})"

    def energy(self):
        return np.sum(self.q ** 2 + np.sin(self.p))


class Kept(NamedTuple):
    w: np.ndarray
    c: float

    def scaled(self):
        return self.w * self.c


def plain_records_still_built(x):
    s = Plain(x[:2], x[2:])
    k = Kept(np.tanh(x), 1.5)
    t = k._replace(c=2.0)
    return s.energy() + np.sum(t.scaled() * k[0])


def test_a_record_class_with_only_harmless_methods_of_its_own_is_still_differentiated():
    check_unchanged(plain_records_still_built, X)


@dataclass
class ReadDoubled:
    w: np.ndarray

    def __getattribute__(self, name):
        value = object.__getattribute__(self, name)
        return 2 * value if name == "w" else value


def field_of_an_argument_read_through_getattribute(s):
    return np.sum(s.w ** 2)


def test_a_record_argument_whose_class_writes_getattribute_is_refused():
    # srcad rebuilt the argument from the fields as read (doubled), then read them again: 4x
    with pytest.raises(srcad.ArgumentError, match="__getattribute__"):
        srcad.vjp(field_of_an_argument_read_through_getattribute, ReadDoubled(X.copy()))


# ---- a sparse matrix converted to the format its solve asks for ----------------------------

scipy_sparse = pytest.importorskip("scipy.sparse")
from scipy.sparse.linalg import spsolve  # noqa: E402

STIFF = (scipy_sparse.random(4, 4, density=0.5, random_state=0) + scipy_sparse.eye(4) * 3).tocoo()


def solve_in_csc_form(x):
    y = spsolve(STIFF.tocsc(), np.sin(x))
    return np.sum(y ** 2)


def products_with_converted_matrices(x):
    z = STIFF.tocsr() @ x
    return np.sum(np.tanh(z) * (x @ STIFF.tocsc()))


@pytest.mark.parametrize("f", [solve_in_csc_form, products_with_converted_matrices])
def test_a_sparse_matrix_converted_to_another_format_is_still_a_constant_operand(f):
    # (refused: spsolve of S.tocsc() was differentiated through SciPy's source)
    check_unchanged(f, X)


# ---- dispatch tables indexed by a negative literal ---------------------------------------------

ACTIVATIONS = [np.sin, np.tanh, np.exp]


def last_items_of_a_table(x):
    return np.sum(ACTIVATIONS[-1](0.5 * x) + ACTIVATIONS[-2](x))


def test_a_table_item_indexed_by_a_negative_literal_is_called_and_checked():
    check_unchanged(last_items_of_a_table, X)
    kept = ACTIVATIONS[-1]
    ACTIVATIONS[-1] = np.cos  # the same table, another item: the code checks the item it called
    try:
        with pytest.raises(srcad.SrcadError, match=r"ACTIVATIONS\[-1\] holds cos for the key -1 now, not exp"):
            srcad.grad(last_items_of_a_table)(X)
    finally:
        ACTIVATIONS[-1] = kept
