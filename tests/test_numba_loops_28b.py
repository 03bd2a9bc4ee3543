"""backend="numba" on ordinary scalar loops it refused before:

- *stacks turned around* (``passes/numba_stacks.py``): a name assigned twice in one step, the
  second time unsaved (a chained comparison ``-0.5 < x[i] < 0.5`` or ``a < v and v < b`` in an
  ``if`` binds its test again in the branch of its ``and``), and a push separated from the
  assignment it saves by an update in place (RK2 from ``y = y0.copy()``: ``_t18 += y; _t19 =
  _t18``) were refused; a stack's top is now always its name's current value;
- *helpers with no numba version* (``backends/numba_items.py``): a loop over an array's items
  (``for v in x``, ``enumerate``, ``zip``: ``list_grad``), ``abs(v)`` (``unit_phase``), a store at
  a computed index (``stored_adjoint``, ``scatter_add``) and ``np.roll`` (its adjoint's
  ``axis=None``).

Each compiled gradient (joint adjoint, and the forward/backward pair through ``vjp``) equals the
NumPy backend's and finite differences; each helper equals the Python one on ties, negative
zero, nan and inf.
"""
import ast

import gast
import numpy as np
import pytest

numba = pytest.importorskip("numba")

import srcad  # noqa: E402
from srcad import runtime  # noqa: E402
from srcad.backends import numba_copies, numba_runtime  # noqa: E402
from srcad.passes import numba_lowering  # noqa: E402
from srcad.rules import builtin_rules, numpy_core  # noqa: E402
from test_numba_backend import check, check_compiled_pair, is_compiled  # noqa: E402


def band(x):
    tot = 0.0
    for i in range(len(x)):
        if -0.5 < x[i] < 0.5:
            tot += x[i] * x[i]
    return tot


def band_and(x):
    tot = 0.0
    for i in range(len(x)):
        if -0.5 < x[i] and x[i] < 0.5:
            tot += x[i] * np.sin(x[i])
    return tot


def lor(y):
    return np.array([10.0 * (y[1] - y[0]), y[0] * (28.0 - y[2]) - y[1], y[0] * y[1] - 2.667 * y[2]])


def rk2(y0, dt):
    y = y0.copy()
    for t in range(5):
        k1 = lor(y)
        k2 = lor(y + dt * k1)
        y = y + dt * (k1 + k2)
    return np.sum(y * y)


def iter_array(x):
    tot = 0.0
    for v in x:
        tot += v * v
    return tot


def with_abs(x):
    tot = 0.0
    for v in x:
        tot += abs(v) ** 1.5
    return tot


def with_enumerate(x):
    tot = 0.0
    for i, v in enumerate(x):
        tot += (i + 1) * v * np.cos(v)
    return tot


def with_zip(x, y):
    tot = 0.0
    for a, b in zip(x, y):
        tot += a * b - a * a
    return tot


def var_index(y0, k):
    y = y0 * 1.0
    for t in range(4):
        y[k] = y[k] * y[(k + 1) % 3]
        k = (k + 1) % 3
    return np.sum(y * y)


def rolled(x):
    y = x.copy()
    for t in range(3):
        y = y + 0.1 * (np.roll(y, 1) - y)
    return np.sum(y * y * y)


# inputs on both sides of the band, the last one outside (the step's final test is its first one)
BAND_X = np.array([0.1, -0.7, 0.3, 0.45, -0.2, 0.9, -0.45, 0.6])
rng = np.random.default_rng(285)
PROGRAMS = {
    "band": (band, lambda: (BAND_X,), (0,)),
    "band_and": (band_and, lambda: (BAND_X[::-1].copy(),), (0,)),
    "rk2": (rk2, lambda: (np.array([1.0, 1.5, 20.0]), 0.01), (0, 1)),
    "iter_array": (iter_array, lambda: (rng.standard_normal(5),), (0,)),
    "with_abs": (with_abs, lambda: (np.array([0.4, -0.7, 1.3, -0.2]),), (0,)),
    "with_enumerate": (with_enumerate, lambda: (rng.standard_normal(5),), (0,)),
    "with_zip": (with_zip, lambda: (rng.standard_normal(4), rng.standard_normal(4)), (0, 1)),
    "var_index": (var_index, lambda: (np.array([0.7, -1.2, 0.9]), 1), (0,)),
    "rolled": (rolled, lambda: (rng.standard_normal(5),), (0,)),
}


