"""Rules for ``np.linalg``'s inverses, determinants, solves, matrix powers, chain products
(``multi_dot``), pseudo-inverse and least squares, reverse (vjp) and forward (jvp), for real
matrices and stacks of matrices (leading axes broadcast as in NumPy), and the matrix helpers
the linear-algebra rules share (``mT``, ``from_triangle``). The factorizations (Cholesky, eigh, SVD, QR) are in
``numpy_decompositions.py``.

``pinv`` (``hermitian=True`` reads one triangle, as ``eigh`` does) and ``lstsq`` assume the
rank does not change near the point: they are refused at a matrix without full rank (where
``pinv`` drops a singular value); ``det``'s gradient at a singular matrix is the adjugate (the
checks: ``linalg_conditioning.py``). ``slogdet``'s, ``A⁻ᵀ``, grows without bound there, as
``inv``'s does: it is not checked, so that it reads the forward sweep's ``inv(S)`` at no cost.
"""
import numpy as np

from ..errors import UnsupportedCaseError
from ..registry import register_jvp, register_nondifferentiable, register_vjp
from .linalg_conditioning import is_singular, singular_values_of, working_eps
from ..runtime import as_array, item_grad, unbroadcast, zeros_like


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


register_nondifferentiable(eye_like, _nonzero, reason="it builds an identity matrix or tests for zeros")


# ---- inverse, determinants, solve ------------------------------------------------------------

@register_vjp(np.linalg.inv)
def inv(y, a):
    if np.ndim(y) == 2:  # one matrix (known when shapes are): a transpose, not a helper call
        d[a] += -y.T @ d[y] @ y.T
    else:
        d[a] += -mT(y) @ d[y] @ mT(y)


@register_jvp(np.linalg.inv)
def inv_jvp(y, a):
    t[y] += -y @ t[a] @ y


def cofactors(a, det):
    """``det · A⁻ᵀ``, the matrix of cofactors of ``a`` (a stack too): the gradient of ``det``,
    defined where ``a`` is singular as well (there it comes from the SVD ``A = U S Vᵀ`` as
    ``det(U) det(V) U adj(S) Vᵀ``, where the inverse would be rounding error or fail)."""
    if not is_singular(a):
        return np.asarray(det)[..., None, None] * mT(np.linalg.inv(a))
    u, s, vt = np.linalg.svd(a)
    others = np.prod(np.where(np.eye(s.shape[-1], dtype=bool), 1.0, s[..., None, :]), axis=-1)  # Π_{j≠i} s_j
    sign = np.sign(np.linalg.det(u) * np.linalg.det(vt))
    return sign[..., None, None] * ((u * others[..., None, :]) @ vt)


@register_vjp(np.linalg.det)
def det(y, a):
    if np.ndim(a) == 2:  # one matrix: its determinant is a scalar
        d[a] += d[y] * cofactors(a, y)
    else:
        d[a] += np.asarray(d[y])[..., None, None] * cofactors(a, y)


@register_jvp(np.linalg.det)
def det_jvp(y, a):
    t[y] += np.sum(cofactors(a, y) * t[a], axis=(-2, -1))


@register_vjp(np.linalg.slogdet)
def slogdet(y, a):
    """The sign is piecewise constant: only ``logabsdet`` has a derivative."""
    if np.ndim(a) == 2:  # one matrix: its log-determinant is a scalar
        d[a] += item_grad(d[y], 1, y) * np.linalg.inv(a).T  # (the forward's inv(S), where it made one)
    else:
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
    # a comprehension, not appends: this helper (pure) is read as source at third order
    return [np.linalg.matrix_power(base, k) for k in range(abs(n))], base


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


# Second order: matrix_power_grad(g, a, n) is the gradient of <g, a^n>, so its derivative in
# a along a direction is a Hessian product, symmetric: the same helper gives its jvp and vjp.
@register_vjp(matrix_power_grad)
def matrix_power_grad_vjp(r, g, a, n):
    d[g] += matrix_power_tangent(d[r], a, n)
    d[a] += matrix_power_grad_along(g, a, d[r], n)


