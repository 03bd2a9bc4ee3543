"""The copy srcad advises before an in-place update of a global's value must work: a number an
object of the module holds has no ``.copy()`` (the advice was 't = O.b.copy()', an
AttributeError); its in-place update rebinds, from a copy made by ``float(...)``/``int(...)``. A
global's array is copied by its ``.copy()`` (checked to be an array's when the code runs)."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads


class Params:
    def __init__(self):
        self.b = 0.8
        self.n = 3
        self.W = np.linspace(0.5, 1.0, 3)


P = Params()
X = np.array([0.2, 0.5, -0.3])


def scales_a_float_attribute(x):
    t = P.b
    t *= np.tanh(x)
    return np.sum(t)


def shifts_an_int_attribute(x):
    k = P.n
    k += 2
    return np.sum(x * k)


def updates_an_array_attribute(x):
    w = P.W
    w *= x
    return np.sum(w)


def scales_a_float_attribute_as_advised(x):
    t = float(P.b)
    t *= np.tanh(x)
    return np.sum(t)


def shifts_an_int_attribute_as_advised(x):
    k = int(P.n)
    k += 2
    return np.sum(x * k)


def updates_an_array_attribute_as_advised(x):
    w = P.W.copy()
    w *= x
    return np.sum(w)


@pytest.mark.parametrize("f, advice, advised", [
    (scales_a_float_attribute, "'t = float(P.b)'", scales_a_float_attribute_as_advised),
    (shifts_an_int_attribute, "'k = int(P.n)'", shifts_an_int_attribute_as_advised),
    (updates_an_array_attribute, "'w = P.W.copy()'", updates_an_array_attribute_as_advised),
], ids=lambda a: getattr(a, "__name__", ""))
def test_the_advised_copy_of_a_global_objects_attribute_works(f, advice, advised):
    with pytest.raises(srcad.SrcadSyntaxError, match="shares memory with the global 'P'") as info:
        srcad.grad(f)(X)
    assert advice in str(info.value)
    check_grads(advised, (X,))
    np.testing.assert_array_equal(P.W, np.linspace(0.5, 1.0, 3))
