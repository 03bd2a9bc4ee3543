"""backend="numba" on dynamic programming and two-pass reductions, refused before this stop:

- an element read saved as a copy before the array is stored into (``R[i, j] = c + min(R[i - 1,
  j], ...)``, a DTW with a hard min) is written ``_t: np.float64 = R[i - 1, j]`` in the generated
  source, a fact for differentiating it again; the lowering read only plain assignments, so it
  took the annotated one for an unsaved binding;
- a value first bound at the top level after a loop and updated in a second loop (``s = 0.0``
  then ``s += ...``) kept its entry placeholder ``s = None``, whose stack was turned around and
  then found ``s = 0.0`` unsaved.

Each compiled gradient (joint adjoint, and the forward/backward pair through ``vjp``) equals the
NumPy backend's and finite differences in random directions.
"""
import math

import numpy as np
import pytest

pytest.importorskip("numba")

import srcad  # noqa: E402
from test_numba_backend import check, check_compiled_pair, is_compiled  # noqa: E402


def dtw_hard_min(a, b):
    n, m = a.shape[0], b.shape[0]
    R = np.zeros((n + 1, m + 1))
    R[0, 1:] = 1e10
    R[1:, 0] = 1e10
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost = (a[i - 1] - b[j - 1]) ** 2
            R[i, j] = cost + min(R[i - 1, j], R[i, j - 1], R[i - 1, j - 1])
    return R[n, m]


def normalised_log_sum(x):
    t = 0.0
    for i in range(len(x)):
        t = t + x[i] * x[i]
    s = 0.0
    for i in range(len(x)):
        s += math.exp(x[i] - 0.1 * t)
    return math.log(s)


def damped_rows(x):
    acc = 0.0
    for i in range(x.shape[0]):
        acc = 0.9 * acc + x[i]
    total = acc * 0.5
    for i in range(x.shape[0]):
        total = total + math.tanh(x[i] * acc)
    return total


rng = np.random.default_rng(28)
PROGRAMS = {
    "dtw_hard_min": (dtw_hard_min, lambda: (rng.standard_normal(5), rng.standard_normal(4)), (0, 1)),
    "normalised_log_sum": (normalised_log_sum, lambda: (rng.standard_normal(7),), (0,)),
    "damped_rows": (damped_rows, lambda: (rng.standard_normal(6),), (0,)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiled_gradient_equals_numpy_and_finite_differences(name):
    f, make_args, wrt = PROGRAMS[name]
    args = make_args()
    d = srcad.differentiable(f, wrt=wrt, backend="numba")
    grads = d.grad(*args)
    assert is_compiled(d)
    check(f, args, wrt, grads if isinstance(grads, tuple) else (grads,))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiled_pair_equals_numpy(name):
    f, make_args, wrt = PROGRAMS[name]
    args = make_args()
    d = srcad.differentiable(f, wrt=wrt, backend="numba")
    check_compiled_pair(f, args, wrt, d)


def test_every_entry_point_docs_list_takes_the_backend():
    """docs/numba.md: ``backend=`` on grad, differentiable, adjoint, vjp and value_and_grad
    (``srcad.adjoint`` had no such keyword: a TypeError)."""
    x = rng.standard_normal(6)
    expected = srcad.grad(damped_rows)(x)
    made = srcad.differentiable(damped_rows, backend="numba")
    results = [srcad.grad(damped_rows, backend="numba")(x), made.grad(x),
               srcad.adjoint(damped_rows, backend="numba")(x, 1.0), srcad.vjp(damped_rows, x, backend="numba")[1](1.0),
               srcad.value_and_grad(damped_rows, backend="numba")(x)[1]]
    for got in results:
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert is_compiled(made)
