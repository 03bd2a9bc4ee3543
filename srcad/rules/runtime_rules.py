"""Rules for the helpers that generated code calls, so that generated code is itself valid
srcad input: ``srcad.grad(srcad.grad(f))`` differentiates ``f_adjoint`` and
``srcad.hessian(f)`` runs forward mode over it.

Most helpers are linear in their cotangent argument ``g`` (the other arguments only give
shapes); products and einsum are multilinear, and the adjoint of ``np.prod`` involves the
(symmetric) Hessian of a product, applied by ``prod_hvp``.
"""
import copy

import numpy as np

from .. import runtime
from ..arguments import snapshot
from ..registry import register_jvp, register_nondifferentiable, register_vjp
from ..sharing import copy_for_calls
from ..runtime import in_place_cast, in_place_result, into_dtype_of
from ..runtime import (add_grads, as_real, concat_grad, container_grad, stacked_grad, copy_grad, grad_buffer, copy_value, cotangent, cotangent_items, cotangent_like, stored_adjoint,
                       expand_reduced, extremum_grad, finish, finish_tangent, full_of, matmul_dx, matmul_dy, prod_grad, scatter_add, sum_grad, sum_to_reduced,
                       tangent_or_zero, trace_grad, transpose_back, unbroadcast, unstack, rule_adjoint, rule_tangent)
from .builtin_rules import dict_grad, list_grad, pick_grad, reversed_grad
from .jvp_core import pick_tangent
from .mixed_derivatives import prod_mixed
from .methods import cast_like, item_position
from .numpy_elementwise import broadcast_like

register_nondifferentiable(runtime.zeros_like, runtime.none_items, runtime.cleared_slot, runtime.shape_of, runtime.size_of, runtime.default_cotangent, item_position,
                           reason="it builds zeros, a shape or a constant")
register_nondifferentiable(runtime.real_constant, reason="it checks a value is real")
register_nondifferentiable(runtime.value_stack, reason="it makes empty storage for saved values")
register_nondifferentiable(runtime.numeric_constant, reason="it checks a value is a number or an array")
register_nondifferentiable(runtime.read_again, reason="it checks a loop may read its sequence")
register_nondifferentiable(runtime.numba_refuses, reason="it marks code the numba backend does not compile")
register_nondifferentiable(runtime.check_integer_range, reason="it checks integer arithmetic stays within 64 bits")
register_nondifferentiable(runtime.check_python_float, reason="it checks a Python float's division or power")
register_nondifferentiable(runtime.inexact_result, reason="it checks a value is a float")


# ---- values passed through ---------------------------------------------------------------
@register_vjp(as_real)
def as_real_vjp(y, x):
    d[x] += d[y]


@register_jvp(as_real)
def as_real_jvp(y, x):
    t[y] += t[x]


# copy.deepcopy: generated code snapshots a list or dict whose items an update reaches with it;
# snapshot: a pullback's forward sweep saves a value of the user's globals with it; copy.copy:
# yours (an array's copy, a new list or dict of the same items)
@register_vjp(copy_value, copy_grad, grad_buffer, copy.deepcopy, snapshot, copy.copy)
def copy_vjp(y, v):
    d[v] += d[y]


@register_jvp(copy_value, copy_grad, grad_buffer, copy.deepcopy, snapshot, copy.copy)
def copy_jvp(y, v):
    t[y] += copy_grad(t[v])


# copy_for_calls: a compiled function's copy of an argument a call it runs as written may change
@register_vjp(copy_for_calls)
def copy_for_calls_vjp(y, value, where):
    d[value] += d[y]


@register_jvp(copy_for_calls)
def copy_for_calls_jvp(y, value, where):
    t[y] += copy_grad(t[value])


@register_vjp(in_place_result, zero="old")  # old's shape and dtype only: its value is in new
def in_place_result_vjp(y, new, old):
    d[new] += in_place_cast(d[y], y)


@register_jvp(in_place_result, zero="old")
def in_place_result_jvp(y, new, old):
    t[y] += in_place_cast(t[new], y)


@register_vjp(in_place_cast, zero="y")  # a cast: linear in g, y gives its dtype
def in_place_cast_vjp(r, g, y):
    d[g] += in_place_cast(d[r], y)


@register_jvp(in_place_cast, zero="y")
def in_place_cast_jvp(r, g, y):
    t[r] += in_place_cast(t[g], y)


@register_vjp(into_dtype_of)
def into_dtype_of_vjp(y, g, target):
    d[g] += into_dtype_of(d[y], target)


@register_jvp(into_dtype_of)
def into_dtype_of_jvp(y, g, target):
    t[y] += into_dtype_of(t[g], target)


