"""Rules for ``np.pad``, reverse (vjp) and forward (jvp).

In the modes that copy (``constant``, ``edge``, ``wrap``, even reflections) each padded entry
is an entry of the array or a constant: the adjoint sums each entry's copies. In the others,
the statistics (``maximum``, ``minimum``, ``mean``, ``median``), ``linear_ramp`` and odd
reflections (``reflect``/``symmetric`` with ``reflect_type="odd"``), padded entries combine
entries (``weighted_pad_grad`` and ``weighted_pad_tangent``, below).
"""
import numpy as np

from ..errors import UnsupportedCaseError
from ..registry import register_jvp, register_nondifferentiable, register_vjp
from ..runtime import as_array, padded, unbroadcast
from .numpy_reductions import float_dtype, median_slope, tie_shares

_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")
WEIGHTED_PAD_MODES = ("maximum", "minimum", "mean", "median", "linear_ramp")


def check_pad_mode(mode, reflect_type):
    """The modes whose padding only copies elements or constants."""
    if mode not in _PAD_MODES or (mode in ("reflect", "symmetric") and reflect_type != "even"):
        detail = f", reflect_type={reflect_type!r}" if mode in ("reflect", "symmetric") else ""
        raise UnsupportedCaseError(
            f"srcad differentiates np.pad in the modes {', '.join(_PAD_MODES + WEIGHTED_PAD_MODES)} (reflect "
            f"and symmetric with reflect_type 'even' or 'odd'), not mode={mode!r}{detail}")


def pad_sources(shape, pad_width, mode, reflect_type):
    """For each element of the padded array, the C-order position of the input element it
    copies, or ``-1 - (2 * axis + side)`` where it holds the constant of that axis and side."""
    check_pad_mode(mode, reflect_type)
    index = np.arange(int(np.prod(shape))).reshape(shape)
    if mode == "constant":
        codes = -1 - np.arange(2 * len(shape)).reshape(len(shape), 2)
        return np.pad(index, pad_width, mode="constant", constant_values=codes)
    return np.pad(index, pad_width, mode=mode)


register_nondifferentiable(check_pad_mode, pad_sources, reason="it computes positions")


def pad_grad(g, pad_width, mode, reflect_type):
    """The adjoint of ``np.pad(array, pad_width, ...)`` for the array, from the adjoint ``g``
    of the padded result: each element sums its copies. The array's shape is ``g``'s less the
    widths, so the reverse sweep need not keep the array for it."""
    if mode == "constant" and type(pad_width) is int and type(g) is np.ndarray and g.dtype.kind == "f":
        # the common case, without the general path's Python overhead (36 µs against 4 µs for 128²)
        return g[tuple(slice(pad_width, n - pad_width) for n in g.shape)].copy()
    dtype = np.result_type(g.dtype if hasattr(g, "dtype") else np.asarray(g).dtype, np.float16)
    padded = np.shape(g)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.intp), (len(padded), 2))
    shape = tuple(int(n - a - b) for n, (a, b) in zip(padded, widths))
    if mode == "constant":  # each element has one copy, the interior: a slice, copied (a Dask array stays one)
        interior = tuple(slice(int(a), int(a) + n) for n, (a, _) in zip(shape, widths))
        region = (g if hasattr(g, "astype") and hasattr(g, "shape") else np.asarray(g))[interior]
        return region.astype(dtype, copy=True)
    sources = np.ravel(pad_sources(shape, pad_width, mode, reflect_type))
    copied = sources >= 0
    sums = np.bincount(sources[copied], weights=np.ravel(g)[copied], minlength=int(np.prod(shape)))
    return sums.astype(dtype).reshape(shape)


def pad_constant_grad(g, array, pad_width, constant_values):
    """The adjoint of ``np.pad(array, ..., constant_values=c)`` for ``c``, which NumPy reads
    as one value, a (before, after) pair, or one pair per axis."""
    ndim = np.ndim(array)
    sources = np.ravel(pad_sources(np.shape(array), pad_width, "constant", "even"))
    constant = sources < 0
    sums = np.bincount(-1 - sources[constant], weights=np.ravel(g)[constant], minlength=2 * ndim)
    sums = sums.reshape(ndim, 2)
    c = np.asarray(constant_values)
    if c.size == 1:
        return np.reshape(sums.sum(), c.shape)
    if c.size == 2 and c.shape != (2, 1):
        return np.reshape(sums.sum(0), c.shape)
    return unbroadcast(sums, c)


