"""Summaries of the user functions a function calls, for the memory analysis
(``passes.memory``): which parameters' memory a function's result may share, and which it
updates in place. A function is read from its source, once per analysis.

>>> import numpy as np
>>> def scale(a, b):
...     a *= 2.0
...     return b
>>> from srcad.passes.memory import _summary_flow
>>> helper_summary(scale, _summary_flow)
({'b'}, {'a'})
"""
import contextlib
import threading
import types

import gast

from .. import registry

# (function, code) -> (parameters its result may share, parameters it updates in place), kept
# only while one analysis runs (a call site in a loop is met on every pass, and each helper is
# read once): a summary read later could describe bindings that have since changed, and a
# lasting table would keep every function alive.
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


def helper_summary(obj, flow):
    """For a user function srcad reads the source of: which parameters' memory its result
    may share, and which parameters' memory it updates in place. None if unknown (then
    its result may share all its arguments' memory). ``flow(params, body, at_return)`` runs
    the analysis over a body."""
    fn = _plain_function(obj)
    if fn is None:
        return None
    with summaries_kept() as table:
        return _summarise(fn, table, flow)


def _summarise(fn, table, flow):
    key = (fn, fn.__code__)
    if key in table:
        return table[key]
    table[key] = None  # recursion: unknown while it is being read
    from ..errors import SrcadError
    from ..source import capture
    from .normalize import normalize
    from .resolve_calls import resolve_calls

    try:
        source = capture(fn)
        node = normalize(resolve_calls(source.node, source), source)
    except (SrcadError, SyntaxError, OSError, TypeError):
        return None
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        return None
    params = [a.id for a in args.args]
    returned = []

    def at_return(s, state, analysis):
        if isinstance(s, gast.Return):
            returned.append(analysis.memory(state, s.value).all())

    analysis = flow(params, node.body, at_return)
    reached = frozenset().union(*returned)
    shared = {p for p in params if reached & {("arg", p), ("arg-item", p)}}
    updated = {p for p in params if analysis.mutated & {("arg", p), ("arg-item", p)}}
    table[key] = (shared, updated)
    return table[key]
