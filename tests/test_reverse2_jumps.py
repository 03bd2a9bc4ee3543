"""Jumps whose path depends on the data: ``return``/``break``/``continue`` as the first
statement of a loop body, under a short-circuit loop test (``and``, ``or``, ``not``, chained
comparisons, an inlined helper with early returns), in ``while`` and ``for``, at depths one
to three. Each function runs at inputs where the loop body runs and where it does not; the
values the forward sweep saves must be popped in the same number on every path.

Regression test of fuzz finding F3 (``IndexError: pop from empty list`` in the adjoint of a
``while`` whose data-dependent test guards a ``return``). Every function is checked against
finite differences in reverse mode (joint adjoint, pullback called twice), forward mode and
second order (forward over reverse, reverse over reverse).
"""
import sys

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp


def check_every_mode(f, x):
    check_grads(f, (x,), modes=("rev",))
    check_jvp(f, (x,))
    u = np.random.default_rng(3).standard_normal(np.shape(x))
    gradient = srcad.grad(f)
    eps = 1e-5
    numeric = (gradient(x + eps * u) - gradient(x - eps * u)) / (2 * eps)
    np.testing.assert_allclose(srcad.hvp(f)(x, u), numeric, rtol=1e-5, atol=1e-7)
    check_grads(gradient, (x,))


def while_return_first_matrix(x):  # fuzz finding F3 as found
    k = 0
    while k < 4 and (not x[-1] >= 0.52):
        return 0.29 * np.ones((4, 3)) if not x[-1] >= 0.3 else 0.72 * np.ones((4, 3))
    return np.tanh(x).sum() * np.ones((4, 3))


@pytest.mark.parametrize("last", [0.2, 0.4, 0.7])
def test_fuzz_finding_f3(last):
    x = np.array([0.1, 0.2, last])
    check_grads(while_return_first_matrix, (x,), modes=("rev",))
    check_jvp(while_return_first_matrix, (x,))


def while_return_first(x):  # fuzz finding F3, made scalar
    k = 0
    while k < 4 and (not x[-1] >= 0.52):
        return np.sum(np.sin(x) * x[0]) if not x[-1] >= 0.3 else np.sum(x * x) * 0.72
    return np.tanh(x).sum() * x[1]


def while_only_return(x):
    s = x * 1.0
    while s[0] < 0.5 or s[1] > 0.9:
        return np.sum(np.cos(s) * s)
    return np.sum(s * s * x[2])


def while_break_first_or(x):
    s = x * 1.0
    k = 0
    while k < 3 or s[0] > 5.0:
        if s[1] * x[0] > 0.3:
            break
        s = np.sin(s) * x[2] + x
        k = k + 1
    return np.sum(s * s)


def while_continue_first(x):
    s = x[0] * 1.0
    k = 0
    while k < 4 and not s > 3.0:
        k = k + 1
        if x[k % 3] > 0.6:
            continue
        s = s + np.tanh(s * x[k % 3])
    return s * x[1]


def while_chained_test_return(x):
    s = x[0] * 1.0
    k = 0
    while 0.0 < s < 2.5 and k < 5:
        if s * x[1] > 0.9:
            return s * s
        s = s + x[2] * np.exp(-s)
        k = k + 1
    return np.sin(s)


def _above(v, t):
    if v > t:
        return True
    return v > 2.0 * t


def while_helper_test(x):
    s = x[0] * 1.0
    k = 0
    while k < 4 and not _above(s, x[1]):
        if s * x[2] > 1.2:
            return s * x[2]
        s = s * 1.5 + x[2]
        k = k + 1
    return s * s


def for_return_first(x):
    s = x[0] * 1.0
    for i in range(3):
        if x[i] > 0.4 and s > 0.1:
            return s * x[i]
        s = np.sin(s) * x[i] + s
    return s


def for_break_first_in_while(x):
    s = 0.5
    k = 0
    while k < 2 and s < 3.0:
        for i in range(3):
            if s * x[i] > 0.8 or x[i] < 0.15:
                break
            s = s + np.tanh(x[i] * s)
        k = k + 1
    return s * x[0]


def nested_while_return_first(x):
    s = 0.5
    for i in range(3):
        j = 0
        while j < 2 and (s < 2.0 or x[i] > 0.9):
            if x[j] * s > 0.6:
                return s * x[i]
            s = s + np.tanh(x[j] * s)
            j = j + 1
    return s


def depth_three_jumps_first(x):
    s = 0.25
    for i in range(2):
        k = 0
        while k < 2 and not s > 4.0:
            k = k + 1
            for j in range(3):
                if x[j] * s > 0.7:
                    return s * x[j]
                if x[j] < 0.2:
                    continue
                s = s + x[i] * np.sin(x[j] + s)
    return s * s


CASES = [
    (while_return_first, [[0.1, 0.2, 0.4], [0.1, 0.2, 0.2], [0.1, 0.2, 0.7]]),
    (while_only_return, [[0.2, 0.3, 0.4], [0.7, 0.3, 0.4], [0.7, 0.95, 0.4]]),
    (while_break_first_or, [[0.2, 0.3, 0.4], [0.9, 0.8, 0.4], [0.3, 0.6, 0.5]]),
    (while_continue_first, [[0.3, 0.7, 0.4], [0.9, 0.8, 0.4], [0.3, 0.2, 0.5]]),
    (while_chained_test_return, [[0.3, 0.7, 0.4], [0.9, 0.8, 0.4], [-0.3, 0.2, 0.5], [0.5, 0.1, 0.9]]),
    (while_helper_test, [[0.3, 0.7, 0.4], [0.5, 0.9, 2.6], [0.1, 0.9, 0.5], [0.5, 0.2, 0.9]]),
    (for_return_first, [[0.3, 0.7, 0.4], [0.9, 0.8, 0.4], [0.2, 0.1, 0.3]]),
    (for_break_first_in_while, [[0.3, 0.7, 0.4], [0.9, 0.8, 0.4], [0.2, 0.1, 0.3], [0.1, 0.3, 0.4]]),
    (nested_while_return_first, [[0.3, 0.7, 0.4], [0.9, 0.8, 0.4], [0.2, 0.1, 0.3]]),
    (depth_three_jumps_first, [[0.3, 0.7, 0.4], [0.9, 0.8, 0.4], [0.1, 0.15, 0.3], [0.35, 0.1, 0.25]]),
]


@pytest.mark.parametrize("f, x", [(f, x) for f, xs in CASES for x in xs],
                         ids=[f"{f.__name__}-{k}" for f, xs in CASES for k in range(len(xs))])
def test_jump_paths_agree_with_finite_differences(f, x):
    check_every_mode(f, np.array(x))


@pytest.mark.parametrize("f, xs", CASES, ids=[f.__name__ for f, _ in CASES])
def test_inputs_run_every_line(f, xs):
    """Together the inputs take every jump and every fall-through, so each path is checked."""
    code = f.__code__
    lines = {line for _, _, line in code.co_lines() if line} - {code.co_firstlineno}
    ran = set()

    def tracer(frame, event, arg):
        if frame.f_code is code and event == "line":
            ran.add(frame.f_lineno)
        return tracer

    for x in xs:
        sys.settrace(tracer)
        try:
            f(np.array(x))
        finally:
            sys.settrace(None)
    assert lines <= ran, f"lines {sorted(lines - ran)} of {f.__name__} never run"
