"""Adjoints of scalar-shaped values carried by loops: added to out of place (``d = d + g``,
a new NumPy scalar), never turned into a 0-d buffer per loop (an in-place add to a 0-d array
costs microseconds), and made a buffer only where something is written into them. The
caller's arrays and cotangent are never changed, and no returned gradient aliases them.
Checked against finite differences in both reverse modes (the pullback called twice),
forward mode and at second order."""
import os
import sys

import numpy as np

import srcad
from loop_checks import adjoint_source, all_modes

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
from workloads import logsumexp_loop  # noqa: E402  (make bench's program: one copy)

rng = np.random.default_rng(13)


def test_an_item_carried_by_a_loop_is_added_out_of_place():
    a = rng.standard_normal(9)
    source = adjoint_source(logsumexp_loop, (a,))
    assert "grad_buffer" not in source
    assert "dlargest = dlargest - " in source and "dlargest -=" not in source  # (-g added as a subtraction)
    all_modes(logsumexp_loop, (a,))


def zero_d_weights(x, w):
    s = w * 1.0
    for i in range(3):
        s = s * np.cos(w * x[i]) + w
    return s * np.sum(x)


def test_a_0d_array_argument_and_cotangent_stay_the_callers():
    x, w = rng.standard_normal(3), np.array(0.7)
    v = np.array(1.3)
    dx, dw = srcad.adjoint(zero_d_weights, wrt=(0, 1))(x, w, v)
    assert w == np.array(0.7) and v == np.array(1.3)
    assert dw is not w and dw is not v and not np.shares_memory(dw, v)
    all_modes(zero_d_weights, (x, w), (0, 1), v=v)


def written_after_the_loop(x, w):
    acc = w * 1.0
    for i in range(3):
        acc = acc + np.sin(w * x[i])
    box = np.zeros(())
    box[()] = acc
    box[()] = box * w + acc
    return box * x[0]


def test_an_adjoint_written_into_after_the_loop_becomes_a_buffer():
    x, w = rng.standard_normal(3), np.array(0.4)
    all_modes(written_after_the_loop, (x, w), (0, 1))
    all_modes(written_after_the_loop, (x, 0.4), (0, 1))


def running_scale(x):
    s = x[0]
    out = 0.0
    for i in range(1, x.shape[0]):
        s = s * 0.5 + x[i]
        if s > 0.0:
            out = out + s ** 2
        else:
            out = out - s
    return out


def test_a_branching_scalar_recurrence():
    x = rng.standard_normal(6)
    assert "grad_buffer" not in adjoint_source(running_scale, (x,))
    all_modes(running_scale, (x,))
