"""Rules for ``scipy.linalg``, reverse (vjp) and forward (jvp), for real square matrices
(no stacks: SciPy's functions take one matrix).

The factorisations return factors packed in one array: ``cho_factor``'s ``c`` holds the
Cholesky factor in one triangle and unspecified entries in the other, ``lu_factor``'s ``lu``
holds ``L`` (unit diagonal, not stored) below the diagonal and ``U`` on and above it. Their
derivatives are those of the stored factors: a cotangent on ``cho_factor``'s unused triangle
is an error, and its tangent there is NaN. ``cho_solve``/``lu_solve`` read only the stored
factors. As in ``np.linalg``, functions that read one triangle (``cholesky``,
``solve(assume_a="pos")``, ``eigh``) give the other triangle a zero adjoint.

Options srcad does not differentiate are refused: generalized and subset ``eigh``,
``solve``'s banded/diagonal/triangular ``assume_a``, complex ``sqrtm`` and ``logm`` results.
"""
import numpy as np

from ..errors import UnsupportedCaseError
from ..registry import register_jvp, register_nondifferentiable, register_vjp
from .numpy_decompositions import cholesky_grad, cholesky_tangent, eigh_grad, eigh_tangent
from .linalg_conditioning import singular_problem
from .numpy_linalg import cofactors, from_triangle, mT, symmetric_from_triangle

try:
    import scipy.linalg as linalg
except ImportError:  # SciPy is not a dependency of srcad
    linalg = None


def _as_columns(b):
    """``b`` as a matrix of right-hand sides (a vector becomes one column)."""
    b = np.asarray(b)
    return b[:, None] if b.ndim == 1 else b


def _like_rhs(x, b):
    return x[:, 0] if np.ndim(b) == 1 else x


def is_transposed(trans):
    """``trans`` of ``solve_triangular``/``lu_solve``: 0/'N' solves ``A x = b``; 1/'T' and (for
    real matrices, the same) 2/'C' solve ``Aᵀ x = b``."""
    if trans in (0, "N", "n"):
        return False
    if trans in (1, 2, "T", "t", "C", "c"):
        return True
    raise UnsupportedCaseError(f"srcad does not differentiate trans={trans!r}; use 0, 1, 2, 'N', 'T' or 'C'")


# ---- solve_triangular --------------------------------------------------------------------------

def triangle(a, lower, unit_diagonal):
    """The triangular matrix ``solve_triangular`` reads from ``a``."""
    part = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        part = part - np.diag(np.diagonal(part)) + np.eye(np.shape(a)[-1])
    return part


def triangle_mask(g, lower, unit_diagonal):
    """The entries of ``g`` on the triangle ``solve_triangular`` reads (the diagonal too unless
    it is taken to be ones)."""
    k = -1 if unit_diagonal else 0
    return np.tril(g, k) if lower else np.triu(g, -k)


def solve_triangular_grad(g, a, b, x, trans, lower, unit_diagonal, which):
    """The adjoint of ``a`` (which=0) or ``b`` (which=1) in ``x = op(T)⁻¹ b``."""
    transposed = is_transposed(trans)
    gb = linalg.solve_triangular(a, g, trans=0 if transposed else 1, lower=lower, unit_diagonal=unit_diagonal)
    if which == 1:
        return gb
    gm = -_as_columns(gb) @ mT(_as_columns(x))  # the adjoint of op(T)
    return triangle_mask(mT(gm) if transposed else gm, lower, unit_diagonal)


def solve_triangular_tangent(ta, a, x, trans, lower, unit_diagonal):
    tm = triangle_mask(ta, lower, unit_diagonal)
    tm = mT(tm) if is_transposed(trans) else tm
    rhs = _like_rhs(-tm @ _as_columns(x), x)
    return linalg.solve_triangular(a, rhs, trans=trans, lower=lower, unit_diagonal=unit_diagonal)


# ---- Cholesky: cholesky, cho_factor, cho_solve -------------------------------------------------

