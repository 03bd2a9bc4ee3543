"""Red team of the user's side (API, custom rules, higher order). A vjp rule of yours whose
``d[x] += e`` has an axis none of the call's operands or results has is refused when it runs,
naming the rule: summing it down to ``x``'s shape (as broadcasting is undone) gave a wrong
gradient with no error; so is a tuple or list added into an array's adjoint whose items are
not that array's rows (it was stacked and summed). Sums that broadcasting explains (a scalar
against an array, a row against a matrix) still give the gradient finite differences give,
batched and at second order. A rule whose default differs from the function's is bound to the
function's (what ran); one that leaves out a parameter of the function is refused at defvjp."""
import numpy as np
import pytest

import srcad
from srcad import UnsupportedCaseError
from srcad.testing import check_grads

X = np.array([0.3, -0.4, 0.8])
M = np.arange(12.0).reshape(4, 3) / 10


@srcad.custom_vjp
def square(x):
    return x ** 2


@square.defvjp
def square_vjp_with_an_outer_product(y, x):
    d[x] += d[y][:, None] * 2 * x  # (3, 3) for a vector x: a mistake in the rule


@srcad.custom_vjp
def cube(x):
    return x ** 3


@cube.defvjp
def cube_vjp_cut_short(y, x):
    d[x] += (d[y] * 3 * x ** 2)[:2]  # (2,) for (3,)


@srcad.custom_vjp
def scale_rows(x, M):
    return M * x


@scale_rows.defvjp
def scale_rows_vjp(y, x, M):
    d[x] += d[y] * M  # (4, 3) summed to (3,): M's rows broadcast x
    d[M] += d[y] * x


@srcad.custom_vjp
def scaled(s, y):
    return s * y


@scaled.defvjp
def scaled_vjp(r, s, y):
    d[s] += d[r] * y  # summed to the scalar s
    d[y] += d[r] * s


@pytest.mark.parametrize("loss", [lambda x: np.sum(square(x)),
                                  lambda x: np.sum(square(x) * np.array([1.1, 0.5, -0.7]))])
def test_a_rule_adding_an_axis_no_operand_has_is_refused_not_summed(loss):
    with pytest.raises(UnsupportedCaseError, match=r"square_vjp_with_an_outer_product \(.*test_api_redteam_36.py:\d+\) "
                                                   r"for d\[x\] adds a cotangent of shape \(3, 3\)"):
        srcad.grad(loss)(X)


def test_the_refusal_holds_for_the_pullback_batched_pullbacks_and_jacobians():
    _, pullback = srcad.vjp(square, X)
    for call in (lambda: pullback(np.ones(3)), lambda: pullback.batched(np.ones((2, 3))),
                 lambda: srcad.jacobian(square, mode="rev")(X)):
        with pytest.raises(UnsupportedCaseError, match="square_vjp_with_an_outer_product"):
            call()


def test_a_rule_of_the_wrong_length_is_refused_with_its_name():
    with pytest.raises(UnsupportedCaseError, match=r"cube_vjp_cut_short .* shape \(2,\) into the adjoint of a value "
                                                   r"of shape \(3,\)"):
        srcad.grad(lambda x: np.sum(cube(x)))(X)


def test_sums_that_broadcasting_explains_still_give_the_gradient():
    check_grads(lambda x, M: np.sum(np.tanh(scale_rows(x, M))), (X, M), wrt=(0, 1))
    check_grads(lambda s, y: np.sum(scaled(s, y) ** 2), (0.7, X), wrt=(0, 1))


def test_a_rule_that_sums_is_right_batched_and_at_second_order():
    _, pullback = srcad.vjp(lambda x: scale_rows(x, M), X)
    V = np.random.default_rng(0).standard_normal((5, 4, 3))
    np.testing.assert_allclose(pullback.batched(V), np.stack([pullback(v) for v in V]))

    def loss(x):
        return np.sum(np.tanh(scale_rows(x, M)))
    grad = srcad.grad(loss)
    u, eps = np.array([0.2, 0.5, -1.0]), 1e-6
    np.testing.assert_allclose(srcad.hessian(loss)(X) @ u, (grad(X + eps * u) - grad(X - eps * u)) / (2 * eps),
                               rtol=1e-6, atol=1e-8)


