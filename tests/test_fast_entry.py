"""``f.adjoint(*args, v)`` of the last call's kind of arguments runs one generated frame
(``dispatch.fast_entry``): it must give what the general path gives, and step aside for every
call it does not take (other shapes or dtypes, a cotangent that needs checking, a rebound
global, keywords, defaults left out)."""
import numpy as np
import pytest

import srcad
from srcad.errors import CotangentError

SCALE = np.sin


def scaled(x, M):
    return SCALE(x @ M) * 2.0


def with_default(x, k=3.0):
    return x * k


def finite_difference_vjp(f, args, v, eps=1e-6):
    x = args[0]
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        out[i] = np.sum(v * (f(x + e, *args[1:]) - f(x - e, *args[1:]))) / (2 * eps)
    return out


def test_alternating_shapes_and_cotangents_match_finite_differences():
    rng = np.random.default_rng(0)
    adjoint = srcad.adjoint(scaled)
    for n in (2, 3, 2, 3, 2):
        x, M = rng.standard_normal((1, n)), rng.standard_normal((n, n))
        v = rng.standard_normal((1, n))
        for _ in range(2):  # the second call takes the fast entry
            np.testing.assert_allclose(adjoint(x, M, v), finite_difference_vjp(scaled, (x, M), v), rtol=1e-6)
        np.testing.assert_allclose(adjoint(x, M, v.astype(np.float32)),
                                   finite_difference_vjp(scaled, (x, M), v), rtol=1e-5)
        with pytest.raises(CotangentError):
            adjoint(x, M, list(v))  # a list would add by concatenation: refused, as on the general path


def test_a_cotangent_of_the_wrong_shape_is_refused_after_fast_calls():
    x, M = np.ones((1, 2)), np.eye(2)
    adjoint = srcad.adjoint(scaled)
    adjoint(x, M, np.ones((1, 2)))
    adjoint(x, M, np.ones((1, 2)))
    with pytest.raises(CotangentError):
        adjoint(x, M, np.ones((2, 2)))
    with pytest.raises(CotangentError):
        adjoint(x, M)  # a non-scalar output needs v


def test_a_rebound_global_is_followed():
    global SCALE
    x, M, v = np.array([[0.3, -0.4]]), np.array([[1.0, 0.5], [-0.2, 0.7]]), np.array([[1.0, 2.0]])
    adjoint = srcad.adjoint(scaled)
    first = adjoint(x, M, v)
    adjoint(x, M, v)
    try:
        SCALE = np.tanh
        np.testing.assert_allclose(adjoint(x, M, v), finite_difference_vjp(scaled, (x, M), v), rtol=1e-6)
        assert not np.allclose(adjoint(x, M, v), first)
    finally:
        SCALE = np.sin


def test_defaults_and_keywords_take_the_general_path():
    x = np.array([1.0, -2.0])
    d = srcad.differentiable(with_default)
    for _ in range(2):
        np.testing.assert_allclose(d.adjoint(x, np.array([1.0, 1.0])), [3.0, 3.0])
        np.testing.assert_allclose(d.adjoint(x, 2.0, np.array([1.0, 1.0])), [2.0, 2.0])
        np.testing.assert_allclose(d.adjoint(x, k=0.5, v=np.array([1.0, 1.0])), [0.5, 0.5])


def test_a_refused_argument_between_fast_calls():
    adjoint = srcad.adjoint(scaled)
    v, M, x = np.array([[1.0, 1.0]]), np.eye(2), np.array([[1.0, 2.0]])
    first = adjoint(x, M, v)
    with pytest.raises(srcad.errors.ArgumentError):
        adjoint(np.array([[1, 2]]), M, v)  # an integer array in wrt
    np.testing.assert_array_equal(adjoint(x, M, v), first)
    np.testing.assert_allclose(first, finite_difference_vjp(scaled, (x, M), v), rtol=1e-6)
