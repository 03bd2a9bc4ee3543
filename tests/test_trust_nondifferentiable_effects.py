"""A function declared without derivative may still change its arguments in place: srcad
refuses that at the call (it gave the gradient of the unchanged value), and keeps calling
library functions it knows leave their arguments alone."""
import numpy as np
import pytest

import srcad
from srcad.extend import register_nondifferentiable
from srcad.testing import check_grads, check_jvp


class Optimiser:
    def halve(self, y):
        y *= 0.5
        return 1.0


opt = Optimiser()
register_nondifferentiable(opt.halve)


def halves_in_place(x):
    y = np.sin(x)
    z = opt.halve(y)
    return np.sum(y) * z


def counts_with_numpy(x):
    y = np.sin(x)
    k = np.argmax(y)  # a NumPy function without derivative: known not to write into y
    return np.sum(y * y) + k


X = np.array([0.3, 0.7, -0.2])


def test_declared_nondifferentiable_call_that_updates_an_argument_is_refused():
    with pytest.raises(srcad.SrcadSyntaxError, match=r"test_trust_nondifferentiable_effects.py:\d+.*opt.halve"):
        srcad.grad(halves_in_place)(X)


def test_library_function_without_derivative_reads_only():
    check_grads(counts_with_numpy, (X,), modes=("rev",))
    check_jvp(counts_with_numpy, (X,))
