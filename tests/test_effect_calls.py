"""Calls made for their effect wherever they are written (probe 16B): as the value of an
assignment (``r = x.sort()``), inside ``and``/``or``, a conditional expression, a
comprehension, an ``assert``; updates spelled as special methods; ``|`` of a dict; and the
``w = w or default`` idiom, whose test the reverse sweep must read as the forward sweep did.
Each either differentiates the effect, checked against finite differences, or is refused;
none touches the caller's arrays. (PYTEST_DONT_REWRITE: srcad reads the ``assert`` below as
written, and pytest would compile it otherwise.)"""
import numpy as np
import pytest

import srcad
from srcad.errors import SrcadSyntaxError
from srcad.testing import check_grads, check_jvp

X = np.array([0.3, -0.7, 1.1, 0.5])
W = np.array([4.0, 1.0, 3.0, 2.0])


def sort_assigned(x):
    r = x.sort()
    return np.sum(x * W) if r is None else 0.0


def copyto_assigned(x):
    r = np.copyto(x, x ** 2)
    return np.sum(x * W)


def fill_assigned(x):
    y = x * 1.0
    r = y.fill(2.0)
    return np.sum(y * x)


def add_at_assigned(x):
    z = np.zeros(4)
    r = np.add.at(z, np.array([0, 1, 1]), x[:3] ** 2)
    return np.sum(z * W)


def append_assigned(x):
    L = []
    _ = L.append(x[0] ** 2)
    L.append(x[2] * 3.0)
    return L[0] + L[1]


def append_in_and(x):
    L = [x[1]]
    c = x[3] > 0
    c and L.append(x[0] ** 2)
    return sum(L)


def append_in_ifexp(x):
    L = [x[1]]
    L.append(x[0] ** 2) if x[3] > 0 else None
    return sum(L)


def append_in_comprehension(x):
    L = []
    [L.append(x[k] ** 2) for k in range(3)]
    return sum(L)


def default_by_or(x, w=None):
    w = w or x[1] * 3.0
    return x[0] * w


def first_truthy(x):
    a = x[0] * 0.0
    b = a or x[1] ** 2 or x[2]
    return b * x[3]


def chained_in_a_loop(x):
    s = 0.0
    for k in range(4):
        if -1.0 < x[k] * 1.5 < 1.0:
            s = s + np.sin(x[k])
    return s


@pytest.mark.parametrize("f", [add_at_assigned, append_assigned, append_in_and, append_in_ifexp,
                               append_in_comprehension, default_by_or, first_truthy, chained_in_a_loop,
                               copyto_assigned,  # np.copyto(x, v) is the store x[...] = v
                               fill_assigned])  # y.fill(v) is the store y[...] = v
def test_the_effect_is_differentiated(f):
    x = X.copy()
    check_grads(f, (x,), modes=("rev",))
    check_jvp(f, (x,))
    np.testing.assert_array_equal(x, X)


@pytest.mark.parametrize("f", [sort_assigned])
def test_an_assigned_update_of_a_value_with_a_derivative_is_refused(f):
    x = X.copy()
    with pytest.raises(SrcadSyntaxError, match="made for its effect|changes"):
        srcad.grad(f)(x)
    np.testing.assert_array_equal(x, X)  # before: srcad.grad sorted, overwrote the caller's array


def assert_append(x):
    L = []
    assert L.append(x[0] ** 2) is None
    return sum(L)


def setitem_call(x):
    z = np.zeros(4)
    z.__setitem__(0, x[0] ** 2)
    return np.sum(z)


def iadd_call(x):
    z = np.zeros(4)
    z.__iadd__(x ** 2)
    return np.sum(z)


def setdefault_value(x):
    d = {}
    v = d.setdefault("a", x * 2.0)
    return np.sum(v)


def merged(x):
    d = {"a": x * 2.0}
    d2 = d | {"b": np.sin(x)}
    return np.sum(d2["a"] * d2["b"])


