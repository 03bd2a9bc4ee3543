"""``a.copy()`` and the reductions of ``fresh.FRESH_METHODS`` on an attribute or a global
(``self.W.copy()``, ``W.sum(axis=1)``), whose result the code updates in place: srcad checks when
the code runs that the receiver is a NumPy array (``passes.array_receivers``) and differentiates
the update, in every mode; an object of yours whose method returns memory it keeps, or a list,
is refused when the code runs, its memory unchanged."""
import types

import numpy as np
import pytest

import srcad
from srcad.errors import SrcadError
from lang_checks import check_all_modes


class Layer:
    def __init__(self):
        self.W = np.linspace(0.5, 1.0, 4)
        self.M = np.linspace(-1.0, 1.0, 12).reshape(3, 4)

    def copied_then_stored(self, x):
        b = self.W.copy(); b[1:] = x[1:]
        return np.sum(b * x)

    def row_sums_updated(self, x):
        r = self.M.sum(axis=1)
        r[0] = np.tanh(x[3])
        r *= x[:3]
        return np.sum(r * x[1:])

    def extremes_updated(self, x):
        lo, hi = self.M.min(axis=0), self.M.max(axis=0)
        lo += x
        hi[2:] = lo[:2] * x[2:]
        return np.sum(lo * hi) + np.sum(np.sin(x) * hi)


W = np.linspace(0.2, 1.3, 12).reshape(3, 4)


def global_row_sums(x):
    ar = W.sum(axis=1); ar[1:] = x[1:]
    return np.sum(ar * x)


def global_mean_and_cumsum(x):
    m = W.mean(axis=0)
    c = W.cumsum(axis=1)
    m[0] = x[0] ** 2
    c[:, 1] = x * m[:3]
    return np.sum(c * np.cos(m)) + np.sum(m * m)


def running_mean_update(x, bn):
    rm = bn.running_mean.copy()
    rm[1:] = x[:2] * rm[:2]
    rm *= 0.9
    rm += 0.1 * x
    return np.sum(rm * x ** 2)


layer = Layer()


def _snapshot():
    return [layer.W.copy(), layer.M.copy(), W.copy()]


def _unchanged(before):
    for old, now in zip(before, [layer.W, layer.M, W]):
        np.testing.assert_array_equal(old, now)


@pytest.mark.parametrize("method", ["copied_then_stored", "row_sums_updated", "extremes_updated"])
def test_method_of_an_attribute_array_in_all_modes(method):
    x = np.linspace(0.1, 0.4, 4)
    before, given = _snapshot(), x.copy()
    check_all_modes(getattr(layer, method), (x,))
    _unchanged(before)
    np.testing.assert_array_equal(x, given)


@pytest.mark.parametrize("fn, n", [(global_row_sums, 3), (global_mean_and_cumsum, 3)])
def test_method_of_a_global_array_in_all_modes(fn, n):
    x = np.linspace(0.3, 0.9, n)
    before, given = _snapshot(), x.copy()
    check_all_modes(fn, (x,))
    _unchanged(before)
    np.testing.assert_array_equal(x, given)


def test_copy_of_an_attribute_of_an_argument_in_all_modes():
    bn = types.SimpleNamespace(running_mean=np.array([0.5, -0.2, 0.8]))
    x = np.array([0.3, -0.7, 1.1])
    check_all_modes(running_mean_update, (x, bn))
    np.testing.assert_array_equal(bn.running_mean, [0.5, -0.2, 0.8])


class Holder:
    """Not an array: its ``copy`` and ``sum`` return the array it holds."""

    def __init__(self, a):
        self.a = a

    def copy(self):
        return self.a

    def sum(self, axis=None):
        return self.a


class HoldsHolder:
    def __init__(self, W):
        self.W = W

    def copied_then_stored(self, x):
        b = self.W.copy(); b[1:] = x[1:]
        return np.sum(b * x)


H = Holder(np.ones(3))


def global_holder_sum(x):
    ar = H.sum(axis=1); ar[1:] = x[1:]
    return np.sum(ar * x)


@pytest.mark.parametrize("held", [Holder(np.linspace(0.5, 1.0, 4)), [0.5, 0.6, 0.7, 0.8]])
def test_an_object_whose_copy_keeps_its_memory_is_refused(held):
    obj = HoldsHolder(held)
    kept = np.array(held.a if isinstance(held, Holder) else held, dtype=float)
    x = np.linspace(0.1, 0.4, 4)
    with pytest.raises(SrcadError) as info:
        srcad.grad(obj.copied_then_stored)(x)
    assert f"{__file__}:" in str(info.value) and "self.W" in str(info.value)
    np.testing.assert_array_equal(held.a if isinstance(held, Holder) else held, kept)


def test_a_global_object_whose_sum_keeps_its_memory_is_refused():
    with pytest.raises(SrcadError) as info:
        srcad.grad(global_holder_sum)(np.linspace(0.1, 0.3, 3))
    assert f"{__file__}:" in str(info.value) and "'H'" in str(info.value)
    np.testing.assert_array_equal(H.a, np.ones(3))


def test_a_list_attribute_is_refused_when_the_code_runs():
    obj = HoldsHolder([0.5, 0.6, 0.7, 0.8])
    with pytest.raises(SrcadError, match="'self.W' holds a list here"):
        srcad.grad(obj.copied_then_stored)(np.linspace(0.1, 0.4, 4))
    assert obj.W == [0.5, 0.6, 0.7, 0.8]


class Keeps(np.ndarray):
    def copy(self, order="C"):
        return self


def test_an_array_subclass_whose_copy_is_itself_is_refused():
    held = np.linspace(0.5, 1.0, 4).view(Keeps)
    with pytest.raises(SrcadError):
        srcad.grad(HoldsHolder(held).copied_then_stored)(np.linspace(0.1, 0.4, 4))
    np.testing.assert_array_equal(np.asarray(held), np.linspace(0.5, 1.0, 4))


def test_an_array_of_objects_is_refused():
    items = [np.full(1, 0.5) for _ in range(4)]
    obj = HoldsHolder(np.array(items + [None], dtype=object)[:4])
    with pytest.raises(SrcadError):
        srcad.grad(obj.copied_then_stored)(np.linspace(0.1, 0.4, 4))
    assert all(np.array_equal(item, [0.5]) for item in items)
