"""Forward-mode (jvp) rules for the vjp rules of ``builtin_rules.py`` and ``methods.py``.

The jvp rules of the operators and of the elementwise, reduction, product and shape
functions of ``numpy_core.py`` live beside their breadth modules (``numpy_elementwise.py``,
``numpy_reductions.py``, ``numpy_products.py``, ``numpy_shapes.py`` and its neighbours).
"""
import builtins
import math

import numpy as np

from ..errors import SrcadError
from ..registry import no_derivative, register_jvp
from ..runtime_adjoints import JOINED_SEQUENCES, zeros_like
from .builtin_rules import chosen_index, dict_grad, reversed_grad
from .numpy_core import unit_phase
from .numpy_elementwise import broadcast_like


@register_jvp(builtins.sum)
def sum_(y, iterable, start=0):
    t[y] += broadcast_like(summed_tangent(t[iterable], y), y)
    t[y] += broadcast_like(t[start], y)


@register_jvp(math.fsum)
def fsum_(y, iterable):
    t[y] += broadcast_like(summed_tangent(t[iterable], y), y)


def summed_tangent(tangents, y):
    """The tangent of the builtin ``sum(items)``: the sum of the items' tangents; refused, as
    in reverse mode, where the sum joined lists or tuples (``sum(groups, [])``)."""
    if y.__class__ in (list, tuple):
        raise SrcadError(JOINED_SEQUENCES)
    return sum(tangents)


@register_jvp(builtins.abs)
def abs_(y, x):
    t[y] += np.real(np.conjugate(unit_phase(x)) * t[x]) if np.iscomplexobj(x) else t[x] * np.sign(x)


@register_jvp(builtins.float)
def float_(y, x=0.0):
    t[y] += float(t[x])


@register_jvp(builtins.complex)
def complex_(y, real=0.0, imag=0.0):
    t[y] += complex(t[real])
    t[y] += t[imag] * no_derivative("complex() in its imaginary part", "srcad differentiates real values only")
    t[y] += 1j * t[imag]


@register_jvp(builtins.max, builtins.min)
def extremum(y, a, *rest, key=None, default=None):
    """Over an iterable or over arguments: the tangent of the first chosen item (once, for
    an argument passed twice); ``default``'s for an empty iterable."""
    if rest:
        # not t[a] * taken: a tuple times False is (), and an infinite tangent times False NaN
        taken = a is y
        t[y] += t[a] if taken else zeros_like(t[a])
        for k, r in enumerate(rest):
            t[y] += t[r] if r is y and not taken else zeros_like(t[r])
            if k < len(rest) - 1:
                taken = taken or r is y
    elif len(a) == 0:
        t[y] += t[default]
    else:
        t[y] += pick_tangent(t[a], a, y)


def pick_tangent(tangents, items, chosen):
    """The tangent of ``max(items)``/``min(items)``: that of the first chosen item."""
    if isinstance(items, (list, tuple)):
        return tangents[chosen_index(items, chosen)]
    return np.asarray(tangents)[int(np.argmax(np.asarray(items) == chosen))]


@register_jvp(builtins.list)
def list_(y, iterable=()):
    t[y] += list(items_tangent(t[iterable], iterable))


@register_jvp(builtins.dict)
def dict_(y, mapping):
    t[y] += dict(dict_grad(t[mapping], mapping))


@register_jvp(builtins.tuple)
def tuple_(y, iterable=()):
    t[y] += tuple(items_tangent(t[iterable], iterable))


def items_tangent(tangent, iterable):
    """The tangents of the items ``iter(x)`` yields: zeros for a dict, whose items are its keys."""
    return [0.0] * len(iterable) if isinstance(iterable, dict) else tangent


@register_jvp(builtins.reversed)
def reversed_(y, seq):
    t[y] += reversed_grad(t[seq], seq)


@register_jvp(np.ndarray.item)
def item(y, a, *index):
    t[y] += np.asarray(t[a]).item(*index)


@register_jvp(np.ndarray.tolist)
def tolist(y, a):
    t[y] += np.asarray(t[a]).tolist()
