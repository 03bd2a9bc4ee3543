"""Programs Python runs that srcad refused (probe 22A), now differentiated, each checked against
finite differences, beside the near cases that must stay refused:

- the second order reading srcad's own einsum adjoint: the rules' ``einsum_grad(g, position,
  subscripts, *operands)`` shares only ``g``, never an operand (whose shape it reads);
- ``sorted(d.items())``: items ordered by their keys, distinct strings or numbers, never by
  their values, which are differentiated as the items taken.
"""
import numpy as np
import pytest

import srcad
from srcad.rules.numpy_products import einsum_grad
from srcad.testing import check_grads, check_jvp

from lang_checks import check_second_order

RNG = np.random.default_rng(22)
A3 = RNG.normal(size=(3, 3))
B3 = RNG.normal(size=(3, 3))
X = np.array([0.5, 1.0, -0.3])


# ---- the rules' einsum_grad shares its cotangent only ------------------------------------------

def einsums(A, B):
    return (np.einsum("i,i", A[0], A[0]) + np.einsum("iij->", A[:, :, None] * B[:, None, :])
            + np.sum(np.einsum("ij,kj->ik", A, A) ** 2))


@pytest.mark.parametrize("wrt", [0, 1])
def test_second_order_of_einsums_beside_slices_of_the_operand(wrt):
    check_grads(einsums, (A3, B3), wrt=wrt)
    check_second_order(einsums, (A3, B3), wrt=wrt)


def test_hessian_of_einsums_against_differences_of_the_gradient():
    hessian = srcad.hessian(einsums)(A3, B3)
    gradient = srcad.grad(einsums)
    u = RNG.normal(size=A3.shape)
    eps = 1e-6
    numeric = (gradient(A3 + eps * u, B3) - gradient(A3 - eps * u, B3)) / (2 * eps)
    np.testing.assert_allclose(np.tensordot(hessian, u, axes=2), numeric, rtol=1e-5, atol=1e-7)


def adjoint_then_operand_updated(x, A):
    h = A * 2.0
    r = einsum_grad(x, 0, "ij,jk->ik", h, A)  # contracts x with A: shares no memory with h
    h[0] += 1.0
    return np.sum(r * h) + np.sum(r ** 2)


def test_an_operand_updated_after_einsum_grad_is_no_alias():
    check_grads(adjoint_then_operand_updated, (A3, B3))


def adjoint_then_cotangent_updated(x):
    g = x * 2.0
    r = einsum_grad(g, 0, "ij->ji", g)  # a transposed view of g
    g[0] += 1.0
    return np.sum(r * g)


def test_the_cotangent_updated_after_einsum_grad_stays_refused():
    r = einsum_grad(A3 * 2.0, 0, "ij->ji", A3)
    assert not r.flags.owndata  # (it is a view of its cotangent)
    with pytest.raises(srcad.SrcadError, match=r"'g\[0\] \+= \.\.\.' updates 'g\[0\]' in place, and 'r', which shares memory with it"):
        srcad.grad(adjoint_then_cotangent_updated)(A3)


# ---- sorted(d.items()): by the keys alone ------------------------------------------------------

def items_sorted(x):
    d = {"b": np.sin(x), "a": x ** 2, "c": np.cos(x) * x}
    total = 0.0
    for k, v in sorted(d.items()):
        total = total * 0.5 + np.sum(v) * len(k)
    return total


def items_sorted_reversed(x):
    d = {2: np.sin(x), 10: x ** 2, -1.5: x}
    pairs = sorted(d.items(), reverse=True)
    return np.sum(pairs[0][1]) * 3.0 + np.sum(pairs[1][1] * x) + np.sum(pairs[2][1] ** 3)


def items_sorted_tuple_keys(x):
    d = {(1, "b"): np.sin(x), (0, "z"): x ** 3, (1, "a"): np.exp(x)}
    weights = [1.0, 2.0, 3.0]
    return sum(w * np.sum(v) for w, (_, v) in zip(weights, sorted(d.items())))


@pytest.mark.parametrize("f", [items_sorted, items_sorted_reversed, items_sorted_tuple_keys])
def test_sorted_items_of_a_dict(f):
    check_grads(f, (X,), modes=("rev",))
    check_jvp(f, (X,))
    check_second_order(f, (X,))


def test_sorted_items_takes_python_order():
    value, gradient = srcad.value_and_grad(items_sorted)(X)
    assert value == items_sorted(X)
    expected = 0.25 * 2 * X * 1 + 0.5 * np.cos(X) + 1 * (np.cos(X) - X * np.sin(X))  # a, b, c
    np.testing.assert_allclose(gradient, expected)


def sorted_values(x):
    d = {"b": np.sum(np.sin(x)), "a": np.sum(x ** 2)}
    return sorted(d.values())[0]


def sorted_floats(x):
    return sorted([np.sum(x), np.sum(x ** 2)])[0]


@pytest.mark.parametrize("f", [sorted_values, sorted_floats])
def test_sorted_of_differentiated_values_stays_refused(f):
    with pytest.raises(srcad.SrcadError, match=r"sorted\(\) of differentiated values"):
        srcad.grad(f)(X)


class AllEqual:
    """A key of yours whose == says every two keys are equal (its hash does not)."""

    def __eq__(self, other):
        return True

    def __hash__(self):
        return id(self)

    def __lt__(self, other):
        return False


def items_with_keys_of_yours(x, first, second):
    d = {first: np.sum(x), second: np.sum(x ** 2)}
    return sorted(d.items())[0][1]


def test_sorted_items_with_keys_that_compare_equal_is_refused():
    first, second = AllEqual(), AllEqual()
    # Python compares the values here: the order depends on x
    assert items_with_keys_of_yours(X, first, second) == min(np.sum(X), np.sum(X ** 2))
    with pytest.raises(srcad.SrcadError, match=r":\d+: srcad differentiates sorted\(d.items\(\)\) where the keys are "
                                               r"distinct strings or numbers"):
        srcad.grad(items_with_keys_of_yours)(X, first, second)