@pytest.mark.parametrize("f, message", [
    (assert_append, "inside an assert"), (setitem_call, "written as a call"), (iadd_call, "written as a call"),
    (setdefault_value, "made for its effect"), (merged, "'|' of a value that carries a derivative")])
def test_an_effect_srcad_cannot_follow_is_refused(f, message):
    with pytest.raises(SrcadSyntaxError, match=message):
        srcad.grad(f)(X.copy())


def merged_by_items(x):
    d = {"a": x * 2.0}
    d2 = dict(d)
    d2["b"] = np.sin(x)
    return np.sum(d2["a"] * d2["b"])


def test_the_merge_the_refusal_suggests_is_differentiated():
    check_grads(merged_by_items, (X.copy(),))


def masks(x):
    m = (x > 0) | (x < -0.5)
    return np.sum(np.where(m, x ** 2, x))


def test_a_mask_of_comparisons_is_not_refused():
    check_grads(masks, (X.copy(),))


def multiply_at(x):
    z = np.ones(4)
    np.multiply.at(z, [0, 0, 1], x[:3])
    return np.sum(z * x)


def test_a_ufuncs_at_changes_its_first_argument_only():
    # the message named x[:3] (the values, which it only reads) as the array it changes
    with pytest.raises(SrcadSyntaxError, match=r"np\.multiply\.at") as e:
        srcad.grad(multiply_at)(X.copy())
    assert "x[:3]" not in str(e.value).splitlines()[0]  # (the next line quotes the source)


def extended(x):
    L = []
    M = [x, 2.0]
    L.extend(M)  # (a display is two appends: tests/test_real_refusals_32.py)
    return np.sum(L[0] ** 2)


def updated(x):
    d = {}
    d.update({"a": x})
    return np.sum(d["a"] ** 2)


def filled(x):
    buf = np.zeros(3)
    buf.fill(x[1])
    return np.sum(buf ** 2)


def put_into(x):  # (np.fill_diagonal and np.copyto are element stores: tests/test_in_place_calls_23.py)
    buf = np.zeros((3, 3))
    np.put(buf, [0, 4], x[0])
    return np.sum(buf ** 2)


def test_a_fill_is_a_store_in_both_modes():
    check_grads(filled, (X.copy(),), modes=("rev",))
    check_jvp(filled, (X.copy(),))


@pytest.mark.parametrize("f", [extended, updated, put_into])
def test_forward_mode_refuses_an_effect_it_cannot_see_as_reverse_mode_does(f):
    # probe 17A: forward mode gave a zero tangent
    with pytest.raises(SrcadSyntaxError, match="made for its effect"):
        srcad.jvp(f, (X.copy(),), (X.copy(),))
    with pytest.raises(SrcadSyntaxError, match="made for its effect"):
        srcad.grad(f)(X.copy())


def default_by_setdefault(x):
    d = {}
    n = d.setdefault("a", 3.0)
    return np.sum(x * n)


def last_item(x):
    d = {"a": 2.0}
    k, v = d.popitem()
    return np.sum(x * v)


@pytest.mark.parametrize("f", [default_by_setdefault, last_item])
def test_answering_methods_on_containers_without_derivatives(f):
    check_grads(f, (X.copy(),), modes=("rev",))
    check_jvp(f, (X.copy(),))


def double_buffer(u):
    a = u.copy()
    b = np.zeros_like(u)
    for t in range(3):
        b[1:-1] = a[1:-1] + 0.1 * (a[2:] - 2 * a[1:-1] + a[:-2])
        b[0] = a[0]
        b[-1] = a[-1]
        a, b = b, a
    return np.sum(a ** 2)


def test_a_double_buffer_swap_is_refused_with_advice_that_works():
    # probe 16B: the advice was to copy what is new memory already ('.copy().copy()' next)
    with pytest.raises(SrcadSyntaxError, match="taking turns") as e:
        srcad.grad(double_buffer)(np.ones(6))
    assert ".copy()" not in str(e.value).splitlines()[0]