@register_vjp(cotangent)
def cotangent_vjp(c, v, y):
    d[v] += finish(d[c], v, True)


@register_jvp(cotangent)
def cotangent_jvp(c, v, y):
    t[c] += cotangent(t[v], y)


@register_vjp(cotangent_items)  # a rule's parameters are its function's (tests/test_rule_signatures.py)
def cotangent_items_vjp(c, v, y, primal=None):
    d[v] += finish(d[c], v, True)


@register_jvp(cotangent_items)
def cotangent_items_jvp(c, v, y, primal=None):
    t[c] += cotangent_items(t[v], y, v)


@register_vjp(cotangent_like)
def cotangent_like_vjp(c, v, shape, dtype):
    d[v] += finish(d[c], v, True)


@register_jvp(cotangent_like)
def cotangent_like_jvp(c, v, shape, dtype):
    t[c] += cotangent_like(t[v], shape, dtype)


@register_vjp(finish)
def finish_vjp(y, g, x, shared=False):
    d[g] += finish(d[y], g, True)


@register_jvp(finish)
def finish_jvp(y, g, x, shared=False):
    t[y] += finish(t[g], x, True)


@register_vjp(stored_adjoint)
def stored_adjoint_vjp(y, g, index, value):
    """Linear in ``g``: the kept slots' adjoints go back to those slots."""
    d[g] += unstore(d[y], g, index, value)


@register_jvp(stored_adjoint)
def stored_adjoint_jvp(y, g, index, value):
    t[y] += stored_adjoint(t[g], index, value)


def unstore(h, g, index, value):
    """The transpose of ``stored_adjoint``: ``h`` (shaped like ``value``) into the kept slots
    of an array shaped like ``g`` (assigning keeps the same write per slot as the primal); for
    the adjoint of a list, tuple or dict (``p["w"] = ...`` into a copied dict), zeros like it
    with ``h`` in the slot."""
    if isinstance(g, (list, tuple, dict)):
        out = runtime.zeros_like(g)
        out[index] = h
        return out
    out = np.zeros(np.shape(g), np.result_type(np.asarray(h).dtype, np.float64))
    out[index] = np.broadcast_to(h, np.shape(out[index]))
    return out


@register_vjp(finish_tangent)
def finish_tangent_vjp(y, tangent, x, shared=False):
    d[tangent] += unbroadcast(finish(d[y], x, True), tangent)


@register_jvp(finish_tangent)
def finish_tangent_jvp(y, tangent, x, shared=False):
    t[y] += finish_tangent(t[tangent], x, True)


@register_vjp(add_grads)
def add_grads_vjp(y, a, b):
    # each term's adjoint summed to its shape: a scalar zero adjoint (0.0 for an item max did
    # not choose) added into an array adjoint takes the array's shape in y
    d[a] += unbroadcast(d[y], a)
    d[b] += unbroadcast(d[y], b)


@register_jvp(add_grads)
def add_grads_jvp(y, a, b):
    # where a is None, y is b: the tangent takes y's shape, not a's scalar zero
    t[y] += tangent_or_zero(t[a], a, y)
    t[y] += tangent_or_zero(t[b], b, y)


@register_vjp(rule_tangent)
def rule_tangent_vjp(r, tangent, y, rule):
    d[tangent] += d[r]


@register_jvp(rule_tangent)
def rule_tangent_jvp(r, tangent, y, rule):
    t[r] += t[tangent]


@register_vjp(tangent_or_zero)
def tangent_or_zero_vjp(r, ta, a, y):
    d[ta] += tangent_or_zero(d[r], a, ta)


@register_jvp(tangent_or_zero)
def tangent_or_zero_jvp(r, ta, a, y):
    t[r] += tangent_or_zero(t[ta], a, y)


# ---- broadcasting and reductions ---------------------------------------------------------
# np.full broadcasts a (differentiable) fill value: rules generated adjoints use it for sums
@register_vjp(np.full)
def full_vjp(y, shape, fill_value, dtype=None, order="C", like=None):
    d[fill_value] += unbroadcast(d[y], fill_value)


@register_jvp(np.full)
def full_jvp(y, shape, fill_value, dtype=None, order="C", like=None):
    t[y] += broadcast_like(t[fill_value], y)


@register_vjp(np.full_like, zero="a")  # only a's shape and dtype are used
def full_like_vjp(y, a, fill_value, dtype=None, order="K", subok=True, shape=None, device=None):
    d[fill_value] += unbroadcast(d[y], fill_value)


