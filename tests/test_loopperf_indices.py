"""Index arithmetic on a loop counter (``k = i - 1``) is recomputed at the top of the reverse
loop body instead of pushed onto a value stack per trip. Checked against finite differences
in both reverse modes (the pullback called twice), forward mode and at second order, with
the counter's name rebound, read after the loop, under a ``break`` and in nested loops; the
generated code is checked for the stacks it leaves out."""
import os
import re
import sys

import numpy as np

from loop_checks import adjoint_source, all_modes

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
from numba_loops import soft_dtw  # noqa: E402  (make bench's program: one copy)

rng = np.random.default_rng(14)


def stacked(source, pattern):
    """Names bound by ``name = <pattern>`` in ``source`` that get a value stack."""
    names = set(re.findall(rf"(\w+) = {pattern}\n", source))
    assert names, source
    return {n for n in names if f"{n}_stack" in source}


def test_soft_dtw_pushes_no_shifted_index():
    x, y = rng.standard_normal(5), rng.standard_normal(4)
    source = adjoint_source(soft_dtw, (x, y, 0.3), (0, 1))
    assert not stacked(source, r"i - 1") and not stacked(source, r"j - 1")
    reverse = source[source.index("reversed("):]
    assert "i - 1" in reverse and "j - 1" in reverse
    all_modes(soft_dtw, (x, y, 0.3), (0, 1))


def rebinds_a_parameter(x, k):
    y = x * k  # the reverse sweep reads the parameter k after the loop
    total = 0.0
    for i in range(1, 4):
        k = i - 1
        total = total + x[k] * y[i] + x[k + 1] ** 2
    return total + np.sum(y) * k


def test_a_rebound_parameter_keeps_its_value_outside_the_loop():
    all_modes(rebinds_a_parameter, (rng.standard_normal(5), 2))


def carried(x):
    k = 0
    total = 0.0
    for i in range(1, 5):
        total = total + x[k] * x[i]  # the previous trip's k: not recomputed
        k = i - 1
    return total


def test_a_value_carried_to_the_next_trip_is_saved():
    all_modes(carried, (rng.standard_normal(5),))


def stops_early(x):
    total = 0.0
    n = x.shape[0]
    for i in range(n):
        k = (i + 2) % n
        total = total + np.sin(x[k]) * x[i]
        if total > 1.5:
            break
        m = i * 2 // 3
        total = total + x[m] ** 2
    return total


def test_under_a_break():
    for seed in range(3):
        x = np.random.default_rng(seed).uniform(0.2, 1.0, 6)
        all_modes(stops_early, (x,))
    assert not stacked(adjoint_source(stops_early, (np.full(6, 0.5),)), r"_t\d+ % n")


def nested(A, b):
    total = 0.0
    n, m = A.shape
    for i in range(1, n):
        for j in range(m - 1):
            p = i - 1
            q = j + 1
            total = total + A[p, q] * np.tanh(A[i, j] * b[q])
        total = total * 0.9
    return total


def test_nested_loops_read_the_outer_counter():
    A, b = rng.standard_normal((4, 3)), rng.standard_normal(3)
    source = adjoint_source(nested, (A, b), (0, 1))
    assert not stacked(source, r"i - 1") and not stacked(source, r"j \+ 1")
    all_modes(nested, (A, b), (0, 1))


def rebinds_the_counter(x):
    total = 0.0
    for i in range(3):
        i = i * 2 % 3  # the counter itself rebound: k is not the loop's i - 1
        k = i - 1
        total = total + x[k] * np.cos(x[i])
    return total


def test_a_rebound_counter_is_not_the_loops():
    x = rng.standard_normal(4)
    assert "i - 1" not in adjoint_source(rebinds_the_counter, (x,)).split("reversed(")[1]
    all_modes(rebinds_the_counter, (x,))
