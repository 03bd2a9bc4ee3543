"""Rules for Python's operators, keyed by gast node type."""
import gast
import numpy as np

from ..registry import register_vjp
from ..runtime import matmul_dx, matmul_dy, unbroadcast
from ..template_static import literal


@register_vjp(gast.Add, np.add)
def add(z, x, y):
    d[x] += unbroadcast(d[z], x)
    d[y] += unbroadcast(d[z], y)


@register_vjp(gast.Sub, np.subtract)
def subtract(z, x, y):
    d[x] += unbroadcast(d[z], x)
    d[y] += unbroadcast(-d[z], y)


@register_vjp(gast.Mult, np.multiply)
def multiply(z, x, y):
    d[x] += unbroadcast(d[z] * y, x)
    d[y] += unbroadcast(d[z] * x, y)


@register_vjp(gast.Div, np.divide)
def divide(z, x, y):
    """For a number ``c`` written as the numerator (a sigmoid's ``1.0 / u``), finite and not 0,
    ``z / y`` is ``z * z / c``: the reverse sweep reads the result, which it keeps anyway, not ``y``."""
    d[x] += unbroadcast(d[z] / y, x)
    if literal(x) and isinstance(x, (int, float)) and x == 1:
        d[y] += unbroadcast(-d[z] * z * z, y)
    elif literal(x) and isinstance(x, (int, float)) and x != 0 and -float("inf") < x < float("inf"):
        d[y] += unbroadcast(-d[z] * z * (z / x), y)
    else:
        d[y] += unbroadcast(-d[z] * z / y, y)


@register_vjp(gast.Pow, np.power)
def power(z, x, y):
    """x ** 0 is 1 everywhere, x = 0 included: its slope there is 0, not 0 · 0 ** -1."""
    if isinstance(y, int) and y == 2:
        d[x] += unbroadcast(d[z] * 2 * x, x)
    elif np.ndim(y) == 0 and y != 0:
        d[x] += unbroadcast(d[z] * y * x ** (y - 1), x)
    else:
        d[x] += unbroadcast(d[z] * np.where(y == 0, 0, y) * x ** np.where(y == 0, 1, y - 1), x)
    d[y] += unbroadcast(d[z] * z * np.log(np.where(x == 0, 1.0, x)), y)


@register_vjp(gast.MatMult, np.matmul)
def matmul(z, x, y):
    """1-D and 2-D arrays: products and outer products NumPy runs directly (np.dot's rule
    has the same branches); other operands: the general helpers."""
    if np.ndim(x) == 2 and np.ndim(y) == 2:
        d[x] += d[z] @ y.T
        d[y] += x.T @ d[z]
    elif isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and np.ndim(x) == 2 and np.ndim(y) == 1:
        d[x] += d[z][:, None] * y
        d[y] += d[z] @ x
    elif isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and np.ndim(x) == 1 and np.ndim(y) == 2:
        d[x] += y @ d[z]
        d[y] += x[:, None] * d[z]
    elif isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and np.ndim(x) == 1 and np.ndim(y) == 1:
        d[x] += d[z] * y
        d[y] += d[z] * x
    else:
        d[x] += matmul_dx(d[z], x, y)
        d[y] += matmul_dy(d[z], x, y)


@register_vjp(gast.USub, np.negative)
def negative(y, x):
    d[x] += -d[y]


@register_vjp(gast.UAdd, np.positive)
def positive(y, x):
    d[x] += d[y]


@register_vjp(gast.Mod, np.mod)
def mod(z, x, y):
    d[x] += unbroadcast(d[z], x)
    d[y] += unbroadcast(-d[z] * np.floor_divide(x, y), y)