@pytest.fixture(scope="module", params=sorted(PROGRAMS))
def program(request):
    f, make_args, wrt = PROGRAMS[request.param]
    return f, make_args(), wrt, srcad.differentiable(f, wrt=wrt, backend="numba")


def test_compiled_gradient_equals_numpy_and_finite_differences(program):
    f, args, wrt, d = program
    grads = d.grad(*args)
    assert is_compiled(d)
    check(f, args, wrt, grads if isinstance(grads, tuple) else (grads,))


def test_compiled_pair_equals_numpy(program):
    f, args, wrt, d = program
    check_compiled_pair(f, args, wrt, d)


def test_abs_at_zero_negative_zero_and_nan_is_numpys():
    x = np.array([0.0, -0.0, 0.5, -0.5, np.nan])
    compiled = srcad.grad(with_abs, backend="numba")(x)
    expected = srcad.grad(with_abs)(x)
    np.testing.assert_array_equal(compiled, expected)
    np.testing.assert_array_equal(np.signbit(compiled), np.signbit(expected))


# ---- the turned-around stacks: the reverse sweep reads what Python's reads ----------------------

GENERATED = {  # generated-code shapes: (function text, arguments)
    # an unsaved second assignment in a branch (a chained comparison's)
    "unsaved_in_branch": ('''
def f_adjoint(x, n):
    t = None
    _t_stack = []
    seen = []
    r = range(n)
    for i in r:
        _t_stack.append(t)
        t = x * i
        if i % 2:
            t = t + 1.0
    for i in reversed(r):
        seen.extend((t,))
        t = _t_stack.pop()
    seen.extend((t,))
    return seen
''', (0.5, 5)),
    # a push separated from its assignment by an update in place, then a snapshot
    "push_apart_and_snapshot": ('''
def f_adjoint(x, n):
    t = None
    _t_stack = []
    seen = []
    r = range(n)
    for i in r:
        u = x * i
        _t_stack.append(copy_value(t))
        u += x
        t = u
        t = copy_value(t)
        t = t * 2.0
    for i in reversed(r):
        seen.extend((t,))
        t = _t_stack.pop()
    seen.extend((t,))
    return seen
''', (0.25, 4)),
    # assigned before its first save, and assigned again in the reverse sweep
    "assigned_before_its_first_save": ('''
def f_adjoint(x, n):
    t = None
    _t_stack = []
    seen = []
    r = range(n)
    for i in r:
        if i == 1:
            t = x - 3.0
        if i >= 1:
            _t_stack.append(t)
            t = x * i
    for i in reversed(r):
        if i >= 1:
            seen.extend((t,))
            t = t + 100.0
            t = _t_stack.pop()
    seen.extend((t,))
    return seen
''', (0.75, 4)),
}


def _run(text, args, lowered):
    fn = gast.parse(text).body[0]
    if lowered:
        numba_lowering.lower_for_numba(fn)
    namespace = {"copy_value": runtime.copy_value, "previous_value": numba_runtime.previous_value.py_func,
                 "set_current_value": numba_runtime.set_current_value.py_func,
                 "unchanged_copy": numba_copies.unchanged_copy}
    tree = ast.fix_missing_locations(gast.gast_to_ast(gast.Module(body=[fn], type_ignores=[])))
    exec(compile(tree, "<generated>", "exec"), namespace)
    return namespace["f_adjoint"](*args)


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_turned_around_stacks_restore_what_python_restores(name):
    text, args = GENERATED[name]
    python, lowered = _run(text, args, False), _run(text, args, True)
    assert python[:-1] == lowered[:-1]
    assert python[-1] is None or python[-1] == lowered[-1]  # the placeholder, never read, is not restored