@register_jvp(matrix_power_grad)
def matrix_power_grad_jvp(r, g, a, n):
    t[r] += matrix_power_grad(t[g], a, n)
    t[r] += matrix_power_grad_along(g, a, t[a], n)


def _powers_along(a, ta, n):
    """``_powers(a, n)`` with the derivatives of the powers and of the base along ``ta``."""
    powers, base = _powers(a, n)
    dbase = ta if n > 0 else -base @ ta @ base
    return powers, [matrix_power_tangent(dbase, base, k) for k in range(len(powers))], base, dbase


def matrix_power_grad_along(g, a, ta, n):
    """The derivative of ``matrix_power_grad(g, a, n)`` in ``a`` along ``ta``."""
    if n == 0:
        return zeros_like(np.asarray(a))
    powers, dpowers, base, dbase = _powers_along(a, ta, n)
    m = len(powers)
    grad = sum(mT(powers[k]) @ g @ mT(powers[m - 1 - k]) for k in range(m))
    dgrad = sum(mT(dpowers[k]) @ g @ mT(powers[m - 1 - k]) + mT(powers[k]) @ g @ mT(dpowers[m - 1 - k])
                for k in range(m))
    if n > 0:
        return dgrad
    return -(mT(dbase) @ grad @ mT(base) + mT(base) @ dgrad @ mT(base) + mT(base) @ grad @ mT(dbase))


# ---- chain products ----------------------------------------------------------------------------

def chain_matrices(arrays):
    """The operands of ``np.linalg.multi_dot(arrays)`` as NumPy multiplies them: a 1-D first
    operand is a row, a 1-D last operand a column."""
    last = len(arrays) - 1
    return [np.reshape(a, (1, -1)) if k == 0 and np.ndim(a) == 1
            else np.reshape(a, (-1, 1)) if k == last and np.ndim(a) == 1 else as_array(a)
            for k, a in enumerate(arrays)]


def chain_positions(n, k):
    """The factors of (A₀ ⋯ Aₖ₋₁)ᵀ G (Aₖ₊₁ ⋯ Aₙ₋₁)ᵀ by position in the chain (k stands for G)."""
    return [*range(k - 1, -1, -1), k, *range(n - 1, k, -1)]


def multi_dot_grads(g, arrays):
    """The adjoints of the operands of ``multi_dot(arrays)`` = A₀ A₁ ⋯ Aₙ₋₁: operand k's is
    (A₀ ⋯ Aₖ₋₁)ᵀ G (Aₖ₊₁ ⋯ Aₙ₋₁)ᵀ, a chain product again (in NumPy's best order). Pure, so a
    derivative of a derivative reads it and differentiates those products by this rule."""
    mats = chain_matrices(arrays)
    g = np.reshape(g, (mats[0].shape[0], mats[-1].shape[1]))
    grads = [np.linalg.multi_dot([g if i == k else mats[i].T for i in chain_positions(len(mats), k)])
             for k in range(len(mats))]
    grads = [np.reshape(grad, np.shape(a)) for grad, a in zip(grads, arrays)]
    return np.stack(grads) if isinstance(arrays, np.ndarray) else grads


def multi_dot_tangent(tangents, arrays):
    """Σₖ A₀ ⋯ Ṫₖ ⋯ Aₙ₋₁ over the operands that move (the product rule)."""
    moves = [None] * len(arrays) if tangents is None else tangents
    return sum(np.linalg.multi_dot([moves[k] if i == k else a for i, a in enumerate(arrays)])
               for k in range(len(arrays)) if moves[k] is not None)


@register_vjp(np.linalg.multi_dot)
def multi_dot(y, arrays):
    d[arrays] += multi_dot_grads(d[y], arrays)


@register_jvp(np.linalg.multi_dot)
def multi_dot_jvp(y, arrays):
    t[y] += multi_dot_tangent(t[arrays], arrays)


register_nondifferentiable(chain_positions, reason="it computes positions, axes or an order")


# ---- pseudo-inverse ----------------------------------------------------------------------------

