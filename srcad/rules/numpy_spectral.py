"""Rules for functions of the spectrum of a general real matrix: ``np.linalg.cond`` (the
2-norm condition number, a ratio of extreme singular values), reverse (vjp) and forward (jvp),
for matrices and stacks of matrices.

The extreme singular values must be simple (the derivative divides by nothing, but a repeated
largest or smallest singular value has no derivative). ``cond`` in another norm (``p`` of
1, -1, inf, -inf, 'fro') is refused at run time: write it as ``norm(a, p) * norm(inv(a), p)``,
which srcad differentiates.
"""
import numpy as np

from ..errors import UnsupportedCaseError
from ..registry import register_jvp, register_nondifferentiable, register_vjp


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
    u, s, vt = np.linalg.svd(a, full_matrices=False)
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


register_nondifferentiable(cond_in_largest_over_smallest, reason="it checks an option")