def test_an_assignment_a_saved_push_may_skip_is_refused():
    fn = gast.parse('''
def f_adjoint(x, n):
    t = None
    _t_stack = []
    for i in range(n):
        _t_stack.append(t)
        if i:
            break
        t = x * i
    for i in reversed(range(n)):
        t = _t_stack.pop()
    return t
''').body[0]
    with pytest.raises(numba_lowering.NotLowerable, match="'t' is saved for an assignment this statement may skip"):
        numba_lowering.lower_for_numba(fn)


# ---- the helpers' numba versions equal the Python ones -----------------------------------------

@numba.njit
def _roll(a, shift):
    return np.roll(a, shift, None)


@numba.njit
def _unit_phase(x):
    return numpy_core.unit_phase(x)


@numba.njit  # no boundscheck: the helper checks its index itself
def _stored_adjoint(g, index, value):
    return runtime.stored_adjoint(g, index, value)


@numba.njit
def _scatter_add(buffer, index, g):
    runtime.scatter_add(buffer, index, g)
    return buffer


@numba.njit
def _items_grad(x):
    g = runtime.zeros_like(list(x))
    for i in range(len(g)):
        g[i] += 2.0 * x[i]
    return builtin_rules.list_grad(g, x)


def _same(a, b):
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.signbit(a), np.signbit(b))
    assert np.shape(a) == np.shape(b) and np.asarray(a).dtype == np.asarray(b).dtype


@pytest.mark.parametrize("shape", [(0,), (1,), (5,), (2, 3)])
def test_roll_with_no_axis_is_numpys(shape):
    a = np.arange(np.prod(shape), dtype=float).reshape(shape)
    for shift in (-13, -6, -1, 0, 1, 4, 6, 2**62):
        _same(_roll(a, shift), np.roll(a, shift, None))


def test_unit_phase_of_real_values_is_numpys():
    x = np.array([0.0, -0.0, 2.5, -1e-300, np.inf, -np.inf, np.nan])
    for v in x:
        _same(_unit_phase(v), numpy_core.unit_phase(v))
    _same(_unit_phase(x), numpy_core.unit_phase(x))


def test_stored_adjoint_and_scatter_add_at_integers_and_slices_are_numpys():
    g = np.array([[1.0, -0.0, 3.0], [np.nan, 5.0, -6.0]])
    for index, value in [((1, 2), 0.5), ((-1, 0), 0.5), (1, np.zeros(3)), ((0, slice(1, 3)), np.zeros(2)),
                         (slice(None), np.zeros((2, 3))), (-2, np.zeros(3))]:
        _same(_stored_adjoint(g, index, value), runtime.stored_adjoint(g, index, value))
        update = np.full(np.shape(g[index]), 0.25) if np.ndim(g[index]) else -0.0
        _same(_scatter_add(g.copy(), index, update), runtime.scatter_add(expected := g.copy(), index, update) or expected)
    with pytest.raises(IndexError):
        _stored_adjoint(g, (2, 0), 0.5)


def test_a_vectors_items_adjoint_is_numpys():
    x = np.array([0.5, -0.0, np.nan, 2.0])
    g = runtime.zeros_like(list(x))
    for i in range(len(g)):
        g[i] += 2.0 * x[i]
    _same(_items_grad(x), builtin_rules.list_grad(g, x))
    _same(_items_grad(x[:0]), builtin_rules.list_grad([], x[:0]))


def test_no_numba_version_for_complex_values_or_gathers():
    with pytest.raises(numba.core.errors.TypingError):
        _unit_phase(1.0 + 2.0j)
    with pytest.raises(numba.core.errors.TypingError):
        _stored_adjoint(np.ones(3), np.array([0, 0]), np.zeros(2))
