"""Rules for ``np.linalg``, reverse (vjp) and forward (jvp), for real matrices and stacks of
matrices (leading axes broadcast as in NumPy).

Assumptions, as for any derivative of these decompositions:

* ``cholesky``, ``eigh`` (and ``pinv``/``svd`` with ``hermitian=True``) read one triangle
  of their argument (``UPLO``, ``upper``); the derivative is that of the function NumPy
  computes, so entries of the other triangle get a zero adjoint.
* ``eigh`` needs distinct eigenvalues and ``svd`` distinct, non-zero singular values:
  eigen/singular vectors of repeated values are not differentiable (the formulas divide
  by their gaps). Vectors are unique up to sign for real input; the derivative is the
  one of the branch NumPy returns (the signs are locally constant), so gauge-invariant
  uses (``V @ np.diag(w) @ V.T``, ``V**2``) and direct uses (``np.abs(V)``) are both exact.
* ``svd(full_matrices=True)`` and ``qr(mode="complete")`` of a non-square matrix return
  extra basis vectors that are not determined by the matrix: a cotangent on them is an
  error (use ``full_matrices=False``/``mode="reduced"``) and their tangent is NaN.
* ``pinv`` and ``lstsq`` assume the rank does not change near the point.
"""
import numpy as np

from ..errors import UnsupportedCaseError
from ..registry import register_jvp, register_nondifferentiable, register_vjp
from ..runtime import as_array, unbroadcast, zeros_like
from .numpy_shapes import item_grad


def mT(x):
    """The transpose of each matrix in a stack."""
    return np.swapaxes(x, -1, -2)


def eye_like(x):
    return np.eye(np.shape(x)[-1], dtype=np.result_type(as_array(x).dtype, np.float16))


def _trace(x):
    return np.einsum("...ii->...", x)


def _nonzero(g):
    return g is not None and np.any(g)


def from_triangle(s, lower=True):
    """The adjoint for ``A`` of a function that reads only one triangle of ``A`` as a
    symmetric matrix, given the adjoint ``s`` for that symmetric matrix."""
    both = s + mT(s)
    tri = np.tril(both) if lower else np.triu(both)
    return tri - 0.5 * np.einsum("...ii->...i", both)[..., None] * eye_like(s)


def symmetric_from_triangle(x, lower=True):
    """The symmetric matrix that ``x``'s lower (or upper) triangle stands for."""
    if lower:
        return np.tril(x) + mT(np.tril(x, -1))
    return np.triu(x) + mT(np.triu(x, 1))


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


# ---- inverse, determinants, solve ------------------------------------------------------------

@register_vjp(np.linalg.inv)
def inv(y, a):
    d[a] += -mT(y) @ d[y] @ mT(y)


@register_jvp(np.linalg.inv)
def inv_jvp(y, a):
    t[y] += -y @ t[a] @ y


@register_vjp(np.linalg.det)
def det(y, a):
    if np.ndim(a) == 2:  # one matrix: its determinant is a scalar
        d[a] += (d[y] * y) * mT(np.linalg.inv(a))
    else:
        d[a] += np.asarray(d[y] * y)[..., None, None] * mT(np.linalg.inv(a))


@register_jvp(np.linalg.det)
def det_jvp(y, a):
    t[y] += y * _trace(np.linalg.solve(a, t[a]))


@register_vjp(np.linalg.slogdet)
def slogdet(y, a):
    """The sign is piecewise constant: only ``logabsdet`` has a derivative."""
    d[a] += np.asarray(item_grad(d[y], 1, y))[..., None, None] * mT(np.linalg.inv(a))


@register_jvp(np.linalg.slogdet)
def slogdet_jvp(y, a):
    t[y] += [zeros_like(y[0]), _trace(np.linalg.solve(a, t[a]))]


def _rhs_is_vector(a, b):
    """Whether ``np.linalg.solve(a, b)`` treats ``b`` as a (stack of) vector(s)."""
    if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
        return np.ndim(b) == 1
    return np.ndim(b) == np.ndim(a) - 1


def solve_grad(g, a, b, x, which):
    """The adjoint of ``a`` (which=0) or ``b`` (which=1) in ``x = np.linalg.solve(a, b)``."""
    vector = _rhs_is_vector(a, b)
    g = np.asarray(g)
    gb = np.linalg.solve(mT(a), g[..., None] if vector else g)
    if which == 1:
        return unbroadcast(gb[..., 0] if vector else gb, b)
    return unbroadcast(-gb @ mT(x[..., None] if vector else x), a)


