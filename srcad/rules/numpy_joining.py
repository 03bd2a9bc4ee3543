"""Rules for NumPy's joining and splitting routines (concatenate, stack and its variants,
split and its variants), reverse (vjp) and forward (jvp).

Joining is undone on the cotangent by splitting it at the pieces' sizes, splitting by
joining the pieces' cotangents (zeros for a piece without one).
"""
import numpy as np

from ..registry import register_jvp, register_nondifferentiable, register_vjp
from ..runtime import concat_grad, unstack
from .numpy_shapes import filled


# ---- joining and splitting ------------------------------------------------------------------

def unjoin(g, pieces, promote, axis):
    """The adjoints of ``pieces`` that were each promoted (``np.atleast_2d``...) and then
    concatenated along ``axis``, shaped like the pieces."""
    sizes = [np.shape(promote(p))[axis] for p in pieces]
    parts = np.split(g, np.cumsum(sizes)[:-1], axis=axis)
    grads = [np.reshape(part, np.shape(p)) for part, p in zip(parts, pieces)]
    return np.stack(grads) if isinstance(pieces, np.ndarray) else grads


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


@register_vjp(np.split, np.array_split)
def split(y, ary, indices_or_sections, axis=0):
    d[ary] += np.concatenate(filled(d[y], y), axis)


@register_jvp(np.split)
def split_jvp(y, ary, indices_or_sections, axis=0):
    t[y] += np.split(t[ary], indices_or_sections, axis)


@register_jvp(np.array_split)
def array_split_jvp(y, ary, indices_or_sections, axis=0):
    t[y] += np.array_split(t[ary], indices_or_sections, axis)


@register_vjp(np.hsplit)
def hsplit(y, ary, indices_or_sections):
    d[ary] += np.hstack(filled(d[y], y))


@register_jvp(np.hsplit)
def hsplit_jvp(y, ary, indices_or_sections):
    t[y] += np.hsplit(t[ary], indices_or_sections)


@register_vjp(np.vsplit)
def vsplit(y, ary, indices_or_sections):
    d[ary] += np.vstack(filled(d[y], y))


@register_jvp(np.vsplit)
def vsplit_jvp(y, ary, indices_or_sections):
    t[y] += np.vsplit(t[ary], indices_or_sections)


@register_vjp(np.dsplit)
def dsplit(y, ary, indices_or_sections):
    d[ary] += np.dstack(filled(d[y], y))


@register_jvp(np.dsplit)
def dsplit_jvp(y, ary, indices_or_sections):
    t[y] += np.dsplit(t[ary], indices_or_sections)


# index bookkeeping that generated adjoints call: no derivative flows through it
register_nondifferentiable(hstack_axis, reason="it computes positions, axes or an order")
