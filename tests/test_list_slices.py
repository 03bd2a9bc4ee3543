"""A slice assignment to a list that changes its length (``L[1:3] = [v]``) raised IndexError
from the generated adjoint (found by an adversarial probe); it is refused at the user's line
in every mode. One that keeps the length is differentiated; an array's slice store carries no
check in the adjoint (an array keeps its length)."""
import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes
from srcad.errors import UnsupportedCaseError

X = np.array([0.4, 1.3, 0.7])


def shrinks(x):
    L = [x[0], x[1], x[2]]
    L[1:3] = [x[2] ** 2]
    return L[0] + 2 * L[1]


def inserts(x):
    L = [x[0], x[1]]
    L[1:1] = [x[2] * 3.0]
    return L[1] * L[2]


def keeps_length(x):
    L = [x[0], x[1], x[2]]
    L[1:3] = [x[2] ** 2, np.sin(x[0])]
    return L[0] + 2 * L[1] * L[2]


def list_slice_from_an_array(x):
    """The adjoint of the array stored is an array of the slice's items (it was the list
    slice, and the next rule multiplied a list: TypeError; found by an adversarial probe)."""
    L = [x[0], x[1], x[2]]
    L[::2] = np.sin(x[1:]) * 2.0
    L[0:2] = x[:2] * 3.0
    return L[0] + 2.0 * L[1] * L[2]


def array_slices(x):
    u = x * 2.0
    u[1:] = np.tanh(u[:-1])
    return np.sum(u ** 2)


@pytest.mark.parametrize("f", [shrinks, inserts])
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_length_changing_slice_store_refused(f, mode):
    with pytest.raises(UnsupportedCaseError, match=r"test_list_slices.py:\d+: this slice assignment replaces"):
        if mode == "grad":
            srcad.grad(f)(X)
        else:
            srcad.jvp(f, (X,), (np.ones(3),))


@pytest.mark.parametrize("f", [keeps_length, list_slice_from_an_array, array_slices])
def test_slice_stores_differentiated(f):
    check_all_modes(f, (X,))


def test_array_slice_store_has_no_check():
    d = srcad.differentiable(array_slices)
    d.adjoint(X, 1.0)
    assert "check_list_slice" not in d.adjoint_source