def solve_tangent(ta, a, b, x):
    """The tangent of ``np.linalg.solve(a, b)`` when ``a`` moves by ``ta``."""
    if _rhs_is_vector(a, b):
        return -np.linalg.solve(a, (ta @ x[..., None]))[..., 0]
    return -np.linalg.solve(a, ta @ x)


@register_vjp(np.linalg.solve)
def solve(y, a, b):
    d[a] += solve_grad(d[y], a, b, y, 0)
    d[b] += solve_grad(d[y], a, b, y, 1)


@register_jvp(np.linalg.solve)
def solve_jvp(y, a, b):
    t[y] += solve_tangent(t[a], a, b, y)
    t[y] += np.linalg.solve(a, t[b])


@register_vjp(np.linalg.matrix_power)
def matrix_power(y, a, n):
    d[a] += matrix_power_grad(d[y], a, n)


@register_jvp(np.linalg.matrix_power)
def matrix_power_jvp(y, a, n):
    t[y] += matrix_power_tangent(t[a], a, n)


def _powers(a, n):
    """``[B**0, ..., B**(|n|-1)]`` and ``B`` (``a``, or its inverse for ``n < 0``)."""
    base = np.asarray(a) if n > 0 else np.linalg.inv(a)
    powers = [np.broadcast_to(eye_like(base), base.shape)]
    for _ in range(abs(n) - 1):
        powers.append(powers[-1] @ base)
    return powers, base


def matrix_power_grad(g, a, n):
    """The adjoint of ``np.linalg.matrix_power(a, n)``: ``sum_k (Bᵀ)^k G (Bᵀ)^(m-1-k)``."""
    if n == 0:
        return zeros_like(np.asarray(a))
    powers, base = _powers(a, n)
    m = len(powers)
    grad = sum(mT(powers[k]) @ g @ mT(powers[m - 1 - k]) for k in range(m))
    return grad if n > 0 else -mT(base) @ grad @ mT(base)


def matrix_power_tangent(ta, a, n):
    if n == 0:
        return np.zeros(np.shape(a), np.result_type(as_array(ta).dtype, np.float16))
    powers, base = _powers(a, n)
    m = len(powers)
    tb = ta if n > 0 else -base @ ta @ base
    return sum(powers[k] @ tb @ powers[m - 1 - k] for k in range(m))


# ---- Cholesky, eigh ----------------------------------------------------------------------------

def _phi(x):
    """The lower triangle with a halved diagonal."""
    return np.tril(x) - 0.5 * np.einsum("...ii->...i", x)[..., None] * eye_like(x)


def cholesky_grad(g, y, upper):
    """The adjoint of ``L = cholesky(A)``: ``L⁻ᵀ Φ(Lᵀ Ḡ) L⁻¹`` as a symmetric adjoint,
    mapped to the triangle NumPy reads."""
    lower = mT(y) if upper else y
    g_lower = mT(g) if upper else g
    inverse = np.linalg.inv(lower)
    s = mT(inverse) @ _phi(mT(lower) @ g_lower) @ inverse
    return from_triangle(s, lower=not upper)


def cholesky_tangent(ta, y, upper):
    lower = mT(y) if upper else y
    inverse = np.linalg.inv(lower)
    tl = lower @ _phi(inverse @ symmetric_from_triangle(ta, lower=not upper) @ mT(inverse))
    return mT(tl) if upper else tl


@register_vjp(np.linalg.cholesky)
def cholesky(y, a, upper=False):
    d[a] += cholesky_grad(d[y], y, upper)


@register_jvp(np.linalg.cholesky)
def cholesky_jvp(y, a, upper=False):
    t[y] += cholesky_tangent(t[a], y, upper)


def eigh_grad(g, y, lower):
    """The adjoint of ``w, V = eigh(A)``: ``V (diag(w̄) + F∘(VᵀV̄)) Vᵀ`` with
    ``F_ij = 1/(w_j - w_i)``, mapped to the triangle NumPy reads."""
    w, vectors = y
    inner = np.zeros(np.shape(vectors), np.result_type(vectors.dtype, np.float16))
    if _nonzero(g[0]):
        inner = inner + np.asarray(g[0])[..., None, :] * eye_like(vectors)
    if _nonzero(g[1]):
        inner = inner + _gaps_inverse(w) * (mT(vectors) @ g[1])
    return from_triangle(vectors @ inner @ mT(vectors), lower)


