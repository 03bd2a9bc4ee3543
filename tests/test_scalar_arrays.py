"""Small float vectors made scalars for the numba backend (``passes/scalar_arrays.py``).

The rewritten code is plain Python: every program here runs the code the numba backend is
given, as Python, against finite differences in a random direction and against the NumPy
backend; those it must leave arrays (shared memory updated in place, uses of no item form)
are checked to keep their arrays. A few compile with numba too."""
import inspect

import gast
import numpy as np
import pytest

import srcad
from srcad import astutil as A
from srcad import runtime
from srcad.compile import compile_function
from srcad.naming import Namer
from srcad.passes.scalar_arrays import scalar_arrays
from srcad.passes.shape_values import Spec, arg_spec, specs_key

from benchmark_programs import benchmark_module


def numba_code(fn, args, wrt=(0,)):
    """The joint adjoint the numba backend lowers, as Python, and its source."""
    params = list(inspect.signature(fn).parameters)
    specs = {p: arg_spec(a) for p, a in zip(params, args)}
    compiled = compile_function(fn, tuple(params[i] for i in wrt), (), specs, ("scalar arrays", specs_key(specs)),
                                for_numba=True)
    return compiled.bind(fn)[0], compiled.generated.module_source


def check(fn, *args, wrt=(0,), vectors=(), arrays=()):
    """The numba backend's Python code against central differences and the NumPy backend;
    the names in ``vectors`` became items (``x_0``) and those in ``arrays`` did not."""
    adjoint, source = numba_code(fn, args, wrt)
    copies = [np.copy(a) for a in args]
    got = adjoint(*args)
    got = got if isinstance(got, tuple) else (got,)
    for a, c in zip(args, copies):
        np.testing.assert_array_equal(a, c)  # the caller's arrays are not changed
    expected = srcad.grad(fn, wrt=wrt)(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    rng = np.random.default_rng(7)
    directions = [rng.standard_normal(np.shape(args[k])) for k in wrt]

    def at(t):
        moved = list(args)
        for k, d in zip(wrt, directions):
            moved[k] = args[k] + t * d
        return fn(*moved)

    eps = 1e-6
    numeric = (at(eps) - at(-eps)) / (2 * eps)
    analytic = sum(np.vdot(g, d) for g, d in zip(got, directions))
    assert abs(analytic - numeric) <= 1e-6 * (1 + abs(numeric)), (analytic, numeric)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)
    for name in vectors:
        assert f"{name}_0 = " in source, f"{name} stayed an array:\n{source}"
    for name in arrays:
        assert f"{name}_0 = " not in source, f"{name} became items:\n{source}"
    return source


rk4 = benchmark_module("numba_loops").rk4  # lorenz, a helper returning np.array([dx, dy, dz]), per stage

S0, P = np.array([1.0, 1.5, 0.7]), np.array([10.0, 28.0, 8.0 / 3.0])


def test_rk4_state_and_stages_become_items():
    source = check(rk4, S0, P, 0.01, 20, wrt=(0, 1), vectors=("s", "k1", "k4", "ds", "dparams"))
    assert "np.array" not in source.split("def rk4_adjoint")[1].split("for ")[1]  # none in the loop


def euler_updates_a_copy(x, steps):
    s = x * 1.0
    for _ in range(steps):
        t = s
        s = s * 0.9
        s[0] += t[1] * 0.1  # t still holds the old array: s is a new one
    return np.sum(s * t)


def test_an_old_array_kept_by_a_copy_is_not_changed_by_an_update_of_a_new_one():
    check(euler_updates_a_copy, S0, 4)


def rewritten(src, **specs):
    """``src``'s function, and the same after the pass, both executable."""
    fn = gast.parse(src).body[0]
    for n in gast.walk(fn):
        if isinstance(n, gast.Name) and n.id == "finish":
            A.set_anno(n, "denotes", runtime.finish)
    A.set_anno(fn, "specs", {name: Spec(shape, np.float64) for name, shape in specs.items()})
    A.set_anno(fn, "n_forward", len(fn.body))
    A.set_anno(fn, "namer", Namer(A.all_names(fn)))
    before = A.to_source(fn)
    after = A.to_source(scalar_arrays(fn))
    functions = []
    for text in (before, after):
        namespace = {"finish": runtime.finish, "full_of": runtime.full_of, "np": np}
        exec(text.replace("full_of_", "full_of"), namespace)
        functions.append(namespace[fn.name])
    return functions, after


SHARED = [  # a copy shares the array an update in place then changes
    "def f_adjoint(x, v=None):\n    a = x * 2.0\n    b = a\n    a += x\n    c = b * a\n    return finish(c, x)\n",
    "def f_adjoint(x, v=None):\n    a = x * 2.0\n    b = a\n    b[1] = 7.0\n    c = a + b\n    return finish(c, x)\n",
    # a value stack keeps the array a later update in place changes
    "def f_adjoint(x, r, v=None):\n    a = x * 1.0\n    _a_stack = []\n    for i in r:\n"
    "        _a_stack.append(a)\n        a += x\n    for i in r:\n        a = _a_stack.pop()\n"
    "    c = a * 1.0\n    return finish(c, x)\n",
]


