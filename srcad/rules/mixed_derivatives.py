"""Mixed derivatives of products along several directions at once, for the rules of the helpers
that ``np.prod`` and ``np.cumprod`` differentiate with (second and third order).

A value is carried as a hyper-dual number: a list ``parts`` indexed by a bit mask ``S`` of the
directions, ``parts[S]`` the coefficient of ``Π_{j∈S} ε_j`` where every ``ε_j² = 0``. Running
products of such numbers give the derivative along all the directions in the last part,
exactly where some entries are zero (no division by them).
"""
import numpy as np

from ..runtime import as_array
from ..runtime_derivatives import reduction_groups


def _submasks(mask):
    sub = mask
    while True:
        yield sub
        if not sub:
            return
        sub = (sub - 1) & mask


def times(p, q):
    """The product of two hyper-dual numbers (each part the sum over splits of its directions)."""
    return [sum(p[sub] * q[mask ^ sub] for sub in _submasks(mask)) for mask in range(len(p))]


def plus(p, q):
    return [a + b for a, b in zip(p, q)]


def seeded(x, directions):
    """``x + Σ_j ε_j directions[j]`` (the directions broadcast to ``x``'s shape)."""
    zero = np.zeros(np.shape(x), np.result_type(as_array(x).dtype, np.float32))
    parts = [zero] * 2 ** len(directions)
    parts[0] = x
    for j, v in enumerate(directions):
        parts[1 << j] = np.broadcast_to(v, np.shape(x))
    return parts


def constant(value, like):
    """``value``, which carries no derivative, shaped and typed like the hyper-dual ``like``."""
    zero = np.zeros(np.shape(like[0]), np.result_type(*like, np.float32))
    return [value + zero] + [zero] * (len(like) - 1)


def item(parts, index):
    return [p[index] for p in parts]


def prod_mixed(x, directions, axis=None):
    """Per entry ``i`` of each group ``np.prod(x, axis)`` reduces, the derivative of
    ``Π_{k≠i} x_k`` along every direction in ``directions`` (one each): with one, the Hessian
    of the product times that direction."""
    x = as_array(x)
    flat, ungroup = reduction_groups(x, axis)
    xs = seeded(flat, [reduction_groups(np.broadcast_to(v, x.shape), axis)[0] for v in directions])
    n = flat.shape[-1]
    if n == 0:  # empty groups: no entry to start the running products from, nothing to give
        return ungroup(constant(0.0, xs)[0])
    one = constant(1.0, item(xs, (..., 0)))
    left, right = [one], [one]  # Π_{k<i}, Π_{k>i}
    for i in range(1, n):
        left.append(times(left[-1], item(xs, (..., i - 1))))
        right.append(times(right[-1], item(xs, (..., n - i))))
    others = [times(left[i], right[n - 1 - i])[-1] for i in range(n)]
    return ungroup(np.stack(others, -1))


def cumprod_mixed(a, directions, axis):
    """The derivative of ``np.cumprod(a, axis)`` along every direction in ``directions``."""
    a_scan = _scan_view(a, axis)
    xs = seeded(a_scan, [_scan_view(v, axis) for v in directions])
    if a_scan.shape[0] == 0:  # an empty scan: no entry to start the running product from
        scanned = constant(0.0, xs)[0]
    else:
        running, out = constant(1.0, item(xs, 0)), []
        for i in range(a_scan.shape[0]):
            running = times(running, item(xs, i))
            out.append(running[-1])
        scanned = np.stack(out)
    return scanned if axis is None else np.moveaxis(scanned, 0, axis)  # flat as cumprod's result


def cumprod_grad_mixed(g, a, directions, axis):
    """The derivative of ``∇_a <g, np.cumprod(a, axis)>`` along every direction in
    ``directions``. With y_i = Π_{k≤i} a_k, the gradient is (Π_{k<j} a_k)·S_j, where
    S_j = Σ_{i≥j} g_i Π_{j<k≤i} a_k = g_j + a_{j+1} S_{j+1}."""
    a_scan, g_scan = _scan_view(a, axis), _scan_view(g, axis)
    xs = seeded(a_scan, [_scan_view(v, axis) for v in directions])
    last = a_scan.shape[0] - 1
    if last < 0:  # an empty scan: no entry to give a derivative to
        return _scan_restore(constant(0.0, xs)[0], a, axis)
    tails = [constant(g_scan[last], item(xs, last))]
    for j in reversed(range(last)):
        tails.insert(0, plus(constant(g_scan[j], item(xs, j)), times(item(xs, j + 1), tails[0])))
    before, out = constant(1.0, item(xs, 0)), []
    for j in range(last + 1):
        out.append(times(before, tails[j])[-1])
        before = times(before, item(xs, j))
    return _scan_restore(np.stack(out), a, axis)


def _scan_view(x, axis):
    """``x`` with the scanned axis first (flattened when ``axis`` is None)."""
    x = as_array(x)
    return x.ravel() if axis is None else np.moveaxis(x, axis, 0)


def _scan_restore(x, a, axis):
    return x.reshape(np.shape(a)) if axis is None else np.moveaxis(x, 0, axis)
