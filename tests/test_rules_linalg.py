"""np.linalg rules (srcad/rules/numpy_linalg.py) against finite differences.

Matrices are well conditioned (``B Bᵀ + n I`` for the symmetric ones, ``B + n I``
otherwise), with distinct eigenvalues and singular values. The finite differences move
every entry, including the triangle that cholesky/eigh do not read.
"""
import numpy as np
import pytest

import srcad
from srcad import registry
from srcad.testing import check_grads, check_jvp
from test_rules_shapes import check_call_jvp, jvp_of, wrt_all

RNG = np.random.default_rng(3)


def R(*shape):
    return RNG.standard_normal(shape)


def general(*shape):
    n = shape[-1]
    return R(*shape) + n * np.eye(n)


def spd(*shape):
    b = R(*shape)
    return b @ np.swapaxes(b, -1, -2) + shape[-1] * np.eye(shape[-1])


WEIGHTS = np.arange(1.0, 6.0)


def f_inv(a):
    return np.linalg.inv(a)


def f_det(a):
    return np.linalg.det(a)


def f_slogdet_logdet(a):
    sign, logdet = np.linalg.slogdet(a)
    return logdet


def f_slogdet_both(a):
    sign, logdet = np.linalg.slogdet(a)
    return sign * np.exp(logdet)


def f_slogdet_sign_only(a):
    sign, logdet = np.linalg.slogdet(a)
    return sign * 3.0


def f_slogdet_item(a):
    result = np.linalg.slogdet(a)
    return result[1] * 2.0


def f_slogdet_tuple(a):
    sign, logdet = np.linalg.slogdet(a)
    return sign, logdet


def f_solve(a, b):
    return np.linalg.solve(a, b)


def f_matrix_power_3(a):
    return np.linalg.matrix_power(a, 3)


def f_matrix_power_1(a):
    return np.linalg.matrix_power(a, 1)


def f_matrix_power_0(a):
    return np.linalg.matrix_power(a, 0) + a


def f_matrix_power_negative(a):
    return np.linalg.matrix_power(a, -2)


def f_cholesky(a):
    return np.linalg.cholesky(a)


def f_cholesky_upper(a):
    return np.linalg.cholesky(a, upper=True)


def f_cholesky_logdet(a):
    return 2.0 * np.sum(np.log(np.diagonal(np.linalg.cholesky(a), axis1=-2, axis2=-1)))


def f_eigh_values(a):
    w, v = np.linalg.eigh(a)
    return w


def f_eigh_matrix_function(a):
    w, v = np.linalg.eigh(a)
    return v @ np.diag(np.sin(w)) @ v.T


def f_eigh_squares(a):
    w, v = np.linalg.eigh(a)
    return (v * v) @ WEIGHTS[: a.shape[-1]]


def f_eigh_abs(a):
    w, v = np.linalg.eigh(a)
    return np.abs(v).sum() + w[0]


def f_eigh_upper(a):
    w, v = np.linalg.eigh(a, UPLO="U")
    return w + np.abs(v[0])


def f_eigh_batched(a):
    w, v = np.linalg.eigh(a)
    return np.einsum("...ij,...j->...i", v ** 2, w)


def f_eigh_result(a):
    result = np.linalg.eigh(a)
    return result[1] ** 2


def f_eigvalsh(a):
    return np.linalg.eigvalsh(a)


