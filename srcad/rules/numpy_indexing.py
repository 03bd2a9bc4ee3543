"""Rules for NumPy's diagonals and triangles, taking, differences and bincount,
reverse (vjp) and forward (jvp).

All of them are linear in their array argument: the forward rule applies the routine to
the tangent, the reverse rule scatters the cotangent back (into zeros of the operand's
shape, adding where one element fed several outputs).
"""
import numpy as np

from ..errors import UnsupportedCaseError
from ..registry import register_jvp, register_nondifferentiable, register_vjp
from ..runtime import unbroadcast
from .numpy_shapes import grad_zeros


# ---- diagonals and triangles ----------------------------------------------------------------

def diagonal_grad(g, a, offset=0, axis1=0, axis2=1):
    """The adjoint of ``np.diagonal(a, offset, axis1, axis2)``: ``g`` on that diagonal."""
    shape = np.shape(a)
    axis1, axis2 = axis1 % len(shape), axis2 % len(shape)
    rest = [n for i, n in enumerate(shape) if i not in (axis1, axis2)]
    out = grad_zeros(rest + [shape[axis1], shape[axis2]], g)
    i = np.arange(np.shape(g)[-1])
    out[..., i + max(0, -offset), i + max(0, offset)] = g
    return np.moveaxis(out, (-2, -1), (axis1, axis2))


# generated adjoints call diagonal_grad: placing on the diagonal is undone by reading it
@register_vjp(diagonal_grad)
def diagonal_grad_vjp(r, g, a, offset=0, axis1=0, axis2=1):
    d[g] += np.diagonal(d[r], offset, axis1, axis2)


@register_jvp(diagonal_grad)
def diagonal_grad_jvp(r, g, a, offset=0, axis1=0, axis2=1):
    t[r] += diagonal_grad(t[g], a, offset, axis1, axis2)


def diag_grad(g, v, k):
    """The adjoint of ``np.diag(v, k)``: the diagonal of ``g`` (1-D ``v``), or ``g`` on the
    diagonal of a zero matrix (2-D ``v``)."""
    if np.ndim(v) == 1:
        return np.diagonal(g, k)
    return diagonal_grad(g, v, k)


@register_vjp(np.diag)
def diag(y, v, k=0):
    d[v] += diag_grad(d[y], v, k)


@register_jvp(np.diag)
def diag_jvp(y, v, k=0):
    t[y] += np.diag(t[v], k)


@register_vjp(np.diagflat)
def diagflat(y, v, k=0):
    d[v] += np.reshape(np.diagonal(d[y], k), np.shape(v))


@register_jvp(np.diagflat)
def diagflat_jvp(y, v, k=0):
    t[y] += np.diagflat(t[v], k)


@register_vjp(np.diagonal)
def diagonal(y, a, offset=0, axis1=0, axis2=1):
    d[a] += diagonal_grad(d[y], a, offset, axis1, axis2)


@register_jvp(np.diagonal)
def diagonal_jvp(y, a, offset=0, axis1=0, axis2=1):
    t[y] += np.diagonal(t[a], offset, axis1, axis2)


@register_vjp(np.tril)
def tril(y, m, k=0):
    d[m] += unbroadcast(np.tril(d[y], k), m)  # a 1-D m is broadcast to a square


@register_jvp(np.tril)
def tril_jvp(y, m, k=0):
    t[y] += np.tril(t[m], k)


@register_vjp(np.triu)
def triu(y, m, k=0):
    d[m] += unbroadcast(np.triu(d[y], k), m)


@register_jvp(np.triu)
def triu_jvp(y, m, k=0):
    t[y] += np.triu(t[m], k)


# ---- taking ---------------------------------------------------------------------

def take_grad(g, a, indices, axis, mode):
    """The adjoint of ``np.take(a, indices, axis, mode=mode)``: repeated indices add up."""
    shape = np.shape(a)
    n = int(np.prod(shape)) if axis is None else shape[axis]
    indices = np.asarray(indices)
    if mode == "wrap":
        indices = indices % n
    elif mode == "clip":
        indices = np.clip(indices, 0, n - 1)
    if axis is None:
        flat = grad_zeros(n, g)
        np.add.at(flat, indices, g)
        return flat.reshape(shape)
    out = grad_zeros(shape, g)
    np.add.at(out, (slice(None),) * (axis % len(shape)) + (indices,), g)
    return out


