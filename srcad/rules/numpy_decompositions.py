"""Rules for ``np.linalg``'s factorizations, ``cholesky``, ``eigh``/``eigvalsh``, ``svd`` and
``qr``, reverse (vjp) and forward (jvp), for real matrices and stacks of matrices.

Assumptions, as for any derivative of these decompositions:

* ``cholesky``, ``eigh`` (and ``svd`` with ``hermitian=True``) read one triangle of their
  argument (``UPLO``, ``upper``); the derivative is that of the function NumPy computes, so
  entries of the other triangle get a zero adjoint.
* ``eigh`` needs distinct eigenvalues and ``svd`` distinct, non-zero singular values:
  eigen/singular vectors of repeated values are not differentiable (the formulas divide
  by their gaps), nor is ``cholesky`` of a semi-definite matrix; those cases are refused
  (``linalg_conditioning.py``) unless the cotangent does not reach them. Vectors are unique up to sign for real input; the derivative is the
  one of the branch NumPy returns (the signs are locally constant), so gauge-invariant
  uses (``V @ np.diag(w) @ V.T``, ``V**2``) and direct uses (``np.abs(V)``) are both exact.
* ``svd(full_matrices=True)`` and ``qr(mode="complete")`` of a non-square matrix return
  extra basis vectors that are not determined by the matrix: a cotangent on them is an
  error (use ``full_matrices=False``/``mode="reduced"``) and their tangent is NaN.
"""
import numpy as np

from ..errors import UnsupportedCaseError
from ..registry import no_derivative, register_jvp, register_nondifferentiable, register_vjp
from .linalg_conditioning import close_pairs, different_cotangents, negligible, unresolved
from .numpy_linalg import _nonzero, eye_like, from_triangle, mT, symmetric_from_triangle


def _gaps_inverse(w):
    """``F[..., i, j] = 1 / (w_j - w_i)`` off the diagonal, 0 on it."""
    gaps = w[..., None, :] - w[..., :, None]
    diagonal = np.eye(w.shape[-1], dtype=bool)
    return np.where(diagonal, 0.0, 1.0 / np.where(diagonal, 1.0, gaps))


def _nan_tangent(shape, dtype):
    return np.full(shape, np.nan, np.result_type(dtype, np.float16))


def _undetermined(what):
    return ValueError(
        f"the derivative of the extra {what} is not defined (they are any orthonormal completion); "
        "use full_matrices=False for np.linalg.svd or mode='reduced' for np.linalg.qr")


# ---- Cholesky, eigh ----------------------------------------------------------------------------

def _phi(x):
    """The lower triangle with a halved diagonal."""
    return np.tril(x) - 0.5 * np.einsum("...ii->...i", x)[..., None] * eye_like(x)


def _semidefinite(lower):
    """Why the Cholesky factor ``lower`` has no derivative — a pivot ``L[k, k]²`` zero to working
    precision (the matrix is only semi-definite; the derivative solves with ``L``) — or None."""
    pivots = np.einsum("...ii->...i", lower) ** 2
    if not (pivots.size and np.any(negligible(pivots, np.max(pivots, axis=-1, keepdims=True), pivots.shape[-1]))):
        return None
    return ("srcad differentiates a Cholesky factorisation (np.linalg.cholesky, scipy.linalg.cholesky, cho_factor) "
            f"of a positive definite matrix; here a pivot L[k, k]² is {np.min(pivots):.3g}, zero to working "
            "precision (the matrix is semi-definite), where the factor has no derivative: add a multiple of the "
            "identity (a + 1e-9 * np.eye(n)), or differentiate a definite matrix")


register_nondifferentiable(_semidefinite, reason="it checks conditioning (piecewise constant)")


def cholesky_grad(g, y, upper):
    """The adjoint of ``L = cholesky(A)``: ``L⁻ᵀ Φ(Lᵀ Ḡ) L⁻¹`` as a symmetric adjoint,
    mapped to the triangle NumPy reads."""
    lower = mT(y) if upper else y
    g_lower = mT(g) if upper else g
    problem = _semidefinite(lower)
    if problem is not None:
        raise UnsupportedCaseError(problem)
    inverse = np.linalg.inv(lower)
    s = mT(inverse) @ _phi(mT(lower) @ g_lower) @ inverse
    return from_triangle(s, lower=not upper)


