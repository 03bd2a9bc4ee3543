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


def check_second_order(fun, x, eps=1e-5, rtol=1e-5, atol=1e-7):
    """H·u by forward over reverse and by reverse over reverse, against central differences of
    the gradient in a random direction u."""
    u = RNG.standard_normal(np.shape(x))
    gradient = srcad.grad(fun)
    numeric = (gradient(x + eps * u) - gradient(x - eps * u)) / (2 * eps)
    np.testing.assert_allclose(srcad.hvp(fun)(x, u), numeric, rtol=rtol, atol=atol,
                               err_msg=f"forward over reverse of {fun.__name__}")
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
