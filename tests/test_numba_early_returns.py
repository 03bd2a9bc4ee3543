"""Early returns and ``try`` statements under ``backend="numba"``.

srcad's jump elimination turns an early ``return`` into ``_returnedN``/``_retvalN`` (``_retvalN =
None`` first, ``_returnedN = False``), and ``try`` into a region with ``_tryN``/``_exceptionN``. The
flow of ``numba_none_flags`` now knows a condition name bound to a constant (what
``_returnedN = False`` tells where it stays so), a backward sweep's saved conditions are read
one by one, and ``np.all``/``np.any`` of one argument are condition names; a ``try`` runs in
compiled code as its body alone (``passes.numba_try``), the NumPy code wherever it raises.

Each program's compiled gradient (joint adjoint) and pullback (forward and backward sweeps)
equal the NumPy backend's and central finite differences in random directions, on inputs that
take each path; each was refused before. The look-alikes that are not safe stay refused.
"""
import numpy as np
import pytest

import srcad
from srcad.backends.numba_errors import BackendCompileError

numba = pytest.importorskip("numba")


def negative_shortcut(x):
    if np.all(x < 0):
        return 0.0 * x.sum()
    y = np.sin(x) * x
    return np.sum(y ** 2)


def return_in_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * x[i]
        if s > 1.5:
            return s
    return s * 2.0


def converged(x):
    y = x
    for k in range(6):
        z = 0.5 * (y + x / y)
        if np.max(np.abs(z - y)) < 1e-3:
            return np.sum(z)
        y = z
    return np.sum(y)


def large_total(x):
    t = np.sum(x)
    if t > 3.0:
        return t
    u = np.tanh(x)
    return np.sum(u * x)


def elif_chain(x):
    m = np.max(x)
    if m < 0:
        return -np.sum(x * x)
    elif m > 1:
        return np.sum(2.0 * x)
    return np.sum(x ** 3)


def caught_value_error(x):
    try:
        s = np.sum(x * x)
        if s > 3.0:
            raise ValueError("large")
        y = np.sin(x) * s
    except Exception:
        y = x * 2.0
    return np.sum(y)


def caught_floating_point_error(x):
    try:
        y = np.log(x)
    except FloatingPointError:
        y = x - 1.0
    return np.sum(y * y)


def with_finally(x):
    try:
        y = np.exp(x)
    finally:
        z = x * 3.0
    return np.sum(y * z)


def try_else(x):
    try:
        y = np.exp(x)
    except (ValueError, ArithmeticError):
        y = x
    else:
        y = y * 2.0
    return np.sum(y)


