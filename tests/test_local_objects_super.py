"""``super().method(...)`` (and ``super(C, self).method(...)``) in the methods of an object of
your class made in the differentiated function: lowered by ``passes.local_objects`` as the method
Python runs, the next class after the method's own in the object's method resolution order
(``super().__init__(...)`` in ``__init__`` sets the attributes the base's ``__init__`` sets).
Every mode against central finite differences, each value equal to Python's; ``super()`` where
srcad cannot show it is Python's still refused, saying what to do."""
import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes
from srcad import SrcadError
from srcad.testing import check_grads
from test_super_calls import Layer as TheirLayer, Scaled as TheirScaled

RNG = np.random.default_rng(163)
X = RNG.standard_normal(5)
W = RNG.standard_normal(5)


class Base:
    def __init__(self, w):
        self.w = w

    def energy(self, x):
        return np.sum((x * self.w) ** 2)


class Child(Base):
    def __init__(self, w, c):
        super().__init__(w)
        self.c = c

    def energy(self, x):
        return super().energy(x) + self.c * np.sum(x)


def local_child(x, w):
    c = Child(w, 0.3)
    return c.energy(x)


class Top:
    def __init__(self, w):
        self.w = w

    def forward(self, x):
        return np.sin(x * self.w)

    def total(self, x):
        return np.sum(self.forward(x))


class Middle(Top):
    def forward(self, x):
        return super().forward(x) * self.w + 1.0


class Bottom(Middle):
    def __init__(self, w, k):
        super(Bottom, self).__init__(w * 2.0)
        self.k = k

    def forward(self, x):
        return super(Bottom, self).forward(x) ** 2 * self.k


def three_levels(x, w):
    b = Bottom(w, 0.7)
    return b.total(x) + np.sum(b.w * x)  # total (inherited from Top) calls Bottom.forward


class Scaled:
    def __init__(self, w, gain=1.5):
        self.w = w
        self.gain = gain
        self.w2 = w * w

    def scale(self, x):
        return self.gain * x


class Reader(Scaled):
    def __init__(self, w, shift):
        self.shift = shift * 2.0
        super().__init__(w * self.shift, 0.5)
        self.mix = self.w2 + self.gain * self.w

    def value(self, x):
        return np.sum(self.scale(x) * self.mix) + np.sum(self.w) * self.shift


def init_attributes(x, w):
    r = Reader(w, 0.25)
    return r.value(x)


class Root:
    def __init__(self, w):
        super().__init__()  # reaches object's: does nothing
        self.w = w
        self.trace = 1.0

    def step(self, x):
        return x * self.w


class Left(Root):
    def __init__(self, w):
        super().__init__(w)
        self.trace = self.trace + 1.0

    def step(self, x):
        return np.sin(super().step(x))


class Right(Root):
    def __init__(self, w):
        super().__init__(w)
        self.trace = self.trace * 3.0

    def step(self, x):
        return super().step(x) ** 2 + x


class Diamond(Left, Right):
    def step(self, x):
        return super().step(x) * 2.0


def diamond(x, w):
    d = Diamond(w)
    return np.sum(d.step(x)) * d.trace


class Mutating(Base):
    def __init__(self, w):
        super().__init__(w)
        self.acc = 0.0

    def energy(self, x):
        self.acc = self.acc + super().energy(x)
        return self.acc


def mutated_twice(x, w):
    m = Mutating(w)
    m.energy(x)
    m.energy(np.cos(x))
    return m.acc


CASES = [local_child, three_levels, init_attributes, diamond, mutated_twice]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_every_mode(f):
    x, w = X.copy(), W.copy()
    check_all_modes(f, (x, w), wrt=0)
    check_grads(f, (x, w), wrt=1)
    assert np.array_equal(x, X) and np.array_equal(w, W)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_lowered_value_matches_python(f):
    """The value srcad's lowered code computes is the one Python's objects compute."""
    value, _ = srcad.value_and_grad(f)(X, W)
    assert np.isclose(value, f(X, W))


def test_diamond_order_is_pythons():
    assert [c.__name__ for c in Diamond.__mro__] == ["Diamond", "Left", "Right", "Root", "object"]
    w = W.copy()
    # Left's super() reaches Right (not Root): the trace is (1 * 3) + 1, the step sin((x w)^2 + x)
    expected = 2.0 * np.sum(np.sin((X * w) ** 2 + X)) * 4.0
    assert np.isclose(diamond(X, w), expected)
    assert np.isclose(srcad.value_and_grad(diamond)(X, w)[0], expected)


class InLambda(Base):
    def energy(self, x):
        f = lambda y: super().energy(y)  # noqa: E731  (the lambda's super(), not the method's)
        return f(x)


class InComprehension(Base):
    def energy(self, x):
        return sum([super().energy(x * k) for k in (1.0, 2.0)])


class PastTheBase(Child):
    def energy(self, x):
        return super(Child, self).energy(x)  # another class than its own: refused, not guessed


class BranchedInit(Base):
    def __init__(self, w, on):
        if on:
            super().__init__(w)
        self.w = w * 2.0


class Reset(Base):
    def __init__(self, w=1.0):
        super().__init__(w)

    def reset(self):
        self.__init__()  # Python sets w back to 1.0: the lowered __init__ cannot be called as a method

    def value(self, x):
        self.reset()
        return self.energy(x)


class TheirsBelow(TheirLayer):  # a class of this module whose base's methods are another module's
    def __init__(self, W):
        super().__init__(W)

    def forward(self, x):
        return super().forward(x) * 2.0


def in_lambda(x):
    o = InLambda(W)
    return o.energy(x)


def in_comprehension(x):
    o = InComprehension(W)
    return o.energy(x)


def past_the_base(x):
    o = PastTheBase(W, 0.5)
    return o.energy(x)


def branched_init(x):
    o = BranchedInit(W, True)
    return o.energy(x)


def reset(x):
    o = Reset(W)
    return o.value(x)


def theirs_below(x):
    o = TheirsBelow(np.eye(5))
    return np.sum(o.forward(x))


def theirs(x):
    o = TheirScaled(np.eye(5))  # a class of another module using super()
    return np.sum(o.forward(x))


@pytest.mark.parametrize("f, says", [
    (in_lambda, "uses super in a nested function or comprehension"),
    (in_comprehension, "uses super in a nested function or comprehension"),
    (past_the_base, "calls super with arguments other than its own class and 'self'"),
    (branched_init, "super().__init__(...) is called other than as a statement of __init__ itself"),
    (reset, "self.__init__(...) is called again"),
    (theirs_below, "Layer.__init__ is not a plain function of this module"),
    (theirs, "its class is defined in module test_super_calls"),
], ids=lambda v: v.__name__ if callable(v) else "")
def test_refused_saying_what_to_do(f, says):
    with pytest.raises(SrcadError) as error:
        srcad.grad(f)(X)
    assert says in str(error.value)
    assert "test_local_objects_super.py" in str(error.value)


class Restarted:
    def __init__(self, w=1.0, gain=2.0):
        self.w = w
        self.gain = gain

    def restart(self):
        self.__init__()  # Python sets both attributes back to their defaults

    def value(self, x):
        return np.sum(x * self.w * self.gain)


def restarted(x):
    r = Restarted(3.0, 5.0)
    r.restart()
    return r.value(x)


def test_init_called_again_is_refused_not_ignored():
    """The lowered __init__ took the attributes for its arguments and set none: the value was
    45 * sum(x) where Python's is 2 * sum(x)."""
    with pytest.raises(SrcadError, match=r"self.__init__\(...\) is called again"):
        srcad.value_and_grad(restarted)(X)