def truncated_pinv(a, rcond, rtol):
    """Why ``pinv``'s derivative is not defined — it drops a singular value of ``a`` below its cutoff:
    its rank changes as ``a`` moves there (it is not even continuous), and a truncated ``pinv`` has
    another derivative than the formula's — or None."""
    s = singular_values_of(a)
    relative = max([max(np.shape(a)[-2:]) * working_eps(s), *(np.max(c) for c in (rcond, rtol) if c is not None)])
    if not (s.size and np.any(s <= relative * np.max(s, axis=-1, keepdims=True))):
        return None
    return (f"np.linalg.pinv drops a singular value here ({np.min(s):.3g}, below its cutoff {relative:.3g} times the "
            "largest): its rank changes as the matrix moves, where it has no derivative. Differentiate a matrix of "
            "full rank, or regularise it (np.linalg.solve(a.T @ a + lam * np.eye(n), a.T) for a tall a)")


register_nondifferentiable(truncated_pinv, reason="it checks conditioning (piecewise constant)")


def pinv_grad(g, a, y, hermitian, rcond=None, rtol=None):
    """The adjoint of ``X = pinv(A)`` (constant rank: refused where ``pinv`` drops a singular value):
    ``-XᵀḠXᵀ + (I - AX)ḠᵀXXᵀ + XᵀXḠᵀ(I - XA)``."""
    x = y
    g = np.asarray(g)
    a = symmetric_from_triangle(a) if hermitian else a  # the matrix pinv read: one triangle
    problem = truncated_pinv(a, rcond, rtol)
    if problem is not None:
        raise UnsupportedCaseError(problem)
    grad = (-mT(x) @ g @ mT(x)
            + (eye_like(x) - a @ x) @ mT(g) @ x @ mT(x)
            + mT(x) @ x @ mT(g) @ (eye_like(a) - x @ a))
    return from_triangle(grad) if hermitian else grad


def pinv_tangent(ta, a, y, hermitian, rcond=None, rtol=None):
    x = y
    if hermitian:
        ta, a = symmetric_from_triangle(ta), symmetric_from_triangle(a)
    problem = truncated_pinv(a, rcond, rtol)
    if problem is not None:
        raise UnsupportedCaseError(problem)
    return (-x @ ta @ x
            + x @ mT(x) @ mT(ta) @ (eye_like(x) - a @ x)
            + (eye_like(a) - x @ a) @ mT(ta) @ mT(x) @ x)


@register_vjp(np.linalg.pinv)
def pinv(y, a, rcond=None, hermitian=False, rtol=None):
    d[a] += pinv_grad(d[y], a, y, hermitian, rcond, rtol)


@register_jvp(np.linalg.pinv)
def pinv_jvp(y, a, rcond=None, hermitian=False, rtol=None):
    t[y] += pinv_tangent(t[a], a, y, hermitian, rcond, rtol)


# ---- least squares -----------------------------------------------------------------------------

def rank_deficient(rank, a):
    """Why ``lstsq``'s derivative is not defined at a matrix without full rank, or None."""
    if rank >= min(np.shape(a)):
        return None
    return (f"np.linalg.lstsq of a matrix of rank {rank} (of at most {min(np.shape(a))}, to working precision): its "
            "minimum-norm solution is not continuous where the rank changes, so it has no derivative there. "
            "Differentiate a matrix of full rank, or regularise (add rows np.sqrt(lam) * np.eye(n) to a, zeros to b)")


register_nondifferentiable(rank_deficient, reason="it checks conditioning (piecewise constant)")


def lstsq_grad(g, a, b, y, which):
    """The adjoint of ``a`` (which=0) or ``b`` (which=1) in ``x, residuals, rank, s =
    lstsq(a, b)``: ``x = pinv(a) b``; the residuals ``‖a x - b‖²`` are stationary in ``x``;
    ``s`` are the singular values of ``a``."""
    x, residuals, rank, s = y
    problem = rank_deficient(rank, a)
    if problem is not None:
        raise UnsupportedCaseError(problem)
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
    problem = rank_deficient(rank, a)
    if problem is not None:
        raise UnsupportedCaseError(problem)
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
