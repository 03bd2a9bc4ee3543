"""Probe 27A: crashes and refusals naming srcad's own variables at second order through
builtin max/min/sum, a number tangent for a 0-d array, and jvp tangents aliasing the
caller's. Every fix is checked against finite differences in every mode it touches."""
import numpy as np
import pytest

import srcad
from srcad.pytrees import leaves
from srcad.testing import check_grads

from lang_checks import check_all_modes, check_second_order


def assert_hessian_matches(f, x, eps=1e-6):
    gradient = srcad.grad(f)
    columns = [(gradient(x + eps * e) - gradient(x - eps * e)) / (2 * eps) for e in np.eye(x.size)]
    np.testing.assert_allclose(srcad.hessian(f)(x), np.array(columns).T, rtol=1e-5, atol=1e-6)


# ---- reverse over reverse through max of 1-element arrays (bug_09) ------------------------
# The adjoint of the item max did not choose is a scalar 0.0; added into an array's adjoint
# (add_grads) it took the array's shape, and add_grads' own adjoint handed that array back to
# the scalar: broadcast_like crashed (ValueError) in grad of code calling srcad.grad.

def max_of_pieces(x):
    m = max(x[0:1] * 1.0, 0.5 * x[1:2])
    return np.sum(m ** 3)


def min_of_three_pieces(x):
    m = min(x[0:1] * 1.0, 0.5 * x[2:3], x[3:4] ** 2)
    return np.sum(np.sin(m) * m)


WEIGHTS = np.arange(1.0, 5.0)


def weighted_gradient_of_max(x):
    return np.sum(srcad.grad(max_of_pieces)(x) * WEIGHTS)


def weighted_gradient_of_min(x):
    return np.sum(srcad.grad(min_of_three_pieces)(x) * WEIGHTS)


@pytest.mark.parametrize("x", [np.array([0.9, 0.3, 1.5, 0.2]), np.array([0.2, 1.3, 0.5, 0.7])])
def test_grad_of_code_calling_grad_through_max_of_arrays(x):
    check_grads(weighted_gradient_of_max, (x,))
    jac = srcad.jacobian(srcad.grad(max_of_pieces))(x)
    np.testing.assert_allclose(jac, srcad.hessian(max_of_pieces)(x), rtol=1e-10)
    assert_hessian_matches(max_of_pieces, x)
    check_all_modes(max_of_pieces, (x,))


def test_grad_of_code_calling_grad_through_min_of_three_arrays():
    x = np.array([0.4, 0.9, 0.3, 1.1])
    check_grads(weighted_gradient_of_min, (x,))
    assert_hessian_matches(min_of_three_pieces, x)
    check_all_modes(min_of_three_pieces, (x,))


# ---- second order of builtin min/sum/max and of a list reduced then indexed (bug_02, bug_05) --
# The adjoints of builtin sum and max (sum_grad, pick_grad) were calls the memory analysis knew
# nothing of: their result might be the cotangent itself, so the adjoint's own updates
# ('dx[3] += ...', 'dterms.pop()') were refused when srcad's derivative was differentiated again.

def min_sum_max(x):
    return min(x[2], x[3]) + sum(x) + max(x)


def smooth_min_sum_max(x):
    return min(x[2], x[3]) ** 2 + sum(x * x) + max(x) * x[0]


def appended_then_summed(x):
    terms = []
    for i in range(len(x)):
        terms.append(x[i] ** 2)
    return sum(terms) + terms[0]


def appended_then_max(x):
    terms = []
    for i in range(len(x)):
        terms.append(x[i] ** 2)
    return max(terms) * terms[1] + terms[0]


def arrays_appended_then_summed(x):
    terms = []
    for i in range(3):
        terms.append(np.sin(x[i:i + 2]) * x[i])
    total = sum(terms)
    return np.sum(total * total) + np.sum(terms[0])


@pytest.mark.parametrize("f", [min_sum_max, smooth_min_sum_max, appended_then_summed, appended_then_max,
                               arrays_appended_then_summed])
def test_second_order_of_builtin_reductions(f):
    x = np.array([0.31, -0.52, 1.27, 0.44, -0.1])
    assert_hessian_matches(f, x)
    check_all_modes(f, (x,))


def test_second_order_of_min_sum_max_is_zero():
    x = np.array([0.3, -0.5, 1.2, 0.7, -0.1])
    np.testing.assert_array_equal(srcad.hessian(min_sum_max)(x), np.zeros((5, 5)))


# ---- a number tangent for a 0-d array argument (bug_03) ----------------------------------
# The generated jvp reads the tangent as it reads the argument (a[()], a.item()): a float
# tangent crashed with TypeError inside the generated code.

def reads_zero_d(a):
    return np.sum(a[()] * np.ones(3)) + a.item() ** 2


