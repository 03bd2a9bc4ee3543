"""Local objects whose methods call each other (``self.layer(...)`` in ``forward``, a step
method called in a loop of ``run``) and fluent methods returning ``self`` whose result is
discarded (``a.add(v)``): lowered by ``passes.local_objects``, every mode against central
finite differences, inputs unchanged, the attributes returned as Python has them. Their unsafe
neighbours (recursion between methods, ``self`` stored or its return used, an attribute not set
in ``__init__``, a class of another module) are refused at the user's line, saying which
condition failed and what to do."""
import inspect

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes
from srcad import SrcadError
from srcad.testing import check_grads, check_jvp
from test_local_objects import Accumulator

RNG = np.random.default_rng(3232)
X = RNG.standard_normal(5) * 0.5
W = RNG.standard_normal(5) * 0.5
SCALE = 0.7  # a module constant a method reads


class Model:
    def __init__(self, w, b=0.1):
        self.w = w
        self.b = b

    def layer(self, x):
        return np.tanh(self.w * x + self.b)

    def forward(self, x):
        return self.layer(self.layer(x))

    def loss(self, x):
        return np.sum(self.forward(x) ** 2)

    def scaled(self, x):
        return SCALE * self.loss(x)


class Sim:
    def __init__(self, k, dt=0.1):
        self.k, self.dt = k, dt

    def force(self, q):
        return -self.k * q

    def step(self, q, p):
        p = p + self.dt * self.force(q)
        q = q + self.dt * p
        return q, p

    def run(self, q, p, n):
        for _ in range(n):
            q, p = self.step(q, p)
        return q


class Acc:
    def __init__(self):
        self.total = 0.0

    def add(self, v):
        self.total = self.total + v
        return self


class Stats:
    """Methods setting attributes called by other methods, one in a loop, one for its value."""

    def __init__(self, start):
        self.total = start
        self.squares = 0.0
        self.n = 0.0

    def push(self, v):
        self.total = self.total + v
        self.squares = self.squares + v * v
        self.n = self.n + 1.0
        return v * self.total

    def push_all(self, xs):
        for v in xs:
            self.push(np.sin(v))
        return self

    def push_and_weigh(self, v):
        r = self.push(v)
        return r * self.mean()

    def mean(self):
        return self.total / self.n


def local_object(w, x):
    m = Model(w)
    return m.loss(x)


def simulate(k, q0):
    s = Sim(k)
    return np.sum(s.run(q0, np.zeros_like(q0), 20))


def accumulate(x):
    a = Acc()
    for xi in x:
        a.add(np.sin(xi))
    return a.total


def stepped_in_the_function(k, q0):
    s = Sim(k, 0.05)
    q, p = q0, np.zeros_like(q0)
    for _ in range(10):
        q, p = s.step(q, p)
    return np.sum(q * p) + np.sum(q ** 2)


def two_models(w, x):
    first = Model(w)
    second = Model(w * w, 0.3)
    return first.loss(x) + second.scaled(np.cos(x)) + np.sum(first.forward(second.layer(x)))


def statistics(x, w):
    st = Stats(np.sum(w))
    st.push_all(x)
    r = st.push_and_weigh(w[0])
    return st.total, st.squares, st.n, r


def statistics_loss(x, w):
    total, squares, _, r = statistics(x, w)
    return total * squares + r


CASES = [(local_object, (W, X), 0), (local_object, (W, X), 1), (simulate, (0.8, X), 0), (simulate, (0.8, X), 1),
         (accumulate, (X,), 0), (stepped_in_the_function, (0.8, X), 0), (stepped_in_the_function, (0.8, X), 1),
         (two_models, (W, X), 0), (two_models, (W, X), 1), (statistics_loss, (X, W), 0),
         (statistics_loss, (X, W), 1)]


