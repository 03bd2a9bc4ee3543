"""Rules for NumPy's products, reverse (vjp) and forward (jvp).

Every product is linear in each operand, so a forward rule is the product with one operand
replaced by its tangent. Reverse rules contract the cotangent with the other operands:
most products are written as an ``np.einsum`` specification and share ``einsum_grad``.
"""
import numpy as np

from ..registry import register_jvp, register_nondifferentiable, register_vjp
from ..runtime import as_array, matmul_dx, matmul_dy, unbroadcast
from .numpy_shapes import grad_zeros

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


# ---- einsum ---------------------------------------------------------------------------------

def einsum_call(subscripts, operands):
    """``(specification, arrays)`` of an einsum call in either of NumPy's forms:
    ``einsum("ij,jk", a, b)`` or ``einsum(a, [0, 1], b, [1, 2], [0, 2])``."""
    if isinstance(subscripts, str):
        return subscripts, list(operands)
    args = [subscripts, *operands]
    arrays, sublists = args[0::2], args[1::2]
    output = None
    if len(args) % 2:  # a trailing output sublist
        arrays, output = arrays[:-1], arrays[-1]

    def letters(sublist):
        return "".join("..." if s is Ellipsis else _LETTERS[s] for s in sublist)

    spec = ",".join(letters(s) for s in sublists)
    return (spec if output is None else spec + "->" + letters(output)), arrays


def einsum_terms(spec, shapes):
    """Each operand's letters and the output's letters, ``...`` replaced by fresh letters
    (right-aligned, as NumPy broadcasts it) and an implicit output made explicit."""
    spec = spec.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    free = [c for c in _LETTERS if c not in spec]
    n_ellipsis = max((len(shape) - len(term) + 3 for term, shape in zip(terms, shapes) if "..." in term), default=0)
    ellipsis = "".join(free[:n_ellipsis])
    expanded = []
    for term, shape in zip(terms, shapes):
        if "..." in term:
            term = term.replace("...", ellipsis[n_ellipsis - (len(shape) - len(term) + 3):])
        expanded.append(term)
    if arrow:
        output = output.replace("...", ellipsis)
    else:
        letters = "".join(terms).replace(".", "")
        output = ellipsis + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return expanded, output


def einsum_grad(g, position, subscripts, *operands):
    """The adjoint of ``operands[position]`` in ``np.einsum(subscripts, *operands)``
    (position -1 is ``subscripts`` itself, an array in the sublist form). Repeated letters
    (traces, diagonals), letters summed away, ellipses and broadcast size-1 axes are handled."""
    spec, arrays = einsum_call(subscripts, operands)
    index = position if isinstance(subscripts, str) else (position + 1) // 2
    arrays = [as_array(x) for x in arrays]
    terms, output = einsum_terms(spec, [x.shape for x in arrays])
    target, x = terms[index], arrays[index]
    others = [(term, other) for k, (term, other) in enumerate(zip(terms, arrays)) if k != index]
    letters = "".join(dict.fromkeys(target))
    elsewhere = set(output).union(*(set(term) for term, _ in others))
    kept = "".join(c for c in letters if c in elsewhere)
    grad = np.einsum(",".join([term for term, _ in others] + [output]) + "->" + kept,
                     *[other for _, other in others], g)
    grad = np.expand_dims(grad, tuple(k for k, c in enumerate(letters) if c not in elsewhere))
    sizes = tuple(x.shape[target.index(c)] for c in letters)
    broadcast = tuple(k for k, n in enumerate(sizes) if n == 1 and grad.shape[k] != 1)
    if broadcast:
        grad = np.sum(grad, axis=broadcast, keepdims=True)
    grad = np.broadcast_to(grad, sizes)
    if len(letters) == len(target):
        return np.transpose(grad, [letters.index(c) for c in target])
    out = grad_zeros(x.shape, grad)
    np.einsum(target + "->" + letters, out)[...] = grad  # a writeable view of the diagonal
    return out


def einsum_tangent(t, position, subscripts, *operands):
    """``np.einsum`` with ``operands[position]`` (-1: ``subscripts``) replaced by its tangent."""
    return np.einsum(*replaced_args(subscripts, operands, position, t))


def replaced_args(subscripts, operands, position, value):
    """The arguments ``(subscripts, *operands)`` of an einsum call with ``operands[position]``
    (-1: ``subscripts``) replaced by ``value``."""
    args = [subscripts, *operands]
    args[position + 1] = value
    return args


