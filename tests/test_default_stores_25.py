"""A function of yours that stores what it is given in its own default argument (which outlives
the call, and may be a global's object: ``def log(y, hist=HISTORY)``) is refused at the call
when srcad would run it as written, as storing into a global is: read back, the value would
carry no derivative (round 25)."""
import numpy as np
import pytest

import srcad
from srcad.errors import SrcadError
from srcad.testing import check_grads

HISTORY = []


def log(y, hist=HISTORY):
    hist.append(y)
    return len(hist)


def last_logged(x):
    _ = log(x * 2.0)
    return np.sum(HISTORY[-1] * x)


def remembered(y, memo={}):  # noqa: B006 (the idiom under test)
    memo["last"] = y
    return 0


def through_own_default(x):
    _ = remembered(x * 3.0)
    return np.sum(remembered.__defaults__[0]["last"] * x)


def logs_a_constant(x):  # a log of values carrying no derivative, never read back here
    _ = log(srcad.stop_gradient(x * 2.0))
    return np.sum(np.sin(x) * x)


@pytest.mark.parametrize("fn", [last_logged, through_own_default])
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_call_storing_in_its_default_is_refused(fn, mode):
    x = np.array([0.3, -0.2, 0.5])
    with pytest.raises(SrcadError, match=r"test_default_stores_25\.py:\d+: .*stores what it computes in the default "
                                         r"of its parameter '(hist|memo)'"):
        if mode == "grad":
            srcad.grad(fn)(x)
        else:
            srcad.jvp(fn, (x,), (np.ones(3),))


def test_storing_a_value_that_carries_no_derivative_still_runs():
    x = np.array([0.3, -0.2, 0.5])
    before = len(HISTORY)
    check_grads(logs_a_constant, (x,))
    assert np.allclose(srcad.grad(logs_a_constant)(x), np.cos(x) * x + np.sin(x))
    assert len(HISTORY) > before  # the call ran, as written


H = []


def push(y, h=H):
    h.append(y)
    return y * 2.0


def pushed_and_read_back(x):  # probe 25C: hvp updated a copy of the default, H stayed empty
    z = push(x ** 2)
    last = H[-1] if len(H) > 0 else 0.0 * x
    return np.sum(z * x) + np.sum(last ** 2)


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_a_call_compiled_apart_that_updates_its_default_is_refused(mode):
    x = np.array([0.3, -0.2, 0.5, 0.1])
    H.clear()
    with pytest.raises(SrcadError, match=r"test_default_stores_25\.py:\d+: push\(\.\.\.\) updates in place the "
                                         r"default of its parameter 'h'"):
        if mode == "grad":
            srcad.grad(pushed_and_read_back)(x)
        elif mode == "jvp":
            srcad.jvp(pushed_and_read_back, (x,), (np.ones(4),))
        else:
            srcad.hvp(pushed_and_read_back)(x, np.ones(4))
