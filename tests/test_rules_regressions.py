"""Issue 9 regressions in the rules, each checked against finite differences in every mode
that applies: joint adjoint and vjp pullback (``check_grads``), jvp (``check_jvp``), and
second order — forward over reverse (``srcad.hvp`` against differences of ``srcad.grad``) and
reverse over reverse (the gradient of a function that calls ``srcad.grad``)."""
import linecache
import itertools

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

RNG = np.random.default_rng(9)


def R(*shape):
    return RNG.standard_normal(shape)


def check_all_modes(fun, args, **tolerances):
    wrt = tuple(range(len(args))) if len(args) > 1 else 0
    check_grads(fun, args, wrt=wrt, **tolerances)
    check_jvp(fun, args, wrt=wrt, **tolerances)


_PENALTIES = itertools.count()


def gradient_penalty(fun, weights):
    """``x -> sum(grad(fun)(x) * weights)`` as source srcad reads: its gradient is reverse over
    reverse (H @ weights)."""
    text = "def penalty(x):\n    g = srcad.grad(fun)(x)\n    return np.sum(g * weights)\n"
    filename = f"<gradient penalty {next(_PENALTIES)} of {fun.__name__}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace = {"srcad": srcad, "np": np, "fun": fun, "weights": weights}
    exec(compile(text, filename, "exec"), namespace)
    return namespace["penalty"]


def check_second_order(fun, x, eps=1e-5, rtol=1e-5, atol=1e-7, reverse_over_reverse=True):
    """H·u by forward over reverse and by reverse over reverse, against central differences of
    the gradient in a random direction u."""
    u = RNG.standard_normal(np.shape(x))
    gradient = srcad.grad(fun)
    numeric = (gradient(x + eps * u) - gradient(x - eps * u)) / (2 * eps)
    np.testing.assert_allclose(srcad.hvp(fun)(x, u), numeric, rtol=rtol, atol=atol,
                               err_msg=f"forward over reverse of {fun.__name__}")
    if reverse_over_reverse:
        np.testing.assert_allclose(srcad.grad(gradient_penalty(fun, u))(x), numeric, rtol=rtol, atol=atol,
                                   err_msg=f"reverse over reverse of {fun.__name__}")


# ---- np.split with unsorted or negative indices: empty and overlapping pieces ---------------

def split_unsorted(x):
    a, b, c = np.split(x, [2, 1])  # b is empty, c overlaps a
    return np.sum(a) + np.sum(b) * 2 + np.sum(c ** 2)


def split_negative(x):
    a, b, c = np.split(x, [-1, 1], axis=1)
    return np.sum(a * a) + np.sum(b) + np.sum(np.sin(c))


def array_split_unsorted(x):
    pieces = np.array_split(x, [3, 1, 4])
    return np.sum(pieces[0] ** 2) + np.sum(pieces[2] * 3.0) + np.sum(pieces[3] ** 3)


def hsplit_unsorted(x):
    a, b, c = np.hsplit(x, [3, 1])
    return np.sum(a ** 2) + np.sum(c ** 3)


def vsplit_unsorted(x):
    a, b, c = np.vsplit(x, [2, 1])
    return np.sum(a ** 2) + np.sum(c ** 3)


def dsplit_unsorted(x):
    a, b, c = np.dsplit(x, [2, 1])
    return np.sum(a ** 2) + np.sum(c ** 3)


def array_split_uneven(x):
    a, b, c = np.array_split(x, 3, axis=0)
    return np.sum(a ** 2) + np.sum(b * 2.0) + np.sum(c ** 3)


@pytest.mark.parametrize("fun, shape", [
    (split_unsorted, (4,)),
    (split_negative, (2, 4)),
    (array_split_unsorted, (6,)),
    (hsplit_unsorted, (2, 4)),
    (vsplit_unsorted, (4, 2)),
    (dsplit_unsorted, (1, 2, 4)),
    (array_split_uneven, (7, 2)),
], ids=lambda p: getattr(p, "__name__", ""))
def test_split_with_empty_and_overlapping_pieces(fun, shape):
    x = R(*shape)
    check_all_modes(fun, (x,))
    check_second_order(fun, x)


