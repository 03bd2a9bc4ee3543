"""A path through an attribute that makes a new object at every read (``G.T`` of a sparse
matrix, ``A.shape``, ``A.flat``, the bound ``G.T.tocsr``) no longer makes srcad compile again
on every call: the guard holds the last object read the same each time (``G``) and compares
what the rest of the path gives by value, layout or class (``guards.made_anew``). The guard
still fails when that changes: a global rebound, an array reshaped in place, a rule template's
``if W.T.shape[0] == 3:`` decided otherwise. Gradients are checked against central finite
differences (``srcad.testing``)."""
import numpy as np
import pytest
import scipy.sparse as sp

import srcad
from srcad.compile import _CACHE
from srcad.testing import check_grads, check_jvp

from lang_checks import made_by

DENSE = np.arange(12.0).reshape(3, 4) / 10 + np.eye(3, 4)
G = sp.csr_matrix(DENSE)  # rebound below
A = DENSE.copy()  # reshaped in place below
W = np.arange(6.0).reshape(2, 3) / 5 + 0.1  # reshaped in place below


def transposed_tocsr(x):  # x: (3,)
    return np.sum((G.T.tocsr() @ x) ** 2)


def transposed_toarray(x):
    return np.sum(np.sin(G.T.toarray() @ x))


def transposed_data(x):
    return np.sum(x ** 2) * G.T.data[1]


def flat_item(x):
    return np.sum(np.cos(x) * A.flat[5])


def shape_item(x):
    return np.sum(x ** 3) * A.shape[0]


def transposed_shape(x):
    return np.sum(np.tanh(x)) * A.T.shape[1]


def item_method(x):  # a method-wrapper, made anew at each read as a bound method is
    return np.sum(np.exp(x)) * A.T.__getitem__((1, 2))


def converted_rows(x):
    return np.sum(x ** 2) * (G.T.tocoo().row[4] + 1)


FORMS = [transposed_tocsr, transposed_toarray, transposed_data, flat_item, shape_item, transposed_shape,
         item_method, converted_rows]


@pytest.mark.parametrize("fun", FORMS, ids=lambda f: f.__name__)
def test_a_second_call_compiles_nothing(fun):
    x = np.array([0.3, -0.2, 0.5])
    grad, second = srcad.grad(fun), srcad.hessian(fun)
    for mode in (lambda y: grad(y), lambda y: srcad.jvp(fun, (y,), (np.ones(3),)), lambda y: second(y)):
        mode(x)
        assert made_by(lambda: mode(x)) == 0
        assert made_by(lambda: mode(x + 0.25)) == 0


@pytest.mark.parametrize("fun", FORMS, ids=lambda f: f.__name__)
def test_gradients_in_every_mode(fun):
    x = np.array([0.3, -0.2, 0.5])
    check_grads(fun, (x,))  # (asserts that a second call compiles nothing too, modes=("rev",))
    check_jvp(fun, (x,))


def test_a_rebound_sparse_matrix_compiles_again():
    global G
    x, kept = np.array([0.3, -0.2, 0.5]), G
    grad = srcad.grad(transposed_tocsr)
    first = check_grads(transposed_tocsr, (x,), v=1.0)
    assert made_by(lambda: grad(x)) == 0
    try:
        # other values; another format, whose .T.tocsr is another method
        for other in (sp.csr_matrix(DENSE * 2.0 - 1.0), sp.csc_matrix(DENSE[::-1])):
            G = other
            made = _CACHE.made_in_this_thread()
            np.testing.assert_allclose(grad(x), 2 * other @ (other.T @ x), rtol=1e-12)
            assert _CACHE.made_in_this_thread() > made
            np.testing.assert_array_equal(grad(x), check_grads(transposed_tocsr, (x,), v=1.0))
    finally:
        G = kept
    np.testing.assert_array_equal(grad(x), first)


def test_an_array_reshaped_in_place_compiles_again():
    x = np.array([0.3, -0.2, 0.5])
    grad = srcad.grad(transposed_shape)
    first = check_grads(transposed_shape, (x,), v=1.0)
    assert made_by(lambda: grad(x)) == 0
    try:
        A.shape = (4, 3)  # the same array: A.T.shape[1] is 4 now
        made = _CACHE.made_in_this_thread()
        again = grad(x)
        assert _CACHE.made_in_this_thread() > made
        np.testing.assert_allclose(again, first * 4 / 3, rtol=1e-12)
        np.testing.assert_array_equal(again, check_grads(transposed_shape, (x,), v=1.0))
    finally:
        A.shape = (3, 4)


@srcad.custom_vjp
def project(x):
    return W @ x


@project.defvjp
def project_vjp(y, x):
    if W.T.shape[0] == 3:  # decided when the code is made: a fact of the compilation
        d[x] += W.T @ d[y]
    else:  # (a wrong rule on purpose, so that the decision shows)
        d[x] += 0.0 * x


def projected(x):
    return np.sum(project(x) ** 2)


def test_a_rules_decision_on_an_attribute_made_anew_is_guarded():
    x = np.array([0.3, -0.2, 0.5])
    grad = srcad.grad(projected)
    np.testing.assert_allclose(grad(x), check_grads(projected, (x,), v=1.0), rtol=1e-12)
    assert made_by(lambda: grad(x)) == 0
    try:
        W.shape = (3, 2)  # the same array: W.T.shape[0] is 2 now, the rule's other branch
        made = _CACHE.made_in_this_thread()
        np.testing.assert_array_equal(grad(np.array([0.3, -0.2])), np.zeros(2))
        assert _CACHE.made_in_this_thread() > made
    finally:
        W.shape = (2, 3)
    np.testing.assert_allclose(grad(x), 2 * W.T @ (W @ x), rtol=1e-12)
