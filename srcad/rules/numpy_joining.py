"""Rules for NumPy's joining and splitting routines (concatenate, stack and its variants,
``np.block``, split and its variants), reverse (vjp) and forward (jvp).

Joining is undone on the cotangent by splitting it at the pieces' sizes, splitting by
joining the pieces' cotangents (zeros for a piece without one).
"""
import numpy as np

from ..errors import UnsupportedCaseError
from ..registry import register_jvp, register_nondifferentiable, register_vjp
from ..runtime import concat_grad, unstack, zeros_like
from .numpy_shapes import filled


# ---- joining and splitting ------------------------------------------------------------------

def unjoin(g, pieces, promote, axis):
    """The adjoints of ``pieces`` that were each promoted (``np.atleast_2d``...) and then
    concatenated along ``axis``, shaped like the pieces."""
    sizes = [np.shape(promote(p))[axis] for p in pieces]
    parts = np.split(g, np.cumsum(sizes)[:-1], axis=axis)
    grads = [np.reshape(part, np.shape(p)) for part, p in zip(parts, pieces)]
    return np.stack(grads) if isinstance(pieces, np.ndarray) else grads


def join_back(hs, pieces, promote, axis):
    """The adjoint of ``unjoin`` in its cotangent: the pieces' cotangents (zeros where a piece
    has none) promoted and concatenated again."""
    hs = [None] * len(pieces) if hs is None else hs
    return np.concatenate([np.reshape(zeros_like(p) if h is None else h, np.shape(promote(p)))
                           for h, p in zip(hs, pieces)], axis)


# generated adjoints call unjoin: splitting the cotangent is undone by joining
@register_vjp(unjoin)
def unjoin_vjp(r, g, pieces, promote, axis):
    d[g] += np.reshape(join_back(d[r], pieces, promote, axis), np.shape(g))


@register_jvp(unjoin)
def unjoin_jvp(r, g, pieces, promote, axis):
    t[r] += unjoin(t[g], pieces, promote, axis)


def as_column(a):
    """How ``np.column_stack`` sees one of its pieces."""
    a = np.asarray(a)
    return a.reshape(-1, 1) if a.ndim < 2 else a


def hstack_axis(pieces):
    return 0 if np.ndim(pieces[0]) <= 1 else 1


