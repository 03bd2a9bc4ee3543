"""The numba lowering pass and the backend's refusals that need no numba: identity tests
lowered or refused, placeholder stacks turned around only when exact, the message when
numba is missing, an unknown backend."""
import sys

import gast
import numpy as np
import pytest

import srcad
from srcad import astutil as A
from srcad.backends import numba_backend
from srcad.passes.numba_lowering import NotLowerable, lower_for_numba, turned_stacks


def lowered(src):
    return A.to_source(lower_for_numba(gast.parse(src).body[0]))


def test_identity_between_values_becomes_same_value_and_none_tests_stay():
    out = lowered("def f(a, b, g):\n    t = g * (a is b)\n    u = g * (b is not a)\n"
                  "    if g is None:\n        return t\n    return t + u\n")
    assert "same_value(a, b)" in out and "not same_value(b, a)" in out
    assert "g is None" in out
    assert " is b" not in out and " is not a" not in out


@pytest.mark.parametrize("test", ["a is True", "a is b is c", "1.0 is not a"])
def test_identity_that_cannot_keep_its_meaning_is_refused(test):
    with pytest.raises(NotLowerable, match="identity|chained"):
        lowered(f"def f(a, b, c):\n    return {test}\n")


def test_same_value_is_equality_with_nan_equal_to_itself():
    pytest.importorskip("numba")  # numba_runtime registers numba overloads when imported
    from srcad.backends.numba_runtime import same_value  # the Python reference of the njit helper

    assert same_value(1.5, 1.5) and not same_value(1.5, 2.0)
    assert same_value(float("nan"), float("nan")) and not same_value(float("nan"), 1.0)


def test_a_stack_whose_value_is_also_assigned_unsaved_keeps_its_top_current():
    src = ("def f(x):\n    t = None\n    _t_stack = []\n    for i in range(3):\n"
           "        _t_stack.append(t)\n        t = x * i\n        t = t + 1.0\n"
           "    for i in range(3):\n        t = _t_stack.pop()\n    return x\n")
    out = lowered(src)
    assert ("t = x * i\n        _t_stack.append(t)\n        t = t + 1.0\n"
            "        set_current_value(_t_stack, t)") in out
    assert "t = previous_value(_t_stack, t)" in out


def test_a_save_a_branch_may_separate_from_its_assignment_is_refused():
    src = ("def f(x):\n    t = None\n    _t_stack = []\n    for i in range(3):\n"
           "        _t_stack.append(t)\n        if i:\n            x = x + 1.0\n        t = x * i\n"
           "    for i in range(3):\n        t = _t_stack.pop()\n    return x\n")
    with pytest.raises(NotLowerable, match="saved for an assignment this statement may skip") as info:
        lowered(src)
    assert info.value.node.lineno == 6


def test_trip_counters_get_a_typed_placeholder_and_stay_pushed_before():
    src = ("def f(x):\n    _n = None\n    _n_stack = []\n    for i in range(3):\n"
           "        _n_stack.append(_n)\n        _n = 0\n        for j in range(i):\n            _n = _n + 1\n"
           "    for i in range(3):\n        _n = _n_stack.pop()\n    return x\n")
    out = lowered(src)
    assert "_n = 0\n    _n_stack = []" in out
    assert "_n_stack.append(_n)\n        _n = 0" in out and "_n = _n_stack.pop()" in out


def test_a_value_none_on_some_paths_is_refused():
    with pytest.raises(NotLowerable, match="None on some paths"):
        lowered("def f(x, c):\n    d = None\n    if c:\n        d = x\n    return d\n")


def test_unknown_backend_is_refused_when_the_transform_is_made():
    with pytest.raises(ValueError, match="backend must be one of"):
        srcad.grad(np.sin, backend="numbaa")


def square_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * x[i]
    return s


