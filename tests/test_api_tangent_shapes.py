"""A tangent must have its argument's shape: NumPy would broadcast a smaller one, giving the
derivative in another direction without a word (``vjp`` refuses such a cotangent too)."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_jvp


def scaled_sine(x):
    return np.sin(x) * 2.0


@pytest.mark.parametrize("tangent", [np.ones(1), 1.0, np.ones((2, 2))], ids=["(1,)", "scalar", "(2, 2)"])
def test_a_tangent_of_another_shape_is_refused(tangent):
    with pytest.raises(srcad.CotangentError, match=r"the tangent of 'x' has shape"):
        srcad.jvp(scaled_sine, (np.ones(2),), (tangent,))


def test_hvp_refuses_a_vector_of_another_shape():
    with pytest.raises(srcad.CotangentError, match="has shape"):
        srcad.hvp(lambda_free_loss)(np.ones(3), np.ones(1))


def lambda_free_loss(x):
    return np.sum(np.sin(x) ** 2)


def test_a_tangent_of_the_arguments_shape_is_right():
    check_jvp(scaled_sine, (np.array([0.3, -1.2]),))
    check_jvp(scaled_sine, (0.7,))


def _loss(x, W):
    return np.sum(np.sin(W @ x) * x[:3])


def test_a_wrong_tangent_for_srcads_own_derivative_names_the_users_function():
    # hvp is the jvp of the gradient srcad generated: the message named that generated code
    x, W = np.ones(4), np.ones((3, 4))
    line = _loss.__code__.co_firstlineno
    with pytest.raises(srcad.CotangentError, match=rf"test_api_tangent_shapes\.py:{line}: _loss \(srcad's derivative "
                                                   r"of it\): the tangent of 'x' has shape \(3, 4\)"):
        srcad.hvp(_loss)(x, W, W)
