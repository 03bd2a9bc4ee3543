"""A checkpointed loop's body that depends on state its snapshots do not hold is an error, never
a wrong gradient.

Routes to such state that no name in the body shows: a builtin or NumPy calling the special
methods of an object of yours (``float(S)``, ``len(S)``, ``np.asarray(S)``, ``print(S)``),
``operator``'s ``methodcaller``/``attrgetter``/``itemgetter``, operators and iteration on an
object of yours. Each is refused at its line when srcad compiles, or caught when the reverse
sweep runs a segment again and it ends elsewhere than the first run did
(``CheckpointReplayError`` at the loop's line). The same code in a plain loop keeps its
gradient (finite differences); records (named tuples, dataclasses) made in the loop work.
"""
import collections
import dataclasses
import inspect
import operator
import sys

import numpy as np
import pytest

import srcad
from srcad.checkpointing import check_recomputed
from srcad.errors import CheckpointReplayError, SrcadSyntaxError
from srcad.testing import check_grads


class Schedule:
    """A learning-rate-like schedule: every read advances it."""

    def __init__(self):
        self.n = 0

    def rate(self):
        return 1.0 + 0.1 * self.n

    def __float__(self):
        self.n += 1
        return self.rate()

    def __len__(self):
        self.n += 1
        return self.n

    def __array__(self, dtype=None, copy=None):
        self.n += 1
        return np.array(self.rate())

    def __repr__(self):
        self.n += 1
        return "Schedule"

    def __mul__(self, x):
        self.n += 1
        return self.rate() * x

    __rmul__ = __mul__

    def __iter__(self):
        self.n += 1
        return iter([self.rate()])

    def __getitem__(self, i):
        self.n += 1
        return self.rate()

    @property
    def current(self):
        self.n += 1
        return self.rate()


S = Schedule()
RNG = np.random.default_rng(1)
DRAW = operator.methodcaller("random")
CURRENT = operator.attrgetter("current")
FIRST = operator.itemgetter(0)


def with_float(x):
    for t in srcad.checkpointed(range(6)):
        x = x * float(S)
    return np.sum(x)


def with_len(x):
    for t in srcad.checkpointed(range(6)):
        x = x * len(S)
    return np.sum(x)


def with_asarray(x):
    for t in srcad.checkpointed(range(6)):
        x = x * np.asarray(S)
    return np.sum(x)


def with_print(x):
    for t in srcad.checkpointed(range(6)):
        print(S, end=" ", file=sys.stderr)
        x = x * (1.0 + 0.1 * S.n)
    return np.sum(x)


def with_methodcaller(x):
    for t in srcad.checkpointed(range(6)):
        x = x * (1.0 + 0.1 * DRAW(RNG))
    return np.sum(x)


def with_attrgetter(x):
    for t in srcad.checkpointed(range(6)):
        x = x * CURRENT(S)
    return np.sum(x)


def with_itemgetter(x):
    for t in srcad.checkpointed(range(6)):
        x = x * FIRST(S)
    return np.sum(x)


def with_an_operator(x):
    for t in srcad.checkpointed(range(6)):
        k = S * 1.0
        x = x * k
    return np.sum(x)


def with_iteration(x):
    for t in srcad.checkpointed(range(6)):
        for r in S:
            x = x * r
    return np.sum(x)


def with_unpacking(x):
    for t in srcad.checkpointed(range(6)):
        r, = S
        x = x * r
    return np.sum(x)


def line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


X = np.array([0.5, 1.2])
ROUTES = [(with_float, "float(S)"), (with_len, "len(S)"), (with_asarray, "np.asarray(S)"), (with_print, "print(S"),
          (with_methodcaller, "DRAW(RNG)"), (with_attrgetter, "CURRENT(S)"), (with_itemgetter, "FIRST(S)"),
          (with_an_operator, "S * 1.0"), (with_iteration, "for r in S"), (with_unpacking, "r, = S")]


def reset():
    S.n = 0
    RNG.bit_generator.state = np.random.default_rng(1).bit_generator.state


@pytest.mark.parametrize("fn, text", ROUTES, ids=[f.__name__ for f, _ in ROUTES])
def test_a_special_method_of_yours_in_the_body_is_refused_at_its_line(fn, text):
    reset()
    with pytest.raises(SrcadSyntaxError, match="srcad does not checkpoint this loop") as info:
        srcad.grad(fn)(X)
    err = info.value
    assert (err.filename, err.lineno) == (__file__, line_of(fn, text))
    assert "code of yours" in str(err) and "plain loop" in str(err)


def plain_float(x):
    for t in range(6):
        x = x * float(S)
    return np.sum(x)


def plain_asarray(x):
    for t in range(6):
        x = x * np.asarray(S)
    return np.sum(x)


def plain_attrgetter(x):
    for t in range(6):
        x = x * CURRENT(S)
    return np.sum(x)


def plain_methodcaller(x):
    for t in range(6):
        x = x * (1.0 + 0.1 * DRAW(RNG))
    return np.sum(x)


@pytest.mark.parametrize("fn", [plain_float, plain_asarray, plain_attrgetter, plain_methodcaller],
                         ids=lambda f: f.__name__)
