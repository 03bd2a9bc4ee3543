"""Misused API calls get a srcad error (or, for jvp's tuples, JAX's TypeError) saying what to pass,
never a gradient of nothing: a class given as the function, an array given as jvp's primals, an
output that is None or a string; a NumPy function with a rule differentiated directly whose
signature has an output buffer or a default that is no literal passes the user's arguments on to
the right parameters."""
import math

import numpy as np
import pytest

import srcad
from srcad import ArgumentError, CotangentError
from srcad.extend import register_jvp, register_vjp
from srcad.testing import check_grads

X = np.array([0.3, -0.4, 0.8])


def forgets_to_return(x):
    loss = np.sum(x ** 2)  # noqa: F841


def returns_a_label(x):
    return "loss"


def test_a_class_is_refused_as_the_function():
    with pytest.raises(ArgumentError, match="was given the class dict"):
        srcad.grad(dict)(X)


def test_jvp_of_an_array_instead_of_a_tuple_of_arguments_says_to_pass_tuples():
    with pytest.raises(TypeError, match=r"primals is a ndarray: jvp\(f, \(x,\), \(t,\)\)"):
        srcad.jvp(np.sin, X, np.ones(3))
    with pytest.raises(TypeError, match="tangents is a ndarray"):
        srcad.jvp(np.sin, (X,), np.ones(3))


@pytest.mark.parametrize("fn, said", [(forgets_to_return, "the output is None"),
                                      (returns_a_label, "the output is a str")])
def test_an_output_that_is_no_number_is_refused_not_given_zeros(fn, said):
    with pytest.raises(CotangentError, match=said):
        srcad.grad(fn)(X)


@pytest.mark.parametrize("fn", [np.sum, np.prod, np.mean])
def test_a_numpy_function_with_an_out_parameter_differentiated_directly(fn):
    check_grads(fn, (X,))


def scaled(a, cap=math.inf, factor=2.0):
    return np.minimum(a, cap) * factor


@register_vjp(scaled)
def _scaled(y, a, cap=math.inf, factor=2.0):
    d[a] += d[y] * factor * (a < cap)


@register_jvp(scaled)
def _scaled_jvp(y, a, cap=math.inf, factor=2.0):
    t[y] += t[a] * factor * (a < cap)


def test_a_parameter_after_a_default_that_is_no_literal_gets_its_own_argument():
    np.testing.assert_allclose(srcad.grad(lambda a: np.sum(scaled(a, factor=5.0)))(X), 5.0)
    np.testing.assert_allclose(srcad.grad(scaled)(1.5, factor=3.0), 3.0)  # (not passed on as cap)
