"""Third derivatives through functions whose second-order rules use srcad's own helpers.

A third derivative differentiates code srcad generated for a helper at second order: the
adjoint srcad generated from a pure helper's source (``variance_slope``, ``solve_grad``,
``clip_share``, ``logsumexp_grad``, the cumsum helpers) was refused as "a srcad helper
without a rule"; ``prod_hvp``, ``cumprod_tangent``, ``cumprod_grad_along`` (which update
arrays in place), ``diff_tangent`` and ``pad_tangent`` had no rules, and ``matrix_power``'s
``_powers`` appended to a list.

``srcad.hessian(along)(x, u)`` is Σᵢ uᵢ ∂³f/∂xᵢ∂x∂x (docs/limitations.md); it is checked
against central differences of ``srcad.hessian(f)`` along ``u`` (the third derivative is
symmetric), which differentiates ``f`` twice only. ``jvp`` of ``grad(along)`` along ``w`` is
the same tensor applied to ``u`` and ``w``.
"""
import numpy as np
import pytest
import scipy.special

import srcad

RNG = np.random.default_rng(28)
X = np.array([0.3, -0.2, 0.5, 0.7])
X_WITH_ZERO = np.array([0.3, 0.0, 0.5, 0.7])
A = np.array([[0.2, 0.1], [0.0, 0.3]])


def f_prod(x):
    return np.prod(x) + np.sum(x ** 3)


def f_prod_axis(x):
    return np.sum(np.prod(np.reshape(x, (2, 2)), axis=0) ** 2)


def f_clip(x):
    return np.sum(np.clip(x, -0.1, 0.6) ** 3)


def f_solve(x):
    m = np.reshape(x, (2, 2)) + 2 * np.eye(2)
    return np.sum(np.linalg.solve(m, np.array([1.0, 2.0])) ** 2)


def f_cumsum(x):
    return np.sum(np.cumsum(x) ** 3)


def f_cumprod(x):
    return np.sum(np.cumprod(x) * np.arange(1.0, 5.0))


def f_cumprod_axis(x):
    return np.sum(np.cumprod(np.reshape(x, (2, 2)), axis=1) ** 2)


def f_matrix_power(x):
    return np.sum(np.linalg.matrix_power(np.reshape(x, (2, 2)), 3))


def f_inverse_power(x):
    return np.sum(np.linalg.matrix_power(np.reshape(x, (2, 2)) + 2 * np.eye(2), -2))


def f_logsumexp(x):
    return scipy.special.logsumexp(x)


def f_var(x):
    return np.var(x) ** 2


def f_std(x):
    return np.std(x) ** 3


def f_diff(x):
    return np.sum(np.diff(x, 2) ** 3) + np.sum(np.diff(x[1:], prepend=x[0]) ** 4)


def f_pad(x):
    return np.sum(np.pad(x, 1, mode="reflect") ** 3)


# controls: third order that worked before
def f_exp(x):
    return np.sum(np.exp(x) * x)


def f_dot(x):
    return np.dot(x, x) * np.sum(x)


# x -> <grad f(x), u>, whose Hessian is f's third derivative applied to u
def along_prod(x, u):
    return np.sum(srcad.grad(f_prod)(x) * u)


def along_prod_axis(x, u):
    return np.sum(srcad.grad(f_prod_axis)(x) * u)


def along_clip(x, u):
    return np.sum(srcad.grad(f_clip)(x) * u)


def along_solve(x, u):
    return np.sum(srcad.grad(f_solve)(x) * u)


def along_cumsum(x, u):
    return np.sum(srcad.grad(f_cumsum)(x) * u)


def along_cumprod(x, u):
    return np.sum(srcad.grad(f_cumprod)(x) * u)


def along_cumprod_axis(x, u):
    return np.sum(srcad.grad(f_cumprod_axis)(x) * u)


def along_matrix_power(x, u):
    return np.sum(srcad.grad(f_matrix_power)(x) * u)


