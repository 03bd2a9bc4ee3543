"""``np.lib.stride_tricks.sliding_window_view``: reading windows is a gather (its adjoint sums
each element's copies), in reverse, forward and second order; the windows are a read-only view
of the input, so writes into either while the other is still read are refused, never silently
differentiated as if the windows were a copy."""
import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import srcad
from library_check import check_first_order, check_float32, check_second_order, samplers

R, _, _ = samplers(13)


def moving_average(x):
    return np.mean(sliding_window_view(x, 3), axis=-1)


def weighted_patches(x):
    return sliding_window_view(x, (2, 3)) * np.arange(6.0).reshape(2, 3)


def windows_along_axis(x):
    w = sliding_window_view(x, 2, axis=0)
    return np.sin(w) + w ** 2


def overlapping_windows(x):
    wide, narrow = sliding_window_view(x, 4), sliding_window_view(x, 2)
    return np.sum(wide, axis=-1) ** 2 + np.sum(narrow[1:4] * narrow[:3], axis=-1)


CASES = [
    ("moving-average", moving_average, [R(7)]),
    ("patches-2d", weighted_patches, [R(4, 5)]),
    ("axis", windows_along_axis, [R(4, 3)]),
    ("overlapping", overlapping_windows, [R(6)]),
]


@pytest.mark.parametrize("name, fun, args", CASES, ids=[c[0] for c in CASES])
def test_first_order(name, fun, args):
    check_first_order(fun, args)


@pytest.mark.parametrize("name, fun, args", CASES, ids=[c[0] for c in CASES])
def test_float32(name, fun, args):
    check_float32(fun, args)


@pytest.mark.parametrize("name, fun, args", CASES, ids=[c[0] for c in CASES])
def test_second_order(name, fun, args):
    check_second_order(fun, args)


def writes_into_windows(x):
    w = sliding_window_view(x, 3)
    w[0, 0] = 1.0
    return np.sum(w)


def writeable_windows(x):
    w = sliding_window_view(x * 1.0, 3, writeable=True)
    return np.sum(w ** 2)


def writes_into_the_input_after(x):
    y = x * 1.0
    w = sliding_window_view(y, 3)
    y[1] = x[0] * 3.0  # changes three windows
    return np.sum(w ** 2)


@pytest.mark.parametrize("fun, message", [
    (writes_into_windows, "in-place update of 'w', which shares memory with the argument 'x'"),
    (writeable_windows, "sliding_window_view with writeable=False only"),
    (writes_into_the_input_after, "in-place update of 'y', which shares memory with 'w'"),
])
@pytest.mark.parametrize("how", ["grad", "jvp"])
def test_writes_that_would_change_the_windows_are_refused(fun, message, how):
    x = R(5)
    with pytest.raises(srcad.SrcadError, match=message):
        srcad.grad(fun)(x) if how == "grad" else srcad.jvp(fun, (x,), (x,))
