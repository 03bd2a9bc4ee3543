"""backend="numba" on functions differentiated with respect to a tuple or list (found by
fuzzing: the entry ``t = as_real(t)`` of their adjoints had no numba version, so every such
function was refused; ``backends/numba_containers.py``).

A tuple or list argument keeps its items under ``as_real``, as in Python; its adjoint is a list
of its items' adjoints, which numba holds when every item has one type (floats, or float arrays with one
number of dimensions); a tuple no adjoint reaches gets zeros item by item, whatever its items. Each
compiled gradient equals the NumPy backend's and central finite differences in random directions; a tuple numba cannot hold is refused under "numba" and runs NumPy code under
"auto".
"""
import numpy as np
import pytest

numba = pytest.importorskip("numba")

import srcad  # noqa: E402
from srcad import runtime  # noqa: E402
from srcad.backends.numba_backend import BackendCompileError  # noqa: E402
from test_numba_backend import check_compiled_pair, is_compiled  # noqa: E402

rng = np.random.default_rng(32)


def weighted_pair(x, pair):
    a, b = pair
    return np.sum(x * a) + np.sum(np.sin(b) * b)


def sum_of_squares(arrays):
    s = 0.0
    for v in arrays:
        s = s + np.sum(v * v * v)
    return s


def product_of_items(t):
    return t[0] * t[1] + np.sin(t[2])


def first_scaled(x, t):
    return np.sum(x * t[0]) + np.sum(np.exp(t[1]))


def ignores_its_pair(x, pair, n):
    return np.sum(x * x) * n


PROGRAMS = {
    "unpacked_pair": (weighted_pair, lambda: (rng.standard_normal(3), (rng.standard_normal(3), rng.standard_normal(3))),
                      (0, 1)),
    "loop_over_tuple": (sum_of_squares, lambda: ((rng.standard_normal(4), rng.standard_normal(4)),), (0,)),
    "tuple_of_floats": (product_of_items, lambda: ((0.7, -1.3, 0.4),), (0,)),
    "items_of_different_lengths": (first_scaled, lambda: (rng.standard_normal(3), (rng.standard_normal(3),
                                                                                   rng.standard_normal(2))), (0, 1)),
    "list_of_vectors": (sum_of_squares, lambda: ([rng.standard_normal(4), rng.standard_normal(2)],), (0,)),
    "list_of_floats": (product_of_items, lambda: ([0.7, -1.3, 0.4],), (0,)),
    "unreached_list": (ignores_its_pair, lambda: (rng.standard_normal(3), [rng.standard_normal(3),
                                                                           rng.standard_normal(4)], 3), (0, 1)),
    "unreached_mixed_tuple": (ignores_its_pair, lambda: (rng.standard_normal(3), (rng.standard_normal((2, 3)),
                                                                                  rng.standard_normal(4)), 3), (0, 1)),
}


def _leaves(value):
    return [leaf for item in value for leaf in _leaves(item)] if isinstance(value, (tuple, list)) else [value]


def _moved(value, direction, t):
    if isinstance(value, (tuple, list)):
        return type(value)(_moved(v, u, t) for v, u in zip(value, direction))
    return value + t * direction


def _random_like(value, r):
    if isinstance(value, (tuple, list)):
        return type(value)(_random_like(v, r) for v in value)
    return r.standard_normal(np.shape(value)) if isinstance(value, np.ndarray) else float(r.standard_normal())


def check_against_finite_differences(f, args, wrt, grads, eps=1e-6):
    r = np.random.default_rng(0)
    for _ in range(3):
        u = {k: _random_like(args[k], r) for k in wrt}

        def at(t):
            return f(*[_moved(a, u[k], t) if k in wrt else a for k, a in enumerate(args)])

        numeric = (at(eps) - at(-eps)) / (2 * eps)
        analytic = sum(np.vdot(g, d) for k, grad in zip(wrt, grads) for g, d in zip(_leaves(grad), _leaves(u[k])))
        assert abs(analytic - numeric) <= 1e-6 + 1e-5 * abs(numeric)


@pytest.fixture(scope="module", params=sorted(PROGRAMS))
def program(request):
    f, make_args, wrt = PROGRAMS[request.param]
    return f, make_args(), wrt, srcad.differentiable(f, wrt=wrt, backend="numba")


def test_compiled_gradient_equals_numpy_and_finite_differences(program):
    f, args, wrt, d = program
    grads = d.grad(*args)
    assert is_compiled(d)
    expected = srcad.grad(f, wrt=wrt)(*args)
    assert len(grads) == len(expected)
    for got, want in zip(grads, expected):
        assert type(got) is type(want)
        assert len(_leaves(got)) == len(_leaves(want))
        for a, b in zip(_leaves(got), _leaves(want)):
            assert np.shape(a) == np.shape(b)
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    check_against_finite_differences(f, args, wrt, grads)


def test_compiled_gradient_is_new_memory(program):
    f, args, wrt, d = program
    grads = d.grad(*args)
    arrays = [leaf for k in wrt for leaf in _leaves(args[k]) if isinstance(leaf, np.ndarray)]
    for g in (leaf for grad in grads for leaf in _leaves(grad) if isinstance(leaf, np.ndarray)):
        assert not any(np.shares_memory(g, a) for a in arrays)


def test_compiled_pair_equals_numpy():
    f, make_args, wrt = PROGRAMS["unpacked_pair"]
    args = make_args()
    d = srcad.differentiable(f, wrt=wrt, backend="numba")
    value, pullback = d.vjp(*args)
    (_, forward, backward), = d._bound.values()
    assert getattr(forward, "compiled", False) and getattr(backward, "compiled", False)
    expected_value, expected_pullback = srcad.vjp(f, *args, wrt=wrt)
    assert value == pytest.approx(expected_value, rel=1e-12)
    for got, want in zip(_leaves(pullback(1.5)), _leaves(expected_pullback(1.5))):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def mixed_pair(x, pair):
    return np.sum(x * pair[0]) + np.sum(pair[1])


def test_tuple_of_mixed_items_is_refused_or_runs_numpy():
    """A vector and a matrix: their adjoints' list has no numba type; never a guess."""
    args = (rng.standard_normal(3), (rng.standard_normal(3), rng.standard_normal((2, 3))))
    with pytest.raises(BackendCompileError, match="zeros_like"):
        srcad.grad(mixed_pair, wrt=(0, 1), backend="numba")(*args)
    got = srcad.grad(mixed_pair, wrt=(0, 1), backend="auto")(*args)
    want = srcad.grad(mixed_pair, wrt=(0, 1))(*args)
    for a, b in zip(_leaves(got), _leaves(want)):
        np.testing.assert_array_equal(a, b)


@numba.njit
def _as_real_compiled(x):
    return runtime.as_real(x)


@pytest.mark.parametrize("value", [(2, np.array([1.5, -0.5])), (0.5, 1.25), (np.array([1.0]), (None, 3.0))],
                         ids=["int_kept_beside_array", "floats", "nested"])
def test_as_real_keeps_a_tuples_items_as_python_does(value):
    got, want = _as_real_compiled(value), runtime.as_real(value)
    assert len(_leaves(got)) == len(_leaves(want))
    for a, b in zip(_leaves(got), _leaves(want)):
        assert type(a) is type(b) or (isinstance(a, np.ndarray) and isinstance(b, np.ndarray))
        np.testing.assert_array_equal(a, b)


def test_as_real_refuses_an_integer_array_inside_a_tuple():
    """Python converts it to float: no numba version that would keep it integer."""
    with pytest.raises(numba.core.errors.TypingError):
        _as_real_compiled((np.arange(3), 1.0))
