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
