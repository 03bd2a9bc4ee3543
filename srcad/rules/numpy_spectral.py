"""Rules for functions of the spectrum of a general real matrix: ``np.linalg.cond`` (the
2-norm condition number, a ratio of extreme singular values) and ``np.linalg.eigvals`` (complex
for a real matrix with complex eigenvalues), reverse (vjp) and forward (jvp), for matrices and
stacks of matrices.

The extreme singular values must be simple and the matrix non-singular (a repeated largest or
smallest singular value has no derivative): refused elsewhere. ``cond`` in another norm (``p`` of
1, -1, inf, -inf, 'fro') is refused at run time: write it as ``norm(a, p) * norm(inv(a), p)``,
which srcad differentiates.

``eigvals`` needs distinct eigenvalues: with ``a = V Λ V⁻¹``, ``dλᵢ = (V⁻¹ da V)ᵢᵢ``. Its result
is complex where ``a`` has complex eigenvalues; under srcad's convention (docs/extending.md,
"Complex values") the cotangent ``ḡ = ∂L/∂Re λ + i ∂L/∂Im λ`` gives ``∂L/∂a = Re(V⁻ᵀ diag(ḡ*) Vᵀ)``,
and the rule is marked complex-safe for that result (a complex ``a`` is refused at run time).
Second derivatives of ``eigvals`` are not computed (``np.linalg.eig`` has no rule).
"""
import numpy as np

from ..errors import UnsupportedCaseError
from .linalg_conditioning import close_pairs, kinked, singular_problem, unresolved
from .numpy_linalg import mT
from ..registry import no_derivative, register_complex_safe, register_jvp, register_nondifferentiable, register_vjp


def cond_in_largest_over_smallest(p):
    """True for ``cond(a, p)`` = σ_max / σ_min (``p`` None or 2), False for σ_min / σ_max
    (``p`` = -2); any other ``p`` is refused."""
    if p is None or (np.ndim(p) == 0 and not isinstance(p, str) and p in (2, -2)):
        return p != -2
    raise UnsupportedCaseError(f"srcad differentiates np.linalg.cond for p=None, 2 or -2 (a ratio of singular "
                               f"values) only, not p={p!r}; write np.linalg.norm(a, p) * "
                               f"np.linalg.norm(np.linalg.inv(a), p)")


def cond_slope(a, p):
    """``∂ cond(a, p) / ∂a``: for ``c = σ₁/σₙ``, ``(u₁v₁ᵀ - c uₙvₙᵀ)/σₙ`` (``∂σᵢ/∂a = uᵢvᵢᵀ``);
    for ``p = -2`` the roles of the two are swapped."""
    largest_over_smallest = cond_in_largest_over_smallest(p)
    problem = singular_problem(a, "np.linalg.cond",
                               "the condition number is unbounded there; differentiate a non-singular matrix")
    if problem is not None:
        raise UnsupportedCaseError(problem)
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    positions = np.arange(s.shape[-1])
    for extreme in (0, s.shape[-1] - 1):
        problem = kinked(s, max(np.shape(a)[-2:]), positions == extreme, "np.linalg.cond")
        if problem is not None:
            raise UnsupportedCaseError(problem)
    first = u[..., :, :1] * vt[..., :1, :]  # u₁v₁ᵀ
    last = u[..., :, -1:] * vt[..., -1:, :]  # uₙvₙᵀ
    top, bottom = s[..., :1, None], s[..., -1:, None]
    if largest_over_smallest:
        return (first - (top / bottom) * last) / bottom
    return (last - (bottom / top) * first) / top


@register_vjp(np.linalg.cond)
def cond(y, x, p=None):
    d[x] += np.asarray(d[y])[..., None, None] * cond_slope(x, p)


@register_jvp(np.linalg.cond)
def cond_jvp(y, x, p=None):
    t[y] += np.sum(cond_slope(x, p) * t[x], axis=(-2, -1))