def test_without_numba_numba_says_how_to_install_and_auto_runs_numpy(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba raises ImportError
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(numba_backend.BackendUnavailableError, match=r"pip install srcad\[numba\]"):
        srcad.grad(square_sum, backend="numba")(x)
    np.testing.assert_array_equal(srcad.grad(square_sum, backend="auto")(x), 2.0 * x)


def test_a_placeholder_rebound_before_it_is_read_is_dropped_and_a_loop_variables_becomes_0():
    out = lowered("def f_forward(x):\n    y = None\n    i = None\n    y, s = g(x)\n"
                  "    for i in range(3):\n        y = y * i\n    return y, (i, s)\n")
    assert "y = None" not in out and "i = 0" in out


def test_a_forward_sweep_saves_through_typed_stacks_and_its_backward_sweep_matches():
    forward = gast.parse("def f_forward(x):\n    t = None\n    _t_stack = []\n    r = range(3)\n    for i in r:\n"
                         "        _t_stack.append(t)\n        t = x * i\n    return x, (_t_stack, r, t, x)\n").body[0]
    backward = gast.parse("def f_backward(_saved, v=None):\n    _t_stack, r, t, x = _saved\n"
                          "    for i in reversed(r):\n        g = v * t\n        t = _t_stack.pop()\n"
                          "    return g\n").body[0]
    out = A.to_source(lower_for_numba(forward, "forward"))
    assert "_t_stack = new_stack()" in out
    assert "return x, (saved_value(_t_stack), saved_value(r), saved_value(x))" in out  # t: its stack's top
    turned = turned_stacks(forward)
    out = A.to_source(lower_for_numba(backward, "backward", turned))
    assert "_t_stack, r, x = _saved" in out and "if len(_t_stack) > 0:\n        t = _t_stack[-1]" in out
    assert "t = previous_value(_t_stack, t)" in out and "r = restored_value(r)" in out


# ---- numba_static: folding and outlining, found by what names denote ----------------------

from srcad.passes import numba_static  # noqa: E402
from srcad.rules.numpy_shapes import transpose_axes  # noqa: E402

DENOTED = {"np.ndim": np.ndim, "np.argsort": np.argsort, "tuple": tuple, "transpose_axes": transpose_axes,
           "np.transpose": np.transpose}


def test_a_pure_shape_helper_on_literals_is_folded_and_nothing_else():
    fn = gast.parse("def f(g, n):\n    a = np.transpose(g, tuple(np.argsort(transpose_axes(None, 2))))\n"
                    "    b = np.transpose(g, tuple(np.argsort(transpose_axes(None, n))))\n    return a, b\n").body[0]
    out = A.to_source(numba_static.fold_constant_calls(fn, DENOTED.get))
    assert "a = np.transpose(g, (1, 0))" in out
    assert "b = np.transpose(g)\n" in out  # reversing all axes undoes itself, however many
    impostor = gast.parse("def f(g):\n    return transpose_axes(None, 2)\n").body[0]  # a name, not the helper
    out = A.to_source(numba_static.fold_constant_calls(impostor, {"transpose_axes": lambda *a: (0,)}.get))
    assert "transpose_axes(None, 2)" in out


def outlined(src):
    fn = gast.parse(src).body[0]
    made = numba_static.outline_ndim_branches(fn, DENOTED.get)
    return A.to_source(fn), [A.to_source(m) for m in made]


def test_an_ndim_branch_is_outlined_with_what_it_reads_updates_and_may_leave_unassigned():
    main, (branch,) = outlined(
        "def f(x, g, acc, dy):\n    if np.ndim(x) == 2:\n        dx = g @ x.T\n        acc += g\n"
        "        dy = g\n    else:\n        dx = g * x\n    return dx, acc, dy\n")
    assert "acc, dx, dy = _f_branch1(acc, dy, g, x, dims_of(x))" in main
    assert "def _f_branch1(acc, dy, g, x, _dims_x):\n    if len(_dims_x) == 2:" in branch
    assert branch.rstrip().endswith("return acc, dx, dy")


@pytest.mark.parametrize("body", [
    "    if np.ndim(x) == 2:\n        return x\n    return g\n",  # control leaves the branch
    "    if np.ndim(x) == 2 and g > 0:\n        g = x\n    return g\n",  # the test reads a value
    "    if np.ndim(G) == 2:\n        g = x\n    return g\n",  # a global's dimensions: numba's to judge
])
def test_a_branch_not_decided_by_local_ndims_alone_stays(body):
    main, made = outlined("def f(x, g):\n" + body)
    assert not made and "np.ndim(" in main