@register_vjp(np.stack)
def stack(y, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    d[arrays] += unstack(d[y], axis)


@register_jvp(np.stack)
def stack_jvp(y, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    t[y] += np.stack(filled(t[arrays], arrays), axis)


@register_vjp(np.concatenate)
def concatenate(y, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    d[arrays] += concat_grad(d[y], arrays, axis)


@register_jvp(np.concatenate)
def concatenate_jvp(y, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    t[y] += np.concatenate(filled(t[arrays], arrays), axis)


@register_vjp(np.vstack)
def vstack(y, tup, dtype=None, casting="same_kind"):
    d[tup] += unjoin(d[y], tup, np.atleast_2d, 0)


@register_jvp(np.vstack)
def vstack_jvp(y, tup, dtype=None, casting="same_kind"):
    t[y] += np.vstack(filled(t[tup], tup))


@register_vjp(np.hstack)
def hstack(y, tup, dtype=None, casting="same_kind"):
    d[tup] += unjoin(d[y], tup, np.atleast_1d, hstack_axis(tup))


@register_jvp(np.hstack)
def hstack_jvp(y, tup, dtype=None, casting="same_kind"):
    t[y] += np.hstack(filled(t[tup], tup))


@register_vjp(np.dstack)
def dstack(y, tup):
    d[tup] += unjoin(d[y], tup, np.atleast_3d, 2)


@register_jvp(np.dstack)
def dstack_jvp(y, tup):
    t[y] += np.dstack(filled(t[tup], tup))


@register_vjp(np.column_stack)
def column_stack(y, tup):
    d[tup] += unjoin(d[y], tup, as_column, 1)


@register_jvp(np.column_stack)
def column_stack_jvp(y, tup):
    t[y] += np.column_stack(filled(t[tup], tup))


def split_bounds(n, indices_or_sections):
    """``(start, stop)`` of each piece ``np.array_split`` cuts from a length-``n`` axis: the
    pieces are slices, so unsorted or negative indices give empty or overlapping pieces."""
    if np.ndim(indices_or_sections) == 0:
        sections = int(indices_or_sections)
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        stops = np.cumsum(sizes).tolist()
        return list(zip([0] + stops[:-1], stops))
    cuts = [0] + [int(i) for i in indices_or_sections] + [n]
    return [slice(a, b).indices(n)[:2] for a, b in zip(cuts[:-1], cuts[1:])]


def split_grad(gs, ary, indices_or_sections, axis):
    """The adjoint of ``ary`` in ``np.split(ary, indices_or_sections, axis)`` (or
    ``array_split``): each piece's adjoint added into the slice it came from (None: zero)."""
    shape = np.shape(ary)
    axis = axis % len(shape)
    given = [g for g in gs if g is not None]
    out = np.zeros(shape, np.result_type(*[np.asarray(g).dtype for g in given], np.float16) if given else float)
    moved = np.moveaxis(out, axis, 0)  # a view: adding into it fills ``out``
    for (start, stop), g in zip(split_bounds(shape[axis], indices_or_sections), gs):
        if g is not None and stop > start:
            moved[start:stop] += np.moveaxis(np.asarray(g), axis, 0)
    return out


def split_axis(ary, which):
    """The axis ``np.hsplit`` (``"h"``), ``np.vsplit`` (``"v"``) or ``np.dsplit`` (``"d"``) cuts."""
    return {"h": 1 if np.ndim(ary) > 1 else 0, "v": 0, "d": 2}[which]


# generated adjoints call split_grad: it is linear in the pieces' adjoints
@register_vjp(split_grad)
def split_grad_vjp(r, gs, ary, indices_or_sections, axis):
    d[gs] += np.array_split(d[r], indices_or_sections, axis)


@register_jvp(split_grad)
def split_grad_jvp(r, gs, ary, indices_or_sections, axis):
    t[r] += split_grad(t[gs], ary, indices_or_sections, axis)


@register_vjp(np.split, np.array_split)
def split(y, ary, indices_or_sections, axis=0):
    d[ary] += split_grad(d[y], ary, indices_or_sections, axis)


@register_jvp(np.split)
def split_jvp(y, ary, indices_or_sections, axis=0):
    t[y] += np.split(t[ary], indices_or_sections, axis)


@register_jvp(np.array_split)
def array_split_jvp(y, ary, indices_or_sections, axis=0):
    t[y] += np.array_split(t[ary], indices_or_sections, axis)


@register_vjp(np.hsplit)
def hsplit(y, ary, indices_or_sections):
    d[ary] += split_grad(d[y], ary, indices_or_sections, split_axis(ary, "h"))


@register_jvp(np.hsplit)
def hsplit_jvp(y, ary, indices_or_sections):
    t[y] += np.hsplit(t[ary], indices_or_sections)


@register_vjp(np.vsplit)
def vsplit(y, ary, indices_or_sections):
    d[ary] += split_grad(d[y], ary, indices_or_sections, split_axis(ary, "v"))


@register_jvp(np.vsplit)
def vsplit_jvp(y, ary, indices_or_sections):
    t[y] += np.vsplit(t[ary], indices_or_sections)


@register_vjp(np.dsplit)
def dsplit(y, ary, indices_or_sections):
    d[ary] += split_grad(d[y], ary, indices_or_sections, split_axis(ary, "d"))


@register_jvp(np.dsplit)
def dsplit_jvp(y, ary, indices_or_sections):
    t[y] += np.dsplit(t[ary], indices_or_sections)


# ---- np.block: nested lists joined along the last axes ----------------------------------------

def _block_depth(arrays):
    return 1 + _block_depth(arrays[0]) if isinstance(arrays, list) else 0


def _block_size(node, axis, ndim):
    """The length along ``axis`` (negative) of the block ``node`` (a leaf promoted to ``ndim``
    dimensions, as ``np.block`` does, or a nested list that joins along ``-depth``)."""
    if not isinstance(node, list):
        shape = np.shape(node)
        return ((1,) * (ndim - len(shape)) + shape)[axis]
    joined = -_block_depth(node)
    if axis == joined:
        return sum(_block_size(child, axis, ndim) for child in node)
    return _block_size(node[0], axis, ndim)


def _block_ndim(arrays):
    leaves, stack = [], [arrays]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        else:
            leaves.append(np.ndim(node))
    return max([_block_depth(arrays), *leaves])


def block_grad(g, arrays):
    """The adjoints of the leaves of ``np.block(arrays)``: ``g`` cut back into the blocks,
    nested like ``arrays``, each shaped like its leaf."""
    ndim = _block_ndim(arrays)

    def cut(part, node):
        if not isinstance(node, list):
            return np.reshape(part, np.shape(node))
        axis = -_block_depth(node)
        sizes = [_block_size(child, axis, ndim) for child in node]
        pieces = np.split(part, np.cumsum(sizes)[:-1], axis=axis)
        return [cut(piece, child) for piece, child in zip(pieces, node)]

    return cut(np.asarray(g), arrays)


def block_tangents(tangents, arrays):
    """Per-leaf tangents (or adjoints) of a nested list, zeros where a leaf or a whole
    sub-list has none."""
    if not isinstance(arrays, list):
        return zeros_like(arrays) if tangents is None else tangents
    tangents = [None] * len(arrays) if tangents is None else tangents
    return [block_tangents(t, a) for t, a in zip(tangents, arrays)]


@register_vjp(np.block)
def block(y, arrays):
    d[arrays] += block_grad(d[y], arrays)


@register_jvp(np.block)
def block_jvp(y, arrays):
    t[y] += np.block(block_tangents(t[arrays], arrays))


# block_grad is linear in the cotangent: its adjoint joins the pieces again
@register_vjp(block_grad)
def block_grad_vjp(r, g, arrays):
    d[g] += np.reshape(np.block(block_tangents(d[r], arrays)), np.shape(g))


@register_jvp(block_grad)
def block_grad_jvp(r, g, arrays):
    t[r] += block_grad(t[g], arrays)


# ---- np.r_[...] and np.c_[...]: concatenation written as indexing ---------------------------

def _trick_items(key):
    """The items ``np.r_[key]`` (or ``np.c_``) joins; strings (directives) and slices (ranges)
    are not differentiated."""
    items = key if isinstance(key, tuple) else (key,)
    for item in items:
        if isinstance(item, (str, slice)):
            raise UnsupportedCaseError("srcad differentiates np.r_[...] and np.c_[...] of arrays and numbers only "
                                       "(no directive strings or slices); use np.concatenate or np.linspace")
    return items


def index_concat_grad(g, key, trick):
    """The adjoints of the items of ``trick[key]`` (``np.r_`` or ``np.c_``): ``g`` split at
    the items' sizes along the trick's axis, each shaped like its item (one adjoint for a key
    that is one item)."""
    items = _trick_items(key)
    sizes = [np.shape(trick[item])[trick.axis] for item in items]  # each item as the trick promotes it
    parts = np.split(np.asarray(g), np.cumsum(sizes)[:-1], axis=trick.axis)
    grads = [np.reshape(part, np.shape(item)) for part, item in zip(parts, items)]
    return grads if isinstance(key, tuple) else grads[0]


def index_concat_tangent(tk, key, trick):
    """``trick[key]`` with each item replaced by its tangent (zeros where it has none)."""
    items = _trick_items(key)
    tangents = [None] * len(items) if tk is None else (tk if isinstance(key, tuple) else [tk])
    return trick[tuple(zeros_like(item) if ti is None else ti for ti, item in zip(tangents, items))]


@register_vjp(np.r_.__getitem__)
def r_(y, key):
    d[key] += index_concat_grad(d[y], key, np.r_)


@register_jvp(np.r_.__getitem__)
def r_jvp(y, key):
    t[y] += index_concat_tangent(t[key], key, np.r_)


@register_vjp(np.c_.__getitem__)
def c_(y, key):
    d[key] += index_concat_grad(d[y], key, np.c_)


@register_jvp(np.c_.__getitem__)
def c_jvp(y, key):
    t[y] += index_concat_tangent(t[key], key, np.c_)


# the two helpers are each other's adjoint (both linear in their first argument)
@register_vjp(index_concat_grad)
def index_concat_grad_vjp(r, g, key, trick):
    d[g] += index_concat_tangent(d[r], key, trick)


@register_jvp(index_concat_grad)
def index_concat_grad_jvp(r, g, key, trick):
    t[r] += index_concat_grad(t[g], key, trick)


@register_vjp(index_concat_tangent)
def index_concat_tangent_vjp(r, tk, key, trick):
    d[tk] += index_concat_grad(d[r], key, trick)


@register_jvp(index_concat_tangent)
def index_concat_tangent_jvp(r, tk, key, trick):
    t[r] += index_concat_tangent(t[tk], key, trick)


# index bookkeeping that generated adjoints call: no derivative flows through it
register_nondifferentiable(hstack_axis, split_bounds, split_axis, _trick_items, _block_depth, _block_size, _block_ndim,
                           reason="it computes positions, axes or an order")