# generated adjoints call einsum_grad: its own rules make them differentiable again
@register_vjp(einsum_grad)
def einsum_grad_vjp(r, g, position, subscripts, *operands):
    """``r`` is linear in ``g`` and in each operand but the one at ``position``:
    ``⟨h, r⟩ = ⟨g, einsum(... h in place of that operand ...)⟩``."""
    d[g] += einsum_tangent(d[r], position, subscripts, *operands)
    if position != -1:
        d[subscripts] += einsum_grad(g, -1, *replaced_args(subscripts, operands, position, d[r]))
    for i, op in enumerate(operands):
        if i != position:
            d[op] += einsum_grad(g, i, *replaced_args(subscripts, operands, position, d[r]))


@register_jvp(einsum_grad)
def einsum_grad_jvp(r, g, position, subscripts, *operands):
    t[r] += einsum_grad(t[g], position, subscripts, *operands)
    if position != -1:
        t[r] += einsum_grad(g, position, *replaced_args(subscripts, operands, -1, t[subscripts]))
    for i, op in enumerate(operands):
        if i != position:
            t[r] += einsum_grad(g, position, *replaced_args(subscripts, operands, i, t[op]))


@register_vjp(np.einsum)
def einsum(y, subscripts, *operands, **options):
    d[subscripts] += einsum_grad(d[y], -1, subscripts, *operands)
    for i, op in enumerate(operands):
        d[op] += einsum_grad(d[y], i, subscripts, *operands)


@register_jvp(np.einsum)
def einsum_jvp(y, subscripts, *operands, **options):
    t[y] += einsum_tangent(t[subscripts], -1, subscripts, *operands)
    for i, op in enumerate(operands):
        t[y] += einsum_tangent(t[op], i, subscripts, *operands)


# ---- dot, matmul, inner, outer, tensordot, vdot ---------------------------------------------

def dot_subscripts(a, b):
    """``np.dot(a, b)`` as an einsum specification."""
    na, nb = np.ndim(a), np.ndim(b)
    left, right = _LETTERS[:na], _LETTERS[na:na + nb]
    if na == 0 or nb == 0:
        return f"{left},{right}->{left}{right}"
    if nb == 1:
        return f"{left},{left[-1]}->{left[:-1]}"
    right = right[:-2] + left[-1] + right[-1]  # b's second-to-last axis meets a's last
    return f"{left},{right}->{left[:-1]}{right[:-2]}{right[-1]}"


def dot_grad(g, a, b, which):
    """The adjoint of operand ``which`` (0 or 1) of ``np.dot(a, b)``."""
    if 1 <= np.ndim(a) <= 2 and 1 <= np.ndim(b) <= 2:
        return matmul_dx(g, a, b) if which == 0 else matmul_dy(g, a, b)
    return einsum_grad(g, which, dot_subscripts(a, b), a, b)


@register_vjp(dot_grad)
def dot_grad_vjp(r, g, a, b, which):
    """``r`` is linear in ``g`` and in the operand that is not ``which``."""
    if which == 0:
        d[g] += np.dot(d[r], b)
        d[b] += dot_grad(g, d[r], b, 1)
    else:
        d[g] += np.dot(a, d[r])
        d[a] += dot_grad(g, a, d[r], 0)


@register_jvp(dot_grad)
def dot_grad_jvp(r, g, a, b, which):
    t[r] += dot_grad(t[g], a, b, which)
    if which == 0:
        t[r] += dot_grad(g, a, t[b], 0)
    else:
        t[r] += dot_grad(g, t[a], b, 1)