register_nondifferentiable(eye_like, _nonzero, reason="it builds an identity matrix or tests for zeros")


def eigh_tangent(ta, y, lower):
    w, vectors = y
    m = mT(vectors) @ symmetric_from_triangle(ta, lower) @ vectors
    return [np.einsum("...ii->...i", m), vectors @ (_gaps_inverse(w) * m)]


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
    t[y] += eigh_tangent(t[a], np.linalg.eigh(a, UPLO), UPLO.upper() == "L")[0]


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


def svd_grad(g, y, a, full_matrices, compute_uv, hermitian):
    """The adjoint of the SVD ``A = U diag(s) Vᵀ`` (distinct, non-zero singular values)."""
    (u, s, vt), (gu, gs, gvt) = _reduced_svd_parts(g, y, a, full_matrices, compute_uv, hermitian)
    v = mT(vt)
    f = _gaps_inverse(s**2)  # F_ij = 1 / (s_j² - s_i²)
    inner = np.zeros(s.shape + s.shape[-1:], np.result_type(s.dtype, np.float16))
    grad = 0.0
    if _nonzero(gs):
        inner = inner + np.asarray(gs)[..., None, :] * eye_like(inner)
    if _nonzero(gu):
        j = mT(u) @ gu
        inner = inner + (f * (j - mT(j))) * s[..., None, :]
        if u.shape[-2] > s.shape[-1]:  # the part of Ū outside the span of U
            grad = grad + ((gu - u @ j) / s[..., None, :]) @ vt
    if _nonzero(gvt):
        gv = mT(gvt)
        k = mT(v) @ gv
        inner = inner + s[..., :, None] * (f * (k - mT(k)))
        if v.shape[-2] > s.shape[-1]:
            grad = grad + u @ (mT(gv - v @ k) / s[..., :, None])
    grad = grad + u @ inner @ vt
    return from_triangle(grad) if hermitian else grad


def svd_tangent(ta, y, a, full_matrices, compute_uv, hermitian):
    if hermitian:
        ta = symmetric_from_triangle(ta)
    if not compute_uv:
        u, s, vt = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
        return np.einsum("...ii->...i", mT(u) @ ta @ mT(vt))
    u, s, vt = y
    k = s.shape[-1]
    u_k, vt_k = u[..., :k], vt[..., :k, :]
    v = mT(vt_k)
    p = mT(u_k) @ ta @ v
    f = _gaps_inverse(s**2)
    tu = u_k @ (f * (p * s[..., None, :] + s[..., :, None] * mT(p)))
    tv = v @ (f * (s[..., :, None] * p + mT(p) * s[..., None, :]))
    if u_k.shape[-2] > k:
        tu = tu + (ta @ v - u_k @ p) / s[..., None, :]
    if v.shape[-2] > k:
        tv = tv + (mT(ta) @ u_k - v @ mT(p)) / s[..., None, :]
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


def pinv_grad(g, a, y, hermitian):
    """The adjoint of ``X = pinv(A)`` (constant rank):
    ``-XᵀḠXᵀ + (I - AX)ḠᵀXXᵀ + XᵀXḠᵀ(I - XA)``."""
    x = y
    g = np.asarray(g)
    grad = (-mT(x) @ g @ mT(x)
            + (eye_like(x) - a @ x) @ mT(g) @ x @ mT(x)
            + mT(x) @ x @ mT(g) @ (eye_like(a) - x @ a))
    return from_triangle(grad) if hermitian else grad


def pinv_tangent(ta, a, y, hermitian):
    x = y
    if hermitian:
        ta = symmetric_from_triangle(ta)
    return (-x @ ta @ x
            + x @ mT(x) @ mT(ta) @ (eye_like(x) - a @ x)
            + (eye_like(a) - x @ a) @ mT(ta) @ mT(x) @ x)


@register_vjp(np.linalg.pinv)
def pinv(y, a, rcond=None, hermitian=False, rtol=None):
    d[a] += pinv_grad(d[y], a, y, hermitian)