def cholesky_tangent(ta, y, upper):
    lower = mT(y) if upper else y
    problem = _semidefinite(lower)
    if problem is not None:
        raise UnsupportedCaseError(problem)
    inverse = np.linalg.inv(lower)
    tl = lower @ _phi(inverse @ symmetric_from_triangle(ta, lower=not upper) @ mT(inverse))
    return mT(tl) if upper else tl


@register_vjp(np.linalg.cholesky)
def cholesky(y, a, upper=False):
    d[a] += cholesky_grad(d[y], y, upper)


@register_jvp(np.linalg.cholesky)
def cholesky_jvp(y, a, upper=False):
    t[y] += cholesky_tangent(t[a], y, upper)


_NOT_UNIQUE = ("the eigenvectors of repeated eigenvalues (equal to working precision) are not unique, so "
               "they have no derivative (nor does a function of them such as V @ np.diag(f(w)) @ V.T, computed "
               "there as 0/0); use np.linalg.eigvalsh (the values' derivatives stay defined), the matrix itself "
               "(a @ a rather than V @ np.diag(w**2) @ V.T), or a matrix with distinct eigenvalues")


def eigh_grad(g, y, lower):
    """The adjoint of ``w, V = eigh(A)``: ``V (diag(w̄) + F∘skew(VᵀV̄)) Vᵀ`` with
    ``F_ij = 1/(w_j - w_i)``, mapped to the triangle NumPy reads (only the symmetric part of
    the inner matrix counts, so only the skew part of ``VᵀV̄`` does). At repeated eigenvalues
    ``F`` is infinite: the adjoint is taken where ``VᵀV̄`` vanishes on their pairs (the function
    does not read the repeated values' vectors, as a projector on the other vectors does) and
    refused elsewhere (a limit 0/0 there cannot be told from rounding error)."""
    w, vectors = y
    n = w.shape[-1]
    inner = np.zeros(np.shape(vectors), np.result_type(vectors.dtype, np.float16))
    if _nonzero(g[0]):
        problem = different_cotangents(w, g[0], n, "eigenvalues")
        if problem is not None:
            raise UnsupportedCaseError(problem)
        inner = inner + np.asarray(g[0])[..., None, :] * eye_like(vectors)
    if _nonzero(g[1]):
        j = mT(vectors) @ g[1]
        skew = 0.5 * (j - mT(j))
        repeated = close_pairs(w, n)
        problem = unresolved(repeated, j, _NOT_UNIQUE)
        if problem is not None:
            raise UnsupportedCaseError(problem)
        inner = inner + np.where(repeated, 0.0, _gaps_inverse(w)) * skew
    return from_triangle(vectors @ inner @ mT(vectors), lower)


def eigh_tangent(ta, y, lower, values_only=False):
    """The tangents of ``w`` and (unless ``values_only``) of ``V``; the vectors' is refused at
    repeated eigenvalues, where they are not unique."""
    w, vectors = y
    m = mT(vectors) @ symmetric_from_triangle(ta, lower) @ vectors
    values = np.einsum("...ii->...i", m)
    if values_only:
        return values
    problem = unresolved(close_pairs(w, w.shape[-1]), m, _NOT_UNIQUE)
    if problem is not None:
        raise UnsupportedCaseError(problem)
    return [values, vectors @ (_gaps_inverse(w) * m)]


@register_vjp(np.linalg.eigh)
def eigh(y, a, UPLO="L"):
    d[a] += eigh_grad(d[y], y, UPLO.upper() == "L")


@register_jvp(np.linalg.eigh)
def eigh_jvp(y, a, UPLO="L"):
    t[y] += eigh_tangent(t[a], y, UPLO.upper() == "L")


@register_vjp(np.linalg.eigvalsh)
def eigvalsh(y, a, UPLO="L"):
    d[a] += eigh_grad([d[y], None], np.linalg.eigh(a, UPLO), UPLO.upper() == "L")


@register_jvp(np.linalg.eigvalsh)
def eigvalsh_jvp(y, a, UPLO="L"):
    t[y] += eigh_tangent(t[a], np.linalg.eigh(a, UPLO), UPLO.upper() == "L", True)


# ---- SVD, pinv ---------------------------------------------------------------------------------