# ---- second order through the rules' own helpers (np.repeat's Hessian was zero) --------------

IDX = np.array([0, 2, 2, 1])


def repeat_axis0(x):
    return np.sum(np.repeat(x, 2, axis=0) ** 3)


def repeat_counts(x):
    return np.sum(np.repeat(x, [1, 2, 0], axis=1) ** 3)


def repeat_flat(x):
    return np.sum(np.repeat(x, 2) ** 3)


def tile_(x):
    return np.sum(np.tile(x, (2, 1)) ** 3)


def vstack_(x):
    return np.sum(np.vstack([x, x ** 2]) ** 3)


def hstack_(x):
    return np.sum(np.hstack([x, np.sin(x)]) ** 3)


def column_stack_(x):
    return np.sum(np.column_stack([x[0], x]) ** 3)


def kron_(x):
    return np.sum(np.kron(x, x ** 2) ** 2)


def cross_(x):
    return np.sum(np.cross(x, x ** 2 + 1.0) ** 2)


def cross_2d(x):
    return np.sum(np.cross(x[:, :2], x[:, 1:] * 2.0) ** 2)


def sort_(x):
    return np.sum(np.sort(x, axis=1) ** 3 * np.arange(3.0))


def partition_flat(x):
    return np.sum(np.partition(x, 4, axis=None) ** 3 * np.arange(9.0))


def diff_(x):
    return np.sum(np.diff(x, axis=1) ** 3)


def diff_prepend(x):
    return np.sum(np.diff(x, n=2, prepend=x[0, 0] ** 2) ** 3)


def max_axis(x):
    return np.sum(np.max(x ** 3, axis=1) ** 2)


def prod_axis(x):
    return np.sum(np.prod(x, axis=0) ** 2)


def array_of_scalars(x):
    return np.sum(np.array([x[0, 0] ** 2, x[1, 1] * x[0, 1], 3.0]) ** 3)


def array_nested(x):
    return np.sum(np.array([[x[0, 0], x[1, 2]], [x[2, 1] ** 2, 1.0]]) ** 3)


def fancy_read(x):
    return np.sum(x[IDX % 3][:, [0, 2, 2]] ** 3)


def pad_reflect(x):
    return np.sum(np.pad(x, 1, mode="reflect") ** 3)


@pytest.mark.parametrize("fun", [
    repeat_axis0, repeat_counts, repeat_flat, tile_, vstack_, hstack_, column_stack_, kron_, cross_, cross_2d,
    sort_, partition_flat, diff_, diff_prepend, max_axis, prod_axis, array_of_scalars, fancy_read, pad_reflect,
], ids=lambda f: f.__name__)
def test_second_order_through_rule_helpers(fun):
    check_second_order(fun, R(3, 3))


def test_second_order_through_a_nested_array_forward_over_reverse():
    """Reverse over reverse is not checked here: the adjoint code reads rows of the nested list
    ``array_grad`` returns (``dG[1] += dB``), and the reverse pass treats a list a call returned
    as an array (reported to the reverse pass; ``array_tangent`` now fails loudly on it)."""
    check_second_order(array_nested, R(3, 3), reverse_over_reverse=False)


def test_a_helper_without_a_rule_is_refused_not_read_as_source():
    """srcad's own helpers are never differentiated from their source unless allowlisted: a
    helper that updates a view in place (``np.add.at(np.moveaxis(out, ...))``) would give zero."""
    from srcad import registry
    from srcad.rules import numpy_products

    refusal = registry.lookup(registry.JVP, numpy_products.convolve_grad)
    assert isinstance(refusal, registry.Refusal)

    def convolved(x):
        return np.sum(np.convolve(x, x ** 2) ** 2)

    with pytest.raises(srcad.SrcadSyntaxError, match="convolve_grad .* has no derivative rule"):
        srcad.hvp(convolved)(R(3), R(3))