def used_triangle(c, lower):
    return np.tril(c) if lower else np.triu(c)


def cho_factor_grad(g, y):
    """The adjoint of ``(c, lower) = cho_factor(a)``: the Cholesky adjoint of the stored triangle."""
    c, lower = y
    gc = np.asarray(g[0])
    if np.any(gc - used_triangle(gc, lower)):
        raise UnsupportedCaseError("the entries of cho_factor's result outside its triangle are unspecified and "
                                   "have no derivative; use them only through cho_solve, or use cholesky")
    return cholesky_grad(gc, used_triangle(c, lower), not lower)


def cho_factor_tangent(ta, y):
    c, lower = y
    tc = cholesky_tangent(ta, used_triangle(c, lower), not lower)
    unused = np.triu(np.ones_like(tc), 1) if lower else np.tril(np.ones_like(tc), -1)
    return [np.where(unused > 0, np.nan, tc), 0.0]


def factor_product(c, lower):
    """``A`` rebuilt from ``cho_factor``'s stored triangle: ``L Lᵀ`` or ``Uᵀ U``."""
    f = used_triangle(c, lower)
    return f @ mT(f) if lower else mT(f) @ f


def cho_solve_grad(g, c_and_lower, b, x, which):
    """The adjoint of the factor (which=0) or of ``b`` (which=1) in ``x = (L Lᵀ)⁻¹ b``."""
    c, lower = c_and_lower
    gb = linalg.cho_solve((c, lower), g)
    if which == 1:
        return gb
    ga = -_as_columns(gb) @ mT(_as_columns(x))
    f = used_triangle(c, lower)
    both = ga + mT(ga)
    return [np.tril(both @ f) if lower else np.triu(f @ both), 0.0]  # `lower` is a flag


def cho_solve_tangent(tc, c_and_lower, b, x):
    c, lower = c_and_lower
    f, tf = used_triangle(c, lower), used_triangle(tc[0], lower)
    ta = tf @ mT(f) + f @ mT(tf) if lower else mT(tf) @ f + mT(f) @ tf
    return linalg.cho_solve((c, lower), _like_rhs(-ta @ _as_columns(x), x))


# ---- LU: lu_factor, lu_solve -------------------------------------------------------------------

def lu_permutation(lu, piv):
    """``P`` with ``A = P L U`` from ``lu_factor``'s packed result."""
    n = np.shape(lu)[-1]
    rows = list(range(n))
    for i, p in enumerate(np.asarray(piv, int)):  # pivots may arrive as floats in derivative code
        rows[i], rows[p] = rows[p], rows[i]
    return np.eye(n)[:, rows]  # column j of P is e_{rows[j]}: (P L U)[rows] = L U


register_nondifferentiable(lu_permutation, reason="it unpacks a permutation (piecewise constant)")


def lu_parts(lu, piv):
    """``P``, ``L``, ``U`` with ``A = P L U`` from ``lu_factor``'s packed result (``L`` and
    ``U`` are ``lu``'s triangles: they carry its derivative, second order included)."""
    n = np.shape(lu)[-1]
    return lu_permutation(lu, piv), np.tril(lu, -1) + np.eye(n), np.triu(lu)


def not_square(a):
    return np.ndim(a) != 2 or np.shape(a)[0] != np.shape(a)[1]



def plu_grad(g, p, lower, upper):
    """The adjoint of ``A = P L U`` (square, ``L`` unit lower, ``U`` upper triangular) from the
    adjoint ``g`` of ``L`` strictly below the diagonal and of ``U`` on and above it: with
    ``F = L⁻¹ Pᵀ dA U⁻¹``, ``dL = L strictly_lower(F)`` and ``dU = upper(F) U``."""
    gf = np.tril(mT(lower) @ np.tril(g, -1), -1) + np.triu(np.triu(g) @ mT(upper))
    return p @ np.linalg.solve(mT(lower), mT(np.linalg.solve(upper, mT(gf))))