# generated adjoints call take_grad: the scatter-add is undone by taking again
@register_vjp(take_grad)
def take_grad_vjp(r, g, a, indices, axis, mode):
    d[g] += np.reshape(np.take(d[r], indices, axis, mode=mode), np.shape(g))


@register_jvp(take_grad)
def take_grad_jvp(r, g, a, indices, axis, mode):
    t[r] += take_grad(t[g], a, indices, axis, mode)


@register_vjp(np.take)
def take(y, a, indices, axis=None, out=None, mode="raise"):
    d[a] += take_grad(d[y], a, indices, axis, mode)


@register_jvp(np.take)
def take_jvp(y, a, indices, axis=None, out=None, mode="raise"):
    t[y] += np.take(t[a], indices, axis, mode=mode)


def along_axis_index(shape, indices, axis):
    """The full index that ``np.take_along_axis(a, indices, axis)`` reads ``a`` (of ``shape``)
    with: ``indices`` along ``axis``, broadcast ranges along the others."""
    indices = np.asarray(indices)
    axis = axis % len(shape)
    out = [max(n, m) if i != axis else m for i, (n, m) in enumerate(zip(shape, indices.shape))]
    ranges = [np.arange(n).reshape([-1 if j == i else 1 for j in range(len(out))]) for i, n in enumerate(out)]
    return tuple(indices if i == axis else np.broadcast_to(r, out) for i, r in enumerate(ranges))


register_nondifferentiable(along_axis_index, reason="it builds an integer index")


def take_along_axis_grad(g, a, indices, axis):
    """The adjoint of ``np.take_along_axis(a, indices, axis)``: repeated indices add up."""
    shape = np.shape(a)
    if axis is None:
        flat = grad_zeros(int(np.prod(shape)), g)
        np.add.at(flat, np.asarray(indices), g)
        return flat.reshape(shape)
    out = grad_zeros(shape, g)
    np.add.at(out, along_axis_index(shape, indices, axis), g)
    return out


# generated adjoints call take_along_axis_grad: the scatter-add is undone by taking again
@register_vjp(take_along_axis_grad)
def take_along_axis_grad_vjp(r, g, a, indices, axis):
    d[g] += np.reshape(np.take_along_axis(d[r], indices, axis), np.shape(g))


@register_jvp(take_along_axis_grad)
def take_along_axis_grad_jvp(r, g, a, indices, axis):
    t[r] += take_along_axis_grad(t[g], a, indices, axis)


@register_vjp(np.take_along_axis)
def take_along_axis(y, arr, indices, axis=-1):
    d[arr] += take_along_axis_grad(d[y], arr, indices, axis)


@register_jvp(np.take_along_axis)
def take_along_axis_jvp(y, arr, indices, axis=-1):
    t[y] += np.take_along_axis(t[arr], indices, axis)


# ---- differences ----------------------------------------------------------------------------

def _diff_pieces(a, axis, prepend, append):
    """The blocks ``np.diff`` joins before differencing: (prepend, a, append), None if absent."""
    a = np.asarray(a)
    axis = axis % a.ndim

    def block(v):
        if v is None:
            return None
        v = np.asarray(v)
        if v.ndim == 0:
            shape = list(a.shape)
            shape[axis] = 1
            v = np.broadcast_to(v, shape)
        return v

    return block(prepend), a, block(append), axis


def diff_grad(g, a, n, axis, prepend, append, which):
    """The adjoint of ``np.diff(a, n, axis, prepend, append)`` for ``which`` of "a",
    "prepend" or "append" (None means the argument was not given)."""
    before, a, after, axis = _diff_pieces(a, axis, prepend, append)
    g = np.asarray(g)
    for _ in range(n):  # the adjoint of one first difference
        pad = [(0, 0)] * g.ndim
        pad[axis] = (1, 1)
        g = -np.diff(np.pad(g, pad), axis=axis)
    sizes = [0 if before is None else before.shape[axis], a.shape[axis]]
    parts = np.split(g, np.cumsum(sizes), axis=axis)
    if which == "a":
        return parts[1]
    if which == "prepend":
        return np.reshape(np.sum(parts[0]), ()) if np.ndim(prepend) == 0 else parts[0]
    return np.reshape(np.sum(parts[2]), ()) if np.ndim(append) == 0 else parts[2]


