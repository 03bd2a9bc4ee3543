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
    check_grads(f, (x,), modes=("rev",))
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
    check_grads(two_vectors, (R(3), R(3)), wrt=(0, 1), modes=("rev",))
    check_jvp(two_vectors, (R(3), R(3)), wrt=(0, 1))


# ---- scipy.spatial.distance: GP kernels -----------------------------------------------------------

from scipy.spatial.distance import cdist, pdist  # noqa: E402  (SciPy's rules register lazily)

POINTS = R(5, 2)


def rbf_total(log_ls):
    scaled = POINTS / np.exp(log_ls)
    return np.sum(np.exp(-0.5 * cdist(scaled, scaled, "sqeuclidean")))


def matern_cross(log_ls):
    r = cdist(POINTS[:3] / np.exp(log_ls), POINTS[3:] / np.exp(log_ls))  # distinct points: r > 0
    return np.sum((1 + np.sqrt(3) * r) * np.exp(-np.sqrt(3) * r))


def pair_energy(x):
    return np.sum(1 / pdist(np.reshape(x, (4, 2)))) + np.sum(pdist(np.reshape(x, (4, 2)), "sqeuclidean"))


@pytest.mark.parametrize("f, x", [(rbf_total, np.array([0.2, -0.3])), (matern_cross, np.array([0.1, 0.4])),
                                  (pair_energy, R(8))], ids=["rbf", "matern", "pairs"])
def test_distance_kernels_to_second_order(f, x):
    check_all_orders(f, x)


def self_distance(x):
    return np.sum(cdist(x, x))


def coincident_pairs(x):
    return np.sum(pdist(np.concatenate([x, x[:1]])))


def test_euclidean_distance_zero_keeps_the_norm_convention():
    """At distance 0 'euclidean' has no derivative: NaN in reverse mode as np.linalg.norm of the
    difference gives; forward, a pair whose tangent rests moves nothing."""
    x = R(3, 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        assert np.all(np.isnan(srcad.grad(self_distance)(x)))
        assert np.isnan(srcad.grad(coincident_pairs)(x)[0]).all()
        assert np.isfinite(srcad.grad(coincident_pairs)(x)[1:]).all()
        same = srcad.jvp(coincident_pairs, (x,), (np.ones_like(x),))[1]  # x[0] and its copy move alike
        assert same == 0.0


def city(a, b):
    return np.sum(cdist(a, b, "cityblock"))


def weighted(a, b):
    return np.sum(cdist(a, b, w=np.ones(2)))


def test_other_metrics_and_options_are_refused_at_the_users_line():
    line = city.__code__.co_firstlineno + 1
    with pytest.raises(srcad.UnsupportedCaseError, match=rf"test_domain_rules_24.py:{line}: .*not 'cityblock'"):
        srcad.grad(city)(R(3, 2), R(2, 2))
    with pytest.raises(srcad.UnsupportedCaseError, match="not 'cityblock'"):
        srcad.jvp(city, (R(3, 2), R(2, 2)), (R(3, 2), R(2, 2)))
    line = weighted.__code__.co_firstlineno + 1
    with pytest.raises(srcad.SrcadSyntaxError, match=rf":{line}: .*cdist does not support the keyword argument 'w'"):
        srcad.grad(weighted)(R(3, 2), R(2, 2))


# ---- np.interp in its sample points: the endogenous grid method ------------------------------

GRID = np.linspace(0.5, 5.0, 6)


def egm(c):
    """Consumption on the endogenous grid GRID + c, read back on GRID: xp and fp both move."""
    c_now = (0.95 * 1.02 * c ** -2.0) ** -0.5
    return np.sum(np.interp(GRID, GRID + c_now, c_now))


def knots_only(xp):
    return np.sum(np.sin(np.interp(np.array([-3.0, -0.7, 0.2, 1.3, 3.5]), xp, np.cos(np.arange(5.0)))))


def knots_with_ends(xp):
    """left/right values outside the range: there y does not depend on xp."""
    return np.sum(np.interp(np.array([-3.0, 0.2, 3.5]), xp, np.arange(5.0) ** 2, left=-1.0, right=7.0))


@pytest.mark.parametrize("f, x", [(egm, 0.5 + 0.2 * GRID), (knots_only, np.array([-2.0, -1.1, 0.0, 0.9, 2.1])),
                                  (knots_with_ends, np.array([-2.0, -1.1, 0.0, 0.9, 2.1]))],
                         ids=["egm", "knots", "ends"])
def test_interp_in_its_sample_points_to_second_order(f, x):
    check_all_orders(f, x)


def clamped(xp):
    return np.sum(np.interp(np.array([-5.0, 5.0]), xp, np.arange(5.0)))


def test_interp_in_its_sample_points_is_zero_outside_the_range():
    """Clamped to fp[0] and fp[-1] left and right of [xp[0], xp[-1]]: no derivative in xp."""
    np.testing.assert_array_equal(srcad.grad(clamped)(np.linspace(-2.0, 2.0, 5)), np.zeros(5))


# ---- a ufunc's .at other than np.add.at: refused where docs/limitations.md says ------------

SEGMENTS = np.array([0, 1, 1, 2])


def scatter_max(e):
    e_max = np.full(3, -np.inf)
    np.maximum.at(e_max, SEGMENTS, e)
    return np.sum(e_max)


def scatter_subtract(e):
    out = np.zeros(3)
    np.subtract.at(out, SEGMENTS, e)
    return np.sum(out ** 2)


def segment_max(e):
    return np.sum(np.array([np.max(e[SEGMENTS == k]) for k in range(3)]) ** 2)


@pytest.mark.parametrize("f, method", [(scatter_max, "maximum"), (scatter_subtract, "subtract")])
def test_ufunc_at_methods_are_refused_at_the_users_line(f, method):
    line = f.__code__.co_firstlineno + 2
    where = rf"test_domain_rules_24.py:{line}: .*np.{method}.at\(...\)"
    with pytest.raises(srcad.SrcadSyntaxError, match=where) as refusal:
        srcad.grad(f)(R(4))
    assert "cannot see what the call" in str(refusal.value)


def test_segment_max_the_documented_alternative():
    check_grads(segment_max, (np.array([0.3, 1.0, 2.0, -1.0]),), modes=("rev",))
    check_jvp(segment_max, (np.array([0.3, 1.0, 2.0, -1.0]),))
