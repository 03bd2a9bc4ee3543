"""False refusals of ordinary code (h175), each checked in every mode against finite
differences, the inputs and the module's objects unchanged:

- a method of a module-level object updating ``W = self.W.copy()`` in place: what a helper
  updates takes ``a.copy()`` for new memory (``memory_summaries``), as its compiled code checks
  ``a`` is an array before the update (``passes.array_receivers``): another object there is
  refused where the code runs;
- ``for k in list(c.keys())`` / ``for k, v in list(c.items())`` storing into a local dict ``c``:
  ``keys()``/``values()``/``items()`` of a value surely a dict are a live view holding its
  items, so a list of them is a new list, as ``list(c)`` is (the live view itself stays refused);
- ``b.fill(v)`` and ``np.put_along_axis(a, i, v, axis)``: the stores ``b[...] = v`` and
  ``a[positions] = v`` (``runtime_stores``), whose memory is checked as a store's (a view of
  what is read after stays refused), and which raise where NumPy's call would, or where the
  receiver is no NumPy array."""
import numpy as np
import pytest

import srcad
from srcad.errors import SrcadError, SrcadSyntaxError
from lang_checks import check_all_modes

X = np.linspace(0.3, 1.2, 3)


class Layer:
    def __init__(self, W):
        self.W = W

    def shifted(self, x):
        W = self.W.copy()
        W[0] += x
        W *= 2.0
        return np.sum(W * W)

    def scaled_twice(self, x):
        t = 0.0
        for k in range(2):
            W = self.W.copy()
            W *= x[k]
            t = t + np.sum(np.sin(W))
        return t


LAYER = Layer(np.linspace(-0.5, 0.7, 6).reshape(2, 3))


def method_copy_updated(x):
    return LAYER.shifted(x)


def method_copy_updated_in_a_loop(x):
    return LAYER.scaled_twice(x) + LAYER.shifted(x)


def copy_of(layer, x):
    W = layer.W.copy()
    W[1] -= x ** 2
    return np.sum(W * W)


def function_copy_updated(x):
    return copy_of(LAYER, x)


def listed_keys_stored(x):
    c = {"a": x * 1.0, "b": x * 2.0}
    for k in list(c.keys()):
        c[k] = c[k] * x
    return np.sum(c["a"] + c["b"] ** 2)


def listed_items_stored(x):
    c = {"a": x * 1.0, "b": x * 2.0}
    for k, v in list(c.items()):
        c[k] = v + np.sin(x)
    return np.sum(c["a"] * c["b"])


def sorted_items_of_a_dict_call(x):
    c = dict(a=x * 1.0, b=x ** 2)
    for k, v in sorted(c.items()):
        c[k] = v * x
    return np.sum(c["a"] * c["b"])


def listed_int_keys_stored(x):
    c = {0: x * 1.0, 1: x * 3.0}
    for k in list(c.keys()):
        c[k] = c[k] * c[k]
    return np.sum(c[0] + c[1])


def filled_with_a_value_carrying_a_derivative(x):
    b = np.zeros(3)
    b.fill(x[0])
    return np.sum(b * x)


def filled_with_a_constant(x):
    b = x * 2.0
    y = b * b
    b.fill(0.5)
    return np.sum(y + b * x)


def filled_in_a_loop(x):
    M = np.outer(x, x)
    t = 0.0
    for i in range(3):
        b = M[i] * 1.0
        b.fill(x[i] ** 2)
        t = t + np.sum(b * M[i])
    return t


def put_along_rows(x):
    a = np.outer(x, x)
    np.put_along_axis(a, np.array([[0], [1], [2]]), x[:, None] * 3.0, 1)
    return np.sum(a * a)


def put_along_columns(x):
    a = np.outer(x, x)
    np.put_along_axis(a, np.array([[2, 0, 1]]), np.sin(x)[None, :], axis=0)
    return np.sum(a * np.cos(a))


def put_along_the_last_axis(x):
    a = np.outer(x, x)
    i = np.argsort(a, axis=-1)[:, :1]
    np.put_along_axis(a, i, x[1] ** 2, -1)
    return np.sum(a * a)


ACCEPTED = [method_copy_updated, method_copy_updated_in_a_loop, function_copy_updated, listed_keys_stored,
            listed_items_stored, sorted_items_of_a_dict_call, listed_int_keys_stored,
            filled_with_a_value_carrying_a_derivative, filled_with_a_constant, filled_in_a_loop, put_along_rows,
            put_along_columns, put_along_the_last_axis]