@register_vjp(np.dot)
def dot(z, a, b):
    """Arrays of 1 or 2 dimensions get the code of ``@`` (decided when shapes are known);
    everything else (0-d and Python scalars, lists, N-D operands) the general helper."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.ndim(a) == 2 and np.ndim(b) == 2:
        d[a] += d[z] @ b.T
        d[b] += a.T @ d[z]
    elif isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.ndim(a) == 2 and np.ndim(b) == 1:
        d[a] += d[z][:, None] * b
        d[b] += d[z] @ a
    elif isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.ndim(a) == 1 and np.ndim(b) == 2:
        d[a] += b @ d[z]
        d[b] += a[:, None] * d[z]
    elif isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.ndim(a) == 1 and np.ndim(b) == 1:
        d[a] += d[z] * b
        d[b] += d[z] * a
    else:
        d[a] += dot_grad(d[z], a, b, 0)
        d[b] += dot_grad(d[z], a, b, 1)


@register_jvp(np.dot)
def dot_jvp(z, a, b):
    t[z] += np.dot(t[a], b)
    t[z] += np.dot(a, t[b])


def inner_subscripts(a, b):
    """``np.inner(a, b)`` (a sum over the last axes) as an einsum specification."""
    na, nb = np.ndim(a), np.ndim(b)
    left, right = _LETTERS[:na], _LETTERS[na:na + nb]
    if na == 0 or nb == 0:
        return f"{left},{right}->{left}{right}"
    right = right[:-1] + left[-1]
    return f"{left},{right}->{left[:-1]}{right[:-1]}"


@register_vjp(np.inner)
def inner(y, a, b):
    d[a] += einsum_grad(d[y], 0, inner_subscripts(a, b), a, b)
    d[b] += einsum_grad(d[y], 1, inner_subscripts(a, b), a, b)


@register_jvp(np.inner)
def inner_jvp(y, a, b):
    t[y] += np.inner(t[a], b)
    t[y] += np.inner(a, t[b])


@register_vjp(np.outer)
def outer(y, a, b, out=None):
    d[a] += np.reshape(np.asarray(d[y]) @ np.ravel(b), np.shape(a))
    d[b] += np.reshape(np.ravel(a) @ np.asarray(d[y]), np.shape(b))


@register_jvp(np.outer)
def outer_jvp(y, a, b, out=None):
    t[y] += np.outer(t[a], b)
    t[y] += np.outer(a, t[b])


def tensordot_subscripts(a, b, axes):
    """``np.tensordot(a, b, axes)`` (a count, or a pair of axis lists) as an einsum
    specification."""
    na, nb = np.ndim(a), np.ndim(b)
    if np.ndim(axes) == 0:
        axes_a, axes_b = list(range(na - int(axes), na)), list(range(int(axes)))
    else:
        axes_a, axes_b = ([ax] if np.ndim(ax) == 0 else list(ax) for ax in axes)
    axes_a = [int(ax) % na for ax in axes_a]
    axes_b = [int(ax) % nb for ax in axes_b]
    left = list(_LETTERS[:na])
    right = list(_LETTERS[na:na + nb])
    for ax_a, ax_b in zip(axes_a, axes_b):
        right[ax_b] = left[ax_a]
    out = [c for k, c in enumerate(left) if k not in axes_a] + [c for k, c in enumerate(right) if k not in axes_b]
    return f"{''.join(left)},{''.join(right)}->{''.join(out)}"


@register_vjp(np.tensordot)
def tensordot(y, a, b, axes=2):
    d[a] += einsum_grad(d[y], 0, tensordot_subscripts(a, b, axes), a, b)
    d[b] += einsum_grad(d[y], 1, tensordot_subscripts(a, b, axes), a, b)


@register_jvp(np.tensordot)
def tensordot_jvp(y, a, b, axes=2):
    t[y] += np.tensordot(t[a], b, axes)
    t[y] += np.tensordot(a, t[b], axes)


@register_vjp(np.vdot)
def vdot(y, a, b):
    d[a] += np.reshape(d[y] * np.ravel(b), np.shape(a))
    d[b] += np.reshape(d[y] * np.ravel(a), np.shape(b))


@register_jvp(np.vdot)
def vdot_jvp(y, a, b):
    t[y] += np.vdot(t[a], b)
    t[y] += np.vdot(a, t[b])


# ---- kron, cross, convolve, correlate -------------------------------------------------------

def kron_grad(g, a, b, which):
    """The adjoint of operand ``which`` of ``np.kron(a, b)``: the blocks of ``g`` contracted
    with the other operand."""
    a, b = np.asarray(a), np.asarray(b)
    n = max(a.ndim, b.ndim)
    shape_a = (1,) * (n - a.ndim) + a.shape
    shape_b = (1,) * (n - b.ndim) + b.shape
    blocks = np.reshape(g, [k for pair in zip(shape_a, shape_b) for k in pair])  # (a0, b0, a1, b1, ...)
    if which == 0:
        grad = np.tensordot(blocks, b.reshape(shape_b), axes=(list(range(1, 2 * n, 2)), list(range(n))))
        return grad.reshape(a.shape)
    grad = np.tensordot(blocks, a.reshape(shape_a), axes=(list(range(0, 2 * n, 2)), list(range(n))))
    return grad.reshape(b.shape)


# generated adjoints call kron_grad: bilinear in the cotangent and the other operand
@register_vjp(kron_grad)
def kron_grad_vjp(r, g, a, b, which):
    if which == 0:
        d[g] += np.kron(d[r], b)
        d[b] += kron_grad(g, d[r], b, 1)
    else:
        d[g] += np.kron(a, d[r])
        d[a] += kron_grad(g, a, d[r], 0)


@register_jvp(kron_grad)
def kron_grad_jvp(r, g, a, b, which):
    t[r] += kron_grad(t[g], a, b, which)
    if which == 0:
        t[r] += kron_grad(g, a, t[b], 0)
    else:
        t[r] += kron_grad(g, t[a], b, 1)


@register_vjp(np.kron)
def kron(y, a, b):
    d[a] += kron_grad(d[y], a, b, 0)
    d[b] += kron_grad(d[y], a, b, 1)


@register_jvp(np.kron)
def kron_jvp(y, a, b):
    t[y] += np.kron(t[a], b)
    t[y] += np.kron(a, t[b])


def _as_3_vectors(v, axis):
    v = np.moveaxis(np.asarray(v), axis, -1)
    if v.shape[-1] == 2:  # NumPy's 2-vectors have a zero z component
        v = np.concatenate([v, np.zeros(v.shape[:-1] + (1,), v.dtype)], -1)
    return v


def cross_grad(g, a, b, axisa, axisb, axisc, axis, which):
    """The adjoint of operand ``which`` of ``np.cross``: ``g·(a×b) = a·(b×g) = b·(g×a)``."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a3, b3 = _as_3_vectors(a, axisa), _as_3_vectors(b, axisb)
    g = np.asarray(g)
    if np.shape(a)[axisa] == 2 and np.shape(b)[axisb] == 2:  # the result was the z component
        g3 = np.zeros(g.shape + (3,), g.dtype)
        g3[..., 2] = g
    else:
        g3 = np.moveaxis(g, axisc, -1)
    x, other, ax = (a, b3, axisa) if which == 0 else (b, a3, axisb)
    grad = np.cross(other, g3) if which == 0 else np.cross(g3, other)
    moved = np.moveaxis(np.asarray(x), ax, -1)
    grad = unbroadcast(grad[..., :moved.shape[-1]], moved)
    return np.moveaxis(grad, -1, ax)


