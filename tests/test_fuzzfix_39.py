"""Fuzz seeds 113705.. (``getters`` feature) and their class: ``max``/``min`` with a getter of
constant keys as ``key=`` (``max(pairs, key=operator.itemgetter(1))``,
``min(layers, key=operator.attrgetter("scale"))``).

``sorted`` with such a key was lowered to the reads it makes, but ``max`` and ``min`` were not:
the getter reached the differentiated call as a value, refused with a message about an object's
own operators that told the user to convert it with ``np.asarray``. The key of ``max``/``min`` is
now the read the getter makes (``t[1]``, ``t.scale``; several keys: the tuple), the item picked by
position as for a lambda key (Python's choice among ties), so the derivative follows the item
taken. A getter of keys that are not constants is called as a value, as before.

Seed 113708341132 (a crash): ``min`` over tuples (a number, an array) whose pullback read saved
copies of the items found the item taken by comparing each with ``np.shape``, which made an array
of the tuple: ``ValueError`` (inhomogeneous shape) from the generated code. Items are now
compared as ``max`` compares them, tuples and lists item by item.
"""
import operator
import typing
from operator import attrgetter, itemgetter

import numpy as np
import pytest

import srcad
from lang_checks import check_unchanged
from srcad.testing import check_grads

RNG = np.random.default_rng(39)
A, B = RNG.standard_normal(3), RNG.standard_normal(3)


class Record(typing.NamedTuple):
    W: object
    scale: object


def max_by_item(a, b, s):
    pairs = [(a, s), (b, 0.5 * s + 0.3), (a * b, -s)]
    best = max(pairs, key=operator.itemgetter(1))
    return np.sum(best[0] * best[1])


def min_by_item(a, b, s):
    pairs = [(a, s), (b, 0.5 * s + 0.3), (a * b, -s)]
    best = min(pairs, key=itemgetter(1))
    return np.sum(np.sin(best[0])) * best[1]


def max_by_two_items(a, b, s):
    triples = [(a, 1.0, s), (b, 1.0, -s), (a + b, 0.0, 5.0)]
    best = max(triples, key=itemgetter(1, 2))  # ties on the first key: the second decides
    return np.sum(best[0]) * best[2]


def min_by_dict_key(a, b, s):
    recs = [{"w": a, "s": s}, {"w": b, "s": 0.5 * s + 0.3}]
    best = min(recs, key=itemgetter("s"))
    return np.sum(best["w"] ** 2) * best["s"]


def max_by_attribute(a, b, s):
    best = max(Record(a, s), Record(b, 0.5 * s + 0.3), key=attrgetter("scale"))
    return np.sum(best.W) * best.scale


@pytest.mark.parametrize("f", [max_by_item, min_by_item, max_by_two_items, min_by_dict_key, max_by_attribute])
@pytest.mark.parametrize("s", [0.8, 0.1])  # either item picked
def test_max_min_by_getter_follow_the_item_taken(f, s):
    check_unchanged(f, A, B, s, wrt=0, value=True)
    check_grads(f, (A, B, s), wrt=(0, 1, 2), order=2)


def ties(a, b, s):
    pairs = [(a, s), (b, s), (a * b, s)]
    return np.sum(max(pairs, key=itemgetter(1))[0]) + 2.0 * np.sum(min(pairs, key=itemgetter(1))[0])


def test_ties_pick_the_first_item_as_python_does():
    grad_a, grad_b = srcad.grad(ties, wrt=(0, 1))(A, B, 0.4)
    np.testing.assert_allclose(grad_a, np.full(3, 3.0))  # max and min both take (a, s)
    np.testing.assert_allclose(grad_b, np.zeros(3))
    check_grads(ties, (A, B, 0.4), wrt=(0, 1), order=2)


def by_variable_key(a, b, s, k):
    pairs = [(a, s), (b, 0.5 * s + 0.3)]
    return np.sum(max(pairs, key=itemgetter(k))[0])


def test_a_getter_of_keys_not_constant_is_still_called_as_a_value():
    check_grads(by_variable_key, (A, B, 0.8, 1), wrt=(0, 1, 2))


GAMMA = 0.75
ITEM = np.linspace(0.5, 1.5, 4)


class Holder:
    @classmethod
    def nothing(cls, z):
        pass


def min_of_tuples_after_a_try(R, scales):  # seed 113708341132, as the fuzzer shrank it
    try:
        split = np.inner(np.dot(R, R[[0, 2, 0]].sum(axis=0)), np.prod(0.9 + 0.1 * R, axis=1))
        back = np.array(list((sum((c for q in R)) for c in split * np.ones(4))))
        chosen = np.where(back + back > -0.37, np.array([v for v in back]), back + back)
        if 0.9 > -0.76:
            raise ZeroDivisionError("step")
    except Exception:
        chosen = (ITEM if all((np.sum(np.where(w > -0.13, R[..., -1], w)) > 0.7 for w in np.transpose(R)))
                  else R.max(axis=0)).copy()
        split = GAMMA
        back = np.cos(ITEM)
    parts = (Holder.nothing(*(split * np.ones((4, 3)),)), chosen if -0.55 < 0.58 <= 0.89 else back)
    joined = (np.arctan2(split, 2.0 + chosen[:3] ** 2),) + parts
    pairs = [(sum([split for _ in back]) + 0.0, parts[1]), (split / (1.5 + split ** 2) + 0.37, joined[2])]
    best = min(pairs)
    return 1.19 + np.sum(np.sin(best[1])) * best[0]


def test_min_over_tuples_of_a_number_and_an_array_finds_the_item_taken():
    R = np.random.default_rng(113708).uniform(-1, 1, (3, 4))
    check_grads(min_of_tuples_after_a_try, (R, {}), wrt=0)
