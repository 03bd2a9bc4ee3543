"""What loops push on value stacks: index arithmetic of range-loop targets (``i - 1``, ``2 * j + 1``)
is computed again by the reverse loop instead of being pushed and popped per iteration; a value
that only looks like it (read before its binding, bound twice, a target rebound in the body, a
loop over something other than a range, a checkpointed loop) keeps its stack. Each program runs
in every mode (joint, pullback twice, jvp, second order) against finite differences, and in the
numba backend where numba is installed."""
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import srcad
from loop_checks import all_modes
from srcad.testing import check_grads

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import workloads_wide  # noqa: E402  (soft-DTW: one copy of the program)

rng = np.random.default_rng(13)


def joint_and_pair_sources(fn, args, wrt=0):
    made = srcad.differentiable(fn, wrt=wrt)
    made.adjoint(*args)
    return made.adjoint_source, made.vjp_source


def stencil(x, w):
    n = x.shape[0]
    total = 0.0
    for i in range(1, n - 1):
        left = i - 1
        right = i + 1
        total = total + w * np.sin(x[left] * x[i]) * x[right]
    return total


def strided(x, n):
    s = 0.0
    for j in range(n):
        s = s + np.cos(x[2 * j + 1]) * x[2 * j]
    return s


def test_soft_dtw_pushes_no_index_arithmetic():
    x, y = rng.standard_normal(5), rng.standard_normal(4)
    joint, pair = joint_and_pair_sources(workloads_wide.soft_dtw, (x, y, 0.5), (0, 1))
    for src in (joint, pair):
        assert "_t8_stack" not in src and "_t10_stack" not in src  # i - 1, j - 1
        assert "_t8_again = i - 1" in src and "_t10_again = j - 1" in src
        assert "_t12_stack" in src  # x[i - 1] - y[j - 1] is a value: saved
    all_modes(workloads_wide.soft_dtw, (x, y, 0.5), (0, 1))


def test_named_neighbours_of_a_loop_target_are_computed_again():
    x = rng.standard_normal(6)
    joint, pair = joint_and_pair_sources(stencil, (x, 0.7), (0, 1))
    assert "_left_stack" not in joint and "_right_stack" not in joint
    assert "left_again = i - 1" in joint and "right_again = i + 1" in joint
    assert "_right_stack" not in pair
    all_modes(stencil, (x, 0.7), (0, 1))
    all_modes(stencil, (x[:2], 0.7), (0, 1))  # the loop runs zero times


def test_products_and_sums_of_a_target_with_literals():
    x = rng.standard_normal(9)
    joint, _ = joint_and_pair_sources(strided, (x, 4))
    assert joint.count("_stack = ") == 3  # x[2j + 1], its cosine and x[2j]; not 2j nor 2j + 1
    reverse = joint.split("reversed(")[1]
    assert "_again = 2 * j" in reverse and "_again + 1" in reverse
    all_modes(strided, (x, 4))
    all_modes(strided, (x, 0))


def read_before_bound(x, n):
    s = 0.0
    k = 0
    for i in range(n):
        s = s + x[k] * np.sin(s)
        k = i + 1  # read in the next iteration, before this binding: its old value is needed
    return s


def rebound(x, n):
    s = 0.0
    for i in range(n):
        k = i + 1
        s = s + x[k] * np.sin(s)
        k = i  # bound twice in the body
        s = s * x[k]
    return s


def target_rebound(x, n):
    s = 0.0
    for i in range(n):
        k = i + 1
        s = s + np.sin(s * x[k])
        i = i + 2  # noqa: PLW2901  (the reverse loop's target is not this value)
        s = s + x[i - 2]
    return s


def over_a_list(x, idx):
    s = 0.0
    for i in idx:
        k = i + 1
        s = s + np.sin(s * x[k])
    return s


def with_break(x, n):
    s = 0.0
    for i in range(n):
        k = i + 1
        s = s + np.sin(s + x[k])
        if s > 1.5:
            break
    return s


@pytest.mark.parametrize("fn, args, kept", [
    (read_before_bound, (rng.standard_normal(6), 5), "_k_stack"),
    (rebound, (rng.standard_normal(6), 5), "_k_stack"),
    (target_rebound, (rng.standard_normal(9), 5), "_k_stack"),
    (over_a_list, (rng.standard_normal(6), [0, 3, 1, 4]), "_k_stack"),
])
def test_values_that_only_look_recomputable_keep_their_stack(fn, args, kept):
    joint, _ = joint_and_pair_sources(fn, args)
    assert kept in joint and "_again" not in joint
    all_modes(fn, args)


def test_a_loop_left_early_runs_back_over_its_trips_with_the_same_indices():
    x = np.linspace(0.2, 1.4, 7)
    joint, _ = joint_and_pair_sources(with_break, (x, 6))
    assert "k_again = i + 1" in joint and "_k_stack" not in joint
    all_modes(with_break, (x, 6))
    all_modes(with_break, (-x, 6))  # never leaves early


def test_a_checkpointed_loop_keeps_its_stacks():
    def f(x, n):
        s = 0.0
        for i in srcad.checkpointed(range(n), segment=2):
            k = i + 1
            s = s + np.sin(s * x[k])
        return s

    x = rng.standard_normal(7)
    joint, _ = joint_and_pair_sources(f, (x, 5))
    assert "_again" not in joint
    check_grads(f, (x, 5))


def test_hessian_vector_products_through_recomputed_indices():
    x, direction = rng.standard_normal(6), rng.standard_normal(6)
    grad = srcad.grad(stencil, wrt=0)
    eps = 1e-5
    numeric = (grad(x + eps * direction, 0.7) - grad(x - eps * direction, 0.7)) / (2 * eps)
    np.testing.assert_allclose(srcad.hvp(stencil, wrt=0)(x, 0.7, direction), numeric, rtol=1e-5, atol=1e-8)


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba is not installed")
def test_the_numba_backend_runs_the_recomputed_indices():
    x = rng.standard_normal(6)
    for sweep in ("joint", "split"):
        want = srcad.grad(stencil, wrt=(0, 1))(x, 0.7)
        if sweep == "joint":
            got = srcad.grad(stencil, wrt=(0, 1), backend="numba")(x, 0.7)
        else:
            _, pullback = srcad.vjp(stencil, x, 0.7, wrt=(0, 1), backend="numba")
            got, again = pullback(1.0), pullback(1.0)
            for a, b in zip(got, again):
                np.testing.assert_array_equal(a, b)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
