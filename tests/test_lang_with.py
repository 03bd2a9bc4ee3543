"""``with`` statements in differentiated code (issue 10): the context manager runs around
the body, the body is differentiated; managers outside the allowlist are refused at their
line. Checked against finite differences in reverse (joint and pullback twice), forward and
second order."""
import contextlib
import time
import warnings

import numpy as np
import pytest

import srcad
from srcad.errors import SrcadSyntaxError
from lang_checks import check_all_modes

X = np.array([0.5, 1.5, 0.8])


def log_ratio(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(x * x)
        z = y * 2.0
    return (z * x).sum()


def quiet_sin(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = np.sin(x)
    return (y ** 2).sum()


def returns_inside(x):
    with np.errstate(all="ignore"):
        return np.sum(np.exp(x) * x)


def null_context_as(x):
    with contextlib.nullcontext() as nothing:
        y = x * 3.0
    if nothing is None:
        y = y * x
    return y.sum()


def two_items(x):
    with np.errstate(over="ignore"), warnings.catch_warnings(record=True) as caught:
        y = np.cosh(x) * x
    return y.sum() + 0.0 * len(caught)


def in_loop_with_break(x):
    s = 0.0
    for i in range(4):
        with np.errstate(all="ignore"):
            if i == 3:
                break
            s = s + np.sum(np.sin(x * i))
    return s


def nested(x):
    with np.errstate(all="ignore"):
        with warnings.catch_warnings():
            y = np.tanh(x) * x
    return y.sum()


def helper_with(x):
    def safe_log(t):
        with np.errstate(divide="ignore"):
            return np.log(t)
    return np.sum(safe_log(x * x) * x)


class Timer:
    """A user's timer: touches no value."""

    def __init__(self, label=""):
        self.label = label

    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.elapsed = time.perf_counter() - self.start


def timed(x):
    with Timer("step") as t:
        y = np.sin(x) * x
    return y.sum()


def untimed(x):
    with open("/dev/null") as handle:
        y = x * 2.0
    return y.sum()


@pytest.mark.parametrize("f", [log_ratio, quiet_sin, returns_inside, null_context_as, two_items,
                               in_loop_with_break, nested, helper_with])
def test_with_all_modes(f):
    check_all_modes(f, (X,))


def test_errstate_is_restored_when_the_body_raises():
    def raising(x):
        with np.errstate(divide="ignore"):
            y = np.log(x)
            if y.sum() > -100.0:
                raise KeyError("from the body")
        return y.sum()

    before = np.geterr()
    with pytest.raises(KeyError, match="from the body"):
        srcad.grad(raising)(X)
    with pytest.raises(KeyError, match="from the body"):
        srcad.vjp(raising, X)
    with pytest.raises(KeyError, match="from the body"):
        srcad.jvp(raising, (X,), (X,))
    assert np.geterr() == before


def test_unknown_manager_refused_at_its_line():
    with pytest.raises(SrcadSyntaxError, match="register its class with srcad.extend.register_context_manager") as e:
        srcad.grad(untimed)(X)
    assert e.value.lineno == untimed.__code__.co_firstlineno + 1


def test_registered_user_manager_runs():
    with pytest.raises(SrcadSyntaxError, match="'Timer' is not one of them"):
        srcad.grad(timed)(X)
    srcad.extend.register_context_manager(Timer)
    try:
        check_all_modes(timed, (X,))
    finally:
        from srcad.passes.statements import CONTEXT_MANAGERS
        CONTEXT_MANAGERS.discard(Timer)


def test_manager_given_a_value_with_derivative_is_refused():
    def carries(x):
        with contextlib.nullcontext(x) as y:
            z = y * 2.0
        return z.sum()

    with pytest.raises(Exception, match="nullcontext"):
        srcad.grad(carries)(X)


G = np.array([1.0, 2.0, 3.0])


def writes_through_as_name(x):
    with contextlib.nullcontext(G) as y:
        y[0] = x[0]
    return np.sum(G * x)


def test_as_name_keeps_the_aliasing_check():
    # y is G: the update would change a global array, which srcad refuses as for any alias
    with pytest.raises(SrcadSyntaxError, match="shares memory with the global 'G'") as e:
        srcad.grad(writes_through_as_name)(X)
    assert e.value.lineno == writes_through_as_name.__code__.co_firstlineno + 2