def diff_tangent(tv, a, n, axis, prepend, append, which):
    """The tangent of ``np.diff`` when only the argument ``which`` moves (by ``tv``)."""
    before, a, after, axis = _diff_pieces(a, axis, prepend, append)
    blocks = {"prepend": before, "a": a, "append": after}
    parts = []
    for name, block in blocks.items():
        if block is None:
            continue
        if name == which:
            parts.append(np.broadcast_to(tv, block.shape))
        else:
            parts.append(np.zeros(block.shape, np.result_type(np.asarray(tv).dtype, np.float16)))
    return np.diff(np.concatenate(parts, axis=axis), n, axis=axis)


# generated adjoints call diff_grad (J_which^T g): its adjoint is diff_tangent (J_which h)
@register_vjp(diff_grad)
def diff_grad_vjp(r, g, a, n, axis, prepend, append, which):
    d[g] += diff_tangent(d[r], a, n, axis, prepend, append, which)


@register_jvp(diff_grad)
def diff_grad_jvp(r, g, a, n, axis, prepend, append, which):
    t[r] += diff_grad(t[g], a, n, axis, prepend, append, which)


# third order: linear in the tangent (the other arrays give shapes), diff_grad its transpose
@register_vjp(diff_tangent, zero=("a", "prepend", "append"))
def diff_tangent_vjp(r, tv, a, n, axis, prepend, append, which):
    d[tv] += unbroadcast(diff_grad(d[r], a, n, axis, prepend, append, which), tv)


@register_jvp(diff_tangent, zero=("a", "prepend", "append"))
def diff_tangent_jvp(r, tv, a, n, axis, prepend, append, which):
    t[r] += diff_tangent(t[tv], a, n, axis, prepend, append, which)


@register_vjp(np.diff)
def diff(y, a, n=1, axis=-1, prepend=None, append=None):
    d[a] += diff_grad(d[y], a, n, axis, prepend, append, "a")
    d[prepend] += diff_grad(d[y], a, n, axis, prepend, append, "prepend")
    d[append] += diff_grad(d[y], a, n, axis, prepend, append, "append")


@register_jvp(np.diff)
def diff_jvp(y, a, n=1, axis=-1, prepend=None, append=None):
    t[y] += diff_tangent(t[a], a, n, axis, prepend, append, "a")
    t[y] += diff_tangent(t[prepend], a, n, axis, prepend, append, "prepend")
    t[y] += diff_tangent(t[append], a, n, axis, prepend, append, "append")


def _ediff1d_sizes(ary, to_end, to_begin):
    """The lengths of ``np.ediff1d``'s three parts: ``to_begin``, the differences, ``to_end``."""
    return (0 if to_begin is None else np.size(to_begin), max(np.size(ary) - 1, 0),
            0 if to_end is None else np.size(to_end))


def ediff1d_grad(g, ary, to_end, to_begin, which):
    """The adjoint of ``which`` ("ary", "to_end" or "to_begin") in ``np.ediff1d(ary, to_end,
    to_begin)``, the flat ``[to_begin, np.diff(ary.ravel()), to_end]``."""
    before, inner, after = _ediff1d_sizes(ary, to_end, to_begin)
    g = np.asarray(g)
    if which == "to_begin":
        return np.reshape(g[:before], np.shape(to_begin))
    if which == "to_end":
        return np.reshape(g[before + inner:], np.shape(to_end))
    flat = diff_grad(g[before:before + inner], np.ravel(ary), 1, -1, None, None, "a")
    return np.reshape(flat, np.shape(ary))


def ediff1d_tangent(tv, ary, to_end, to_begin, which):
    """The tangent of ``np.ediff1d`` when only ``which`` moves (by ``tv``)."""
    before, inner, after = _ediff1d_sizes(ary, to_end, to_begin)
    dtype = np.result_type(np.asarray(tv).dtype, np.float16)
    head = np.ravel(tv) if which == "to_begin" else np.zeros(before, dtype)
    middle = np.diff(np.ravel(tv)) if which == "ary" else np.zeros(inner, dtype)
    tail = np.ravel(tv) if which == "to_end" else np.zeros(after, dtype)
    return np.concatenate([head, middle, tail])


# ediff1d_grad is J_whichᵀ g and ediff1d_tangent J_which h: each is the other's adjoint
@register_vjp(ediff1d_grad)
def ediff1d_grad_vjp(r, g, ary, to_end, to_begin, which):
    d[g] += ediff1d_tangent(d[r], ary, to_end, to_begin, which)