@pytest.mark.parametrize("f", ACCEPTED, ids=[f.__name__ for f in ACCEPTED])
def test_accepted_in_every_mode(f):
    x, W = X.copy(), LAYER.W.copy()
    check_all_modes(f, (x,))
    np.testing.assert_array_equal(x, X)
    np.testing.assert_array_equal(LAYER.W, W)


class Holder:
    """An object whose ``copy`` returns itself: no array."""

    def __init__(self):
        self.values = np.ones((2, 3))

    def copy(self):
        return self

    def __getitem__(self, i):
        return self.values[i]

    def __setitem__(self, i, v):
        self.values[i] = v


def test_a_method_copy_of_what_is_no_array_is_refused_where_the_code_runs():
    layer = Layer(np.linspace(-0.5, 0.7, 6).reshape(2, 3))

    def through(x):
        return layer.shifted(x)

    gradient = srcad.grad(through)
    np.testing.assert_allclose(gradient(X), 8.0 * (layer.W[0] + X))
    layer.W = Holder()
    with pytest.raises(SrcadError, match="'self.W' is a "):
        gradient(X)
    np.testing.assert_array_equal(layer.W.values, np.ones((2, 3)))


def live_keys_stored(x):
    c = {"a": x * 1.0, "b": x * 2.0}
    for k in c.keys():
        c[k] = c[k] * x
    return np.sum(c["a"] + c["b"] ** 2)


def test_a_live_view_of_the_dict_stays_refused_and_the_advice_is_accepted():
    with pytest.raises(SrcadSyntaxError, match=r"'for k in list\(c\):'"):
        srcad.grad(live_keys_stored)(X)
    check_all_modes(listed_keys_stored, (X.copy(),))  # (the advised form, in its test above)


def filled_view_read_after(x):
    M = np.outer(x, x)
    r = M[0]
    r.fill(x[1])
    return np.sum(M * M)


def put_along_a_viewed_array(x):
    a = np.outer(x, x)
    v = a[0]
    np.put_along_axis(a, np.array([[0], [1], [2]]), 1.0, 1)
    return np.sum(v * x)


@pytest.mark.parametrize("f, advice", [(filled_view_read_after, "write 'r = M[0].copy()'"),
                                       (put_along_a_viewed_array, "write 'v = a[0].copy()'")])
def test_a_store_into_shared_memory_is_refused_as_an_element_store_is(f, advice):
    with pytest.raises(SrcadSyntaxError, match="shares memory") as refused:
        srcad.grad(f)(X.copy())
    assert advice in str(refused.value)


def fills_a_list(x):
    b = [1.0, 2.0]
    b.fill(x)
    return x * 2.0


def fills_with_an_array(x):
    b = np.zeros(3)
    b.fill(x[:2])
    return np.sum(b)


def puts_out_of_bounds(x):
    a = np.outer(x, x)
    np.put_along_axis(a, np.array([[3], [0], [1]]), 1.0, 1)
    return np.sum(a)


@pytest.mark.parametrize("f, arg, error, match", [
    (fills_a_list, 0.5, SrcadError, "'b' holds a list here"),
    (fills_with_an_array, X, ValueError, "sequence"),
    (puts_out_of_bounds, X, IndexError, "out of bounds")])
def test_a_store_raises_where_the_call_would_not_be_it(f, arg, error, match):
    with pytest.raises(error, match=match):
        srcad.grad(f)(arg)


def keys_kept_while_stored(x):
    c = {"a": x * 1.0}
    ks = c.keys()
    c["z"] = x * 3.0
    t = 0.0
    for k in ks:
        t = t + np.sum(c[k] ** 2)
    return t


def keys_listed_while_stored(x):
    c = {"a": x * 1.0}
    ks = list(c.keys())
    c["z"] = x * 3.0
    t = 0.0
    for k in ks:
        t = t + np.sum(c[k] ** 2)
    return t


def test_a_kept_view_of_keys_is_refused_with_advice_that_works():
    with pytest.raises(SrcadSyntaxError) as refused:
        srcad.grad(keys_kept_while_stored)(X.copy())
    assert "write 'ks = list(c.keys())'" in str(refused.value)
    check_all_modes(keys_listed_while_stored, (X.copy(),))