def pad_tangent(ta, pad_width, mode, reflect_type):
    check_pad_mode(mode, reflect_type)
    if mode in ("reflect", "symmetric"):
        return np.pad(ta, pad_width, mode=mode, reflect_type=reflect_type)
    return np.pad(ta, pad_width, mode=mode)


def pad_constant_tangent(tc, array, pad_width):
    zeros = np.zeros(np.shape(array), np.result_type(np.asarray(tc).dtype, np.float16))
    return np.pad(zeros, pad_width, mode="constant", constant_values=tc)


# generated adjoints call pad_grad (Pᵀg for the copying pad P): its adjoint is the pad itself
@register_vjp(pad_grad)
def pad_grad_vjp(r, g, pad_width, mode, reflect_type):
    d[g] += pad_tangent(d[r], pad_width, mode, reflect_type)


@register_jvp(pad_grad)
def pad_grad_jvp(r, g, pad_width, mode, reflect_type):
    t[r] += pad_grad(t[g], pad_width, mode, reflect_type)


# third order: the pad is linear in the tangent, and pad_grad is its transpose
@register_vjp(pad_tangent)
def pad_tangent_vjp(r, ta, pad_width, mode, reflect_type):
    d[ta] += pad_grad(d[r], pad_width, mode, reflect_type)


@register_jvp(pad_tangent)
def pad_tangent_jvp(r, ta, pad_width, mode, reflect_type):
    t[r] += pad_tangent(t[ta], pad_width, mode, reflect_type)


@register_vjp(np.pad, padded)  # padded: np.pad's faster equal form in generated code
def pad(y, array, pad_width, mode="constant", stat_length=None, constant_values=0, end_values=0,
        reflect_type="even"):
    if mode in WEIGHTED_PAD_MODES or reflect_type == "odd":  # padding that combines entries
        d[array] += weighted_pad_grad(d[y], array, pad_width, mode, stat_length, reflect_type)
    else:
        d[array] += pad_grad(d[y], pad_width, mode, reflect_type)
        d[constant_values] += pad_constant_grad(d[y], array, pad_width, constant_values)


@register_jvp(np.pad, padded)
def pad_jvp(y, array, pad_width, mode="constant", stat_length=None, constant_values=0, end_values=0,
            reflect_type="even"):
    if mode in WEIGHTED_PAD_MODES or reflect_type == "odd":
        t[y] += weighted_pad_tangent(t[array], array, pad_width, mode, stat_length, reflect_type)
    else:
        t[y] += pad_tangent(t[array], pad_width, mode, reflect_type)
        t[y] += pad_constant_tangent(t[constant_values], array, pad_width)


# ---- the modes that combine entries -------------------------------------------------------
# NumPy pads one axis after another, each axis reading the array as padded along the axes before
# it. Along one axis, the entries padded on each side are a linear combination of the nearest
# entries: ``rows = M @ window``, with ``M`` fixed for ``mean``, ``linear_ramp`` and odd
# reflections (found by padding an identity matrix), and for the extrema and the median the
# derivative of the statistic, which ``np.max``'s and ``np.median``'s rules take (tied entries
# share equally; the two middle entries of an even count half each), repeated on every padded
# row. The tangent applies these maps axis by axis, the adjoint their transposes in reverse.


def axis_pairs(value, ndim, dtype):
    """``pad_width``, ``stat_length`` as NumPy reads them: one (before, after) pair per axis."""
    return np.broadcast_to(np.asarray(value, dtype=dtype), (ndim, 2))


def side_maps(x, axis, before, after, mode, stat_pair, reflect_type):
    """``(left, right)``: the matrices giving the entries padded before and after ``x`` along
    ``axis`` from its first and last entries there (shaped ``(before, k)``, ``(after, k)``,
    with leading axes for each line of ``x`` where they depend on its values)."""
    lines = np.moveaxis(x, axis, -1)
    n = lines.shape[-1]
    dtype = float_dtype(x)
    maps = []
    for width, length, at_end in ((before, stat_pair[0], False), (after, stat_pair[1], True)):
        if mode in ("maximum", "minimum", "median"):
            k = n if length is None else min(n, int(length))
            window = lines[..., n - k:] if at_end else lines[..., :k]
            if mode == "median":
                weights = median_slope(window, -1)
            else:
                extreme = np.max(window, axis=-1, keepdims=True) if mode == "maximum" else \
                    np.min(window, axis=-1, keepdims=True)
                weights = tie_shares(window == extreme, -1)
            maps.append(np.broadcast_to(weights[..., None, :], weights.shape[:-1] + (width, k)).astype(dtype))
        else:  # the same map for every line: pad an identity the same way (k entries reach the padding)
            k = min(n, (n if mode == "mean" else width + 1) if length is None else int(length))
            options = {"stat_length": ((k, k), (1, 1))} if mode == "mean" else \
                {} if mode == "linear_ramp" else {"reflect_type": reflect_type}
            rows = np.pad(np.eye(k, dtype=dtype), ((0, width) if at_end else (width, 0), (0, 0)), mode=mode, **options)
            maps.append(rows[k:] if at_end else rows[:width])
    return maps