@register_jvp(np.full_like, zero="a")
def full_like_jvp(y, a, fill_value, dtype=None, order="K", subok=True, shape=None, device=None):
    t[y] += broadcast_like(t[fill_value], y)


@register_vjp(full_of)
def full_of_vjp(y, shape, value):
    d[value] += unbroadcast(d[y], value)


@register_jvp(full_of)
def full_of_jvp(y, shape, value):
    t[y] += broadcast_like(t[value], y)


@register_vjp(unbroadcast)
def unbroadcast_vjp(y, g, x):
    d[g] += broadcast_like(d[y], g)


@register_jvp(unbroadcast)
def unbroadcast_jvp(y, g, x):
    t[y] += unbroadcast(t[g], x)


@register_vjp(rule_adjoint)
def rule_adjoint_vjp(y, g, x, rule, shapes, operands):
    d[g] += broadcast_like(d[y], g)


@register_jvp(rule_adjoint)
def rule_adjoint_jvp(y, g, x, rule, shapes, operands):
    t[y] += unbroadcast(t[g], x)


@register_vjp(sum_to_reduced)
def sum_to_reduced_vjp(y, g, x, axis, keepdims):
    d[g] += unbroadcast(np.sum(d[y], axis=axis, keepdims=keepdims), g)


@register_jvp(sum_to_reduced)
def sum_to_reduced_jvp(y, g, x, axis, keepdims):
    t[y] += sum_to_reduced(t[g], x, axis, keepdims)


@register_vjp(expand_reduced)
def expand_reduced_vjp(y, r, x, axis, keepdims):
    d[r] += np.reshape(d[y], np.shape(r))


@register_jvp(expand_reduced)
def expand_reduced_jvp(y, r, x, axis, keepdims):
    t[y] += expand_reduced(t[r], x, axis, keepdims)


@register_vjp(extremum_grad)
def extremum_grad_vjp(r, g, x, y, axis=None, keepdims=False):
    """The tie weights are piecewise constant in ``x``: only ``g`` gets a cotangent."""
    d[g] += unbroadcast(np.sum(d[r] * extremum_grad(1.0, x, y, axis, keepdims), axis=axis, keepdims=keepdims), g)


@register_jvp(extremum_grad)
def extremum_grad_jvp(r, g, x, y, axis=None, keepdims=False):
    t[r] += extremum_grad(t[g], x, y, axis, keepdims)


@register_vjp(prod_grad)
def prod_grad_vjp(y, g, x, axis=None, keepdims=False):
    d[g] += unbroadcast(np.sum(d[y] * prod_grad(1.0, x, axis, keepdims), axis=axis, keepdims=keepdims), g)
    d[x] += sum_to_reduced(g, x, axis, keepdims) * prod_hvp(x, d[y], axis)


@register_jvp(prod_grad)
def prod_grad_jvp(y, g, x, axis=None, keepdims=False):
    t[y] += prod_grad(t[g], x, axis, keepdims)
    t[y] += sum_to_reduced(g, x, axis, keepdims) * prod_hvp(x, t[x], axis)


def prod_hvp(x, v, axis=None):
    """H·v for the Hessian H of ``np.prod(x, axis)`` within each reduced group:
    ``(H v)_i = Σ_{j≠i} v_j Π_{k∉{i,j}} x_k`` (exact when some ``x_k`` are zero)."""
    return prod_mixed(x, (v,), axis)


# Third order: H is symmetric, and its derivative in x along w is the (symmetric) third
# derivative applied to v and w
@register_vjp(prod_hvp)
def prod_hvp_vjp(r, x, v, axis=None):
    d[x] += prod_mixed(x, (v, d[r]), axis)
    d[v] += unbroadcast(prod_hvp(x, d[r], axis), v)


@register_jvp(prod_hvp)
def prod_hvp_jvp(r, x, v, axis=None):
    t[r] += prod_hvp(x, t[v], axis)
    t[r] += prod_mixed(x, (v, t[x]), axis)


# ---- products ----------------------------------------------------------------------------
@register_vjp(matmul_dx)
def matmul_dx_vjp(r, g, x, y):
    d[g] += unbroadcast(np.matmul(d[r], y), g)
    d[y] += matmul_dy(g, d[r], y)


@register_jvp(matmul_dx)
def matmul_dx_jvp(r, g, x, y):
    t[r] += matmul_dx(t[g], x, y)
    t[r] += matmul_dx(g, x, t[y])


@register_vjp(matmul_dy)
def matmul_dy_vjp(r, g, x, y):
    d[g] += unbroadcast(np.matmul(x, d[r]), g)
    d[x] += matmul_dx(g, x, d[r])