def test_the_same_objects_in_a_plain_loop_keep_their_gradient(fn):
    def counted(x):
        reset()
        return fn(x)

    reset()
    gradient = srcad.grad(fn)(X)
    eps = 1e-6
    numeric = np.array([(counted(X + eps * e) - counted(X - eps * e)) / (2 * eps) for e in np.eye(2)])
    np.testing.assert_allclose(gradient, numeric, rtol=1e-6)


# ---- the check of each recomputed segment: whatever the route, the recomputation must agree

def through_an_item_of_a_list(x, items):
    for t in srcad.checkpointed(range(6), segment=2):
        x = x * len(items[0])  # srcad does not know what an item of a list is: S, whose __len__ counts
    return np.sum(x)


def in_one_segment(x, items):
    for t in srcad.checkpointed(range(6), segment=6):
        x = x * len(items[0])
    return np.sum(x)


@pytest.mark.parametrize("fn", [through_an_item_of_a_list, in_one_segment], ids=lambda f: f.__name__)
def test_a_recomputed_segment_that_ends_elsewhere_is_an_error_at_the_loop(fn):
    reset()
    with pytest.raises(CheckpointReplayError) as info:
        srcad.grad(fn)(X, [S])
    message = str(info.value)
    assert message.startswith(f"{__file__}:{line_of(fn, 'srcad.checkpointed')}: ")
    assert "'x' came out different" in message and "plain loop" in message


@pytest.mark.parametrize("expected, again, same", [
    ((np.array([1.0, np.nan]), 2, "a"), (np.array([1.0, np.nan]), 2, "a"), True),
    ((np.array([1.0, 2.0]),), (np.array([1.0, 2.5]),), False),
    ((np.array([1.0, 2.0]),), (np.array([1.0, 2.0, 3.0]),), False),
    ((np.array([1, 2]),), (np.array([1.0, 2.0]),), False),
    (([np.ones(2), {"k": 1.0}],), ([np.ones(2), {"k": 1.0}],), True),
    (([np.ones(2), {"k": 1.0}],), ([np.ones(2), {"k": 2.0}],), False),
    ((float("nan"), np.float64("nan")), (float("nan"), np.float64("nan")), True),
    ((1.0,), (1,), False),
])
def test_what_the_check_calls_the_same_value(expected, again, same):
    names = tuple(f"v{i}" for i in range(len(expected)))
    if same:
        check_recomputed(expected, again, names, "f.py:3")
    else:
        with pytest.raises(CheckpointReplayError, match="^f.py:3: "):
            check_recomputed(expected, again, names, "f.py:3")


# ---- records made in the loop (a named tuple, a dataclass): their fields are plain reads

State = collections.namedtuple("State", "q v")


@dataclasses.dataclass
class DState:
    q: np.ndarray
    v: np.ndarray


def leapfrog_tuple(q):
    s = State(q, 0.5 * q)
    for t in srcad.checkpointed(range(5), segment=2):
        s = State(s.q + 0.1 * s.v, s.v - 0.1 * np.sin(s.q))
    return np.sum(s.q * s.v)


def leapfrog_dataclass(q):
    s = DState(q, 0.5 * q)
    for t in srcad.checkpointed(range(5), segment=2):
        s = DState(s.q + 0.1 * s.v, s.v - 0.1 * np.sin(s.q))
    return np.sum(s.q * s.v)


def leapfrog_tuple_plain(q):
    s = State(q, 0.5 * q)
    for t in range(5):
        s = State(s.q + 0.1 * s.v, s.v - 0.1 * np.sin(s.q))
    return np.sum(s.q * s.v)


@pytest.mark.parametrize("fn", [leapfrog_tuple, leapfrog_dataclass], ids=lambda f: f.__name__)
def test_records_made_in_the_loop(fn):
    q = np.array([0.3, -0.8, 1.1])
    check_grads(fn, (q,))
    y, pullback = srcad.vjp(fn, q)
    np.testing.assert_array_equal(pullback(1.0), pullback(1.0))
    np.testing.assert_array_equal(srcad.grad(fn)(q), srcad.grad(leapfrog_tuple_plain)(q))


@dataclasses.dataclass
class Scaled:
    q: np.ndarray
    n: int = 0

    def __float__(self):
        self.n += 1
        return 1.0 + 0.1 * self.n


def a_record_with_a_special_method_of_yours(q):
    s = Scaled(q)
    for t in srcad.checkpointed(range(5), segment=2):
        s = Scaled(s.q * float(s), s.n)
    return np.sum(s.q)


def test_a_record_whose_class_defines_a_special_method_is_still_refused():
    # (a class writing its own special methods is no record: its objects are read as code of yours)
    with pytest.raises(SrcadSyntaxError, match=r"does not checkpoint this loop: reading \.q of 's' may run code of yours") \
            as info:
        srcad.grad(a_record_with_a_special_method_of_yours)(np.ones(2))
    assert info.value.lineno == line_of(a_record_with_a_special_method_of_yours, "float(s)")


# ---- controls: numbers and arrays known to srcad stay allowed

def conversions_of_numbers(x, w):
    for t in srcad.checkpointed(range(6), segment=2):
        x = x * float(w[0]) + np.asarray(w) * 0.01 + len(w) * 0.001 + abs(-0.5) * x
        print(t, end="")
    return np.sum(x)


def test_conversions_of_numbers_and_arrays_are_accepted():
    check_grads(conversions_of_numbers, (X, np.array([0.9, 1.1])))
