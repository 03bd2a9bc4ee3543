"""``a, b = e1, e2`` binds each target to its own value (found by an adversarial probe:
``ms, Ps = [], []`` and then appending to each was refused as "'ms' shares memory with
'Ps'": both were items of one tuple). Python's order is kept: every value first, then the
targets left to right (``a, b = b, a`` swaps). Every mode against finite differences."""
import numpy as np
import pytest

from lang_checks import check_all_modes

X = np.array([0.3, 0.5, -0.4])


def two_lists(x):
    ms, Ps = [], []
    for t in range(3):
        ms.append(x * t)
        Ps.append(np.sin(x) + t)
    return np.sum(ms[2] * Ps[1])


def swap(x):
    a, b = x[0], x[1] * 3.0
    a, b = b, a * 2.0
    return a * np.exp(b)


def index_then_store(x):
    y = x * 1.0
    i, y[i] = 1, x[2] ** 2  # i is bound first: y[1] is stored
    return np.sum(y * np.arange(3.0)) + i


@pytest.mark.parametrize("f", [two_lists, swap, index_then_store])
def test_pairwise_assignment(f):
    check_all_modes(f, (X,))
