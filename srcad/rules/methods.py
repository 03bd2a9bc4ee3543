"""Array methods and attributes, each differentiated as the NumPy function it stands for."""
import numpy as np

from ..registry import NONDIFF_ATTRIBUTES, NONDIFF_METHODS, register_attribute, register_method, register_vjp
from ..runtime import as_array, trace_grad

for _name, _fn in {
    "sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod, "dot": np.dot,
    "reshape": np.ndarray.reshape, "transpose": np.ndarray.transpose, "copy": np.copy,
    "trace": np.trace, "ravel": np.ravel, "flatten": np.ndarray.flatten, "squeeze": np.squeeze,
    "astype": np.ndarray.astype, "item": np.ndarray.item, "cumsum": np.cumsum, "cumprod": np.cumprod,
    "var": np.var, "std": np.std, "clip": np.clip, "swapaxes": np.swapaxes, "diagonal": np.diagonal,
    "conj": np.conj, "conjugate": np.conjugate, "round": np.round, "repeat": np.repeat, "take": np.take,
    "ptp": np.ptp, "tolist": np.ndarray.tolist,
}.items():
    register_method(_name, _fn)

register_attribute("T", np.transpose)
register_attribute("real", np.real)
register_attribute("imag", np.imag)
register_attribute("flat", np.ravel)  # (x.flat reads x in C order, as np.ravel(x) does)
if hasattr(np, "matrix_transpose"):  # NumPy 2's a.mT
    register_attribute("mT", np.matrix_transpose)

NONDIFF_METHODS.update({"argmax", "argmin", "argsort", "argpartition", "nonzero", "any", "all", "keys", "__len__",
                        "count", "index", "searchsorted"})
NONDIFF_ATTRIBUTES.update({"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides", "flags"})


@register_vjp(np.copy)
def copy(y, a, order="K", subok=False):
    d[a] += d[y]


@register_vjp(np.ndarray.astype, dtype_aware=True)
def astype(y, a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """A cast to an integer or boolean type is piecewise constant: its derivative is zero."""
    d[a] += cast_like(d[y], a, y)


def cast_like(g, x, y):
    """The adjoint of ``y = x.astype(...)`` in ``x``'s float dtype; zero if ``y`` is not real."""
    dtype = getattr(x, "dtype", None)
    if not np.issubdtype(as_array(y).dtype, np.inexact):
        return np.zeros(np.shape(x), dtype if dtype is not None and dtype.kind in "fc" else np.float64)
    if dtype is not None and np.issubdtype(dtype, np.floating):
        return np.asarray(g, dtype)
    return g


@register_vjp(np.ndarray.item)
def item(y, a, *index):
    d[a] += np.broadcast_to(d[y], np.shape(a)) * (np.arange(np.size(a)).reshape(np.shape(a)) == item_position(a, index))


def item_position(a, index):
    if not index:
        return 0
    if len(index) == 1:
        return index[0] % np.size(a)
    return np.ravel_multi_index(index, np.shape(a))


@register_vjp(np.ndarray.tolist)
def tolist(y, a):
    d[a] += np.asarray(d[y]).reshape(np.shape(a))



@register_vjp(np.trace)
def trace(y, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d[a] += trace_grad(d[y], a, offset, axis1, axis2)
