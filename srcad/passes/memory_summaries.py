"""Summaries of the user functions a function calls, for the memory analysis
(``passes.memory``): what memory a function's result may share, in the function's own
locations (a parameter's, or what the function made, so the items of a tuple of new arrays are
told apart: ``return dr, r2``), which parameters it updates in place, and which globals. A
function is read from its source, once per analysis.

>>> import numpy as np
>>> def scale(a, b):
...     a *= 2.0
...     return b, a * b
>>> from srcad.passes.memory import _summary_flow
>>> result, updated, made, outside = helper_summary(scale, _summary_flow)
>>> [sorted(kind for kind, _ in item.all()) for item in result.items], updated, len(made), outside
([['arg', 'arg-item'], ['new']], {'a'}, 2, [])
"""
import contextlib
import threading
import types

import gast

from .. import registry
from .memory_locations import Memory

# (function, code) -> (the memory of its result, parameters it updates in place, its allocations
# the result may hold -> their numbers, globals it updates in place), kept only while one analysis
# or one transform runs (a call site in a loop is met on every pass, and each helper is read once,
# not once per pass): a summary read later could describe bindings that have since changed, and
# a lasting table would keep every function alive.
_SUMMARIES = threading.local()


@contextlib.contextmanager
def summaries_kept():
    outermost = getattr(_SUMMARIES, "table", None) is None
    if outermost:
        _SUMMARIES.table = {}
    try:
        yield _SUMMARIES.table
    finally:
        if outermost:
            _SUMMARIES.table = None


def _plain_function(obj):
    fn = getattr(obj, "__srcad_function__", obj)
    if not isinstance(fn, types.FunctionType) or registry.lookup(registry.VJP, obj) is not None:
        return None
    return None if registry.is_nondifferentiable(obj) else fn


def helper_summary(obj, flow, arrays=(), attributes=False, compiled=False):
    """For a user function srcad reads the source of: the ``Memory`` of its result in its own
    locations, which parameters' memory it updates in place, and its allocations (``("new",
    id)`` or ``("old", id)``) the result may hold, numbered. None if unknown (then its result
    may share all its arguments' memory). ``flow(params, body, at_return, arrays, attributes,
    receivers_checked=False)`` runs the analysis over a body; ``arrays``: the parameters a call
    gives arrays or numbers (what their items and methods make is then known). ``attributes``: an
    attribute store (``STATE.last = y``, which srcad compiles nowhere) read as an update of the
    object. ``compiled``: for a call srcad compiles apart, where the function's compiled code
    runs: what it updates then takes ``a.copy()``, ``a.astype(float)``... for new memory, as that
    code checks (``_summarise``); a call run as written checks nothing."""
    fn = _plain_function(obj)
    if fn is None:
        return None
    with summaries_kept() as table:
        return _summarise(fn, table, flow, tuple(sorted(arrays)), attributes, compiled)


def _summarise(fn, table, flow, arrays, attributes=False, compiled=False):
    key = (fn, fn.__code__, arrays, attributes, compiled)
    if key in table:
        return table[key]
    table[key] = None  # recursion: unknown while it is being read
    from ..errors import SrcadError
    from ..source import capture
    from .normalize import normalize
    from .resolve_calls import resolve_calls

    # the tree, shared by the summaries for other ``arrays`` (the analysis only reads it)
    read = ("read", fn, fn.__code__, attributes)
    if read not in table:
        try:
            source = capture(fn)
            table[read] = normalize(resolve_calls(_attribute_stores_as_items(source.node) if attributes
                                                  else source.node, source), source)
        except (SrcadError, SyntaxError, OSError, TypeError):
            table[read] = None
    node = table[read]
    if node is None:
        return None
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        return None
    params = [a.id for a in args.args]
    returned = []

    def at_return(s, state, analysis):
        if isinstance(s, gast.Return):
            returned.append(analysis.memory(state, s.value))

    arrays = [p for p in arrays if p in params]
    analysis = flow(params, node.body, at_return, arrays, attributes)
    result = returned[0] if returned else Memory()
    for memory in returned[1:]:
        result = result | memory
    # what it made and stored in a global (CACHE.append(a); return a) is held by that global too
    stored_outside = sorted({owner for kind, owner in analysis.mutated if kind in ("global", "global-item")})
    if compiled and analysis.unproven_receivers:
        # ``W = self.W.copy(); W[0] += x``: the function's compiled code checks that self.W is an
        # array before the update (``passes.array_receivers``), so the update stays in the copy.
        # Its result stays what it was without that: no check guards a caller's update of it
        analysis = flow(params, node.body, lambda *_: None, arrays, attributes, receivers_checked=True)
    updated = {p for p in params if analysis.mutated & {("arg", p), ("arg-item", p)}}
    outside = sorted({owner for kind, owner in analysis.mutated if kind in ("global", "global-item")})
    if stored_outside:
        escapes = frozenset(("global-item", owner) for owner in stored_outside)
        result = result.mapped(lambda locations: locations | escapes if any(
            loc[0] in ("new", "old") for loc in locations) else locations)
    made = sorted({loc for loc in result.all() | result.listy if loc[0] in ("new", "old")}, key=repr)
    table[key] = (result, updated, {loc: k for k, loc in enumerate(made)}, outside)
    return table[key]


class _ItemStores(gast.NodeTransformer):
    def visit_Attribute(self, node):
        self.generic_visit(node)
        if isinstance(node.ctx, gast.Load):
            return node
        return gast.copy_location(gast.Subscript(value=node.value, slice=gast.Constant(value=node.attr, kind=None),
                                                 ctx=node.ctx), node)


def _attribute_stores_as_items(node):
    """``node`` with each attribute store (``STATE.last = y``, ``obj.n += 1``, ``del self.c``) read
    as an item store (``STATE["last"] = y``): for what a function updates the two are alike,
    an update of the object's memory (srcad compiles no attribute store: without this it would
    read no summary of the function, nor see what it stores outside)."""
    return _ItemStores().visit(node)