@register_jvp(np.linalg.pinv)
def pinv_jvp(y, a, rcond=None, hermitian=False, rtol=None):
    t[y] += pinv_tangent(t[a], a, y, hermitian)


# ---- QR ----------------------------------------------------------------------------------------

def _qr_parts(g, y, a, mode):
    """``(Q, R)`` of the reduced QR and the cotangents on them (None where there are none)."""
    if mode == "raw":
        raise UnsupportedCaseError("srcad does not differentiate np.linalg.qr(mode='raw')")
    if mode == "r":
        return np.linalg.qr(a)[0], y, None, g
    q, r = y
    gq, gr = (None if g is None else g[i] for i in range(2))
    k = min(np.shape(a)[-2:])
    if q.shape[-1] > k:  # mode="complete" of a tall matrix; the extra rows of R are zeros
        if _nonzero(gq) and np.any(np.asarray(gq)[..., k:]):
            raise _undetermined("columns Q[..., k:] of np.linalg.qr(mode='complete')")
        q, r = q[..., :k], r[..., :k, :]
        gq = None if gq is None else np.asarray(gq)[..., :k]
        gr = None if gr is None else np.asarray(gr)[..., :k, :]
    return q, r, gq, gr


def _qr_square_grad(q, r, gq, gr):
    """The adjoint of ``Q, R = qr(A)`` for ``A`` with at least as many rows as columns:
    ``(Q̄ + Q copyltu(M)) R⁻ᵀ`` with ``M = R R̄ᵀ - Q̄ᵀ Q``."""
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


# ---- least squares -----------------------------------------------------------------------------

def lstsq_grad(g, a, b, y, which):
    """The adjoint of ``a`` (which=0) or ``b`` (which=1) in ``x, residuals, rank, s =
    lstsq(a, b)``: ``x = pinv(a) b``; the residuals ``‖a x - b‖²`` are stationary in ``x``;
    ``s`` are the singular values of ``a``."""
    x, residuals, _, s = y
    gx, gres, gs = item_grad(g, 0, y), item_grad(g, 1, y), item_grad(g, 3, y)
    a, b = np.asarray(a), np.asarray(b)
    vector = b.ndim == 1
    bm, xm, gxm = (b[:, None], x[:, None], np.asarray(gx)[:, None]) if vector else (b, x, np.asarray(gx))
    p = np.linalg.pinv(a)
    if which == 1:
        grad = mT(p) @ gxm
        if np.size(residuals) and _nonzero(gres):
            grad = grad - 2 * (a @ xm - bm) * gres
        return grad[:, 0] if vector else grad
    grad = pinv_grad(gxm @ mT(bm), a, p, False)
    if np.size(residuals) and _nonzero(gres):
        grad = grad + 2 * ((a @ xm - bm) * gres) @ mT(xm)
    if _nonzero(gs):
        u, _, vt = np.linalg.svd(a, full_matrices=False)
        grad = grad + (u * gs) @ vt
    return grad


def lstsq_tangent(tv, a, b, y, which):
    x, residuals, rank, s = y
    a, b = np.asarray(a), np.asarray(b)
    vector = b.ndim == 1
    bm, xm = (b[:, None], x[:, None]) if vector else (b, x)
    tvm = tv[:, None] if which == 1 and vector else tv
    p = np.linalg.pinv(a)
    if which == 1:
        tx = p @ tvm
        moved = -tvm  # the change of a x - b at fixed x
        ts = np.zeros_like(s)
    else:
        tx = pinv_tangent(tv, a, p, False) @ bm
        moved = tv @ xm
        u, _, vt = np.linalg.svd(a, full_matrices=False)
        ts = np.einsum("ij,jk,ki->i", mT(u), tv, mT(vt))
    tres = 2 * np.sum((a @ xm - bm) * moved, axis=0) if np.size(residuals) else np.zeros_like(residuals)
    return [tx[:, 0] if vector else tx, tres, zeros_like(rank), ts]


@register_vjp(np.linalg.lstsq)
def lstsq(y, a, b, rcond=None):
    d[a] += lstsq_grad(d[y], a, b, y, 0)
    d[b] += lstsq_grad(d[y], a, b, y, 1)


@register_jvp(np.linalg.lstsq)
def lstsq_jvp(y, a, b, rcond=None):
    t[y] += lstsq_tangent(t[a], a, b, y, 0)
    t[y] += lstsq_tangent(t[b], a, b, y, 1)
