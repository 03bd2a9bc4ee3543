"""Programs in the styles of users' own code (helper round 166): explicit base-class calls
``Base.method(self, ...)`` in the methods of a local object."""
import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes


class Base:
    def energy(self, x):
        return np.sum(x ** 2)


class Spring(Base):
    def __init__(self, k):
        self.k = k

    def energy(self, x):
        return Base.energy(self, x) + self.k * np.sum(np.diff(x) ** 2)


class Stiff(Spring):
    def energy(self, x):  # Spring.energy itself calls Base.energy(self, ...)
        return 2.0 * Spring.energy(self, x * self.k)


class Counter(Base):
    def __init__(self, w):
        self.w = w

    def bump(self, x):
        self.w = self.w + x
        return np.sum(self.w ** 2)

    def energy(self, x):
        r = Counter.bump(self, x)  # a method that sets an attribute, through the class
        return r + Base.energy(self, self.w * x)


class Stranger:
    def energy(self, x):
        return np.sum(np.sin(x))


class Wrong(Base):
    def __init__(self, k):
        self.k = k

    def energy(self, x):
        return Stranger.energy(self, x) * self.k  # a class the object is no instance of


def spring(x):
    s = Spring(3.0)
    return s.energy(x)


def stiff(x):
    s = Stiff(0.7)
    return s.energy(x)


def counter(x):
    c = Counter(np.ones(3) * 0.5)
    r = c.energy(x)  # (a method setting attributes is called as a statement of its own)
    return r


def wrong(x):
    s = Wrong(3.0)
    return s.energy(x)


X = np.array([0.3, -0.8, 1.1])


@pytest.mark.parametrize("f", [spring, stiff, counter])
def test_base_class_call_in_a_local_objects_method(f):
    check_all_modes(f, (X.copy(),))


def test_base_class_call_of_a_class_not_of_the_object_stays_refused():
    with pytest.raises(srcad.SrcadError) as info:
        srcad.grad(wrong)(X.copy())
    assert "otherwise than to read or set an attribute" in str(info.value)
    assert "test_real_35.py" in str(info.value)
