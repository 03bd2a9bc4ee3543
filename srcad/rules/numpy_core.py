"""Rules for the core of NumPy: elementwise functions, reductions, products, shapes."""
import math

import numpy as np

from ..registry import register_vjp
from ..runtime import (concat_grad, einsum_grad, extremum_grad, matmul_dx, matmul_dy, prod_grad, sum_to_reduced,
                       transpose_back, unbroadcast, unstack)


@register_vjp(np.sin, math.sin)
def sin(y, x):
    d[x] += d[y] * np.cos(x)


@register_vjp(np.cos, math.cos)
def cos(y, x):
    d[x] += -d[y] * np.sin(x)


@register_vjp(np.tan, math.tan)
def tan(y, x):
    d[x] += d[y] * (1 + y**2)


@register_vjp(np.exp, math.exp)
def exp(y, x):
    d[x] += d[y] * y


@register_vjp(np.log)
def log(y, x):
    d[x] += d[y] / x


@register_vjp(math.log)
def math_log(y, x, base=math.e):
    d[x] += d[y] / (x * np.log(base))
    d[base] += -d[y] * y / (base * np.log(base))


@register_vjp(np.sqrt, math.sqrt)
def sqrt(y, x):
    d[x] += d[y] / (2 * y)


@register_vjp(np.tanh, math.tanh)
def tanh(y, x):
    d[x] += d[y] * (1 - y**2)


@register_vjp(np.abs, np.absolute, math.fabs)
def absolute(y, x):
    d[x] += d[y] * np.sign(x)


@register_vjp(math.pow)
def math_pow(z, x, y):
    d[x] += d[z] * y * x ** (y - 1)
    d[y] += d[z] * z * np.log(np.where(x == 0, 1.0, x))


@register_vjp(np.maximum)
def maximum(z, x, y):
    """Ties split the cotangent equally between the two operands."""
    d[x] += unbroadcast(d[z] * ((x > y) + 0.5 * (x == y)), x)
    d[y] += unbroadcast(d[z] * ((y > x) + 0.5 * (x == y)), y)


@register_vjp(np.minimum)
def minimum(z, x, y):
    """Ties split the cotangent equally between the two operands."""
    d[x] += unbroadcast(d[z] * ((x < y) + 0.5 * (x == y)), x)
    d[y] += unbroadcast(d[z] * ((y < x) + 0.5 * (x == y)), y)


@register_vjp(np.where)
def where(y, condition, x, z):
    d[x] += unbroadcast(np.where(condition, d[y], 0), x)
    d[z] += unbroadcast(np.where(condition, 0, d[y]), z)


@register_vjp(np.sum)
def sum_(y, a, axis=None, dtype=None, out=None, keepdims=False):
    d[a] += sum_to_reduced(d[y], a, axis, keepdims)


@register_vjp(np.mean)
def mean(y, a, axis=None, dtype=None, out=None, keepdims=False):
    d[a] += sum_to_reduced(d[y], a, axis, keepdims) * (np.size(y) / np.size(a))


@register_vjp(np.max, np.amax, np.min, np.amin)
def extremum(y, a, axis=None, out=None, keepdims=False):
    """Ties share the cotangent equally."""
    d[a] += extremum_grad(d[y], a, y, axis, keepdims)


@register_vjp(np.prod)
def prod(y, a, axis=None, dtype=None, out=None, keepdims=False):
    d[a] += prod_grad(d[y], a, axis, keepdims)


def dot_subscripts(a, b):
    """``np.dot(a, b)`` as an einsum specification."""
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return "abcdefgh"[:na] + "," + "ijklmnop"[:nb] + "->" + "abcdefgh"[:na] + "ijklmnop"[:nb]
    left = "abcdefgh"[:na]
    right = "ijklmnop"[: nb - 2] + left[-1] + ("z" if nb >= 2 else "")
    out = left[:-1] + "ijklmnop"[: nb - 2] + ("z" if nb >= 2 else "")
    return f"{left},{right}->{out}"


@register_vjp(np.dot)
def dot(z, a, b):
    if np.ndim(a) <= 2 and np.ndim(b) <= 2 and np.ndim(a) and np.ndim(b):
        d[a] += matmul_dx(d[z], a, b)
        d[b] += matmul_dy(d[z], a, b)
    else:
        d[a] += einsum_grad(dot_subscripts(a, b), 0, d[z], a, b)
        d[b] += einsum_grad(dot_subscripts(a, b), 1, d[z], a, b)


@register_vjp(np.einsum)
def einsum(y, subscripts, *operands, **options):
    for i, op in enumerate(operands):
        d[op] += einsum_grad(subscripts, i, d[y], *operands)


@register_vjp(np.reshape)
def reshape(y, a, shape=None, order="C", newshape=None, copy=None):
    d[a] += np.reshape(d[y], np.shape(a), order=order)


@register_vjp(np.ndarray.reshape)
def ndarray_reshape(y, a, *shape, order="C"):
    d[a] += np.reshape(d[y], np.shape(a), order=order)


@register_vjp(np.transpose)
def transpose(y, a, axes=None):
    d[a] += transpose_back(d[y], axes)


@register_vjp(np.ndarray.transpose)
def ndarray_transpose(y, a, *axes):
    d[a] += transpose_back(d[y], axes)


@register_vjp(np.stack)
def stack(y, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    d[arrays] += unstack(d[y], axis)


@register_vjp(np.concatenate)
def concatenate(y, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    d[arrays] += concat_grad(d[y], arrays, axis)