def _reduced_svd_parts(g, y, a, full_matrices, compute_uv, hermitian):
    """``(U, s, Vt)`` of the thin SVD and the cotangents on them (None where there are none)."""
    if not compute_uv:
        u, s, vt = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
        return (u, s, vt), (None, g, None)
    u, s, vt = y
    gu, gs, gvt = (None if g is None else g[i] for i in range(3))
    k = s.shape[-1]
    if full_matrices:
        if u.shape[-1] > k and _nonzero(gu) and np.any(np.asarray(gu)[..., k:]):
            raise _undetermined("left singular vectors U[..., k:] of np.linalg.svd(full_matrices=True)")
        if vt.shape[-2] > k and _nonzero(gvt) and np.any(np.asarray(gvt)[..., k:, :]):
            raise _undetermined("right singular vectors Vt[..., k:, :] of np.linalg.svd(full_matrices=True)")
        u, vt = u[..., :k], vt[..., :k, :]
        gu = None if gu is None else np.asarray(gu)[..., :k]
        gvt = None if gvt is None else np.asarray(gvt)[..., :k, :]
    return (u, s, vt), (gu, gs, gvt)


_SINGULAR_NOT_UNIQUE = (
    "the singular vectors of repeated singular values (equal to working precision, or zero where the matrix is not "
    "square) are not unique, so they have no derivative; use np.linalg.svd(a, compute_uv=False) (the values' "
    "derivatives stay defined where they are distinct and non-zero), a function that does not depend on how their "
    "vectors are chosen (U @ np.diag(s) @ Vt), or a matrix with distinct non-zero singular values")
_AT_ZERO = ("a singular value is zero here (to working precision), where it has no derivative (it is |x| at 0: it "
            "grows whichever way the matrix moves); differentiate a matrix of full rank, or regularise it")


def _zero_singular_values(s, n):
    return negligible(s, np.max(s, axis=-1, keepdims=True), n)


def _vector_gaps(s, n):
    """``(1/(s_i + s_j), F, repeated)`` for the singular vectors' derivatives, with
    ``F_ij = 1/(s_j² - s_i²)``: both zero on the diagonal, ``F`` on the pairs ``repeated`` (equal to
    working precision), the first where both values are zero (the callers refuse what they would drop)."""
    repeated = close_pairs(s, n)
    sums = s[..., :, None] + s[..., None, :]
    dropped = negligible(sums, np.max(sums, axis=(-2, -1), keepdims=True), n) | np.eye(s.shape[-1], dtype=bool)
    inverse_sums = np.where(dropped, 0.0, 1.0 / np.where(sums == 0, 1.0, sums))
    return inverse_sums, np.where(repeated, 0.0, _gaps_inverse(s**2)), repeated


def svd_grad(g, y, a, full_matrices, compute_uv, hermitian):
    """The adjoint of the SVD ``A = U diag(s) Vᵀ`` (distinct, non-zero singular values): with
    ``J = UᵀŪ - ŪᵀU``, ``K = VᵀV̄ - V̄ᵀV``, the inner matrix is ``diag(s̄)`` plus
    ``J_ij / (s_i + s_j) + s_i (J + K)_ij / (s_j² - s_i²)``. At repeated values it is taken where
    ``UᵀŪ`` and ``VᵀV̄`` vanish on their pairs (their vectors are not read) and refused elsewhere;
    at zero values (where they are not square) likewise for the part of Ū, V̄ outside the span."""
    (u, s, vt), (gu, gs, gvt) = _reduced_svd_parts(g, y, a, full_matrices, compute_uv, hermitian)
    v = mT(vt)
    n = max(np.shape(a)[-2:])
    zero = _zero_singular_values(s, n)
    inverse_sums, f, repeated = _vector_gaps(s, n)
    inner = np.zeros(s.shape + s.shape[-1:], np.result_type(s.dtype, np.float16))
    grad = 0.0
    if _nonzero(gs):
        problem = different_cotangents(s, gs, n, "singular values")
        if problem is not None:
            raise UnsupportedCaseError(problem)
        problem = unresolved(zero, np.broadcast_to(gs, s.shape), _AT_ZERO)
        if problem is not None:
            raise UnsupportedCaseError(problem)
        inner = inner + np.asarray(gs)[..., None, :] * eye_like(inner)
    skew_u = skew_v = 0.0 * inner
    if _nonzero(gu):
        j = mT(u) @ gu
        problem = unresolved(repeated, j, _SINGULAR_NOT_UNIQUE)
        if problem is not None:
            raise UnsupportedCaseError(problem)
        skew_u = j - mT(j)
        if u.shape[-2] > s.shape[-1]:  # the part of Ū outside the span of U
            outside = gu - u @ j
            problem = unresolved(zero[..., None, :], outside, _SINGULAR_NOT_UNIQUE)
            if problem is not None:
                raise UnsupportedCaseError(problem)
            grad = grad + (outside / np.where(zero, 1.0, s)[..., None, :]) @ vt
    if _nonzero(gvt):
        gv = mT(gvt)
        k = mT(v) @ gv
        problem = unresolved(repeated, k, _SINGULAR_NOT_UNIQUE)
        if problem is not None:
            raise UnsupportedCaseError(problem)
        skew_v = k - mT(k)
        if v.shape[-2] > s.shape[-1]:
            outside = gv - v @ k
            problem = unresolved(zero[..., None, :], outside, _SINGULAR_NOT_UNIQUE)
            if problem is not None:
                raise UnsupportedCaseError(problem)
            grad = grad + u @ (mT(outside) / np.where(zero, 1.0, s)[..., :, None])
    both = skew_u + skew_v
    inner = inner + skew_u * inverse_sums + s[..., :, None] * (f * both)
    grad = grad + u @ inner @ vt
    return from_triangle(grad) if hermitian else grad


