"""Rules that domain code of probe round 24A missed (robot kinematics, GP kernels, economics,
graph attention): ``np.linalg.multi_dot``, ``scipy.spatial.distance.cdist``/``pdist``,
``np.interp`` in its sample points, and the refusal of ufunc ``.at`` methods. Every value is
checked against central finite differences in random directions, at second order too."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

RNG = np.random.default_rng(24)


def R(*shape):
    return RNG.standard_normal(shape)


def numeric_hessian(f, x, eps=1e-5):
    gradient = srcad.grad(f)
    return np.array([(gradient(x + eps * u) - gradient(x - eps * u)) / (2 * eps) for u in np.eye(x.size)])


def check_all_orders(f, x):
    """First order both ways, and the Hessian (forward over reverse) against differences of
    the gradient."""
    check_grads(f, (x,))
    check_jvp(f, (x,))
    np.testing.assert_allclose(srcad.hessian(f)(x), numeric_hessian(f, x), rtol=1e-5, atol=1e-7)


# ---- np.linalg.multi_dot: forward kinematics ---------------------------------------------------

def rot(t):
    return np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])


LINK = np.array([[1.0, 0.3], [0.0, 1.0]])


def arm_tip(q):
    """A planar arm: joint rotations between constant links, read by 1-D ends."""
    return np.linalg.multi_dot([np.array([1.0, 0.5]), rot(q[0]), LINK, rot(q[1]), LINK, rot(q[2]),
                                np.array([0.2, 1.0])])


def chain_sum(q):
    return np.sum(np.linalg.multi_dot([rot(t) for t in q]) @ np.array([1.0, 2.0]))


@pytest.mark.parametrize("f", [arm_tip, chain_sum])
def test_multi_dot_of_a_kinematic_chain_to_second_order(f):
    check_all_orders(f, np.array([0.1, 0.4, -0.3]))


def two_vectors(u, v):
    return np.linalg.multi_dot([u, v]) ** 2  # 1-D both ends: an inner product


def test_multi_dot_of_two_vectors():
    check_grads(two_vectors, (R(3), R(3)), wrt=(0, 1))
    check_jvp(two_vectors, (R(3), R(3)), wrt=(0, 1))