@pytest.mark.parametrize("f, args, wrt", CASES, ids=[f"{f.__name__}-{wrt}" for f, _, wrt in CASES])
def test_methods_calling_methods_every_mode(f, args, wrt):
    before = [np.copy(a) for a in args]
    check_all_modes(f, args, wrt=wrt)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("wrt", [0, 1])
def test_the_attributes_returned_are_pythons(wrt):
    python = statistics(X, W)
    y, _ = srcad.vjp(statistics, X, W, wrt=wrt)
    for got, expected in zip(y, python):
        np.testing.assert_allclose(got, expected, rtol=1e-13)
    check_grads(statistics, (X, W), wrt=wrt, modes=("rev",))
    check_jvp(statistics, (X, W), wrt=wrt)


# ---- refused: each at the user's line, saying which condition failed and what to do

class Ping:
    def __init__(self, w):
        self.w = w

    def ping(self, x, n):
        if n > 0:
            return self.pong(x * self.w, n - 1)
        return x

    def pong(self, x, n):
        return self.ping(np.sin(x), n)


class Kept:
    def __init__(self, w):
        self.w = w
        self.seen = []

    def keep(self, x):
        self.seen.append(self)
        return x * self.w


class Late:
    def __init__(self, w):
        self.w = w

    def remember(self, x):
        self.last = x * self.w
        return self.last


def recursion(w, x):
    p = Ping(w)
    return np.sum(p.ping(x, 3))


def self_stored(w, x):
    k = Kept(w)
    return np.sum(k.keep(x))


def return_self_used(x):
    a = Acc()
    b = a.add(np.sum(x))
    return b.total


def chained(x):
    a = Acc()
    a.add(np.sum(x)).add(np.sum(x ** 2))
    return a.total


def attribute_not_set_in_init(w, x):
    m = Late(w)
    return np.sum(m.remember(x))


def class_of_another_module(x):
    acc = Accumulator()
    acc.add(x)
    return acc.total


def passed_on(w, x):
    m = Model(w)
    return helper(m, x)


def helper(m, x):
    return Model.loss(m, x)


def refused_at(f, args, line_text, *messages):
    """``srcad.grad(f)`` refused at the line of ``f`` holding ``line_text``, saying ``messages``."""
    lines, first = inspect.getsourcelines(f)
    lineno = first + next(i for i, text in enumerate(lines) if line_text in text)
    with pytest.raises(SrcadError) as info:
        srcad.grad(f)(*args)
    text = str(info.value)
    assert f"{__file__}:{lineno}:" in text, text
    for message in messages:
        assert message in text, text
    assert "call it through the class" not in text, text


@pytest.mark.parametrize("f, args, line_text, messages", [
    (recursion, (W, X), "p.ping(x, 3)", ("'p' is an object of your class Ping", "call each other without end",
                                         "ping -> pong -> ping", "write the recursion as a loop")),
    (self_stored, (W, X), "k.keep(x)", ("keep uses 'self' otherwise", "use the attributes (not the object)")),
    (return_self_used, (X,), "a.add(np.sum(x))", ("its add returns the object itself",
                                                   "call it as a statement of its own")),
    (chained, (X,), "a.add(np.sum(x))", ("its add returns the object itself",)),
    (attribute_not_set_in_init, (W, X), "m.remember(x)", ("set each attribute in __init__",)),
    (class_of_another_module, (X,), "acc.add(x)", ("its class is defined in module test_local_objects",
                                                   "define this function in module test_local_objects",
                                                   "a dataclass")),
    (passed_on, (W, X), "m = Model(w)", ("'m' is used otherwise than by its attributes and methods",
                                         "a dataclass")),
])
def test_unsafe_neighbours_refused_saying_why(f, args, line_text, messages):
    refused_at(f, args, line_text, *messages)


def constant_recursion(x):
    p = Ping(2.0)
    return np.sum(x * p.ping(1.5, 3))


def test_an_object_carrying_no_derivative_runs_as_written():
    check_all_modes(constant_recursion, (X,))