def svd_tangent(ta, y, a, full_matrices, compute_uv, hermitian):
    if hermitian:
        ta = symmetric_from_triangle(ta)
    n = max(np.shape(a)[-2:])
    if not compute_uv:
        u, s, vt = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
        values = np.einsum("...ii->...i", mT(u) @ ta @ mT(vt))
        problem = unresolved(_zero_singular_values(s, n), values, _AT_ZERO)
        if problem is not None:
            raise UnsupportedCaseError(problem)
        return values
    u, s, vt = y
    k = s.shape[-1]
    u_k, vt_k = u[..., :k], vt[..., :k, :]
    v = mT(vt_k)
    p = mT(u_k) @ ta @ v
    zero = _zero_singular_values(s, n)
    problem = unresolved(zero, np.einsum("...ii->...i", p), _AT_ZERO)
    if problem is not None:
        raise UnsupportedCaseError(problem)
    inverse_sums, f, repeated = _vector_gaps(s, n)
    both = p + mT(p)
    problem = unresolved(repeated, both * s[..., :, None], _SINGULAR_NOT_UNIQUE)
    if problem is not None:
        raise UnsupportedCaseError(problem)
    problem = unresolved(repeated & zero[..., :, None], p, _SINGULAR_NOT_UNIQUE)
    if problem is not None:
        raise UnsupportedCaseError(problem)
    # f_ij (p_ij s_j + s_i p_ji) = p_ij / (s_i + s_j) + s_i (p + pᵀ)_ij f_ij; V's swaps p and pᵀ
    tu = u_k @ (p * inverse_sums + s[..., :, None] * (f * both))
    tv = v @ (mT(p) * inverse_sums + s[..., :, None] * (f * both))
    if u_k.shape[-2] > k:
        outside = ta @ v - u_k @ p
        problem = unresolved(zero[..., None, :], outside, _SINGULAR_NOT_UNIQUE)
        if problem is not None:
            raise UnsupportedCaseError(problem)
        tu = tu + outside / np.where(zero, 1.0, s)[..., None, :]
    if v.shape[-2] > k:
        outside = mT(ta) @ u_k - v @ mT(p)
        problem = unresolved(zero[..., None, :], outside, _SINGULAR_NOT_UNIQUE)
        if problem is not None:
            raise UnsupportedCaseError(problem)
        tv = tv + outside / np.where(zero, 1.0, s)[..., None, :]
    if full_matrices and u.shape[-1] > k:
        tu = np.concatenate([tu, _nan_tangent(u.shape[:-1] + (u.shape[-1] - k,), tu.dtype)], -1)
    tvt = mT(tv)
    if full_matrices and vt.shape[-2] > k:
        tvt = np.concatenate([tvt, _nan_tangent(vt.shape[:-2] + (vt.shape[-2] - k,) + vt.shape[-1:], tvt.dtype)], -2)
    return [tu, np.einsum("...ii->...i", p), tvt]