def plu_tangent(ta, p, lower, upper):
    """The tangents ``(dL, dU)`` of ``A = P L U`` along ``ta`` (``plu_grad``'s formulas)."""
    f = mT(np.linalg.solve(mT(upper), mT(np.linalg.solve(lower, mT(p) @ ta))))
    return lower @ np.tril(f, -1), np.triu(f) @ upper


def lu_factor_grad(g, a, y):
    """The adjoint of ``lu`` in ``(lu, piv) = lu_factor(a)``, ``lu`` packing ``L`` below the
    diagonal and ``U`` on and above it."""
    if not_square(a):
        raise UnsupportedCaseError("srcad differentiates scipy.linalg.lu_factor of square matrices only")
    lu, piv = y
    p, lower, upper = lu_parts(lu, piv)
    return plu_grad(np.asarray(g[0]), p, lower, upper)


def lu_factor_tangent(ta, a, y):
    if not_square(a):
        raise UnsupportedCaseError("srcad differentiates scipy.linalg.lu_factor of square matrices only")
    lu, piv = y
    p, lower, upper = lu_parts(lu, piv)
    tl, tu = plu_tangent(ta, p, lower, upper)
    return [tl + tu, np.zeros(np.shape(piv))]


def lu_solve_grad(g, lu_and_piv, b, x, trans, which):
    """The adjoint of ``lu`` (which=0) or ``b`` (which=1) in ``x = op(P L U)⁻¹ b``."""
    lu, piv = lu_and_piv
    transposed = is_transposed(trans)
    gb = linalg.lu_solve((lu, piv), g, trans=0 if transposed else 1)
    if which == 1:
        return gb
    gm = -_as_columns(gb) @ mT(_as_columns(x))
    ga = mT(gm) if transposed else gm  # the adjoint of A = P L U
    p, lower, upper = lu_parts(lu, piv)
    return [np.tril(mT(p) @ ga @ mT(upper), -1) + np.triu(mT(lower) @ mT(p) @ ga), np.zeros(np.shape(piv))]


def lu_solve_tangent(tlu, lu_and_piv, b, x, trans):
    lu, piv = lu_and_piv
    p, lower, upper = lu_parts(lu, piv)
    ta = p @ (np.tril(tlu[0], -1) @ upper + lower @ np.triu(tlu[0]))
    tm = mT(ta) if is_transposed(trans) else ta
    return linalg.lu_solve((lu, piv), _like_rhs(-tm @ _as_columns(x), x), trans=trans)


# ---- solve -------------------------------------------------------------------------------------

def solve_structure(assume_a, lower):
    """Which triangle ``solve`` reads: None for a general matrix, True/False for the lower/upper
    triangle of a symmetric one."""
    if assume_a in (None, "gen", "general"):
        return None
    if assume_a in ("sym", "symmetric", "pos", "positive definite", "her", "hermitian"):
        return lower
    raise UnsupportedCaseError(f"srcad does not differentiate scipy.linalg.solve(assume_a={assume_a!r}); "
                               "use assume_a='gen', 'sym' or 'pos' (or solve_triangular)")


def read_matrix(a, assume_a, lower):
    """The matrix ``solve`` works with: ``a``, or the symmetric matrix of the triangle it reads."""
    reads = solve_structure(assume_a, lower)
    return np.asarray(a) if reads is None else symmetric_from_triangle(a, reads)


def linalg_solve_grad(g, a, b, x, assume_a, lower, transposed, which):
    """The adjoint of ``a`` (which=0) or ``b`` (which=1) in ``x = scipy.linalg.solve(a, b)``."""
    m = read_matrix(a, assume_a, lower)
    m = mT(m) if transposed else m
    gb = np.linalg.solve(mT(m), _as_columns(g))
    if which == 1:
        return _like_rhs(gb, b)
    gm = -gb @ mT(_as_columns(x))
    ga = mT(gm) if transposed else gm
    reads = solve_structure(assume_a, lower)
    return ga if reads is None else from_triangle(ga, reads)