def f_svd_values(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return s


def f_svd_compute_uv_false(a):
    return np.linalg.svd(a, compute_uv=False)


def f_svd_reconstruct(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return u @ np.diag(s ** 2) @ vt


def f_svd_abs(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.abs(u).sum() + 2.0 * np.abs(vt).sum() + s[0]


def f_svd_u_only(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return u ** 2


def f_svd_vt_only(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.abs(vt)


def f_svd_full_square(a):
    u, s, vt = np.linalg.svd(a)
    return np.abs(u) + np.abs(vt) * s


def f_svd_full_tall_sliced(a):
    u, s, vt = np.linalg.svd(a)
    return np.abs(u[:, :3]).sum() + np.abs(vt).sum()


def f_svd_full_tall_uses_extra(a):
    u, s, vt = np.linalg.svd(a)
    return np.abs(u).sum()


def f_svd_batched(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.abs(u).sum(-2) + s


def f_svd_hermitian(a):
    u, s, vt = np.linalg.svd(a, hermitian=True)
    return (u * u) @ s + s


def f_pinv(a):
    return np.linalg.pinv(a)


def f_pinv_hermitian(a):
    return np.linalg.pinv(a, hermitian=True)


def f_qr(a):
    q, r = np.linalg.qr(a)
    return np.abs(q).sum() + np.sum(r * r) + r[0, -1]


def f_qr_q(a):
    q, r = np.linalg.qr(a)
    return q


def f_qr_r(a):
    q, r = np.linalg.qr(a)
    return r


def f_qr_r_mode(a):
    return np.linalg.qr(a, mode="r")


def f_qr_complete_sliced(a):
    q, r = np.linalg.qr(a, mode="complete")
    return np.abs(q[:, :3]).sum() + r.sum()


def f_qr_complete_uses_extra(a):
    q, r = np.linalg.qr(a, mode="complete")
    return q.sum()


def f_qr_batched(a):
    q, r = np.linalg.qr(a)
    return np.abs(q) @ r


def f_lstsq_x(a, b):
    x, residuals, rank, s = np.linalg.lstsq(a, b)
    return x


def f_lstsq_all(a, b):
    x, residuals, rank, s = np.linalg.lstsq(a, b)
    return np.sum(x ** 2) + np.sum(residuals) * 2.0 + np.sum(s * WEIGHTS[: s.size])


def f_lstsq_residuals(a, b):
    result = np.linalg.lstsq(a, b)
    return result[1]


def f_lstsq_singular_values(a, b):
    x, residuals, rank, s = np.linalg.lstsq(a, b)
    return s


def f_multi_dot(a, b, c):
    return np.linalg.multi_dot([a, b, c])


def f_multi_dot_vectors(u, b, c, v):  # 1-D ends: a row first, a column last, a scalar out
    return np.linalg.multi_dot([u, b, c, v])


def f_multi_dot_constant_inside(a, c):
    return np.linalg.multi_dot((a, WEIGHTS[:3, None] * np.eye(3), c))


def f_multi_dot_stack(s):
    return np.linalg.multi_dot(s)


VJP_CASES = [
    ("inv", f_inv, [general(3, 3)]),
    ("inv-batched", f_inv, [general(2, 3, 3)]),
    ("det", f_det, [general(3, 3)]),
    ("det-batched", f_det, [general(2, 2, 2)]),
    ("slogdet-logdet", f_slogdet_logdet, [general(3, 3)]),
    ("slogdet-both", f_slogdet_both, [-general(3, 3)]),
    ("slogdet-sign-only", f_slogdet_sign_only, [general(3, 3)]),
    ("slogdet-item", f_slogdet_item, [general(2, 3, 3)]),
    ("slogdet-tuple-output", f_slogdet_tuple, [general(3, 3)]),
    ("solve-matrix", f_solve, [general(3, 3), R(3, 2)]),
    ("solve-vector", f_solve, [general(3, 3), R(3)]),
    ("solve-batched", f_solve, [general(2, 3, 3), R(2, 3, 2)]),
    ("solve-batched-vector", f_solve, [general(2, 3, 3), R(3)]),
    ("solve-broadcast-a", f_solve, [general(3, 3), R(2, 3, 4)]),
    ("matrix_power-3", f_matrix_power_3, [general(3, 3) / 3]),
    ("matrix_power-1", f_matrix_power_1, [general(3, 3)]),
    ("matrix_power-0", f_matrix_power_0, [general(3, 3)]),
    ("matrix_power-negative", f_matrix_power_negative, [general(3, 3)]),
    ("matrix_power-batched", f_matrix_power_3, [general(2, 2, 2) / 2]),
    ("cholesky", f_cholesky, [spd(3, 3)]),
    ("cholesky-upper", f_cholesky_upper, [spd(3, 3)]),
    ("cholesky-batched", f_cholesky, [spd(2, 3, 3)]),
    ("cholesky-logdet", f_cholesky_logdet, [spd(4, 4)]),
    ("eigh-values", f_eigh_values, [spd(4, 4)]),
    ("eigh-matrix-function", f_eigh_matrix_function, [spd(3, 3)]),
    ("eigh-squared-vectors", f_eigh_squares, [spd(4, 4)]),
    ("eigh-abs-vectors", f_eigh_abs, [spd(4, 4)]),
    ("eigh-upper", f_eigh_upper, [spd(3, 3)]),
    ("eigh-batched", f_eigh_batched, [spd(2, 3, 3)]),
    ("eigh-result-item", f_eigh_result, [spd(3, 3)]),
    ("eigvalsh", f_eigvalsh, [spd(3, 3)]),
    ("svd-values-tall", f_svd_values, [R(4, 3)]),
    ("svd-values-wide", f_svd_values, [R(2, 4)]),
    ("svd-compute_uv-false", f_svd_compute_uv_false, [R(3, 4)]),
    ("svd-reconstruct", f_svd_reconstruct, [R(4, 3)]),
    ("svd-abs-tall", f_svd_abs, [R(5, 3)]),
    ("svd-abs-wide", f_svd_abs, [R(3, 5)]),
    ("svd-abs-square", f_svd_abs, [R(3, 3)]),
    ("svd-u-only", f_svd_u_only, [R(4, 2)]),
    ("svd-vt-only", f_svd_vt_only, [R(2, 4)]),
    ("svd-full-square", f_svd_full_square, [R(3, 3)]),
    ("svd-full-tall-sliced", f_svd_full_tall_sliced, [R(5, 3)]),
    ("svd-batched", f_svd_batched, [R(2, 4, 3)]),
    ("svd-hermitian", f_svd_hermitian, [spd(3, 3) - 4 * np.eye(3)]),
    ("pinv-square", f_pinv, [general(3, 3)]),
    ("pinv-tall", f_pinv, [R(4, 2)]),
    ("pinv-wide", f_pinv, [R(2, 4)]),
    ("pinv-batched", f_pinv, [R(2, 3, 2)]),
    ("pinv-hermitian", f_pinv_hermitian, [spd(3, 3)]),
    ("qr-tall", f_qr, [R(4, 3)]),
    ("qr-square", f_qr, [R(3, 3)]),
    ("qr-wide", f_qr, [R(2, 4)]),
    ("qr-q-only-tall", f_qr_q, [R(4, 2)]),
    ("qr-q-only-wide", f_qr_q, [R(2, 3)]),
    ("qr-r-only-wide", f_qr_r, [R(2, 3)]),
    ("qr-mode-r", f_qr_r_mode, [R(4, 3)]),
    ("qr-mode-r-wide", f_qr_r_mode, [R(2, 3)]),
    ("qr-complete-sliced", f_qr_complete_sliced, [R(5, 3)]),
    ("qr-batched", f_qr_batched, [R(2, 3, 3)]),
    ("multi_dot", f_multi_dot, [R(2, 3), R(3, 4), R(4, 2)]),
    ("multi_dot-vector-ends", f_multi_dot_vectors, [R(3), R(3, 4), R(4, 2), R(2)]),
    ("multi_dot-constant-inside", f_multi_dot_constant_inside, [R(3), R(3, 2)]),
    ("multi_dot-stack", f_multi_dot_stack, [R(4, 3, 3)]),
    ("lstsq-x", f_lstsq_x, [R(5, 3), R(5)]),
    ("lstsq-x-matrix", f_lstsq_x, [R(5, 3), R(5, 2)]),
    ("lstsq-all-outputs", f_lstsq_all, [R(5, 3), R(5, 2)]),
    ("lstsq-residuals", f_lstsq_residuals, [R(4, 2), R(4)]),
    ("lstsq-singular-values", f_lstsq_singular_values, [R(4, 3), R(4)]),
    ("lstsq-underdetermined", f_lstsq_all, [R(2, 4), R(2)]),
]


@pytest.mark.parametrize("name, fun, args", VJP_CASES, ids=[c[0] for c in VJP_CASES])
def test_vjp(name, fun, args):
    check_grads(fun, args, wrt=wrt_all(args))


FORWARD_CASES = [c for c in VJP_CASES if not c[0].startswith("lstsq")]


@pytest.mark.parametrize("name, fun, args", FORWARD_CASES, ids=[c[0] for c in FORWARD_CASES])
def test_forward_mode(name, fun, args):
    check_jvp(fun, args, wrt_all(args), rtol=1e-4)


@pytest.mark.parametrize("name, fun, args", [c for c in VJP_CASES if c[0].startswith("lstsq")],
                         ids=[c[0] for c in VJP_CASES if c[0].startswith("lstsq")])
def test_forward_mode_adds_the_tangents_of_a_tuple_result(name, fun, args):
    """lstsq's tangent is a tuple with one statement for ``a`` and one for ``b``."""
    check_jvp(fun, args, wrt_all(args), rtol=1e-4)


def test_slogdet_sign_has_zero_gradient():
    grad = check_grads(f_slogdet_sign_only, [general(3, 3)], wrt=0, v=1.0)
    assert np.array_equal(grad, np.zeros((3, 3)))


@pytest.mark.parametrize("fun, a", [(f_svd_full_tall_uses_extra, R(5, 3)),
                                    (f_qr_complete_uses_extra, R(5, 3))], ids=["svd", "qr"])
def test_undetermined_extra_vectors_are_an_error(fun, a):
    with pytest.raises(ValueError, match="not defined"):
        check_grads(fun, [a], wrt=0)


def test_cholesky_ignores_the_upper_triangle():
    a = spd(3, 3)
    grad = check_grads(f_cholesky_logdet, [a], wrt=0, v=1.0)
    assert np.all(np.triu(grad, 1) == 0)
    # the symmetric gradient inv(a), folded onto the lower triangle
    expected = np.tril(2 * np.linalg.inv(a)) - np.diag(np.diag(np.linalg.inv(a)))
    assert np.allclose(grad, expected)


def f32_linalg(a):
    w, v = np.linalg.eigh(a)
    return np.linalg.inv(a).sum() + np.linalg.slogdet(a)[1] + w.sum() + np.linalg.cholesky(a).sum()


def test_float32_gradients_stay_float32():
    a = spd(3, 3).astype(np.float32)
    grad = check_grads(f32_linalg, [a], wrt=0, eps=1e-2, rtol=1e-2, atol=1e-3)
    assert grad.dtype == np.float32


# ---- forward rules ---------------------------------------------------------------------------

JVP_CASES = [
    ("inv", np.linalg.inv, [general(2, 3, 3)], {}),
    ("det", np.linalg.det, [general(3, 3)], {}),
    ("slogdet", np.linalg.slogdet, [general(2, 3, 3)], {}),
    ("solve-matrix", np.linalg.solve, [general(3, 3), R(3, 2)], {}),
    ("solve-vector", np.linalg.solve, [general(2, 3, 3), R(3)], {}),
    ("matrix_power", np.linalg.matrix_power, [general(3, 3) / 3, 3], {}),
    ("matrix_power-negative", np.linalg.matrix_power, [general(3, 3), -2], {}),
    ("matrix_power-0", np.linalg.matrix_power, [general(3, 3), 0], {}),
    ("cholesky", np.linalg.cholesky, [spd(2, 3, 3)], {}),
    ("cholesky-upper", np.linalg.cholesky, [spd(3, 3)], {"upper": True}),
    ("eigh", np.linalg.eigh, [spd(2, 3, 3)], {}),
    ("eigh-upper", np.linalg.eigh, [spd(3, 3)], {"UPLO": "U"}),
    ("eigvalsh", np.linalg.eigvalsh, [spd(3, 3)], {}),
    ("svd-tall", np.linalg.svd, [R(4, 3)], {"full_matrices": False}),
    ("svd-wide-batched", np.linalg.svd, [R(2, 2, 4)], {"full_matrices": False}),
    ("svd-square-full", np.linalg.svd, [R(3, 3)], {}),
    ("svd-values", np.linalg.svd, [R(3, 4)], {"compute_uv": False}),
    ("svd-hermitian", np.linalg.svd, [spd(3, 3) - 4 * np.eye(3)], {"hermitian": True}),
    ("pinv", np.linalg.pinv, [R(4, 2)], {}),
    ("pinv-wide", np.linalg.pinv, [R(2, 2, 3)], {}),
    ("pinv-hermitian", np.linalg.pinv, [spd(3, 3)], {"hermitian": True}),
    ("qr-tall", np.linalg.qr, [R(4, 3)], {}),
    ("qr-wide", np.linalg.qr, [R(2, 4)], {}),
    ("qr-batched", np.linalg.qr, [R(2, 3, 3)], {}),
    ("qr-r", np.linalg.qr, [R(4, 3)], {"mode": "r"}),
    ("multi_dot-stack", np.linalg.multi_dot, [R(3, 2, 2)], {}),
    ("lstsq", np.linalg.lstsq, [R(5, 3), R(5, 2)], {}),
    ("lstsq-vector", np.linalg.lstsq, [R(4, 2), R(4)], {}),
]


@pytest.mark.parametrize("name, function, args, kwargs", JVP_CASES, ids=[c[0] for c in JVP_CASES])
def test_jvp(name, function, args, kwargs):
    wrt = tuple(i for i, a in enumerate(args) if isinstance(a, np.ndarray))
    check_call_jvp(function, args, wrt, kwargs, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("function, kwargs, extra", [
    (np.linalg.svd, {}, lambda t: t[0][:, 3:]),
    (np.linalg.qr, {"mode": "complete"}, lambda t: t[0][:, 3:]),
], ids=["svd-full", "qr-complete"])
def test_jvp_of_undetermined_extra_vectors_is_nan(function, kwargs, extra):
    a, ta = R(5, 3), R(5, 3)
    tangent = jvp_of(function, [a], kwargs, {0: ta})
    assert np.all(np.isnan(extra(tangent)))
    reduced = {"full_matrices": False} if function is np.linalg.svd else {}
    expected = jvp_of(function, [a], reduced, {0: ta})
    assert np.allclose(tangent[0][:, :3], expected[0]) and np.allclose(tangent[1][:3], expected[1])


def test_every_linalg_rule_has_both_directions():
    names = ["inv", "det", "slogdet", "solve", "cholesky", "eigh", "eigvalsh", "svd", "pinv", "qr",
             "matrix_power", "lstsq", "multi_dot"]
    for name in names:
        key = getattr(np.linalg, name)
        assert registry.lookup(registry.VJP, key) is not None and registry.lookup(registry.JVP, key) is not None


def qr_raw(a):
    h, tau = np.linalg.qr(a, mode="raw")
    return h.sum() + tau.sum()


def test_qr_raw_mode_is_an_unsupported_case():
    with pytest.raises(srcad.UnsupportedCaseError, match="mode='raw'"):
        srcad.grad(qr_raw)(np.eye(3) + 0.1)