@register_jvp(ediff1d_grad)
def ediff1d_grad_jvp(r, g, ary, to_end, to_begin, which):
    t[r] += ediff1d_grad(t[g], ary, to_end, to_begin, which)


@register_vjp(ediff1d_tangent)
def ediff1d_tangent_vjp(r, tv, ary, to_end, to_begin, which):
    d[tv] += ediff1d_grad(d[r], ary, to_end, to_begin, which)


@register_jvp(ediff1d_tangent)
def ediff1d_tangent_jvp(r, tv, ary, to_end, to_begin, which):
    t[r] += ediff1d_tangent(t[tv], ary, to_end, to_begin, which)


@register_vjp(np.ediff1d)
def ediff1d(y, ary, to_end=None, to_begin=None):
    d[ary] += ediff1d_grad(d[y], ary, to_end, to_begin, "ary")
    d[to_end] += ediff1d_grad(d[y], ary, to_end, to_begin, "to_end")
    d[to_begin] += ediff1d_grad(d[y], ary, to_end, to_begin, "to_begin")


@register_jvp(np.ediff1d)
def ediff1d_jvp(y, ary, to_end=None, to_begin=None):
    t[y] += ediff1d_tangent(t[ary], ary, to_end, to_begin, "ary")
    t[y] += ediff1d_tangent(t[to_end], ary, to_end, to_begin, "to_end")
    t[y] += ediff1d_tangent(t[to_begin], ary, to_end, to_begin, "to_begin")


@register_vjp(np.bincount, zero="x")  # x holds the bins
def bincount(y, x, weights=None, minlength=0):
    """Linear in ``weights``: each weight's adjoint is its bin's."""
    d[weights] += d[y][x]


@register_jvp(np.bincount, zero="x")
def bincount_jvp(y, x, weights=None, minlength=0):
    t[y] += np.bincount(x, t[weights], minlength)


# ---- sliding windows ---------------------------------------------------------------------------

def window_axis(axis, writeable):
    """``axis`` of ``sliding_window_view``, after refusing writeable windows (a write into one
    changes the input, and every window that shares the element)."""
    if writeable:
        raise UnsupportedCaseError("srcad differentiates sliding_window_view with writeable=False only: write "
                                   "into a copy (np.array(windows)), or into the input itself")
    return axis


def window_sources(shape, window_shape, axis):
    """For each element of the windows, the C-order position of the input element it reads."""
    index = np.arange(int(np.prod(shape))).reshape(shape)
    return np.lib.stride_tricks.sliding_window_view(index, window_shape, axis)


def sliding_window_grad(g, shape, window_shape, axis):
    """The adjoint of the input of ``sliding_window_view`` (of ``shape``) from the windows'
    adjoint ``g``: each element sums the adjoints of its copies."""
    dtype = np.result_type(np.asarray(g).dtype, np.float16)
    sums = np.bincount(np.ravel(window_sources(shape, window_shape, axis)), weights=np.ravel(g),
                       minlength=int(np.prod(shape)))
    return sums.astype(dtype).reshape(shape)


# generated adjoints call sliding_window_grad (Wᵀg for the gather W): its adjoint is the gather
@register_vjp(sliding_window_grad)
def sliding_window_grad_vjp(r, g, shape, window_shape, axis):
    d[g] += np.lib.stride_tricks.sliding_window_view(d[r], window_shape, axis)


@register_jvp(sliding_window_grad)
def sliding_window_grad_jvp(r, g, shape, window_shape, axis):
    t[r] += sliding_window_grad(t[g], shape, window_shape, axis)


@register_vjp(np.lib.stride_tricks.sliding_window_view)
def sliding_window_view(y, x, window_shape, axis=None, *, subok=False, writeable=False):
    d[x] += sliding_window_grad(d[y], np.shape(x), window_shape, window_axis(axis, writeable))


@register_jvp(np.lib.stride_tricks.sliding_window_view)
def sliding_window_view_jvp(y, x, window_shape, axis=None, *, subok=False, writeable=False):
    t[y] += np.lib.stride_tricks.sliding_window_view(t[x], window_shape, window_axis(axis, writeable))


# index bookkeeping that generated adjoints call: no derivative flows through it
register_nondifferentiable(window_axis, window_sources,
                           reason="it computes positions, axes or an order")