@srcad.custom_vjp
def sine_and_cosine(x):
    return np.sin(x), np.cos(x)


@sine_and_cosine.defvjp
def sine_and_cosine_vjp_of_the_whole_tuple(r, x):
    d[x] += d[r]  # the pair of cotangents added into x's: a mistake in the rule


@srcad.custom_vjp
def product(x):
    return x[0] * x[1]


@product.defvjp
def product_vjp_by_rows(r, x):
    d[x] += (d[r] * x[1], d[r] * x[0])  # x's rows: a tuple that is an array of x's shape


def test_a_rule_adding_a_tuple_cotangent_that_is_not_the_rows_of_the_value_is_refused():
    x = np.array([0.3, -0.4])  # two items, as the tuple has: they were stacked and summed
    for loss in (lambda x: np.sum(sine_and_cosine(x)[0]), lambda x: np.sum(sine_and_cosine(x)[0] * sine_and_cosine(x)[1])):
        with pytest.raises(UnsupportedCaseError, match=r"sine_and_cosine_vjp_of_the_whole_tuple .* adds a \w+ of 2 items "
                                                       r"into the adjoint of a value of shape \(2,\)"):
            srcad.grad(loss)(x)
    with pytest.raises(UnsupportedCaseError, match="sine_and_cosine_vjp_of_the_whole_tuple"):
        srcad.grad(lambda x: np.sum(sine_and_cosine(x)[0]))(X)


def test_a_tuple_cotangent_of_the_rows_is_the_gradient():
    check_grads(lambda x: product(x) * 2.0, (np.array([0.3, -0.4]),))


@srcad.custom_vjp
def scaled_product(x, y, scale=2.0):
    return x * y * scale


@scaled_product.defvjp
def scaled_product_vjp_with_another_default(z, x, y, scale=5.0):
    d[x] += d[z] * y * scale
    d[y] += d[z] * x * scale


def test_a_rule_sees_the_default_the_function_ran_with_not_its_own():
    y = np.array([1.1, 0.5, -0.7])
    check_grads(lambda x: np.sum(scaled_product(x, y)), (X,))
    check_grads(lambda x: np.sum(scaled_product(x, y, 3.0)), (X,))


def test_a_rule_that_leaves_out_a_parameter_of_the_function_is_refused_where_it_is_defined():
    def times(x, y, scale=2.0):
        return x * y * scale

    def times_vjp(z, x, y):  # scale left out: the derivative at scale=1
        d[x] += d[z] * y
        d[y] += d[z] * x
    with pytest.raises(srcad.SrcadSyntaxError, match=r"test_api_redteam_36.py:\d+: the rule .*times_vjp of .*times "
                                                     r"takes \(x, y\) after the result, but the function takes "
                                                     r"\(x, y, scale\).*def times_vjp\(z, x, y, scale=2.0\)"):
        srcad.custom_vjp(times).defvjp(times_vjp)


def test_rebinding_the_functions_defaults_recompiles_the_code_that_pasted_them():
    def times(x, y, scale=2.0):
        return x * y * scale
    times = srcad.custom_vjp(times)

    @times.defvjp
    def times_vjp(z, x, y, scale=2.0):
        d[x] += d[z] * y * scale
        d[y] += d[z] * x * scale
    y = np.array([1.1, 0.5, -0.7])
    grad = srcad.grad(lambda x: np.sum(times(x, y)))
    np.testing.assert_allclose(grad(X), 2.0 * y)
    times.fn.__defaults__ = (7.0,)
    np.testing.assert_allclose(grad(X), 7.0 * y)
