"""Value stacks of long scalar loops kept in indexed storage (passes.array_stacks): gradients
of scalar recurrences on both sides of runtime_adjoints.LONG_LOOP against finite differences and
against the pullback (which keeps lists), at second order too; the conditions one by one on
generated code; and the memory per step of a 100,000-step loop."""
import tracemalloc

import gast
import numpy as np
import pytest

import srcad
from srcad import astutil as A
from srcad.naming import BUILTIN, Namer
from srcad.passes.array_stacks import array_stacks
from srcad.passes.resolve_calls import Callee
from srcad.passes.shapes import Spec
from srcad.runtime_adjoints import LONG_LOOP
from srcad.testing import check_grads

from lang_checks import check_second_order

SHORT, LONG = 100, 20_000  # both sides of LONG_LOOP
assert SHORT < LONG_LOOP <= LONG


def several(a, x0, n):
    x, y, s = x0, 0.5 * x0, 0.0
    for t in range(n):
        x = 0.5 * x + a * np.sin(x + y)
        y = np.tanh(y - 0.3 * x) * a
        s = s + np.cos(x) * y / n
    return s


def branches(a, x0, n):
    x, s = x0, 0.0
    for t in range(n):
        if x > 0.2:
            x = 0.6 * x + a * np.sin(x)
        else:
            x = 0.4 * x + a * np.exp(-x * x)
        s = s + x * x / n
    return s


def with_break(a, x0, n):
    x, s = x0, 0.0
    for t in range(n):
        x = 0.5 * x + a * np.sin(x)
        s = s + np.exp(-x) / n
        if s > 1e6:
            break
    return s


def step(x, a):
    return 0.7 * x + a * np.cos(x) * np.sin(x)


def with_helper(a, x0, n):
    x, s = x0, 0.0
    for t in range(1, n + 1):
        x = step(x, a)
        s = s + np.sin(x) / n
    return s


def vector_out(a, x0, n):
    x, s = x0, 0.0
    for t in range(n):
        x = 0.5 * x + a * np.sin(x)
        s = s + x / n
    return np.array([s, x])


RECURRENCES = [several, branches, with_break, with_helper]
REWRITTEN = {several, with_helper}  # the others save in branches or may break: lists


@pytest.mark.parametrize("n", [SHORT, LONG])
@pytest.mark.parametrize("f", RECURRENCES, ids=lambda f: f.__name__)
def test_gradients_against_finite_differences_and_the_pullback(f, n):
    rng = np.random.default_rng(n)
    a, x0 = float(rng.uniform(0.2, 0.6)), float(rng.uniform(0.3, 1.5))
    d = srcad.differentiable(f, wrt=(0, 1))
    joint = d.adjoint(a, x0, n)
    assert ("value_stack(" in d.adjoint_source) == (f in REWRITTEN)
    check_grads(f, (a, x0, n), wrt=(0, 1))
    _, pullback = srcad.vjp(f, a, x0, n, wrt=(0, 1))
    for _ in range(2):  # the pair's lists: the same numbers, in the same order
        assert pullback(1.0) == joint


@pytest.mark.parametrize("n", [SHORT, LONG])
def test_a_vector_output_batched_and_by_jacobian(n):
    args = (0.4, 0.9, n)
    jac = srcad.jacobian(vector_out, wrt=(0, 1), mode="rev")(*args)
    _, pullback = srcad.vjp(vector_out, *args, wrt=(0, 1))
    rows = pullback.batched(np.eye(2))
    d = srcad.differentiable(vector_out, wrt=(0, 1))
    for k, cotangent in enumerate(np.eye(2)):
        joint = d.adjoint(*args, cotangent)
        np.testing.assert_allclose([jac[0][k], jac[1][k]], joint, rtol=1e-12)
        np.testing.assert_allclose([rows[0][k], rows[1][k]], joint, rtol=1e-12)
    assert "value_stack(" in d.adjoint_source
    check_grads(vector_out, args, wrt=(0, 1))


@pytest.mark.parametrize("n", [SHORT, LONG])
@pytest.mark.parametrize("f", [several, with_helper], ids=lambda f: f.__name__)
def test_second_order_against_finite_differences_of_the_gradient(f, n):
    check_second_order(f, (0.35, 0.8, n), wrt=0, rtol=1e-4)
    check_second_order(f, (0.35, 0.8, n), wrt=1, rtol=1e-4)