def linalg_solve_tangent(ta, a, b, x, assume_a, lower, transposed):
    m = read_matrix(a, assume_a, lower)
    tm = read_matrix(ta, assume_a, lower)
    m, tm = (mT(m), mT(tm)) if transposed else (m, tm)
    return _like_rhs(-np.linalg.solve(m, tm @ _as_columns(x)), x)


def linalg_solve_rhs_tangent(tb, a, assume_a, lower, transposed):
    m = read_matrix(a, assume_a, lower)
    return np.linalg.solve(mT(m) if transposed else m, tb)


# ---- eigh, expm, logm, sqrtm, solve_sylvester, solve_continuous_lyapunov -----------------------

def plain_eigh(a, b, lower, eigvals_only, eig_type, subset_by_index, subset_by_value):
    """Refuse the options srcad does not differentiate."""
    if b is not None or eig_type != 1:
        raise UnsupportedCaseError("srcad does not differentiate the generalized eigenproblem of scipy.linalg.eigh "
                                   "(b, type); solve it as a standard one (e.g. with a Cholesky factor of b)")
    if subset_by_index is not None or subset_by_value is not None:
        raise UnsupportedCaseError("srcad does not differentiate scipy.linalg.eigh with subset_by_index or "
                                   "subset_by_value; compute all eigenvalues and slice them")
    return lower


def eigh_values_and_vectors(y, a, eigvals_only, lower):
    return linalg.eigh(a, lower=lower) if eigvals_only else y


def frechet_block(a, e):
    """``[[a, e], [0, a]]``: a matrix function ``f`` of it is ``[[f(a), L], [0, f(a)]]``, with
    ``L`` the derivative of ``f`` at ``a`` in the direction ``e`` (a stack of blocks for a
    stack of matrices)."""
    zero = np.zeros(np.shape(a), np.result_type(np.asarray(a).dtype, np.asarray(e).dtype))
    return np.concatenate([np.concatenate([a, e], -1), np.concatenate([zero, a], -1)], -2)


def expm_frechet(a, e):
    """The derivative of ``expm`` at ``a`` in the direction ``e``."""
    n = np.shape(a)[-1]
    return linalg.expm(frechet_block(a, e))[..., :n, n:]


def logm_frechet(a, e, disp):
    """The derivative of ``logm`` at ``a`` in the direction ``e`` (the block's logarithm is real
    where ``a``'s is)."""
    if disp is not True:
        raise UnsupportedCaseError("srcad differentiates scipy.linalg.logm without disp (its result is then a "
                                   "tuple); leave it out")
    problem = singular_problem(a, "scipy.linalg.logm",
                               "its logarithm is unbounded there; differentiate a non-singular matrix")
    if problem is not None:
        raise UnsupportedCaseError(problem)
    n = np.shape(a)[-1]
    log = linalg.logm(frechet_block(a, e))
    if np.iscomplexobj(log):
        raise UnsupportedCaseError("scipy.linalg.logm returned a complex matrix; srcad differentiates real "
                                   "logarithms only (e.g. of matrices with positive real eigenvalues)")
    return log[..., :n, n:]


def real_root(y):
    """``sqrtm``'s result, refused where it is complex or singular (the derivative solves the Sylvester
    equation ``Y X + X Y = dA``, singular with ``Y``: a square root's slope at 0 is infinite)."""
    if np.iscomplexobj(y):
        raise UnsupportedCaseError("scipy.linalg.sqrtm returned a complex matrix; srcad differentiates real "
                                   "square roots only (e.g. of positive definite matrices)")
    problem = singular_problem(y, "scipy.linalg.sqrtm", "differentiate a positive definite matrix, or regularise it "
                               "(a + 1e-9 * np.eye(n))")
    if problem is not None:
        raise UnsupportedCaseError(problem)
    return y


