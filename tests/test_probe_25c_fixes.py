"""Round 25C, a probe of this round's own changes: a function of yours called for its effect
runs as written only where its summary shows it changes nothing (a write through ``out=``
counts as a change), and a for loop over ``reversed(L)`` sees a change to ``L``'s items as
Python's reverse iterator does (refused, as for ``for v in L``)."""
import numpy as np
import pytest

import srcad
from srcad.errors import SrcadError
from srcad.testing import check_grads

X = np.array([0.31, -0.23, 0.47, 0.13])
W = np.array([1.0, 10.0, 100.0, 1000.0])


def square_into(dst, src):
    np.multiply(src, src, out=dst)


def square_into_by_position(dst, src):
    np.multiply(src, src, dst)


def exp_into_tuple(dst, src):
    np.exp(src, out=(dst,))


def filled(x):
    a = np.zeros(4)
    square_into(a, x)
    return np.sum(a * x)


def filled_by_position(x):
    a = np.zeros(4)
    square_into_by_position(a, x)
    return np.sum(a * x)


def filled_as_tuple(x):
    a = np.zeros(4)
    exp_into_tuple(a, x)
    return np.sum(a * x)


def overwrites_its_argument(x):
    square_into(x, x)
    return np.sum(x)


class Model:
    def __init__(self):
        self.buf = np.zeros(4)

    def _fill(self, d, v):
        np.multiply(v, v, out=d)

    def step(self, v):
        self._fill(self.buf, v)
        return np.sum(self.buf * W)


MODEL = Model()


def through_a_model(x):
    return MODEL.step(x)


def checks(y):
    if not np.all(np.isfinite(y)):
        raise ValueError("not finite")


def checked(x):
    checks(x)
    return np.sum(np.sin(x) * x)


@pytest.mark.parametrize("fn", [filled, filled_by_position, filled_as_tuple, overwrites_its_argument,
                                through_a_model])
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_helper_writing_through_out_is_not_run_as_written(fn, mode):
    x = X.copy()
    with pytest.raises(SrcadError, match=r"test_probe_25c_fixes\.py:\d+: "):
        if mode == "grad":
            srcad.grad(fn)(x)
        else:
            srcad.jvp(fn, (x,), (np.ones(4),))
    assert np.array_equal(x, X)  # the caller's array is never written


def test_a_helper_that_only_reads_still_runs_as_written():
    check_grads(checked, (X,))
    with pytest.raises(ValueError, match="not finite"):
        srcad.grad(checked)(np.array([np.nan, 1.0]))


def reversed_with_item_set(x, stop_early):
    L = [x[0], x[1] * 2, x[2] ** 2, x[3]]
    s = 0.0
    for v in reversed(L):
        s = s + v
        L[1] = x[0] * 7.0  # reached later by Python's reverse iterator
        if stop_early and s > 100.0:
            break
    return s


def enumerate_reversed_with_item_set(x):
    L = [x[0], x[1] * 2, x[2] ** 2, x[3]]
    s = 0.0
    for i, v in enumerate(reversed(L)):
        s = s + v * i
        L[1] = x[0] * 7.0
    return s


def reversed_then_changed(x):
    L = [x[0], x[1] * 2, x[2] ** 2, x[3]]
    s = 0.0
    for v in reversed(L):
        s = s * 0.5 + v
        if s > 100.0:
            break
    R = list(reversed(L))  # a list of the items: changing L afterwards does not change it
    L[0] = x[1]
    return s + R[-1] * L[0]


def stopping_early(x):
    return reversed_with_item_set(x, True)


def running_through(x):
    return reversed_with_item_set(x, False)


@pytest.mark.parametrize("call", [stopping_early, running_through, enumerate_reversed_with_item_set])
def test_changing_the_list_a_reversed_loop_reads_is_refused(call):
    with pytest.raises(SrcadError, match=r"while the for loop at line \d+ iterates over 'reversed\(L\)'; iterate over "
                                         r"a copy instead \('for \.\.\. in list\(reversed\(L\)\)'\)"):
        srcad.grad(call)(X)


def test_a_reversed_loop_over_a_list_changed_after_it():
    check_grads(reversed_then_changed, (X,))
