"""backend="numba" on a name first bound inside a loop and then changed in place, whose saves
are copies (``_z_stack.append(copy_value(z))``).

numba's stacks for such a name are turned around (``passes.numba_stacks``): a value is pushed
right after its assignment, where Python pushes it before the next one. A copy taken then is
the value before an update in place that comes in between (``z[:] = ...``, ``z += ...``),
and an element saved on the same stack before a store (``copy_value(z[0:2])``) was read back
as the name's previous value: before this stop, ``z[:] = z * x[1]`` and a 2-D ``z[0:1] = ...``
compiled to silently wrong gradients, and ``z[0:2] = ...`` to a shape error at run time. Such
stacks are refused now (the copy is compiled for numbers only; an element on a turned-around
stack is refused); numbers, which no update changes, still compile, and so does the same loop
with the name bound before it (its stack is not turned around).
"""
import numpy as np
import pytest

pytest.importorskip("numba")

import srcad  # noqa: E402
from srcad.backends.numba_backend import BackendCompileError  # noqa: E402
from test_numba_backend import check, check_compiled_pair, is_compiled  # noqa: E402


def whole_store(x):
    tot = 0.0
    for i in range(3):
        z = x * 1.0
        w = z * z
        z[:] = z * x[1]
        tot = tot + np.sum(z * w)
    return tot


def slice_store(x):
    tot = 0.0
    for i in range(3):
        z = x * 1.0
        w = z * z
        z[0:2] = z[0:2] * x[1]
        tot = tot + np.sum(z * w)
    return tot


def row_block_store(a):
    tot = 0.0
    for i in range(3):
        z = a * 1.0
        w = z * z
        z[0:1] = z[0:1] * a[1, 1]
        tot = tot + np.sum(z * w)
    return tot


def item_store(x):
    tot = 0.0
    for i in range(3):
        z = x * 1.0
        w = z * z
        z[0] = z[0] * x[1]
        tot = tot + np.sum(z * w)
    return tot


def store_in_a_branch(x):
    tot = 0.0
    for i in range(4):
        z = x * (0.5 + i)
        w = z * z
        if i % 2 == 0:
            z[0:2] = z[0:2] * x[1]
        tot = tot + np.sum(z * w)
    return tot


def added_in_place(x):
    tot = 0.0
    for i in range(3):
        z = x * 1.0
        w = z * z
        z += x * x[1]
        tot = tot + np.sum(z * w)
    return tot


def scaled_rows_in_place(a):
    tot = 0.0
    for i in range(2):
        z = np.sin(a)
        w = z * a
        z *= a[0, 1]
        tot = tot + np.sum(z * w)
    return tot


def float_accumulator(x):  # control: `s += ...` saves s as a copy, but a float is never changed in place
    tot = 0.0
    for i in range(3):
        s = x[0] * i
        s += x[1] * x[2]
        tot = tot + s * s
    return tot


def bound_before_the_loop(x):  # control: not turned around, saved where Python saves it
    tot = 0.0
    z = x * 1.0
    for i in range(3):
        z = z * 0.9 + x
        w = np.sin(z)
        z[0:2] = z[0:2] * x[1]
        tot = tot + np.sum(z * w)
    return tot


VECTOR = np.array([0.3, 0.8, -0.5])
MATRIX = np.array([[0.3, 0.8, -0.5], [0.6, -0.9, 1.2]])
ELEMENT_ON_THE_STACK = "an element overwritten in place is saved among the saved values of z"
ARRAY_COPY = r"changed in place before the value is saved again.*bind the name before the loop"
REFUSED = {
    "whole_store": (whole_store, VECTOR, ELEMENT_ON_THE_STACK),  # compiled, wrong gradient before
    "slice_store": (slice_store, VECTOR, ELEMENT_ON_THE_STACK),  # compiled, shape error at run time before
    "row_block_store": (row_block_store, MATRIX, ELEMENT_ON_THE_STACK),  # compiled, wrong gradient before
    "item_store": (item_store, VECTOR, ELEMENT_ON_THE_STACK),
    "store_in_a_branch": (store_in_a_branch, VECTOR, ELEMENT_ON_THE_STACK),
    "added_in_place": (added_in_place, VECTOR, ARRAY_COPY),
    "scaled_rows_in_place": (scaled_rows_in_place, MATRIX, ARRAY_COPY),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_copied_array_stack_turned_around_is_refused(name):
    f, x, message = REFUSED[name]
    with pytest.raises(BackendCompileError, match=message):
        srcad.differentiable(f, backend="numba").grad(x)
    with pytest.raises(BackendCompileError, match=message):
        srcad.differentiable(f, backend="numba").vjp(x)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_auto_runs_the_numpy_code_instead(name):
    f, x, _ = REFUSED[name]
    check(f, (x,), (0,), (srcad.grad(f, backend="auto")(x),))


@pytest.mark.parametrize("f", [float_accumulator, bound_before_the_loop])
def test_what_no_update_can_change_between_its_saves_compiles(f):
    d = srcad.differentiable(f, backend="numba")
    check(f, (VECTOR,), (0,), (d.grad(VECTOR),))
    assert is_compiled(d)
    check_compiled_pair(f, (VECTOR,), (0,), d)
