"""Rules for Python builtins used on numbers and arrays."""
import builtins
import math

import numpy as np

from ..errors import UnsupportedCaseError
from ..registry import register_nondifferentiable, register_vjp
from ..runtime import sum_grad, unbroadcast, zeros_like
from .numpy_core import unit_phase


@register_vjp(builtins.sum)
def sum_(y, iterable, start=0):
    d[iterable] += sum_grad(d[y], iterable)
    d[start] += unbroadcast(d[y], start)


@register_vjp(math.fsum)
def fsum_(y, iterable):
    """As the builtin ``sum``'s: ``fsum`` rounds once, at the end, which changes no derivative."""
    d[iterable] += sum_grad(d[y], iterable)


@register_vjp(builtins.abs)
def abs_(y, x):
    d[x] += d[y] * (unit_phase(x) if np.iscomplexobj(x) else np.sign(x))


@register_vjp(builtins.float, builtins.complex)
def float_(y, x=0.0):
    d[x] += d[y]


@register_vjp(builtins.max, builtins.min)
def extremum_(y, a, *rest, key=None, default=None):
    """Over an iterable or over arguments; the first chosen item gets the cotangent (an
    argument passed twice, ``min(a, t, t)``, gets it once); ``default`` only if the iterable
    is empty."""
    if rest:
        chosen = 0 if a is y else -1  # the item itself (inline: a loop's cells run this)
        for k, r in enumerate(rest):
            if chosen < 0 and r is y:
                chosen = k + 1
        if chosen < 0:  # the pullback reads saved copies of them: the first equal one
            chosen = chosen_index((a,) + rest, y)
        # not d[y] * taken (an infinite d[y] times False is NaN); new zeros laid out like a tuple's
        # or list's d[y] for each item, 0.0 otherwise (a soft-minimum's cells make no call: the test
        # is decided when the code is made where y's shape is known, so numba never sees it)
        d[a] += d[y] if chosen == 0 else (zeros_like(d[y]) if isinstance(y, (tuple, list)) else 0.0)
        for k, r in enumerate(rest):
            d[r] += d[y] if chosen == k + 1 else (zeros_like(d[y]) if isinstance(y, (tuple, list)) else 0.0)
    elif len(a) == 0:
        d[default] += d[y]
    else:
        d[a] += pick_grad(d[y], a, y)


def pick_grad(g, items, chosen):
    """The adjoint of ``max(items)``/``min(items)``: all of it to the first chosen item."""
    if isinstance(items, (list, tuple)):
        out = [zeros_like(g) for _ in items]  # laid out like g (a tuple's); not 0.0 * g, NaN where g is inf
        out[chosen_index(items, chosen)] = g
        return out
    items = np.asarray(items)
    out = np.zeros(items.shape, np.result_type(items.dtype, np.float64))
    if items.ndim == 1:  # numbers: the first equal one at NumPy's speed (the first nan, if max took one)
        out[int(np.argmax(np.isnan(items) if _inexact(items) and np.isnan(chosen) else items == chosen))] = g
    else:
        out[chosen_index(items, chosen)] = g
    return out


def chosen_index(items, chosen):
    """Where ``chosen`` is in ``items``: the item itself (``max`` returns it, ``key=`` or not);
    else, where the pullback reads saved copies of them, the first item equal to it (nan equal
    to nan), which is the one ``max`` took: any item equal to the result is an extremum too (its
    key as well), and ``max`` takes the first. Arrays are compared as wholes."""
    for i, v in enumerate(items):
        if v is chosen:
            return i
    for i, v in enumerate(items):
        if _equal_items(v, chosen):
            return i
    raise UnsupportedCaseError("srcad cannot tell which item max or min chose (no item is the result, or equal to "
                               "it); compute the extremum with np.max/np.min over an array instead")


def _equal_items(v, chosen):
    """Is ``v`` equal to ``chosen`` (nan to nan)? Tuples and lists item by item, as ``max``
    compares them (a tuple of a number and an array is no array), arrays as wholes."""
    if isinstance(v, (tuple, list)) or isinstance(chosen, (tuple, list)):
        return type(v) is type(chosen) and len(v) == len(chosen) and all(map(_equal_items, v, chosen))
    return np.shape(v) == np.shape(chosen) and np.array_equal(v, chosen, equal_nan=_inexact(v) and _inexact(chosen))


def _inexact(v):
    return np.issubdtype(np.asarray(v).dtype, np.inexact)


@register_vjp(builtins.dict)
def dict_(y, mapping):
    d[mapping] += dict_grad(d[y], mapping)


def dict_grad(g, mapping):
    """The adjoint of ``dict(m)``, a copy of the dict ``m``: ``g`` itself, entry by entry."""
    if not isinstance(mapping, dict):
        raise UnsupportedCaseError("srcad differentiates dict(m) of a dict m (a copy); build other dicts "
                                   "with a display {k: v, ...}")
    return g


@register_vjp(builtins.list, builtins.tuple)
def list_(y, iterable=()):
    d[iterable] += list_grad(d[y], iterable)


def list_grad(g, iterable):
    """The adjoint of ``list(x)``: back to an array if ``x`` was one; none for a dict (its keys)."""
    if isinstance(iterable, dict):
        return None
    if isinstance(iterable, np.ndarray):
        return np.asarray(g).reshape(iterable.shape)
    return list(g)


@register_vjp(builtins.reversed)
def reversed_(y, seq):
    d[seq] += reversed_grad(d[y], seq)


def reversed_grad(g, seq):
    if isinstance(seq, np.ndarray):
        return np.asarray(g)[::-1]
    return list(g)[::-1]


def extreme_index(keys, largest):
    """The position of the first largest (``largest``) or smallest of ``keys``: the item
    ``max(items, key=f)`` or ``min(items, key=f)`` returns, Python's choice among ties."""
    positions = range(len(keys))
    return max(positions, key=keys.__getitem__) if largest else min(positions, key=keys.__getitem__)


def key_order(keys, reverse=False):
    """The positions of ``keys`` in the order ``sorted(items, key=f, reverse=reverse)`` puts
    their items (stable, as Python sorts)."""
    return sorted(range(len(keys)), key=keys.__getitem__, reverse=reverse)


def items_order(keys, reverse, where):
    """The positions of a dict's items, whose keys are ``keys``, in the order
    ``sorted(d.items(), reverse=reverse)`` puts them: their keys' order, where the keys are
    distinct strings or numbers (or tuples of them), which never compare equal, so Python's
    tuple comparison never reads the values. Any other keys (a class of yours may say two
    distinct keys are equal) are refused at ``where``, ``file:line``."""
    if not all(_plain_key(k) for k in keys) or len(set(keys)) != len(keys):
        raise UnsupportedCaseError(
            f"{where}: srcad differentiates sorted(d.items()) where the keys are distinct strings or numbers (or "
            "tuples of them), which order the items without comparing their values; here they are not: iterate "
            "sorted(d) and read d[k]")
    return key_order(keys, reverse)


# keys whose == agrees with their hash: distinct ones (a set keeps them all) never compare equal
_PLAIN_KEYS = (str, bytes, int, float, bool, type(None), np.int64, np.int32, np.float64, np.float32, np.str_)


def _plain_key(k):
    return type(k) in _PLAIN_KEYS or type(k) is tuple and all(_plain_key(item) for item in k)


register_nondifferentiable(extreme_index, key_order, items_order, reason="it computes positions")