def recurrence(a, x0, steps):
    x = x0
    for t in range(steps):
        x = x + a * np.sin(x)
    return x


def test_memory_of_a_long_scalar_loop():
    steps = 100_000
    d = srcad.differentiable(recurrence, wrt=(0, 1))
    expected = d.adjoint(0.3, 3.0, steps)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        got = d.adjoint(0.3, 3.0, steps)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert got == expected
    assert peak / steps <= 24, f"{peak / steps:.1f} bytes per step"
    check_grads(recurrence, (0.3, 3.0, 1000), wrt=(0, 1))


# ---- the conditions, one by one, on generated code -----------------------------------------

CONTROL = '''
def f_adjoint(a, x, n, v=None):
    _x_stack = []
    _range1 = range(n)
    for t in _range1:
        _x_stack.append(x)
        x = x + a * np.sin(x)
    dx = v
    for t in reversed(_range1):
        x = _x_stack.pop()
        dx = dx + dx * a * np.cos(x)
    return dx
'''


def _rewritten(text, n_forward=4, spec=Spec((), np.float64)):
    fn = gast.parse(text).body[0]
    for node in A.walk(fn):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
            if node.func.id == "range":
                A.set_anno(node, "callee", Callee("object", obj=range, name="range"))
            elif node.func.id == "reversed":
                A.set_anno(node.func, BUILTIN, "reversed")
    A.set_anno(fn, "specs", {"x": spec})
    A.set_anno(fn, "n_forward", n_forward)
    A.set_anno(fn, "namer", Namer(A.all_names(fn)))
    return "value_stack(" in A.to_source(array_stacks(fn, lambda name, obj: name))


def test_the_control_is_rewritten():
    assert _rewritten(CONTROL)
    assert _rewritten(CONTROL.replace("range(n)", "range(m, n)"))  # by a counter


NESTED = '''
def f_adjoint(a, x, n, v=None):
    _x_stack = []
    for s in range(3):
        _range1 = range(n)
        for t in _range1:
            _x_stack.append(x)
            x = x + a * np.sin(x)
    dx = v
    for s in reversed(range(3)):
        for t in reversed(_range1):
            x = _x_stack.pop()
            dx = dx + dx * a * np.cos(x)
    return dx
'''


def test_a_loop_inside_another_loop_keeps_its_list():
    assert not _rewritten(NESTED, n_forward=2)


def test_an_identity_test_of_the_restored_value_keeps_its_list():
    assert not _rewritten(CONTROL.replace("dx = dx + dx * a * np.cos(x)", "dx = dx + (dx if x is a else 0.0)"))


def test_a_value_other_than_a_float64_scalar_keeps_its_list():
    assert not _rewritten(CONTROL, spec=Spec((), np.int64, int))
    assert not _rewritten(CONTROL, spec=Spec((2,), np.float64))
    assert not _rewritten(CONTROL, spec=Spec((), np.float32))


def test_a_jump_in_the_reverse_loop_keeps_its_list():
    assert not _rewritten(CONTROL.replace("dx = dx + dx * a * np.cos(x)",
                                          "dx = dx + dx * a * np.cos(x)\n        if dx > 1:\n            continue"))


def test_a_restored_value_passed_to_a_function_keeps_its_list():
    assert not _rewritten(CONTROL.replace("np.cos(x)", "float(x)"))


def test_a_placeholder_read_after_the_reverse_loop_keeps_its_list():
    placeholder = CONTROL.replace("    _x_stack = []\n", "    x = None\n    _x_stack = []\n").replace(
        "        x = _x_stack.pop()\n        dx = dx + dx * a * np.cos(x)\n",
        "        dx = dx + dx * a * np.cos(x)\n        x = _x_stack.pop()\n")
    assert _rewritten(placeholder, n_forward=5)
    assert not _rewritten(placeholder.replace("    return dx", "    return dx + x"), n_forward=5)


def test_a_stack_pushed_twice_keeps_its_list():
    assert not _rewritten(CONTROL.replace("        x = x + a * np.sin(x)\n",
                                          "        x = x + a * np.sin(x)\n        _x_stack.append(x)\n"))
