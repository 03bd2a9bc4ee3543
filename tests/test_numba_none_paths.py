"""A name None on some paths, read under the condition it was bound under (``numba_none_flags``).

The forward-style functions below are what srcad generates for ``if c: t = ...`` then ``if c:
y = y + t`` (``t = None`` first: a value saved in one branch). Each accepted one is lowered,
compiled with numba and run on both outcomes of the condition against the unlowered function
run by Python; the unsafe look-alikes (the condition rebound between, another condition, a
second name for the condition) stay refused."""
import gast
import numpy as np
import pytest

from srcad import astutil as A
from srcad.passes.numba_lowering import NotLowerable, lower_for_numba

numba = pytest.importorskip("numba")

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
