"""The conditioning checks the linear-algebra rules share.

Guarantee: a rule whose derivative divides by a pivot, a singular value or an eigenvalue gap
asks one of these first; where that divisor is zero to working precision — within
``scale · n · eps`` (``scale`` the largest pivot, singular value or eigenvalue in absolute value,
``n`` the matrix's largest dimension, ``eps`` its dtype's), the tolerance
``np.linalg.matrix_rank`` uses — the check returns a message saying why and what to do, and the
rule raises ``UnsupportedCaseError`` with it instead of returning rounding error (or inf, or NaN)
as a derivative. Above the tolerance the derivative is defined and computed (a condition number
of 1e6 is differentiated). Each check returns the message or None, so that the helpers calling
it stay pure (``if problem is not None: raise ...``) and are read as source at second order.
"""
import numpy as np

from ..registry import register_nondifferentiable


def working_eps(x):
    return np.finfo(np.result_type(np.asarray(x).dtype, np.float16)).eps


def negligible(values, scale, n):
    """Where ``|values|`` is within ``scale · n · eps`` (``scale`` broadcasts against them)."""
    return np.abs(values) <= np.abs(scale) * n * working_eps(values)


def singular_values_of(a):
    return np.linalg.svd(np.asarray(a), compute_uv=False)


def is_singular(a):
    """Whether a matrix of the stack ``a`` is singular to working precision."""
    if _clearly_regular(a):
        return False
    s = singular_values_of(a)
    return bool(s.size) and bool(np.any(negligible(s, np.max(s, axis=-1, keepdims=True), max(np.shape(a)[-2:]))))


def _clearly_regular(a):
    """Whether no square matrix of the stack ``a`` is singular to working precision, proven from
    its inverse at the cost of two norms instead of an SVD: ``κ₂ ≤ n·‖A‖₁‖A⁻¹‖₁``, so
    ``‖A‖₁‖A⁻¹‖₁ < 1/(n²·eps)`` keeps ``s_min/s_max`` above ``n·eps``. False proves nothing."""
    shape = np.shape(a)
    if len(shape) < 2 or shape[-1] != shape[-2] or shape[-1] == 0:
        return False
    try:
        inverse = np.linalg.inv(a)
    except np.linalg.LinAlgError:  # an exact zero pivot
        return False
    n = shape[-1]
    with np.errstate(all="ignore"):  # huge entries overflow the norms: then no proof
        return bool(np.all(_norm1(np.asarray(a)) * _norm1(inverse) < 1.0 / (n * n * working_eps(inverse))))


def _norm1(a):
    """The 1-norm (largest column sum) of each matrix of the stack ``a``."""
    return abs(a).sum(axis=-2).max(axis=-1)


def singular_problem(a, what, advice):
    """Why ``what`` has no derivative where ``a`` (a matrix or a stack) is singular to working
    precision, or None."""
    if not is_singular(a):
        return None
    s = singular_values_of(a)
    largest = s.max(axis=-1, keepdims=True)
    return (f"{what} of a matrix singular to working precision (smallest singular value {np.min(s):.3g}, largest "
            f"{np.max(largest):.3g}) is not differentiable there (its derivative divides by that singular value "
            f"and would be rounding error): {advice}")


def close_pairs(values, n):
    """``C[..., i, j]``: whether ``values`` i and j (i ≠ j) are equal to working precision, relative to the
    largest of them in absolute value."""
    gaps = values[..., None, :] - values[..., :, None]
    scale = np.max(np.abs(values), axis=-1, keepdims=True)[..., None]
    return negligible(gaps, scale, n) & ~np.eye(values.shape[-1], dtype=bool)


def unresolved(mask, numerators, message):
    """``message`` where ``mask`` holds and ``numerators`` are not rounding error (relative to their
    largest entry), else None: the caller may then drop those entries (their limit is zero)."""
    numerators = np.asarray(numerators)
    if not np.any(mask):
        return None
    scale = np.max(np.abs(numerators)) if numerators.size else 0.0
    return message if np.any(mask & ~negligible(numerators, scale, 8 * mask.shape[-1])) else None


def different_cotangents(values, g, n, what):
    """Why the adjoint of sorted ``values`` (eigenvalues, singular values) is not defined, where two
    of them are equal to working precision but their cotangents differ (each is then a kink of the
    other: their order swaps; only symmetric functions of the pair, ``np.sum(s)``, are
    differentiable), or None."""
    g = np.broadcast_to(np.asarray(g), np.shape(values))
    return unresolved(close_pairs(values, n), g[..., None, :] - g[..., :, None],
                      f"the {what} are repeated here (two are equal to working precision) and the function weighs "
                      "them differently: it is not differentiable there (the repeated values can swap in either "
                      "direction). Differentiate a symmetric function of them (a sum, a norm) or a point where they "
                      "are distinct")


def kinked(s, n, picked, what):
    """Why ``what``, a function of the singular values ``s`` (a stack too) ``picked`` (a mask over their
    last axis, e.g. the largest), has a kink here — one of them equals one not picked, or is zero, to
    working precision (the order of the values swaps, or a value at 0 grows whichever way the matrix
    moves) — or None."""
    s = np.asarray(s)
    if s.size == 0:
        return None
    picked = np.asarray(picked, dtype=bool)
    mixed = close_pairs(s, n) & (picked[:, None] != picked[None, :])
    zero = negligible(s, np.max(s, axis=-1, keepdims=True), n) & picked
    if not (np.any(mixed) or np.any(zero)):
        return None
    return (f"{what} is not differentiable here: a singular value it depends on is "
            f"{'zero' if np.any(zero) else 'repeated'} to working precision (singular values {np.round(s, 6)}), "
            "where it has a kink; differentiate a point where they are distinct and non-zero, or smooth it "
            "(np.sqrt(np.sum(s**2) + eps) for the nuclear norm)")


register_nondifferentiable(working_eps, negligible, singular_values_of, is_singular, singular_problem, close_pairs, unresolved,
                           different_cotangents, kinked, reason="it checks conditioning (piecewise constant)")
