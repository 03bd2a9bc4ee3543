"""A list or dict whose items are one array (``[np.zeros(n)] * k``, ``[z, z]``, ``L.append(z)``
twice), updated in place through one item (``L[0] += v``): NumPy changes every item holding
that array, srcad would differentiate the update of one item alone. Refused when it runs, with
the user's line (probe 16B); lists and dicts of separate arrays, the common case (parameters
in a dict updated in place), are differentiated as before. Values against finite differences."""
import numpy as np
import pytest

import srcad
from srcad.errors import UnsupportedCaseError
from srcad.testing import check_grads, check_jvp

X = np.array([0.3, -0.7, 1.1, 0.5])


def repeated(x):
    L = [np.zeros(4)] * 3
    for i in range(3):
        L[i] += x * (i + 1.0)
    return np.sum(L[0] * x)


def appended_twice(x):
    z = x * 2.0
    L = []
    for i in range(2):
        L.append(z)
    L[1] *= x
    return np.sum(L[0] * x)


def same_array_twice_in_a_dict(x):
    z = x * 2.0
    d = {"a": z, "b": z}
    d["a"] *= x
    return np.sum(d["b"] * x)


def views_of_one_array(x):
    buf = np.zeros(6)
    L = [buf[:4], buf[2:]]
    L[0] += x
    return np.sum(L[1] * x)


@pytest.mark.parametrize("f", [repeated, appended_twice, same_array_twice_in_a_dict, views_of_one_array])
def test_an_update_of_an_array_another_item_holds_is_refused(f):
    with pytest.raises(UnsupportedCaseError, match="another item of the same list or dict") as e:
        srcad.value_and_grad(f)(X)  # before: even the value was not the function's
    assert f.__code__.co_filename in str(e.value)


def separate_arrays(x):
    L = [np.zeros(4) for _ in range(3)]
    for i in range(3):
        L[i] += x * (i + 1.0)
    return np.sum(L[0] * L[2])


def parameters_updated(x):
    params = {"w": x * 1.0, "b": x[:2] * 0.5}
    grads = {"w": np.cos(x), "b": np.sin(x[:2])}
    for name in ("w", "b"):
        params[name] -= 0.1 * grads[name]
    return np.sum(params["w"] ** 2) + np.sum(params["b"])


@pytest.mark.parametrize("f", [separate_arrays, parameters_updated])
def test_separate_arrays_are_updated_and_differentiated(f):
    x = X.copy()
    check_grads(f, (x,))
    check_jvp(f, (x,))
    np.testing.assert_array_equal(x, X)


def item_stored_into_another(x):
    L = [np.zeros(3), np.zeros(3)]
    L[1] = L[0]
    L[0] += x
    return np.sum(L[1] ** 2)


def entry_stored_into_another(x):
    d = {"a": np.zeros(3)}
    d["b"] = d["a"]
    d["a"] += x
    return np.sum(d["b"] ** 2)


def nested_twice(x):
    z = np.zeros(3)
    L = [z, [z]]
    L[0] += x
    return np.sum(L[1][0] ** 2)


def appended_inside(x):
    L = [np.zeros(3)]
    L.append([L[0]])
    L[0] += x
    return np.sum(L[1][0] ** 2)


@pytest.mark.parametrize("f", [item_stored_into_another, entry_stored_into_another, nested_twice, appended_inside])
def test_sharing_made_by_a_store_or_nested_is_refused(f):
    # probe 17A: srcad's forward sweep keeps a stored value as stored, so the update of one
    # item no longer reached the other: the value and the gradient were wrong
    with pytest.raises(UnsupportedCaseError, match="another item of the same list or dict"):
        srcad.value_and_grad(f)(X[:3])


def columns(x):
    Y = np.outer(x, x)
    cols = np.hsplit(Y, 3)
    cols[0] += 1.0
    return np.sum(cols[0] ** 2) + np.sum(cols[1])


def interleaved(x):
    y = np.concatenate([x, x])
    L = [y[::2], y[1::2]]
    L[0] += x
    return np.sum(L[0] ** 2) + np.sum(L[1])


@pytest.mark.parametrize("f", [columns, interleaved])
def test_views_of_one_array_with_no_element_in_common_are_differentiated(f):
    check_grads(f, (X[:3].copy(),))