@register_vjp(np.linalg.svd)
def svd(y, a, full_matrices=True, compute_uv=True, hermitian=False):
    d[a] += svd_grad(d[y], y, a, full_matrices, compute_uv, hermitian)


@register_jvp(np.linalg.svd)
def svd_jvp(y, a, full_matrices=True, compute_uv=True, hermitian=False):
    t[y] += svd_tangent(t[a], y, a, full_matrices, compute_uv, hermitian)


# Second order through the singular values (compute_uv=False): svd_grad(g, s, a) is then the
# gradient of <g, s(a)>, so its derivative in a along a direction is a Hessian product,
# symmetric: the same helper gives its jvp and vjp. Through the singular vectors it would need
# their second derivatives, which srcad does not compute.
_SINGULAR_VECTORS = "np.linalg.svd with compute_uv=True to second order (hvp, hessian, grad of grad)"
_VALUES_ONLY = "use np.linalg.svd(a, compute_uv=False) where only the singular values matter"


@register_vjp(svd_grad)
def svd_grad_vjp(r, g, y, a, full_matrices, compute_uv, hermitian):
    if compute_uv:
        d[g] += no_derivative(_SINGULAR_VECTORS, _VALUES_ONLY)
        d[y] += no_derivative(_SINGULAR_VECTORS, _VALUES_ONLY)
        d[a] += no_derivative(_SINGULAR_VECTORS, _VALUES_ONLY)
    d[g] += svd_tangent(d[r], y, a, full_matrices, compute_uv, hermitian)
    d[a] += singular_values_grad_along(g, a, d[r], hermitian)


@register_jvp(svd_grad)
def svd_grad_jvp(r, g, y, a, full_matrices, compute_uv, hermitian):
    if compute_uv:
        t[r] += t[g] * no_derivative(_SINGULAR_VECTORS, _VALUES_ONLY)
        t[r] += t[y] * no_derivative(_SINGULAR_VECTORS, _VALUES_ONLY)
        t[r] += t[a] * no_derivative(_SINGULAR_VECTORS, _VALUES_ONLY)
    t[r] += svd_grad(t[g], y, a, full_matrices, compute_uv, hermitian)
    t[r] += singular_values_grad_along(g, a, t[a], hermitian)


def singular_values_grad_along(g, a, ta, hermitian):
    """The derivative of ``U diag(g) Vᵀ`` (``svd_grad`` with ``compute_uv=False``) in ``a``
    along ``ta``, from the singular vectors' tangents."""
    u, s, vt = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
    tu, _, tvt = svd_tangent(ta, (u, s, vt), a, False, True, hermitian)
    g = np.asarray(g)
    along = tu @ (g[..., :, None] * vt) + (u * g[..., None, :]) @ tvt
    return from_triangle(along) if hermitian else along


# ---- QR ----------------------------------------------------------------------------------------

def _qr_parts(g, y, a, mode):
    """``(Q, R)`` of the reduced QR and the cotangents on them (None where there are none)."""
    if mode == "raw":
        raise UnsupportedCaseError("srcad does not differentiate np.linalg.qr(mode='raw')")
    if mode == "r":
        return np.linalg.qr(a)[0], y, None, g
    q, r = y
    gq, gr = (None, None) if g is None else (g[0], g[1])
    k = min(np.shape(a)[-2:])
    if q.shape[-1] > k:  # mode="complete" of a tall matrix; the extra rows of R are zeros
        if _nonzero(gq) and np.any(np.asarray(gq)[..., k:]):
            raise _undetermined("columns Q[..., k:] of np.linalg.qr(mode='complete')")
        q, r = q[..., :k], r[..., :k, :]
        gq = None if gq is None else np.asarray(gq)[..., :k]
        gr = None if gr is None else np.asarray(gr)[..., :k, :]
    return q, r, gq, gr