def pad_maps(array, pad_width, mode, stat_length, reflect_type):
    """``side_maps`` of each axis, each from the array as padded along the axes before it."""
    x = as_array(array)
    widths = axis_pairs(pad_width, x.ndim, np.intp)
    lengths = [(None, None)] * x.ndim if stat_length is None or mode == "linear_ramp" else \
        axis_pairs(stat_length, x.ndim, np.intp).tolist()
    maps = []
    for axis, (before, after) in enumerate(widths.tolist()):
        maps.append(side_maps(x, axis, before, after, mode, lengths[axis], reflect_type))
        if mode in ("maximum", "minimum", "median"):  # the next axis reads the padded values
            one_axis = [(before, after) if ax == axis else (0, 0) for ax in range(x.ndim)]
            x = np.pad(x, one_axis, mode=mode, stat_length=stat_length)
    return maps


register_nondifferentiable(pad_maps, reason="it is piecewise constant: which entries give each padded one")


def weighted_pad_tangent(ta, array, pad_width, mode, stat_length, reflect_type):
    """The derivative of ``np.pad(array, pad_width, mode, ...)`` in ``array`` along ``ta``."""
    for axis, (left, right) in enumerate(pad_maps(array, pad_width, mode, stat_length, reflect_type)):
        lines = np.moveaxis(ta, axis, -1)
        n = lines.shape[-1]
        before = (left @ lines[..., :left.shape[-1], None])[..., 0]
        after = (right @ lines[..., n - right.shape[-1]:, None])[..., 0]
        ta = np.moveaxis(np.concatenate([before, lines, after], axis=-1), -1, axis)
    return ta


def weighted_pad_grad(g, array, pad_width, mode, stat_length, reflect_type):
    """The adjoint of ``np.pad(array, pad_width, mode, ...)`` in ``array``: the transposed maps
    of ``weighted_pad_tangent``, last axis first."""
    maps = pad_maps(array, pad_width, mode, stat_length, reflect_type)
    for axis in reversed(range(len(maps))):
        left, right = maps[axis]
        lines = np.moveaxis(g, axis, -1)
        width_before, width_after = left.shape[-2], right.shape[-2]
        n = lines.shape[-1] - width_before - width_after
        inner = lines[..., width_before:width_before + n]
        to_first = (np.swapaxes(left, -1, -2) @ lines[..., :width_before, None])[..., 0]
        to_last = (np.swapaxes(right, -1, -2) @ lines[..., width_before + n:, None])[..., 0]
        flat = [(0, 0)] * (inner.ndim - 1)
        inner = inner + np.pad(to_first, flat + [(0, n - to_first.shape[-1])]) \
            + np.pad(to_last, flat + [(n - to_last.shape[-1], 0)])
        g = np.moveaxis(inner, -1, axis)
    return g


# Both helpers are linear in their first argument, one the transpose of the other; in the array
# they are piecewise constant (the maps): the same pair differentiates them again.
@register_vjp(weighted_pad_grad, zero="array")
def weighted_pad_grad_vjp(r, g, array, pad_width, mode, stat_length, reflect_type):
    d[g] += weighted_pad_tangent(d[r], array, pad_width, mode, stat_length, reflect_type)


@register_jvp(weighted_pad_grad, zero="array")
def weighted_pad_grad_jvp(r, g, array, pad_width, mode, stat_length, reflect_type):
    t[r] += weighted_pad_grad(t[g], array, pad_width, mode, stat_length, reflect_type)


@register_vjp(weighted_pad_tangent, zero="array")
def weighted_pad_tangent_vjp(r, ta, array, pad_width, mode, stat_length, reflect_type):
    d[ta] += weighted_pad_grad(d[r], array, pad_width, mode, stat_length, reflect_type)


@register_jvp(weighted_pad_tangent, zero="array")
def weighted_pad_tangent_jvp(r, ta, array, pad_width, mode, stat_length, reflect_type):
    t[r] += weighted_pad_tangent(t[ta], array, pad_width, mode, stat_length, reflect_type)
