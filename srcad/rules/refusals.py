"""Functions whose result depends smoothly on a float argument, but that srcad has no
derivative for: a call where such an argument is differentiated is refused when the code is
generated (``no_derivative``), never silently given a zero derivative. Calls where those
arguments are constants (``np.arange(n)``, ``np.unique(labels)``) pass through.

Each rule has a reverse (vjp) and a forward (jvp) form; the forward form refuses only when the
argument has a tangent.
"""
import builtins

import numpy as np

from ..registry import no_derivative, register_jvp, register_vjp

_SPACED = "write it with np.linspace (base ** np.linspace(...) for np.logspace), which srcad differentiates"


@register_vjp(np.logspace)
def logspace(y, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    d[start] += no_derivative("np.logspace in its start", _SPACED)
    d[stop] += no_derivative("np.logspace in its stop", _SPACED)
    d[base] += no_derivative("np.logspace in its base", _SPACED)


@register_jvp(np.logspace)
def logspace_jvp(y, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    t[y] += t[start] * no_derivative("np.logspace in its start", _SPACED)
    t[y] += t[stop] * no_derivative("np.logspace in its stop", _SPACED)
    t[y] += t[base] * no_derivative("np.logspace in its base", _SPACED)


@register_vjp(np.geomspace)
def geomspace(y, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    d[start] += no_derivative("np.geomspace in its start", _SPACED)
    d[stop] += no_derivative("np.geomspace in its stop", _SPACED)


@register_jvp(np.geomspace)
def geomspace_jvp(y, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    t[y] += t[start] * no_derivative("np.geomspace in its start", _SPACED)
    t[y] += t[stop] * no_derivative("np.geomspace in its stop", _SPACED)


_ARANGE = "build the values as start + step * np.arange(n) with an integer count n"


@register_vjp(np.arange)
def arange(y, start, stop=None, step=None, dtype=None, *, device=None, like=None):
    d[start] += no_derivative("np.arange in a float argument", _ARANGE)
    d[stop] += no_derivative("np.arange in a float argument", _ARANGE)
    d[step] += no_derivative("np.arange in a float argument", _ARANGE)


@register_jvp(np.arange)
def arange_jvp(y, start, stop=None, step=None, dtype=None, *, device=None, like=None):
    t[y] += t[start] * no_derivative("np.arange in a float argument", _ARANGE)
    t[y] += t[stop] * no_derivative("np.arange in a float argument", _ARANGE)
    t[y] += t[step] * no_derivative("np.arange in a float argument", _ARANGE)


_HISTOGRAM = ("its counts depend on the weights and its bin edges on the data; pass constants, or wrap "
              "them in srcad.stop_gradient if no derivative should flow")


@register_vjp(np.histogram)
def histogram(y, a, bins=10, range=None, density=None, weights=None):
    d[a] += no_derivative("np.histogram", _HISTOGRAM)
    d[bins] += no_derivative("np.histogram", _HISTOGRAM)
    d[range] += no_derivative("np.histogram", _HISTOGRAM)
    d[weights] += no_derivative("np.histogram", _HISTOGRAM)


@register_jvp(np.histogram)
def histogram_jvp(y, a, bins=10, range=None, density=None, weights=None):
    t[y] += t[a] * no_derivative("np.histogram", _HISTOGRAM)
    t[y] += t[bins] * no_derivative("np.histogram", _HISTOGRAM)
    t[y] += t[range] * no_derivative("np.histogram", _HISTOGRAM)
    t[y] += t[weights] * no_derivative("np.histogram", _HISTOGRAM)


_UNIQUE = "its result holds the argument's values; use np.sort, or srcad.stop_gradient if no derivative should flow"


@register_vjp(np.unique)
def unique(y, ar, *args, **options):
    d[ar] += no_derivative("np.unique of a differentiated array", _UNIQUE)


@register_jvp(np.unique)
def unique_jvp(y, ar, *args, **options):
    t[y] += t[ar] * no_derivative("np.unique of a differentiated array", _UNIQUE)


_HEAVISIDE = "its second argument is the value where the first is 0; use np.where(x1 == 0, x2, ...)"


@register_vjp(np.heaviside, zero="x1")  # piecewise constant in x1
def heaviside(y, x1, x2, **options):
    d[x2] += no_derivative("np.heaviside in its second argument", _HEAVISIDE)


@register_jvp(np.heaviside, zero="x1")
def heaviside_jvp(y, x1, x2, **options):
    t[y] += t[x2] * no_derivative("np.heaviside in its second argument", _HEAVISIDE)


_SORTED = "use np.sort on an array, which srcad differentiates"


@register_vjp(builtins.sorted)
def sorted_(y, iterable, *, key=None, reverse=False):
    d[iterable] += no_derivative("sorted() of differentiated values", _SORTED)


@register_jvp(builtins.sorted)
def sorted_jvp(y, iterable, *, key=None, reverse=False):
    t[y] += t[iterable] * no_derivative("sorted() of differentiated values", _SORTED)


_SETS = ("a set has no order, so no item's derivative can be told from another's: keep the values in a list "
         "(a set of values without derivative, such as indices or labels, is fine)")


@register_vjp(builtins.set)
def set_(y, iterable=()):
    d[iterable] += no_derivative("a set of values that carry a derivative", _SETS)


@register_jvp(builtins.set)
def set_jvp(y, iterable=()):
    t[y] += t[iterable] * no_derivative("a set of values that carry a derivative", _SETS)


@register_vjp(builtins.frozenset)
def frozenset_(y, iterable=()):
    d[iterable] += no_derivative("a frozenset of values that carry a derivative", _SETS)


@register_jvp(builtins.frozenset)
def frozenset_jvp(y, iterable=()):
    t[y] += t[iterable] * no_derivative("a frozenset of values that carry a derivative", _SETS)


_DIVMOD = "its remainder a - b * (a // b) has a derivative; write that (or a % b) instead"


@register_vjp(builtins.divmod)
def divmod_(y, a, b):
    d[a] += no_derivative("divmod() of differentiated values", _DIVMOD)
    d[b] += no_derivative("divmod() of differentiated values", _DIVMOD)


@register_jvp(builtins.divmod)
def divmod_jvp(y, a, b):
    t[y] += t[a] * no_derivative("divmod() of differentiated values", _DIVMOD)
    t[y] += t[b] * no_derivative("divmod() of differentiated values", _DIVMOD)


_RANDOM = "draw standard samples z once and write loc + scale * z (low + (high - low) * u)"


@register_vjp(np.random.normal)
def normal(y, loc=0.0, scale=1.0, size=None):
    d[loc] += no_derivative("np.random.normal in its loc", _RANDOM)
    d[scale] += no_derivative("np.random.normal in its scale", _RANDOM)


@register_jvp(np.random.normal)
def normal_jvp(y, loc=0.0, scale=1.0, size=None):
    t[y] += t[loc] * no_derivative("np.random.normal in its loc", _RANDOM)
    t[y] += t[scale] * no_derivative("np.random.normal in its scale", _RANDOM)


@register_vjp(np.random.uniform)
def uniform(y, low=0.0, high=1.0, size=None):
    d[low] += no_derivative("np.random.uniform in its low", _RANDOM)
    d[high] += no_derivative("np.random.uniform in its high", _RANDOM)


@register_jvp(np.random.uniform)
def uniform_jvp(y, low=0.0, high=1.0, size=None):
    t[y] += t[low] * no_derivative("np.random.uniform in its low", _RANDOM)
    t[y] += t[high] * no_derivative("np.random.uniform in its high", _RANDOM)


_PAIRS = ("loop over it instead (for a, b in zip(x, y): ...), which srcad differentiates, or index the "
          "sequences directly")


@register_vjp(builtins.zip)
def zip_(y, *iterables, strict=False):
    for it in iterables:
        d[it] += no_derivative("zip() of differentiated values outside a for loop", _PAIRS)


@register_jvp(builtins.zip)
def zip_jvp(y, *iterables, strict=False):
    for it in iterables:
        t[y] += t[it] * no_derivative("zip() of differentiated values outside a for loop", _PAIRS)


@register_vjp(builtins.enumerate)
def enumerate_(y, iterable, start=0):
    d[iterable] += no_derivative("enumerate() of differentiated values outside a for loop", _PAIRS)


@register_jvp(builtins.enumerate)
def enumerate_jvp(y, iterable, start=0):
    t[y] += t[iterable] * no_derivative("enumerate() of differentiated values outside a for loop", _PAIRS)


_SLICE = "index tricks with differentiated slice bounds (np.r_[a:b:5j], np.mgrid) are np.linspace(a, b, 5)"


@register_vjp(builtins.slice)
def slice_(y, start, stop=None, step=None):
    d[start] += no_derivative("a slice with differentiated bounds", _SLICE)
    d[stop] += no_derivative("a slice with differentiated bounds", _SLICE)
    d[step] += no_derivative("a slice with differentiated bounds", _SLICE)


@register_jvp(builtins.slice)
def slice_jvp(y, start, stop=None, step=None):
    t[y] += t[start] * no_derivative("a slice with differentiated bounds", _SLICE)
    t[y] += t[stop] * no_derivative("a slice with differentiated bounds", _SLICE)
    t[y] += t[step] * no_derivative("a slice with differentiated bounds", _SLICE)
