"""A name None on some paths, read under the condition it was bound under (``numba_none_flags``),
and saved by a forward sweep for its backward sweep (``numba_saved_nones``).

The programs first: ``backend="numba"``'s gradient (joint adjoint) and pullback (forward and
backward sweeps) equal the NumPy backend's and central finite differences, on both outcomes of
each condition; each was refused before. Then the forward-style functions below are what srcad generates for ``if c: t = ...`` then ``if c:
y = y + t`` (``t = None`` first: a value saved in one branch). Each accepted one is lowered,
compiled with numba and run on both outcomes of the condition against the unlowered function
run by Python; the unsafe look-alikes (the condition rebound between, another condition, a
second name for the condition) stay refused."""
import gast
import numpy as np
import pytest

import srcad
from srcad import astutil as A
from srcad.backends.numba_errors import BackendCompileError
from srcad.passes.numba_lowering import NotLowerable, lower_for_numba

numba = pytest.importorskip("numba")


def optional_bias(x, w):
    use_bias = x[0] > 0.0
    b = None
    if use_bias:
        b = np.tanh(w) * 0.5
    h = x * w
    if use_bias:
        h = h * b + h
    return (h ** 2).sum()


def value_in_one_branch(x):
    c = x[1] < 0.5
    if c:
        t = np.exp(x[0])
    else:
        u = x[0] * 3.0
    if c:
        r = t * x[1]
    else:
        r = u + x[1] * x[2]
    return r


def negated_condition(x):
    skip = x[0] < 0.0
    if not skip:
        t = np.sqrt(x[1] ** 2 + 1.0)
    r = x[0] * x[2]
    if not skip:
        r = r * t
    return r


def saved_array(x):
    c = x[1] < 0.5
    r = x[0]
    if c:
        t = np.exp(x)
        r = (t * x).sum()
    return r