@pytest.mark.parametrize("src", SHARED)
def test_names_sharing_an_array_updated_in_place_stay_arrays(src):
    (before, after), text = rewritten(src, x=(3,))
    args = [S0] + ([range(3)] if "r," in src else [])
    np.testing.assert_array_equal(before(*args), after(*args))
    assert "a_0" not in text


def test_a_copy_of_an_array_updated_after_its_last_read_becomes_items():
    src = "def f_adjoint(x, v=None):\n    a = x * 2.0\n    a += x\n    b = a\n    b[0] = 1.0\n    return finish(b, x)\n"
    (before, after), text = rewritten(src, x=(3,))
    np.testing.assert_array_equal(before(S0), after(S0))
    assert "b_0 = 1.0" in text and "a_0 = a_0 + x[0]" in text


def swap_items(x, steps):
    s = x * 1.0
    for _ in range(steps):
        a = s[0] * 1.0
        s[0] = s[2] * 1.5
        s[2] = a - s[1]
    return np.sum(s ** 3)


def test_item_updates_read_the_items_before_them():
    check(swap_items, S0, 3, vectors=("s",))


def leaks_to_a_list(x, steps):
    s = x * 1.0
    kept = []
    for _ in range(steps):
        s = s * 1.1 + np.sin(s)
        kept.append(s)
    return np.sum(kept[0] * kept[-1])


def test_a_vector_kept_in_a_list_stays_an_array():
    check(leaks_to_a_list, S0, 3, arrays=("s",))


def two_lengths(x, y):
    a = x * 2.0
    b = y * 3.0
    return np.sum(a) * np.sum(b * b) + np.sum(x * a)


def test_vectors_of_two_lengths_and_a_reduction_of_each():
    check(two_lengths, S0, np.array([0.5, -1.0]), wrt=(0, 1), vectors=("a", "b"))


def broadcast_row(x, m):
    r = x * 2.0
    return np.sum(m * r)  # (2, 3) * (3,): r is made an array again for a ufunc


def test_a_vector_broadcast_against_a_matrix():
    check(broadcast_row, S0, np.arange(6.0).reshape(2, 3))


def long_vector(x):
    y = x * x
    return np.sum(np.sin(y))


def test_a_long_vector_stays_an_array():
    check(long_vector, np.linspace(0.1, 1.0, 9), arrays=("y",))


def integer_display(x):
    v = np.array([1, 2, 3])  # integers: no float vector
    w = x * v
    return np.sum(w * w)


def test_an_integer_array_display_stays_an_array():
    check(integer_display, S0, arrays=("v",))


def branchy(x, steps):
    s = x * 1.0
    for i in range(steps):
        if i % 2 == 0:
            s = s * 1.2 - x
        else:
            s = -s + x * 0.5
        s[1] = s[1] * s[2]
    return np.sum(s * s)


def test_branches_and_updates_of_one_item():
    check(branchy, S0, 5, vectors=("s",))


def helper_with_tuple_state(x, steps):
    u = np.array([x[0], 0.0])
    for _ in range(steps):
        u = np.array([u[0] + 0.1 * u[1], u[1] - 0.1 * np.sin(u[0]) * x[1]])
    return u[0] * u[1] + u[0] ** 2


def test_a_pendulum_state_made_from_items_each_step():
    check(helper_with_tuple_state, np.array([0.3, 2.0]), 6, vectors=("u",))


def test_names_of_items_do_not_capture_the_users():
    def f(x, s_0):
        s = x * 2.0
        return np.sum(s * s) + s_0 * s[0]

    check(f, S0, 0.5, vectors=("s",))


@pytest.mark.parametrize("program, args", [(rk4, (S0, P, 0.01, 30)), (branchy, (S0, 5)), (swap_items, (S0, 3)),
                                           (helper_with_tuple_state, (np.array([0.3, 2.0]), 6))])
def test_numba_compiles_the_items_and_agrees(program, args):
    pytest.importorskip("numba")
    wrt = (0, 1) if program is rk4 else (0,)
    got = srcad.grad(program, wrt=wrt, backend="numba")(*args)
    expected = srcad.grad(program, wrt=wrt)(*args)
    for g, e in zip(got if isinstance(got, tuple) else (got,), expected if isinstance(expected, tuple) else (expected,)):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


def item_restored_from_a_stack(a, x):
    h = np.concatenate([a, a])
    for _ in range(2):
        h[[2, 0]] = np.mean(h)  # its reverse restores items from a stack: h[...] = stack.pop()
    return h.sum() * np.sum(x)


def test_items_restored_from_a_stack_are_left_to_the_arrays():  # fuzz seed 113501340759
    check(item_restored_from_a_stack, S0, np.array([0.5, -1.0]), wrt=(0, 1))


def ufunc_result_updated_through_a_copy(s0):
    m = np.exp(s0)  # an array: its snapshot before t[1] = 0.3 is kept (probe round 9)
    a = m * m
    t = m
    t[1] = 0.3
    return np.sum(a) + np.sum(t * s0)


def test_a_ufunc_of_an_array_is_no_number():
    check(ufunc_result_updated_through_a_copy, np.array([1.0, 0.3, -0.2]), arrays=("m", "t"))
