"""Rules for ``scipy.linalg``'s factorizations of one real matrix that NumPy's rules already
cover in another form, reverse (vjp) and forward (jvp): ``svdvals`` (``np.linalg.svd``'s
singular values), ``qr`` (``np.linalg.qr``'s modes: "economic" is "reduced", "full" is
"complete", "r" is the R of "full"), ``lu`` (``A = P L U`` of a square matrix, as
``lu_factor``) and ``polar`` (``A = U P`` or ``P U`` of a square matrix, through the Sylvester
equation ``P Ω + Ω P = UᵀdA - dAᵀU`` for ``Ω = UᵀdU``; it needs ``A`` invertible, refused elsewhere). Refused when
the code runs: ``qr(pivoting=True)`` and ``mode="raw"``, ``lu`` of a non-square matrix,
``permute_l=True`` or ``p_indices=True``, ``polar`` of a non-square matrix."""
import numpy as np

from ..errors import UnsupportedCaseError
from ..registry import register_jvp, register_vjp
from .numpy_decompositions import qr_grad, qr_tangent, svd_grad, svd_tangent
from .linalg_conditioning import singular_problem
from .numpy_linalg import mT
from .scipy_linalg import not_square, plu_grad, plu_tangent

try:
    import scipy.linalg as linalg
except ImportError:  # SciPy is not a dependency of srcad
    linalg = None


def _zeros_for_none(g, like):
    """A factor's cotangent, zeros where there is none."""
    return np.zeros(np.shape(like)) if g is None else np.asarray(g)


# ---- qr --------------------------------------------------------------------------------------

def numpy_qr_mode(mode, pivoting):
    """``np.linalg.qr``'s mode for ``scipy.linalg.qr``'s."""
    if pivoting:
        raise UnsupportedCaseError("srcad does not differentiate scipy.linalg.qr(pivoting=True) (the column order "
                                   "is piecewise constant, the factors are not smooth across its changes); "
                                   "use pivoting=False")
    if mode == "raw":
        raise UnsupportedCaseError("srcad does not differentiate scipy.linalg.qr(mode='raw')")
    return "reduced" if mode == "economic" else "complete"


def scipy_qr_grad(g, y, a, mode, pivoting):
    """The adjoint of ``a`` in ``scipy.linalg.qr(a, mode=mode)``: ``np.linalg.qr``'s, with the
    full ``Q`` made again for mode "r" (which returns ``(R,)``)."""
    numpy_mode = numpy_qr_mode(mode, pivoting)
    if mode == "r":
        return qr_grad([None, None if g is None else g[0]], [linalg.qr(a)[0], y[0]], a, numpy_mode)
    return qr_grad(g, y, a, numpy_mode)


def scipy_qr_tangent(ta, y, a, mode, pivoting):
    numpy_mode = numpy_qr_mode(mode, pivoting)
    if mode == "r":
        return [qr_tangent(ta, [linalg.qr(a)[0], y[0]], a, numpy_mode)[1]]
    return qr_tangent(ta, y, a, numpy_mode)


# ---- lu --------------------------------------------------------------------------------------

def _lu_factors(y, a, permute_l, p_indices):
    """``(P, L, U)``, ``scipy.linalg.lu``'s result, if srcad differentiates it."""
    if not_square(a):
        raise UnsupportedCaseError("srcad differentiates scipy.linalg.lu of square matrices only")
    if permute_l or p_indices:
        raise UnsupportedCaseError("srcad differentiates scipy.linalg.lu with its default results (P, L, U) only; "
                                   "drop permute_l and p_indices (P @ L is the permuted L)")
    return y


def lu_grad(g, y, a, permute_l, p_indices):
    """The adjoint of ``a`` in ``P, L, U = scipy.linalg.lu(a)`` (``P`` has none: it is
    piecewise constant)."""
    p, lower, upper = _lu_factors(y, a, permute_l, p_indices)
    gl = _zeros_for_none(None if g is None else g[1], lower)
    gu = _zeros_for_none(None if g is None else g[2], upper)
    return plu_grad(np.tril(gl, -1) + np.triu(gu), p, lower, upper)


def lu_tangent(ta, y, a, permute_l, p_indices):
    p, lower, upper = _lu_factors(y, a, permute_l, p_indices)
    tl, tu = plu_tangent(ta, p, lower, upper)
    return [np.zeros(np.shape(p)), tl, tu]


# ---- polar -----------------------------------------------------------------------------------

def _polar_factors(y, a, side):
    """``(U, P)`` of the right polar decomposition ``A' = U P`` of ``A' = A`` (side "right") or
    of ``A' = Aᵀ = Uᵀ P`` (side "left": ``A = P U``)."""
    if not_square(a):
        raise UnsupportedCaseError("srcad differentiates scipy.linalg.polar of square matrices only")
    problem = singular_problem(a, "scipy.linalg.polar", "its factors are not differentiable there (P is the "
                               "square root of AᵀA, U is not unique); differentiate a non-singular matrix")
    if problem is not None:
        raise UnsupportedCaseError(problem)
    u, p = y
    return (mT(u) if side == "left" else u), p


def polar_grad(g, y, a, side):
    """The adjoint of ``a`` in ``U, P = scipy.linalg.polar(a, side)``: for ``A = U P``, with
    ``S(M)`` solving ``P S + S P = M`` and ``M = Uᵀ Ū - P̄ P``, ``Ā = U (S - Sᵀ + P̄)``."""
    u, p = _polar_factors(y, a, side)
    gu = _zeros_for_none(None if g is None else g[0], u)
    gp = _zeros_for_none(None if g is None else g[1], p)
    if side == "left":
        gu = mT(gu)
    s = linalg.solve_sylvester(p, p, mT(u) @ gu - gp @ p)
    ga = u @ (s - mT(s) + gp)
    return mT(ga) if side == "left" else ga


def polar_tangent(ta, y, a, side):
    """``dU = U Ω`` and ``dP = UᵀdA - Ω P``, ``Ω`` solving ``P Ω + Ω P = UᵀdA - dAᵀU``."""
    u, p = _polar_factors(y, a, side)
    x = mT(u) @ (mT(ta) if side == "left" else ta)
    omega = linalg.solve_sylvester(p, p, x - mT(x))
    tu = u @ omega
    return [mT(tu) if side == "left" else tu, x - omega @ p]


if linalg is not None:

    @register_vjp(linalg.svdvals)
    def svdvals(y, a, overwrite_a=False, check_finite=True):
        d[a] += svd_grad(d[y], y, a, False, False, False)

    @register_jvp(linalg.svdvals)
    def svdvals_jvp(y, a, overwrite_a=False, check_finite=True):
        t[y] += svd_tangent(t[a], y, a, False, False, False)

    @register_vjp(linalg.qr)
    def qr(y, a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
        d[a] += scipy_qr_grad(d[y], y, a, mode, pivoting)

    @register_jvp(linalg.qr)
    def qr_jvp(y, a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
        t[y] += scipy_qr_tangent(t[a], y, a, mode, pivoting)

    @register_vjp(linalg.lu)
    def lu(y, a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
        d[a] += lu_grad(d[y], y, a, permute_l, p_indices)

    @register_jvp(linalg.lu)
    def lu_jvp(y, a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
        t[y] += lu_tangent(t[a], y, a, permute_l, p_indices)

    @register_vjp(linalg.polar)
    def polar(y, a, side="right"):
        d[a] += polar_grad(d[y], y, a, side)

    @register_jvp(linalg.polar)
    def polar_jvp(y, a, side="right"):
        t[y] += polar_tangent(t[a], y, a, side)
