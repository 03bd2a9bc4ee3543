"""Classes as application code writes them, on objects made in the function: no ``__init__``
(only class attributes, read as ``self.k``), class attributes beside instance ones, static and
class methods (``cls.huber(...)`` in a class method called as ``Loss.total(x)``; ``s.huber(...)``
on an object), and ``@property`` getters (``c.area``, ``self.area``). Each is what Python reads:
a class attribute ``Spring.k`` (the object holds none of that name), a property's getter a
method call without arguments, ``cls`` the class itself. Every mode against central finite
differences, inputs unchanged (``check_grads`` asserts it); where Python would do otherwise
(a set making an instance attribute hide the class's, a property's setter, a property's value
called, arguments to ``object.__init__``), refused at the user's line, saying what to do."""
import functools

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes
from srcad import SrcadError

RNG = np.random.default_rng(3535)
X = RNG.standard_normal(6)
R = np.array([0.1, -0.9, 0.45, 1.3, -0.2])


class Base:
    def energy(self, x):
        return np.sum(x ** 2)


class Spring(Base):  # no __init__: class attributes only
    k = 3.0
    weights = np.array([1.0, 0.5, 2.0, 1.5, 0.25])
    act = np.tanh  # a ufunc is no descriptor: self.act is np.tanh

    def energy(self, x):
        return Base.energy(self, x) + self.k * np.sum(self.weights * np.diff(x) ** 2)

    def total(self, x):
        return self.energy(x) + np.sum(self.act(x))


def spring_energy(x):
    s = Spring()
    return s.energy(x)


def spring_total_and_constant(x):
    s = Spring()
    return s.total(x) * s.k + np.sum(s.weights)


class Scaled:  # class attributes beside those __init__ sets
    gain = 2.0

    def __init__(self, w):
        self.w = w / self.gain  # (no instance attribute 'gain': the class's)

    def value(self, x):
        return self.gain * np.sum(np.sin(self.w * x))


def scaled_value(x):
    m = Scaled(x[:3] ** 2)
    return m.value(x[3:]) + m.gain * np.sum(m.w)


class Loss:
    eps = 1e-3

    @staticmethod
    def huber(r, delta):
        a = np.abs(r)
        return np.where(a < delta, 0.5 * r ** 2, delta * (a - 0.5 * delta))

    @classmethod
    def ridge(cls, r):
        return cls.eps * np.sum(r ** 2)

    @classmethod
    def total(cls, r):
        return np.sum(cls.huber(r, 1.0)) + cls.ridge(r)

    def scaled(self, r):
        return 2.0 * self.total(r) + np.sum(self.huber(r, 0.5))


class SoftLoss(Loss):  # cls is the class called: its own huber
    eps = 0.1

    @staticmethod
    def huber(r, delta):
        return delta ** 2 * (np.sqrt(1.0 + (r / delta) ** 2) - 1.0)


def class_method_total(x):
    return Loss.total(x * 2.0 - 0.3)


def subclass_method_total(x):
    return SoftLoss.total(x * 2.0 - 0.3) + Loss.total(x)


def class_method_in_a_loop(x):
    acc = 0.0
    for k in range(3):
        acc = acc + SoftLoss.total(x * (k + 1.0))
    return acc


def static_and_class_methods_on_an_object(x):
    loss = SoftLoss()
    return loss.scaled(x) + np.sum(loss.huber(x, 2.0)) + loss.ridge(x)


class Circle:
    def __init__(self, r):
        self.r = r

    @property
    def area(self):
        return np.pi * self.r ** 2

    @property
    def ring(self):  # a property reading another, and a method
        return self.area - 0.5 * self.perimeter()

    def perimeter(self):
        return 2 * np.pi * self.r

    def report(self, x):
        return np.sum(self.ring * x)


def circle_area(r):
    c = Circle(r)
    return np.sum(c.area + 0.1 * c.perimeter())


def circle_ring(r):
    c = Circle(r * r)
    ring = c.ring
    return c.report(r) + np.sum(ring)


