"""Second derivatives of np.repeat (issue 9), and the class behind them: an update through
``np.add.at`` into a view of an array that is read later."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads

X = np.random.default_rng(11).uniform(0.2, 1.0, (3, 3))


def repeated_cubes(x):
    return np.sum(np.repeat(x, 2, axis=0) ** 3)


def test_repeat_second_order():
    gradient = srcad.grad(repeated_cubes)
    check_grads(gradient, (X,), v=np.ones((3, 3)))
    u = np.random.default_rng(12).standard_normal((3, 3))
    eps = 1e-5
    numeric = (gradient(X + eps * u) - gradient(X - eps * u)) / (2 * eps)
    np.testing.assert_allclose(srcad.hvp(repeated_cubes)(X, u), numeric, rtol=1e-5, atol=1e-7)


def add_at_into_moved_axes(x):
    out = np.zeros((3, 2))
    np.add.at(np.moveaxis(out, 1, 0), [0, 0], x)
    return np.sum(out ** 2)


def add_at_into_transpose(x):
    out = np.zeros((3, 2))
    view = out.T
    np.add.at(view, [0, 0], x)
    return np.sum(out ** 2)


@pytest.mark.parametrize("fn", [add_at_into_moved_axes, add_at_into_transpose])
def test_add_at_into_a_view_read_later_is_refused(fn):
    """It used to give a zero gradient: the adjoint followed the view's name, not ``out``."""
    with pytest.raises(srcad.SrcadSyntaxError, match="shares memory") as info:
        srcad.grad(fn)(np.array([0.3, 0.5, 0.7]))
    assert info.value.filename == __file__


def add_at_into_own_array(x):
    out = np.zeros((2, 3))
    np.add.at(out, [0, 0], x)
    return np.sum(out ** 2)


def test_add_at_into_its_own_array_is_differentiated():
    check_grads(add_at_into_own_array, (np.array([0.3, 0.5, 0.7]),))
