"""Third derivatives as docs/limitations.md describes them: the Hessian of a function that
calls ``srcad.grad(f)``. srcad compiles that inner gradient without knowing its argument's
type, so its reverse sweep adds each read ``x[i]``'s adjoint into its slot with ``add_grads``;
that value was stored back into the array its slot views, which the aliasing check refused
when the derivative was differentiated once more (slices, integer indices, items of a list).

Each Hessian is checked against central differences of ``srcad.hessian(f)`` contracted with
the direction ``W`` (the third derivative is symmetric), which never differentiates ``along``.
"""
import numpy as np
import pytest

import srcad

W = np.array([1.0, 2.0, 3.0, -1.5])
X = np.array([0.3, 0.2, 0.5, 0.7])


def f_slices(x):
    return np.sum((x[0:1] + 0.5 * x[1:2]) ** 3)


def f_integer_indices(x):
    return x[0] ** 2 * x[1] + np.sin(x[2]) * x[3]


def f_shifted_slices(x):
    return np.sum(x[1:] * x[:-1] ** 2)


def f_strided_slices(x):
    return np.sum(x[::2] ** 2 * x[1::2])


def f_builtin_sum_of_items(x):
    return sum(x[i] ** 3 for i in range(4))


def f_loop_of_items(x):
    s = 0.0
    for i in range(3):
        s = s + x[i] * x[i + 1] ** 2
    return s


def f_rows_and_columns(x):
    m = x.reshape(2, 2)
    return np.sum(m[0, :] * m[:, 1] ** 2)


def f_builtin_max_min(x):
    return max(x[0] * x[1], x[2] ** 2) + min(x[3], x[0]) ** 3


def f_concatenated_slices(x):
    return np.sum(np.concatenate([x[:2], x[2:] ** 2]) ** 3)


def f_stacked_items(x):
    return np.sum(np.stack([x[0], x[1] * x[2]]) ** 3)


def f_unpacked(x):
    a, b, c, d = x
    return a * b ** 2 + c ** 3 * d


def f_list_of_items(x):
    v = [x[0] * x[1], x[2], x[3]]
    return v[0] ** 2 * v[1] + np.tanh(v[2]) * v[0]


# controls: no read of an item or slice of x (these worked before)
def f_sum(x):
    return np.sum(x ** 3)


def f_max(x):
    return np.max(x ** 3)


def f_mean_tanh(x):
    return np.mean(np.tanh(x)) ** 2


def f_dot(x):
    return np.dot(x, x) * np.sum(x)


def f_exp(x):
    return np.sum(np.exp(x) * x)


def f_fancy_index(x):
    return np.sum(x[[0, 2]] ** 3 * x[[1, 3]])


def f_log_sum_exp(x):
    return np.log(np.sum(np.exp(x)))


# x -> np.sum(srcad.grad(f)(x) * W): the first derivative of f along W, whose Hessian is f's third
# derivative contracted with W
def along_slices(x):
    return np.sum(srcad.grad(f_slices)(x) * W)


def along_integer_indices(x):
    return np.sum(srcad.grad(f_integer_indices)(x) * W)


def along_shifted_slices(x):
    return np.sum(srcad.grad(f_shifted_slices)(x) * W)


def along_strided_slices(x):
    return np.sum(srcad.grad(f_strided_slices)(x) * W)


def along_builtin_sum_of_items(x):
    return np.sum(srcad.grad(f_builtin_sum_of_items)(x) * W)


def along_loop_of_items(x):
    return np.sum(srcad.grad(f_loop_of_items)(x) * W)


def along_rows_and_columns(x):
    return np.sum(srcad.grad(f_rows_and_columns)(x) * W)


def along_builtin_max_min(x):
    return np.sum(srcad.grad(f_builtin_max_min)(x) * W)


def along_concatenated_slices(x):
    return np.sum(srcad.grad(f_concatenated_slices)(x) * W)


def along_stacked_items(x):
    return np.sum(srcad.grad(f_stacked_items)(x) * W)


def along_unpacked(x):
    return np.sum(srcad.grad(f_unpacked)(x) * W)


def along_list_of_items(x):
    return np.sum(srcad.grad(f_list_of_items)(x) * W)


def along_sum(x):
    return np.sum(srcad.grad(f_sum)(x) * W)


def along_max(x):
    return np.sum(srcad.grad(f_max)(x) * W)


def along_mean_tanh(x):
    return np.sum(srcad.grad(f_mean_tanh)(x) * W)


def along_dot(x):
    return np.sum(srcad.grad(f_dot)(x) * W)


def along_exp(x):
    return np.sum(srcad.grad(f_exp)(x) * W)


def along_fancy_index(x):
    return np.sum(srcad.grad(f_fancy_index)(x) * W)


def along_log_sum_exp(x):
    return np.sum(srcad.grad(f_log_sum_exp)(x) * W)


READING_ITEMS = [f_slices, f_integer_indices, f_shifted_slices, f_strided_slices, f_builtin_sum_of_items,
                 f_loop_of_items, f_rows_and_columns, f_builtin_max_min, f_concatenated_slices, f_stacked_items,
                 f_unpacked, f_list_of_items]
CONTROLS = [f_sum, f_max, f_mean_tanh, f_dot, f_exp, f_fancy_index, f_log_sum_exp]


def _along(f):
    """``x -> np.sum(srcad.grad(f)(x) * W)`` (defined at module level: srcad reads ``f`` when compiling)."""
    return globals()["along_" + f.__name__[2:]]


def _third_derivative_along_w(f, x, eps=1e-5):
    hessian = srcad.hessian(f)
    return (hessian(x + eps * W) - hessian(x - eps * W)) / (2 * eps)


@pytest.mark.parametrize("f", READING_ITEMS + CONTROLS, ids=lambda f: f.__name__)
def test_hessian_of_a_function_calling_grad(f):
    x = X.copy()
    got = srcad.hessian(_along(f))(x)
    np.testing.assert_allclose(got, _third_derivative_along_w(f, X), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(x, X)  # the caller's array is left as it was


@pytest.mark.parametrize("f", [f_slices, f_list_of_items], ids=lambda f: f.__name__)
def test_gradient_of_a_function_calling_grad_still_matches(f):
    """Second order through the copied slot: grad of ``along`` against differences of ``grad(f)``."""
    eps = 1e-6
    got = srcad.grad(_along(f))(X)
    gf = srcad.grad(f)
    expected = np.array([np.dot(gf(X + eps * e) - gf(X - eps * e), W) / (2 * eps) for e in np.eye(4)])
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