PROGRAMS = {  # name: (function, argument sets taking each branch, wrt)
    "optional_bias": (optional_bias, [(np.array([0.6, -0.2, 0.9]), np.array([0.3, 0.8, -0.5])),
                                      (np.array([-0.6, 0.2, 0.9]), np.array([0.3, 0.8, -0.5]))], (0, 1)),
    "value_in_one_branch": (value_in_one_branch, [(np.array([0.3, 0.2, 0.7]),), (np.array([0.3, 0.9, 0.7]),)], (0,)),
    "negated_condition": (negated_condition, [(np.array([0.4, 0.6, 1.3]),), (np.array([-0.4, 0.6, 1.3]),)], (0,)),
    "saved_array": (saved_array, [(np.array([0.3, 0.2, 0.7]),), (np.array([0.3, 0.9, 0.7]),)], (0,)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiled_gradient_and_pullback_equal_numpy_and_finite_differences(name):
    from test_numba_backend import check, check_compiled_pair, is_compiled

    f, arg_sets, wrt = PROGRAMS[name]
    for args in arg_sets:
        d = srcad.differentiable(f, wrt=wrt, backend="numba")
        grads = d.grad(*args)
        assert is_compiled(d)
        check(f, args, wrt, grads if isinstance(grads, tuple) else (grads,))
        check_compiled_pair(f, args, wrt, d)


def condition_rebound(x):
    t = None
    c = x[0] > 0.0
    if c:
        t = np.sin(x[1])
    c = x[1] > 0.0
    r = x[2]
    if c:
        r = r * t
    return r


def another_condition(x):
    t = None
    c = x[0] > 0.0
    d = x[1] > 0.0
    if c:
        t = np.sin(x[1])
    r = x[2]
    if d:
        r = r * t
    return r


@pytest.mark.parametrize("f", [condition_rebound, another_condition])
def test_a_read_under_a_condition_that_may_differ_stays_refused(f):
    with pytest.raises(BackendCompileError, match="None on some paths"):
        srcad.grad(f, backend="numba")(np.array([0.5, 0.4, 0.3]))

ACCEPTED = {
    "same_name": '''
def f(x, y):
    t = None
    c = x > 0.0
    if c:
        t = np.sin(x) * 2.0
    r = y * 3.0
    if c:
        r = r * t
    return r
''',
    "negated": '''
def f(x, y):
    t = None
    skip = x < 0.0
    if not skip:
        t = np.sqrt(x * x + 1.0)
    r = y
    if not skip:
        r = r * t
    return r
''',
    "else_branch": '''
def f(x, y):
    t = None
    u = None
    c = y < 0.5
    if c:
        t = np.exp(x)
    else:
        u = x * 3.0
    if c:
        r = t * y
    else:
        r = u + y
    return r
''',
    "in_a_loop": '''
def f(x, y):
    total = 0.0
    snap = None
    for step in range(6):
        y = np.sin(y) * 0.9 + x
        take = step % 2 == 0
        if take:
            snap = y * 2.0
        if take:
            total = total + snap * snap
    return total
''',
    "negated_copy": '''
def f(x, y):
    t = None
    c = x > 0.0
    if c:
        t = np.cos(y) + x
    skip = not c
    r = y * 2.0
    if not skip:
        r = r * t
    return r
''',
    "restored_from_a_stack": '''
def f(x, y):
    snap = None
    take = None
    _take_stack = []
    total = 0.0
    for step in range(6):
        y = np.sin(y) * 0.9 + x
        _take_stack.append(take)
        take = step % 2 == 0
        if take:
            snap = y * 2.0
        if take:
            total = total + snap * snap
    for step in range(6):
        if take:
            total = total * 0.5
        take = _take_stack.pop()
    return total
''',
    "conjunction": '''
def f(x, y):
    b = None
    use_bias = x > 0.1
    if use_bias:
        b = np.tanh(y) * 0.5
    h = x * y
    if use_bias and y > 0.0:
        h = h + b * y
    return h
''',
}

REFUSED = {
    "rebound_between": '''
def f(x, y):
    t = None
    c = x > 0.0
    if c:
        t = y * 2.0
    c = y > 0.0
    r = x
    if c:
        r = r + t
    return r
''',
    "other_condition": '''
def f(x, y):
    t = None
    c = x > 0.0
    d = y > 0.0
    if c:
        t = y * 2.0
    r = x
    if d:
        r = r + t
    return r
''',
    "second_name": '''
def f(x, y):
    t = None
    c = x > 0.0
    d = c
    if c:
        t = y * 2.0
    r = x
    if d:
        r = r + t
    return r
''',
    "rebound_in_the_branch": '''
def f(x, y):
    t = None
    c = x > 0.0
    if c:
        t = y * 2.0
        c = y > 0.0
    r = x
    if c:
        r = r + t
    return r
''',
    "reset_between": '''
def f(x, y):
    t = None
    c = x > 0.0
    if c:
        t = y * 2.0
    if y > 0.5:
        t = None
    r = x
    if c:
        r = r + t
    return r
''',
    "negated_copy_of_another": '''
def f(x, y):
    t = None
    c = x > 0.0
    d = y > 0.0
    if c:
        t = y * 2.0
    skip = not d
    r = x
    if not skip:
        r = r + t
    return r
''',
    "stored_into": '''
def f(x, y):
    t = None
    c = np.array([x > 0.0])
    if c:
        t = y * 2.0
    c[0] = y > 0.0
    r = x
    if c:
        r = r + t
    return r
''',
    "loop_rebinds_condition": '''
def f(x, y):
    t = None
    r = x
    c = x > 0.0
    for k in range(3):
        if c:
            r = r + t
        c = y > k
        if c:
            t = y * 2.0
    return r
''',
}


def _lowered(src):
    fn = gast.parse(src).body[0]
    lower_for_numba(fn)
    from srcad.backends import numba_runtime

    namespace = {"np": np, "previous_value": numba_runtime.previous_value, "new_stack": numba.typed.List}
    exec(compile(A.to_source(fn), "<lowered>", "exec"), namespace)
    return numba.njit(namespace["f"])


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_a_read_under_the_binding_condition_is_proven_and_compiles_to_pythons_values(name):
    original = {"np": np}
    exec(ACCEPTED[name], original)
    compiled = _lowered(ACCEPTED[name])
    rng = np.random.default_rng(len(name))
    for x, y in [(0.7, 0.3), (-0.6, 0.8), (0.2, -0.4), (-0.3, -0.9)] + [tuple(rng.uniform(-1, 1, 2))]:
        assert compiled(x, y) == pytest.approx(original["f"](x, y), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_condition_that_may_differ_between_the_tests_stays_refused(name):
    with pytest.raises(NotLowerable, match="'t' is None on some paths"):
        _lowered(REFUSED[name])