# generated adjoints call cross_grad: bilinear in the cotangent and the other operand
@register_vjp(cross_grad)
def cross_grad_vjp(r, g, a, b, axisa, axisb, axisc, axis, which):
    if which == 0:
        d[g] += np.cross(d[r], b, axisa, axisb, axisc, axis)
        d[b] += cross_grad(g, d[r], b, axisa, axisb, axisc, axis, 1)
    else:
        d[g] += np.cross(a, d[r], axisa, axisb, axisc, axis)
        d[a] += cross_grad(g, a, d[r], axisa, axisb, axisc, axis, 0)


@register_jvp(cross_grad)
def cross_grad_jvp(r, g, a, b, axisa, axisb, axisc, axis, which):
    t[r] += cross_grad(t[g], a, b, axisa, axisb, axisc, axis, which)
    if which == 0:
        t[r] += cross_grad(g, a, t[b], axisa, axisb, axisc, axis, 0)
    else:
        t[r] += cross_grad(g, t[a], b, axisa, axisb, axisc, axis, 1)


@register_vjp(np.cross)
def cross(y, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    d[a] += cross_grad(d[y], a, b, axisa, axisb, axisc, axis, 0)
    d[b] += cross_grad(d[y], a, b, axisa, axisb, axisc, axis, 1)


@register_jvp(np.cross)
def cross_jvp(y, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    t[y] += np.cross(t[a], b, axisa, axisb, axisc, axis)
    t[y] += np.cross(a, t[b], axisa, axisb, axisc, axis)


def convolve_grad(g, a, v, mode, which):
    """The adjoint of operand ``which`` of ``np.convolve(a, v, mode)``: the cotangent placed
    in the full-length output, correlated with the other operand."""
    a1, v1 = np.ravel(a), np.ravel(v)
    m, n = a1.size, v1.size
    start = {"full": 0, "same": (min(m, n) - 1) // 2, "valid": min(m, n) - 1}[mode]
    full = grad_zeros(m + n - 1, g)
    full[start:start + np.size(g)] = g
    if which == 0:
        return np.reshape(np.correlate(full, v1, "valid"), np.shape(a))
    return np.reshape(np.correlate(full, a1, "valid"), np.shape(v))


# generated adjoints call convolve_grad: bilinear in the cotangent and the other operand
@register_vjp(convolve_grad)
def convolve_grad_vjp(r, g, a, v, mode, which):
    if which == 0:
        d[g] += np.convolve(d[r], v, mode)
        d[v] += convolve_grad(g, d[r], v, mode, 1)
    else:
        d[g] += np.convolve(a, d[r], mode)
        d[a] += convolve_grad(g, a, d[r], mode, 0)


@register_jvp(convolve_grad)
def convolve_grad_jvp(r, g, a, v, mode, which):
    t[r] += convolve_grad(t[g], a, v, mode, which)
    if which == 0:
        t[r] += convolve_grad(g, a, t[v], mode, 0)
    else:
        t[r] += convolve_grad(g, t[a], v, mode, 1)


@register_vjp(np.convolve)
def convolve(y, a, v, mode="full"):
    d[a] += convolve_grad(d[y], a, v, mode, 0)
    d[v] += convolve_grad(d[y], a, v, mode, 1)


@register_jvp(np.convolve)
def convolve_jvp(y, a, v, mode="full"):
    t[y] += np.convolve(t[a], v, mode)
    t[y] += np.convolve(a, t[v], mode)


def correlate_window(g, a, v, mode):
    """The cotangent ``g`` of ``np.correlate(a, v, mode)`` placed in the full-length correlation.
    NumPy computes a longer ``v``'s correlation with the operands swapped and reverses it, which
    centres ``same`` one later than ``np.convolve`` does for an even ``a``."""
    m, n = np.size(a), np.size(v)
    start = {"full": 0, "same": (n - 1) // 2 if m >= n else m // 2, "valid": min(m, n) - 1}[mode]
    full = grad_zeros(m + n - 1, g)
    full[start:start + np.size(g)] = g
    return full


def correlate_grad(g, a, v, mode, which):
    """The adjoint of operand ``which`` of ``np.correlate(a, v, mode)``: the full correlation is
    ``convolve(a, flip(v))``, so ``a``'s adjoint convolves the placed cotangent with ``v`` and
    ``v``'s correlates ``a`` with it."""
    full = correlate_window(g, a, v, mode)
    if which == 0:
        return np.reshape(np.convolve(full, np.ravel(v), "valid"), np.shape(a))
    return np.reshape(np.correlate(np.ravel(a), full, "valid"), np.shape(v))


# generated adjoints call correlate_grad: bilinear in the cotangent and the other operand
@register_vjp(correlate_grad)
def correlate_grad_vjp(r, g, a, v, mode, which):
    if which == 0:
        d[g] += np.correlate(d[r], v, mode)
        d[v] += correlate_grad(g, d[r], v, mode, 1)
    else:
        d[g] += np.correlate(a, d[r], mode)
        d[a] += correlate_grad(g, a, d[r], mode, 0)


@register_jvp(correlate_grad)
def correlate_grad_jvp(r, g, a, v, mode, which):
    t[r] += correlate_grad(t[g], a, v, mode, which)
    if which == 0:
        t[r] += correlate_grad(g, a, t[v], mode, 0)
    else:
        t[r] += correlate_grad(g, t[a], v, mode, 1)


@register_vjp(np.correlate)
def correlate(y, a, v, mode="valid"):
    d[a] += correlate_grad(d[y], a, v, mode, 0)
    d[v] += correlate_grad(d[y], a, v, mode, 1)


@register_jvp(np.correlate)
def correlate_jvp(y, a, v, mode="valid"):
    t[y] += np.correlate(t[a], v, mode)
    t[y] += np.correlate(a, t[v], mode)


register_nondifferentiable(einsum_terms, dot_subscripts, inner_subscripts, tensordot_subscripts,
                           reason="it computes an einsum specification")