def eigenvectors_in_order(a, w):
    """``V`` and ``V⁻¹`` of ``a = V diag(w) V⁻¹``, the columns of ``V`` in the order of the
    eigenvalues ``w`` that ``np.linalg.eigvals`` returned (``np.linalg.eig`` computes them
    again, and LAPACK need not order them alike)."""
    if np.iscomplexobj(a):
        raise UnsupportedCaseError("srcad differentiates np.linalg.eigvals of a real matrix only, not of a complex one")
    problem = unresolved(close_pairs(np.asarray(w), np.shape(a)[-1]), 1.0,
                         "np.linalg.eigvals has repeated eigenvalues here (equal to working precision), where "
                         "each of them has no derivative (they can split in any direction); differentiate a matrix "
                         "with distinct eigenvalues, or a symmetric function of them (np.trace(a) is their sum)")
    if problem is not None:
        raise UnsupportedCaseError(problem)
    values, vectors = np.linalg.eig(a)
    nearest = np.argmin(np.abs(np.asarray(w)[..., :, None] - values[..., None, :]), axis=-1)
    vectors = np.take_along_axis(vectors, nearest[..., None, :], axis=-1)
    return vectors, np.linalg.inv(vectors)


def eigvals_grad(g, a, w):
    """``Re(V⁻ᵀ diag(ḡ*) Vᵀ)``: the adjoint of the real ``a`` for the cotangent ``g`` of its
    eigenvalues ``w``."""
    vectors, inverse = eigenvectors_in_order(a, w)
    return np.real(mT(vectors @ (np.conj(np.asarray(g))[..., :, None] * inverse)))


def eigvals_tangent(ta, a, w):
    """``dλᵢ = (V⁻¹ da V)ᵢᵢ``."""
    vectors, inverse = eigenvectors_in_order(a, w)
    tangent = np.einsum("...ij,...jk,...ki->...i", inverse, ta, vectors)
    return tangent if np.iscomplexobj(w) else np.real(tangent)


@register_vjp(np.linalg.eigvals)
def eigvals(y, a):
    d[a] += eigvals_grad(d[y], a, y)


@register_jvp(np.linalg.eigvals)
def eigvals_jvp(y, a):
    t[y] += eigvals_tangent(t[a], a, y)


# a derivative of eigvals' derivative (hessian, hvp, grad of grad) is refused at the user's line
_ONCE = "srcad differentiates it once (np.linalg.eig has no rule)"


@register_vjp(eigvals_grad)
def eigvals_grad_vjp(r, g, a, w):
    d[g] += no_derivative("np.linalg.eigvals to second order", _ONCE)
    d[a] += no_derivative("np.linalg.eigvals to second order", _ONCE)
    d[w] += no_derivative("np.linalg.eigvals to second order", _ONCE)


@register_jvp(eigvals_grad)
def eigvals_grad_jvp(r, g, a, w):
    t[r] += t[g] * no_derivative("np.linalg.eigvals to second order", _ONCE)
    t[r] += t[a] * no_derivative("np.linalg.eigvals to second order", _ONCE)
    t[r] += t[w] * no_derivative("np.linalg.eigvals to second order", _ONCE)


@register_vjp(eigvals_tangent)
def eigvals_tangent_vjp(r, ta, a, w):
    d[ta] += no_derivative("np.linalg.eigvals to second order", _ONCE)
    d[a] += no_derivative("np.linalg.eigvals to second order", _ONCE)
    d[w] += no_derivative("np.linalg.eigvals to second order", _ONCE)


@register_jvp(eigvals_tangent)
def eigvals_tangent_jvp(r, ta, a, w):
    t[r] += t[ta] * no_derivative("np.linalg.eigvals to second order", _ONCE)
    t[r] += t[a] * no_derivative("np.linalg.eigvals to second order", _ONCE)
    t[r] += t[w] * no_derivative("np.linalg.eigvals to second order", _ONCE)


register_complex_safe(np.linalg.eigvals, eigvals_grad, eigvals_tangent)
register_nondifferentiable(cond_in_largest_over_smallest, reason="it checks an option")