@register_jvp(matmul_dy)
def matmul_dy_jvp(r, g, x, y):
    t[r] += matmul_dy(t[g], x, y)
    t[r] += matmul_dy(g, t[x], y)


# ---- shapes and containers ---------------------------------------------------------------
@register_vjp(unstack)
def unstack_vjp(y, g, axis=0):
    d[g] += np.stack(d[y], axis=axis)


@register_jvp(unstack)
def unstack_jvp(y, g, axis=0):
    t[y] += unstack(t[g], axis)


@register_vjp(sum_grad)
def sum_grad_vjp(y, g, x):
    d[g] += sum_grad_back(d[y], g)


@register_jvp(sum_grad)
def sum_grad_jvp(y, g, x):
    t[y] += sum_grad(t[g], x)


def sum_grad_back(gs, g):
    """The adjoint of ``sum_grad``: add the copies of ``g`` back up."""
    if isinstance(gs, (list, tuple)):  # items summed down to their shapes: g's shape again
        return sum(gs, zeros_of(g))
    return unbroadcast(gs, g)


def zeros_of(g):
    return np.zeros(np.shape(g))


@register_vjp(transpose_back)
def transpose_back_vjp(y, g, axes):
    d[g] += transpose_forward(d[y], axes)


@register_jvp(transpose_back)
def transpose_back_jvp(y, g, axes):
    t[y] += transpose_back(t[g], axes)


def transpose_forward(g, axes):
    """``np.transpose(g, axes)``, with ``axes`` as ``transpose_back`` takes them."""
    if isinstance(axes, tuple) and len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
        axes = axes[0]
    if axes is None or len(axes) == 0:
        return np.transpose(g)
    return np.transpose(g, axes)


@register_vjp(concat_grad)
def concat_grad_vjp(y, g, pieces, axis=0):
    d[g] += np.concatenate([np.ravel(p) for p in d[y]] if axis is None else d[y], axis=axis)


@register_jvp(concat_grad)
def concat_grad_jvp(y, g, pieces, axis=0):
    t[y] += concat_grad(t[g], pieces, axis)


@register_vjp(trace_grad)
def trace_grad_vjp(y, g, a, offset=0, axis1=0, axis2=1):
    d[g] += np.trace(d[y], offset, axis1, axis2)


@register_jvp(trace_grad)
def trace_grad_jvp(y, g, a, offset=0, axis1=0, axis2=1):
    t[y] += trace_grad(t[g], a, offset, axis1, axis2)


@register_jvp(scatter_add)
def scatter_add_jvp(y, buffer, index, g):
    np.add.at(t[buffer], index, t[g])


# ---- helpers of builtin_rules.py and methods.py ------------------------------------------
@register_vjp(pick_grad)
def pick_grad_vjp(y, g, items, chosen):
    d[g] += pick_tangent(d[y], items, chosen)


@register_jvp(pick_grad)
def pick_grad_jvp(y, g, items, chosen):
    t[y] += pick_grad(t[g], items, chosen)


@register_vjp(list_grad)
def list_grad_vjp(y, g, iterable):
    d[g] += list(d[y])


@register_jvp(list_grad)
def list_grad_jvp(y, g, iterable):
    t[y] += list_grad(t[g], iterable)


@register_vjp(container_grad)
def container_grad_vjp(y, g, x):
    d[g] += stacked_grad(d[y], g)


@register_jvp(container_grad)
def container_grad_jvp(y, g, x):
    t[y] += container_grad(t[g], x)


@register_vjp(stacked_grad)
def stacked_grad_vjp(y, g, like):
    d[g] += container_grad(d[y], g)


@register_jvp(stacked_grad)
def stacked_grad_jvp(y, g, like):
    t[y] += stacked_grad(t[g], like)


@register_vjp(dict_grad)
def dict_grad_vjp(y, g, mapping):
    d[g] += d[y]  # dict_grad(g, m) is g itself: a helper's cotangent check would meet its 0 slots


@register_jvp(dict_grad)
def dict_grad_jvp(y, g, mapping):
    t[y] += dict_grad(t[g], mapping)


@register_vjp(reversed_grad)
def reversed_grad_vjp(y, g, seq):
    d[g] += reversed_grad(d[y], g)


@register_jvp(reversed_grad)
def reversed_grad_jvp(y, g, seq):
    t[y] += reversed_grad(t[g], seq)


@register_vjp(cast_like)
def cast_like_vjp(y, g, x, result):
    d[g] += cast_like(d[y], g, result)


@register_jvp(cast_like)
def cast_like_jvp(y, g, x, result):
    t[y] += cast_like(t[g], x, result)