if linalg is not None:

    @register_vjp(linalg.solve_triangular)
    def solve_triangular(y, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                         check_finite=True):
        d[a] += solve_triangular_grad(d[y], a, b, y, trans, lower, unit_diagonal, 0)
        d[b] += solve_triangular_grad(d[y], a, b, y, trans, lower, unit_diagonal, 1)

    @register_jvp(linalg.solve_triangular)
    def solve_triangular_jvp(y, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                             check_finite=True):
        t[y] += solve_triangular_tangent(t[a], a, y, trans, lower, unit_diagonal)
        t[y] += linalg.solve_triangular(a, t[b], trans=trans, lower=lower, unit_diagonal=unit_diagonal)

    @register_vjp(linalg.cholesky)
    def cholesky(y, a, lower=False, overwrite_a=False, check_finite=True):
        d[a] += cholesky_grad(d[y], y, not lower)

    @register_jvp(linalg.cholesky)
    def cholesky_jvp(y, a, lower=False, overwrite_a=False, check_finite=True):
        t[y] += cholesky_tangent(t[a], y, not lower)

    @register_vjp(linalg.cho_factor)
    def cho_factor(y, a, lower=False, overwrite_a=False, check_finite=True):
        d[a] += cho_factor_grad(d[y], y)

    @register_jvp(linalg.cho_factor)
    def cho_factor_jvp(y, a, lower=False, overwrite_a=False, check_finite=True):
        t[y] += cho_factor_tangent(t[a], y)

    @register_vjp(linalg.cho_solve)
    def cho_solve(y, c_and_lower, b, overwrite_b=False, check_finite=True):
        d[c_and_lower] += cho_solve_grad(d[y], c_and_lower, b, y, 0)
        d[b] += cho_solve_grad(d[y], c_and_lower, b, y, 1)

    @register_jvp(linalg.cho_solve)
    def cho_solve_jvp(y, c_and_lower, b, overwrite_b=False, check_finite=True):
        t[y] += cho_solve_tangent(t[c_and_lower], c_and_lower, b, y)
        t[y] += linalg.cho_solve(c_and_lower, t[b])

    @register_vjp(linalg.lu_factor)
    def lu_factor(y, a, overwrite_a=False, check_finite=True):
        d[a] += lu_factor_grad(d[y], a, y)

    @register_jvp(linalg.lu_factor)
    def lu_factor_jvp(y, a, overwrite_a=False, check_finite=True):
        t[y] += lu_factor_tangent(t[a], a, y)

    @register_vjp(linalg.lu_solve)
    def lu_solve(y, lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
        d[lu_and_piv] += lu_solve_grad(d[y], lu_and_piv, b, y, trans, 0)
        d[b] += lu_solve_grad(d[y], lu_and_piv, b, y, trans, 1)

    @register_jvp(linalg.lu_solve)
    def lu_solve_jvp(y, lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
        t[y] += lu_solve_tangent(t[lu_and_piv], lu_and_piv, b, y, trans)
        t[y] += linalg.lu_solve(lu_and_piv, t[b], trans=trans)

    @register_vjp(linalg.solve)
    def solve(y, a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
              transposed=False):
        d[a] += linalg_solve_grad(d[y], a, b, y, assume_a, lower, transposed, 0)
        d[b] += linalg_solve_grad(d[y], a, b, y, assume_a, lower, transposed, 1)

    @register_jvp(linalg.solve)
    def solve_jvp(y, a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
                  transposed=False):
        t[y] += linalg_solve_tangent(t[a], a, b, y, assume_a, lower, transposed)
        t[y] += linalg_solve_rhs_tangent(t[b], a, assume_a, lower, transposed)

    @register_vjp(linalg.inv)
    def inv(y, a, overwrite_a=False, check_finite=True):
        d[a] += -mT(y) @ d[y] @ mT(y)

    @register_jvp(linalg.inv)
    def inv_jvp(y, a, overwrite_a=False, check_finite=True):
        t[y] += -y @ t[a] @ y

    @register_vjp(linalg.det)
    def det(y, a, overwrite_a=False, check_finite=True):  # a stack of matrices too: one det each
        d[a] += np.asarray(d[y])[..., None, None] * cofactors(a, y)

    @register_jvp(linalg.det)
    def det_jvp(y, a, overwrite_a=False, check_finite=True):
        t[y] += np.sum(cofactors(a, y) * t[a], axis=(-2, -1))

    @register_vjp(linalg.eigh)
    def eigh(y, a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, type=1,
             check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
        d[a] += eigh_grad([d[y], None] if eigvals_only else d[y],
                          eigh_values_and_vectors(y, a, eigvals_only, lower),
                          plain_eigh(a, b, lower, eigvals_only, type, subset_by_index, subset_by_value))

    @register_jvp(linalg.eigh)
    def eigh_jvp(y, a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, type=1,
                 check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
        t[y] += eigh_tangent(t[a], eigh_values_and_vectors(y, a, eigvals_only, lower),
                             plain_eigh(a, b, lower, eigvals_only, type, subset_by_index, subset_by_value),
                             eigvals_only)

    @register_vjp(linalg.expm)
    def expm(y, A):
        d[A] += expm_frechet(mT(A), d[y])

    @register_jvp(linalg.expm)
    def expm_jvp(y, A):
        t[y] += expm_frechet(A, t[A])

    @register_vjp(linalg.logm)
    def logm(y, A, disp=True):
        d[A] += logm_frechet(mT(A), d[y], disp)

    @register_jvp(linalg.logm)
    def logm_jvp(y, A, disp=True):
        t[y] += logm_frechet(A, t[A], disp)

    @register_vjp(linalg.sqrtm)
    def sqrtm(y, A, disp=True, blocksize=64):
        d[A] += linalg.solve_sylvester(mT(real_root(y)), mT(y), d[y])

    @register_jvp(linalg.sqrtm)
    def sqrtm_jvp(y, A, disp=True, blocksize=64):
        t[y] += linalg.solve_sylvester(real_root(y), y, t[A])

    @register_vjp(linalg.solve_sylvester)
    def solve_sylvester(x, a, b, q):
        """``a x + x b = q``."""
        d[q] += linalg.solve_sylvester(mT(a), mT(b), d[x])
        d[a] += -linalg.solve_sylvester(mT(a), mT(b), d[x]) @ mT(x)
        d[b] += -mT(x) @ linalg.solve_sylvester(mT(a), mT(b), d[x])

    @register_jvp(linalg.solve_sylvester)
    def solve_sylvester_jvp(x, a, b, q):
        t[x] += linalg.solve_sylvester(a, b, t[q])
        t[x] += linalg.solve_sylvester(a, b, -t[a] @ x)
        t[x] += linalg.solve_sylvester(a, b, -x @ t[b])

    @register_vjp(linalg.solve_continuous_lyapunov)
    def solve_continuous_lyapunov(x, a, q):
        """``a x + x aᵀ = q``: ``solve_sylvester(a, aᵀ, q)``."""
        d[q] += linalg.solve_continuous_lyapunov(mT(a), d[x])
        d[a] += lyapunov_a_grad(linalg.solve_continuous_lyapunov(mT(a), d[x]), x)

    @register_jvp(linalg.solve_continuous_lyapunov)
    def solve_continuous_lyapunov_jvp(x, a, q):
        t[x] += linalg.solve_continuous_lyapunov(a, t[q])
        t[x] += linalg.solve_continuous_lyapunov(a, -t[a] @ x - x @ mT(t[a]))


def lyapunov_a_grad(gq, x):
    """The adjoint of ``a`` in ``a x + x aᵀ = q``, from ``q``'s adjoint ``gq``: ``a`` enters
    as both Sylvester coefficients."""
    return -gq @ mT(x) - mT(gq) @ x