SMALL, LARGE, NEGATIVE = np.array([0.3, 0.5, 0.4]), np.array([1.1, 0.9, 1.3]), np.array([-0.3, -0.5, -0.4])
PROGRAMS = {  # name: (function, arguments taking each path the compiled code runs)
    "negative_shortcut": (negative_shortcut, [SMALL, NEGATIVE]),
    "return_in_loop": (return_in_loop, [SMALL, LARGE]),
    "converged": (converged, [np.array([1.0, 1.0, 1.0]), np.array([0.5, 2.0, 3.0])]),
    "large_total": (large_total, [SMALL, LARGE]),
    "elif_chain": (elif_chain, [SMALL, LARGE, NEGATIVE]),
    "caught_value_error": (caught_value_error, [SMALL]),
    "caught_floating_point_error": (caught_floating_point_error, [SMALL]),
    "with_finally": (with_finally, [SMALL]),
    "try_else": (try_else, [SMALL]),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiled_gradient_and_pullback_equal_numpy_and_finite_differences(name):
    from test_numba_backend import check, check_compiled_pair, is_compiled
    f, arg_sets = PROGRAMS[name]
    for x in arg_sets:
        d = srcad.differentiable(f, wrt=(0,), backend="numba")
        grads = d.grad(x)
        assert is_compiled(d)
        check(f, (x,), (0,), grads if isinstance(grads, tuple) else (grads,))
        check_compiled_pair(f, (x,), (0,), d)


def test_a_try_body_that_raises_runs_the_numpy_code_with_auto_and_is_refused_with_numba():
    from test_numba_backend import check, is_compiled
    d = srcad.differentiable(caught_value_error, wrt=(0,), backend="auto")
    check(caught_value_error, (SMALL,), (0,), d.grad(SMALL))
    assert is_compiled(d)
    check(caught_value_error, (LARGE,), (0,), d.grad(LARGE))  # the handler ran: NumPy's code
    assert not is_compiled(d)
    with pytest.raises(BackendCompileError, match="without its handlers"):
        srcad.grad(caught_value_error, backend="numba")(LARGE)


def test_floating_point_errors_that_raise_run_the_numpy_code():
    """numba's log never raises FloatingPointError; NumPy's does where np.seterr says so, and
    then the handler runs: the NumPy code gives its gradient (``2 * (x - 1)``), not the log's."""
    x = np.array([0.5, 0.0, 2.0])
    with np.errstate(all="raise"):
        expected = srcad.grad(caught_floating_point_error)(x)
        got = srcad.grad(caught_floating_point_error, backend="auto")(x)
        with pytest.raises(BackendCompileError, match="without its handlers"):
            srcad.grad(caught_floating_point_error, backend="numba")(x)
    np.testing.assert_allclose(got, 2 * (x - 1.0))
    np.testing.assert_allclose(got, expected)


def flag_rebound(x):
    done = False
    t = None
    if x[0] > 0.0:
        t = np.sin(x)
        done = True
    done = x[1] > 0.0
    if done:
        return np.sum(t * x)
    return np.sum(x)


def flag_read_as_number(x):
    done = False
    t = None
    if x[0] > 0.0:
        t = np.sin(x)
        done = True
    k = done * 1.0
    if done:
        return np.sum(t * x) * k
    return np.sum(x)


@pytest.mark.parametrize("f", [flag_rebound, flag_read_as_number])
def test_a_flag_whose_truth_may_differ_stays_refused(f):
    with pytest.raises(BackendCompileError, match="None on some paths"):
        srcad.grad(f, backend="numba")(np.array([0.5, 0.4, 0.3]))


def guarded_log(x):
    try:
        y = np.log(x)
    except FloatingPointError:
        y = x - 1.0
    return y


def calls_guarded_log(x):
    return np.sum(guarded_log(x) ** 2)


def test_a_callee_whose_try_may_catch_runs_the_numpy_code_in_its_caller():
    """The callee's compiled code runs inside its caller's: the caller gives way to NumPy's
    code where the callee's handlers may run, as the callee itself would."""
    x = np.array([0.5, 0.0, 2.0])
    from test_numba_backend import check, is_compiled
    d = srcad.differentiable(calls_guarded_log, wrt=(0,), backend="auto")
    check(calls_guarded_log, (SMALL,), (0,), d.grad(SMALL))
    assert is_compiled(d)
    with np.errstate(all="raise"):
        got = d.grad(x)
    np.testing.assert_allclose(got[0], 2 * (x - 1.0))


def test_returns_from_nested_loops_compile():
    """``while3_jumps`` (returns from three nested loops, refused before) on limits that leave
    by each return and by none."""
    from test_control_jumps import while3_jumps
    from test_numba_backend import check, is_compiled
    r = np.random.default_rng(1)
    for limits in [(3.0, 2.0, 10.0), (0.3, 5.0, 10.0), (5.0, 0.2, 10.0), (5.0, 5.0, 0.4), (100.0, 100.0, 100.0)]:
        x = r.uniform(0.2, 1.0, 5)
        d = srcad.differentiable(while3_jumps, wrt=(0,), backend="numba")
        grads = d.grad(x, *limits)
        assert is_compiled(d)
        check(while3_jumps, (x,) + limits, (0,), grads)
