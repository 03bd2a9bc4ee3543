"""Regressions from the adversarial fuzzer (fuzz findings F9, F10, F11, F14, F15 and the
hvp/gog "cannot be interpreted as an integer" group): every one checked against finite
differences in first order (joint + pullback twice, jvp) and second order (hvp and
grad-of-grad against finite differences of srcad.grad)."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

from lang_checks import check_second_order


def _check_all(f, args, wrt=0):
    check_grads(f, args, wrt=wrt, modes=("rev",))
    check_jvp(f, args, wrt=wrt)
    check_second_order(f, args, wrt=wrt)


X34 = np.random.default_rng(1).normal(size=(3, 4))


# F10: rev-over-rev of np.prod(X, axis=1) whose cotangent is a vector, not a scalar seed
def prod_rows_inner(X):
    return np.inner(np.ones(3), np.prod(X, axis=1))


def prod_rows_weighted(X):
    return np.sum(np.arange(1.0, 4.0) * np.prod(X, axis=-1) ** 2)


@pytest.mark.parametrize("f", [prod_rows_inner, prod_rows_weighted])
def test_prod_axis_vector_cotangent_second_order(f):
    _check_all(f, (X34,))


# F14: a variable named like an einsum subscript letter
def einsum_letter_names(shift):
    i = shift
    j = shift * 2.0
    y = np.einsum('i,j->ij', i, j)
    return np.sin(y.T).sum()


def test_einsum_operand_named_like_a_subscript():
    _check_all(einsum_letter_names, (np.array([0.3, 0.5, -0.2]),))


# F15: a Python list (a comprehension) as an operand of a NumPy product
def einsum_list_operand(X):
    return np.einsum('i,i->', X.T[0], [np.sin(row[0]) for row in X])


def dot_list_operand(X):
    return np.dot(X.T[1], [row[0] * row[2] for row in X])


def inner_list_operand(X):
    return np.inner([np.cos(row[1]) for row in X], X[:, 2])


def builtin_sum_of_comprehension(X):  # a list adjoint that is a list already: unchanged
    return sum([row[0] * row[1] for row in X]) * X[0, 2]


@pytest.mark.parametrize("f", [einsum_list_operand, dot_list_operand, inner_list_operand,
                               builtin_sum_of_comprehension])
def test_list_operand_of_numpy_product(f):
    X = np.random.default_rng(2).normal(size=(3, 3))
    _check_all(f, (X,))


# F9 (the fuzzer's "eigh_tangent" group): a module-level lambda is called; generated names
# are derived from its __name__ "<lambda>", which is not an identifier
scale = lambda a: 1.5 * a  # noqa: E731


def calls_global_lambda(x, y):
    z = y * 1.0
    z += scale(x)
    return np.sum(np.sin(z) * x)


def test_module_level_lambda_call():
    args = (np.array([0.2, -0.4, 0.7]), np.array([0.1, 0.3, -0.5]))
    for wrt in (0, 1):
        _check_all(calls_global_lambda, args, wrt=wrt)


# F11: the first-order adjoint of a function whose output does not depend on the input
# validates v with a bare cotangent(...) call: second order refused its own code
def constant_output(x, s):
    return 0.5 + s


def calls_constant(x):
    return np.sum(x ** 2) + constant_output(x, 1.0)


def test_second_order_of_a_callee_with_constant_output():
    _check_all(calls_constant, (np.array([0.3, -0.6, 0.9]),))


# hvp/gog "'float' object cannot be interpreted as an integer": the callee's residual tuple
# (trip counts _n1 among them) was made real by as_real, so range(_n1) failed in second order
def counted_loops(s, dv):
    it = 0
    while it < 4 and -1.15 < dv <= 1.15:
        it += 1
        for k in range(len(s)):
            if dv < -0.47:
                break
    return 1.36 * dv ** 3


def calls_counted_loops(x, t):
    return counted_loops(np.arctan(x), t) + np.sum(x * t)


def test_callee_trip_counts_stay_integers_in_second_order():
    args = (np.array([-0.17, 0.57, -0.78]), 0.53)
    _check_all(calls_counted_loops, args, wrt=1)
    check_second_order(calls_counted_loops, args, wrt=0)


def indexes_with_tuple_item(p):
    x, n = p
    return np.sum(x[:n] ** 3)


def first_two_cubed(x):
    return indexes_with_tuple_item((x, 2))


def test_integer_item_of_a_differentiated_tuple_stays_an_integer():
    x = np.array([0.4, -0.3, 0.8])
    # at the API an integer in a differentiated argument is refused (pass floats, as JAX asks) ...
    with pytest.raises(srcad.ArgumentError, match="holding an integer"):
        srcad.grad(indexes_with_tuple_item)((x, 2))
    # ... but inside differentiated code the tuple's integer stays an integer, in every order
    g = check_grads(first_two_cubed, (x,), v=1.0)
    np.testing.assert_allclose(g, [3 * 0.4 ** 2, 3 * 0.3 ** 2, 0.0])
    check_second_order(first_two_cubed, (x,), wrt=0)