def _rank_deficiency(r):
    """Why the square ``R`` is singular to working precision (``|R[k, k]|`` within ``max |R[i, i]|
    · n · eps``, as ``np.linalg.matrix_rank`` counts), or None: the factors' derivatives solve with
    ``R``, so there they would be rounding error, not a derivative (a matrix without full column
    rank has no unique Q to differentiate)."""
    diagonal = np.abs(np.diagonal(r, axis1=-2, axis2=-1))
    if diagonal.size == 0:
        return None
    tolerance = diagonal.max(axis=-1, keepdims=True) * max(r.shape[-2:]) * np.finfo(diagonal.dtype).eps
    if not np.any(diagonal <= tolerance):
        return None
    return ("srcad differentiates a QR factorisation (np.linalg.qr, scipy.linalg.qr) of a matrix with full column "
            f"rank (of its first {r.shape[-1]} columns where it is wide); here R has a diagonal entry of "
            f"{np.min(diagonal):.3g}, singular to working precision, where the factors have no derivative: "
            "differentiate a full-rank matrix, or a function of it that does not go through QR")


register_nondifferentiable(_rank_deficiency, reason="it only tells whether R is singular")


def _qr_square_grad(q, r, gq, gr):
    """The adjoint of ``Q, R = qr(A)`` for ``A`` with at least as many rows as columns:
    ``(Q̄ + Q copyltu(M)) R⁻ᵀ`` with ``M = R R̄ᵀ - Q̄ᵀ Q``."""
    deficiency = _rank_deficiency(r)
    if deficiency is not None:
        raise UnsupportedCaseError(deficiency)
    m = -mT(gq) @ q if gq is not None else 0.0 * mT(r) @ r
    if gr is not None:
        m = m + r @ mT(gr)
    b = q @ symmetric_from_triangle(m)
    if gq is not None:
        b = b + gq
    return mT(np.linalg.solve(r, mT(b)))


def qr_grad(g, y, a, mode):
    q, r, gq, gr = _qr_parts(g, y, a, mode)
    rows, cols = np.shape(a)[-2:]
    if rows >= cols:
        return _qr_square_grad(q, r, gq, gr)
    # A = [X | Z] with X square: Q, R[:, :m] = qr(X) and R[:, m:] = Qᵀ Z
    z = np.asarray(a)[..., rows:]
    gr_x = None if gr is None else np.asarray(gr)[..., :rows]
    gr_z = np.zeros(np.shape(z)) if gr is None else np.asarray(gr)[..., rows:]
    gq_x = z @ mT(gr_z) if gq is None else gq + z @ mT(gr_z)
    gx = _qr_square_grad(q, r[..., :rows], gq_x, gr_x)
    return np.concatenate([gx, q @ gr_z], -1)


def _qr_square_tangent(ta, q, r):
    deficiency = _rank_deficiency(r)
    if deficiency is not None:
        raise UnsupportedCaseError(deficiency)
    c = mT(q) @ ta @ np.linalg.inv(r)
    lower = np.tril(c, -1)
    omega = lower - mT(lower)
    tr = (c - omega) @ r
    tq = (ta - q @ tr) @ np.linalg.inv(r)
    return tq, tr


def qr_tangent(ta, y, a, mode):
    if mode == "raw":
        raise UnsupportedCaseError("srcad does not differentiate np.linalg.qr(mode='raw')")
    q, r = (np.linalg.qr(a)[0], y) if mode == "r" else y
    rows, cols = np.shape(a)[-2:]
    k = min(rows, cols)
    q_k = q[..., :k]
    if rows >= cols:
        tq, tr = _qr_square_tangent(ta, q_k, r[..., :k, :])
    else:
        tq, tr_x = _qr_square_tangent(ta[..., :rows], q_k, r[..., :rows])
        z = np.asarray(a)[..., rows:]
        tr = np.concatenate([tr_x, mT(tq) @ z + mT(q_k) @ ta[..., rows:]], -1)
    if r.shape[-2] > k:  # mode="complete": zero rows of R, undetermined columns of Q
        tr = np.concatenate([tr, np.zeros(r.shape[:-2] + (r.shape[-2] - k,) + r.shape[-1:], tr.dtype)], -2)
        tq = np.concatenate([tq, _nan_tangent(q.shape[:-1] + (q.shape[-1] - k,), tq.dtype)], -1)
    return tr if mode == "r" else [tq, tr]


@register_vjp(np.linalg.qr)
def qr(y, a, mode="reduced"):
    d[a] += qr_grad(d[y], y, a, mode)


@register_jvp(np.linalg.qr)
def qr_jvp(y, a, mode="reduced"):
    t[y] += qr_tangent(t[a], y, a, mode)