@pytest.mark.parametrize("fn, args", [
    (spring_energy, (X,)),
    (spring_total_and_constant, (X,)),
    (scaled_value, (X,)),
    (class_method_total, (R,)),
    (subclass_method_total, (R,)),
    (class_method_in_a_loop, (R,)),
    (static_and_class_methods_on_an_object, (R,)),
    (circle_area, (np.array([0.5, 1.2, 2.0]),)),
    (circle_ring, (np.array([0.5, 1.2, 2.0]),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_classes_as_written_in_every_mode(fn, args):
    check_all_modes(fn, args)


def test_the_subclass_method_is_the_one_python_calls():
    """(So that the test above can fail: Loss's huber and SoftLoss's differ.)"""
    r = R * 2.0 - 0.3
    assert not np.allclose(SoftLoss.total(r), Loss.total(r))
    assert np.allclose(srcad.grad(lambda x: SoftLoss.total(x))(r),
                       srcad.grad(lambda x: np.sum(SoftLoss.huber(x, 1.0)) + 0.1 * np.sum(x ** 2))(r))


class Gain:
    g = 2.0

    def apply(self, x):
        return self.g * np.sin(x)


def gained(x):
    gain = Gain()
    return np.sum(gain.apply(x))


def test_a_class_attribute_is_read_when_the_code_runs():
    """``self.g`` is ``Gain.g`` as Python reads it at each call, not a value taken when compiling."""
    grad = srcad.grad(gained)
    first = grad(X)
    Gain.g = 5.0
    try:
        assert np.allclose(grad(X), 5.0 * np.cos(X)) and np.allclose(first, 2.0 * np.cos(X))
        check_all_modes(gained, (X,))
    finally:
        Gain.g = 2.0


def sets_a_class_attribute(x):
    s = Spring()
    s.k = 2.0
    return s.energy(x)


class Stiffening:
    k = 1.0

    def energy(self, x):
        self.k = self.k * 2.0  # an instance attribute hiding the class's from here on
        return self.k * np.sum(x ** 2)


def method_sets_a_class_attribute(x):
    s = Stiffening()
    return s.energy(x) + s.energy(x)


class Square:
    def __init__(self, a):
        self.a = a

    @property
    def area(self):
        return self.a ** 2

    @area.setter
    def area(self, value):
        self.a = np.sqrt(value)

    @functools.cached_property
    def diagonal(self):
        return np.sqrt(2.0) * self.a


def sets_a_property(x):
    q = Square(x)
    q.area = x ** 4
    return np.sum(q.a)


def calls_a_property(x):
    c = Circle(x)
    return np.sum(c.area())


def reads_a_cached_property(x):
    q = Square(x)
    return np.sum(q.diagonal)


class Hidden:
    k = 3.0

    def __init__(self, k):
        self.k = k  # hides the class attribute: srcad keeps instance attributes only where none is one

    def energy(self, x):
        return self.k * np.sum(x ** 2)


def instance_attribute_hides_a_class_one(x):
    h = Hidden(2.0)
    return h.energy(x)


def spring_with_arguments(x):
    s = Spring(x)
    return s.energy(x)


@pytest.mark.parametrize("fn, says", [
    (sets_a_class_attribute, "setting or deleting 's.k' (line"),
    (method_sets_a_class_attribute, "setting or deleting 'self.k' (line"),
    (sets_a_property, "runs the setter or deleter of its property"),
    (calls_a_property, "'c.area' is a property, and line"),
    (reads_a_cached_property, "'q.diagonal' is no attribute its __init__ sets"),
    (spring_with_arguments, "its class has no __init__, so Spring(...) takes no arguments"),
    (instance_attribute_hides_a_class_one, "its class has an attribute 'k' too"),
])
def test_what_python_does_otherwise_is_refused(fn, says):
    for mode in (srcad.grad(fn), lambda x: srcad.jvp(fn, (x,), (np.ones_like(x),))):
        with pytest.raises(SrcadError) as info:
            mode(X[:3] + 2.0)
        message = str(info.value)
        assert says in message and "test_local_objects_35.py:" in message