def reads_zero_d_in_list(items):
    return np.sum(items[0][()] * np.arange(3.0)) * items[1]


def test_number_tangent_of_a_zero_d_array():
    a = np.array(0.4)
    y, y_dot = srcad.jvp(reads_zero_d, [a], [1.0])
    np.testing.assert_allclose(y_dot, 3.0 + 2 * 0.4)
    y0, y0_dot = srcad.jvp(reads_zero_d, [a], [np.array(1.0)])
    assert (y, y_dot) == (y0, y0_dot)
    _, from_int = srcad.jvp(reads_zero_d, [a], [2])
    np.testing.assert_allclose(from_int, 2 * (3.0 + 2 * 0.4))
    np.testing.assert_allclose(srcad.hvp(reads_zero_d)(a, 1.5), 2 * 1.5)
    _, in_list = srcad.jvp(reads_zero_d_in_list, [[a, 2.0]], [[1.0, 0.5]])
    np.testing.assert_allclose(in_list, 3.0 * 2.0 + 3 * 0.4 * 0.5)


def test_number_tangent_of_a_float32_zero_d_array():
    a = np.array(0.4, np.float32)
    _, y_dot = srcad.jvp(reads_zero_d, [a], [1.0])
    np.testing.assert_allclose(y_dot, 3.0 + 2 * 0.4, rtol=1e-6)


def test_tangent_of_wrong_shape_in_a_list_is_refused():
    with pytest.raises(srcad.CotangentError, match="has shape \\(2,\\) but the argument has shape \\(\\)"):
        srcad.jvp(reads_zero_d_in_list, [[np.array(0.4), 2.0]], [[np.ones(2), 0.5]])


# ---- output tangents never alias the caller's tangents ---------------------------------
# A tuple, list or dict of the function's own, holding a parameter's tangent as an item, was
# returned as it was: the caller's tangent array itself (for f(x) = x it was copied).

def pair_with_reversed(x):
    return (x, x[::-1])


def same_twice(x):
    return [x, x]


def in_a_dict(x, y):
    d = {}
    d["x"] = x
    d["both"] = (x, y * 2.0)
    return d


def appended(x):
    out = []
    for _ in range(2):
        out.append(x)
    return tuple(out)


def first(a, b):
    return a


def identity(a):
    return a


def _arrays(tree):
    return [u for u in leaves(tree) if isinstance(u, np.ndarray)]


@pytest.mark.parametrize("f", [pair_with_reversed, same_twice, appended])
def test_jvp_output_tangents_are_new_memory(f):
    x, t = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    kept = t.copy()
    y, y_dot = srcad.jvp(f, (x,), (t,))
    got = _arrays(y_dot)
    assert not any(np.shares_memory(u, t) for u in got)
    assert not any(np.shares_memory(a, b) for i, a in enumerate(got) for b in got[i + 1:])
    for u, out in zip(got, _arrays(y)):
        np.testing.assert_array_equal(u, t if np.array_equal(out, x) else t[::-1])
        u += 1.0  # the caller changing the result changes neither their tangent nor another result
    np.testing.assert_array_equal(t, kept)


def test_jvp_dict_output_tangents_are_new_memory():
    x, y, t, s = np.ones(2), np.zeros(2), np.array([1.0, 2.0]), np.array([3.0, 4.0])
    _, y_dot = srcad.jvp(in_a_dict, (x, y), (t, s))
    assert not any(np.shares_memory(u, t) or np.shares_memory(u, s) for u in _arrays(y_dot))
    np.testing.assert_array_equal(y_dot["x"], t)
    np.testing.assert_array_equal(y_dot["both"][1], 2.0 * s)


def test_pullback_gradients_are_new_memory():
    x, y, v = np.ones(3), np.zeros(3), np.array([1.0, 2.0, 3.0])
    _, pullback = srcad.vjp(first, x, y, wrt=(0, 1))
    gx, gy = pullback(v)
    assert not np.shares_memory(gx, v)
    np.testing.assert_array_equal(gx, v)
    np.testing.assert_array_equal(gy, np.zeros(3))
    _, pullback = srcad.vjp(pair_with_reversed, x)
    w = (v, v.copy())
    g = pullback(w)
    assert not any(np.shares_memory(g, u) for u in w)
    np.testing.assert_array_equal(g, v + v[::-1])


def test_jvp_output_tangent_of_an_array_output_stays_unshared():
    x, t = np.array([1.0, 2.0]), np.array([3.0, 4.0])  # control: copied before this round too
    _, y_dot = srcad.jvp(identity, (x,), (t,))
    assert not np.shares_memory(y_dot, t)
    check_second_order(pair_with_reversed_sum, (x,))


def pair_with_reversed_sum(x):
    a, b = pair_with_reversed(x)
    return np.sum(a * b ** 2)