def along_inverse_power(x, u):
    return np.sum(srcad.grad(f_inverse_power)(x) * u)


def along_logsumexp(x, u):
    return np.sum(srcad.grad(f_logsumexp)(x) * u)


def along_var(x, u):
    return np.sum(srcad.grad(f_var)(x) * u)


def along_std(x, u):
    return np.sum(srcad.grad(f_std)(x) * u)


def along_diff(x, u):
    return np.sum(srcad.grad(f_diff)(x) * u)


def along_pad(x, u):
    return np.sum(srcad.grad(f_pad)(x) * u)


def along_exp(x, u):
    return np.sum(srcad.grad(f_exp)(x) * u)


def along_dot(x, u):
    return np.sum(srcad.grad(f_dot)(x) * u)


def f_array(x):  # np.array of computed values: its tangent code calls array_tangent (probe 28B)
    return np.sum(np.array([x[0] * x[1], x[2] ** 2, np.sin(x[3])]) ** 2)


def f_nested_array(x):
    return np.sum(np.array([[x[0], x[1] * x[2]], [x[3] ** 2, 1.0]]) @ x[:2] ** 2)


def along_array(x, u):
    return np.sum(srcad.grad(f_array)(x) * u)


def along_nested_array(x, u):
    return np.sum(srcad.grad(f_nested_array)(x) * u)


FIXED = [f_prod, f_prod_axis, f_clip, f_solve, f_cumsum, f_cumprod, f_cumprod_axis, f_matrix_power,
         f_inverse_power, f_logsumexp, f_var, f_std, f_diff, f_pad, f_array, f_nested_array]
CONTROLS = [f_exp, f_dot]
POINTS = {f_prod: [X, X_WITH_ZERO], f_prod_axis: [X, X_WITH_ZERO], f_cumprod: [X, X_WITH_ZERO],
          f_cumprod_axis: [X, X_WITH_ZERO]}


def _along(f):
    return globals()["along_" + f.__name__[2:]]


def _hessian_along(f, x, u, eps=1e-5):
    """Central differences of f's Hessian along ``u``: Σᵢ uᵢ ∂³f/∂xᵢ∂x∂x."""
    hessian = srcad.hessian(f)
    return (hessian(x + eps * u) - hessian(x - eps * u)) / (2 * eps)


@pytest.mark.parametrize("f", FIXED + CONTROLS, ids=lambda f: f.__name__)
def test_hessian_of_the_gradient_along_a_direction(f):
    for x in POINTS.get(f, [X]):
        u = RNG.standard_normal(4)
        got = srcad.hessian(_along(f))(x, u)
        np.testing.assert_allclose(got, _hessian_along(f, x, u), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f", FIXED, ids=lambda f: f.__name__)
def test_jvp_of_the_gradient_of_the_gradient(f):
    """Forward mode over the second reverse sweep: the third derivative applied to u and w."""
    for x in POINTS.get(f, [X]):
        u, w = RNG.standard_normal(4), RNG.standard_normal(4)
        _, got = srcad.jvp(srcad.grad(_along(f)), (x, u), (w, None))
        np.testing.assert_allclose(got, _hessian_along(f, x, w) @ u, rtol=1e-6, atol=1e-7)


def test_prod_third_derivative_at_zeros_is_exact():
    """With two zero factors the product's third derivative is still a product of the others."""
    x = np.array([0.0, 0.0, 2.0, 3.0])
    u = np.array([1.0, 0.0, 0.0, 0.0])
    got = srcad.hessian(along_prod)(x, u)
    expected = np.zeros((4, 4))
    expected[1, 2] = expected[2, 1] = 3.0  # ∂³(x0 x1 x2 x3)/∂x0∂x1∂x2 = x3
    expected[1, 3] = expected[3, 1] = 2.0
    expected += np.diag(6.0 * u)  # Σ x³
    np.testing.assert_array_equal(got, expected)
