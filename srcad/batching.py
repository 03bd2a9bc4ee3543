"""Batched pullbacks: ``pullback.batched(V)`` pulls back every row of ``V`` (a leading axis
of cotangents) and stacks the results along the same axis; ``jacobian(mode="rev")`` uses
it with the rows of an identity.

Where every operation of the generated backward function is on the allowlist of
``passes.batch``, one call of its batched version does all rows; otherwise, or when a
batched helper meets a case it does not do exactly (``batch_runtime.Unbatchable``), the
rows are pulled back one at a time through the ordinary pullback. Both give the same
result; only the time differs.
"""
import re
import types
import weakref

import gast
import numpy as np

from . import astutil as A
from . import sourcemap
from .batch_runtime import Unbatchable
from .compile import _load, factory_source
from .errors import CotangentError
from .guards import _CalleeFunction
from .passes.batch import NotBatchable, batch_backward
from .pytrees import is_node, leaves, rebuild

_MADE = weakref.WeakKeyDictionary()  # compile.Compiled -> (code, helpers), or None: not batchable


def batched_backward(functions):
    """The batched backward function of ``functions`` (the ``(joint, forward, backward)``
    that ``Differentiable._functions`` returns), or None where it does not batch (another
    backend, or an operation off the allowlist)."""
    compiled, fn = getattr(functions, "_compiled", None), getattr(functions, "_fn", None)
    if compiled is None or fn is None:
        return None
    bound = getattr(functions, "_batched_backward", None)
    if bound is None:
        made = _MADE.get(compiled, False)
        if made is False:
            made = _MADE[compiled] = _make(compiled, fn)
        bound = (_bind(compiled, fn, *made),) if made is not None else (None,)
        functions._batched_backward = bound  # the bound functions live as long as their cache entry
    return bound[0]


def _make(compiled, fn):
    generated = compiled.generated
    generated.ensure_pair()
    tree = gast.parse(generated.backward_source).body[0]
    _mark_lines(tree, generated.backward_source)
    try:
        batched, helpers = batch_backward(tree, _resolver(generated.closure, fn))
    except NotBatchable:
        return None
    batched.name = f"{generated.name}_backward_batched"
    # a generated module loaded from the persistent cache does not list its factory's parameters
    params = sorted(set(generated.factory_params or ()) | set(generated.closure) | set(fn.__code__.co_freevars)
                    | set(helpers))
    text = factory_source(params, [A.to_source(batched)], [batched.name])
    return _load(text, fn, " batched", [batched.name])[1][0], helpers


def _mark_lines(fn, source):
    """Give ``fn``, parsed from ``source`` (which drops comments), the ``# line N:`` comments of
    ``source`` again, before the statements they govern: an error raised in its batched version
    names the user's line (``sourcemap``, ``tracebacks``) as the pullback's does."""
    lines = source.splitlines()
    texts = {}
    for line in lines:
        match = _LINE_MARK.match(line)
        if match:
            texts[int(match.group(1))] = match.group(2)
    governing = sourcemap.line_map(source)  # generated line -> the user's line
    for block in A.blocks(fn.body):
        marked, last = [], None
        for s in block:
            line = governing.get(getattr(s, "lineno", None), last)
            if line is not None and line != last and line in texts:
                marked.append(A.comment(f"line {line}: {texts[line]}"))
            last = line
            marked.append(s)
        block[:] = marked


_LINE_MARK = re.compile(r"^\s*# line (\d+): (.*)$")


def _resolver(closure, fn):
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    builtins = fn.__globals__.get("__builtins__", {})
    builtins = builtins if isinstance(builtins, dict) else vars(builtins)

    def resolve(name):
        if name in closure:
            return closure[name]
        if name in cells:
            try:
                return cells[name].cell_contents
            except ValueError:  # an empty cell
                return None
        return fn.__globals__.get(name, builtins.get(name))

    return resolve


def _bind(compiled, fn, code, helpers):
    user_cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    objects = {**compiled.generated.closure, **helpers}
    cells = []
    for name in code.co_freevars:
        if name in helpers:  # named apart from every name the backward function reads
            cells.append(types.CellType(helpers[name]))
        elif name in user_cells:
            cells.append(user_cells[name])
        else:
            obj = objects[name]
            cells.append(types.CellType(obj.resolve() if isinstance(obj, _CalleeFunction) else obj))
    return types.FunctionType(code, fn.__globals__, code.co_name, None, tuple(cells))


def batched_pullback(pullback, functions, saved, y, one_tuple, located):
    """``pullback.batched``: ``V`` holds one cotangent per row of its leading axis (for a
    structured output: that structure, each leaf with the leading axis, ``None`` for zero);
    the result holds the gradients, each with the same leading axis."""

    def batched(V):
        backward = batched_backward(functions) if y.__class__ is np.ndarray or not is_node(y) else None
        if backward is not None:
            v = np.asarray(V)
            if v.dtype.kind in "iub":
                v = v.astype(np.float64)
            if v.dtype.kind == "f":
                if v.ndim != np.ndim(y) + 1 or v.shape[1:] != np.shape(y):
                    raise located(CotangentError(
                        f"the batched cotangents have shape {v.shape}; pass an array of shape (B,) + "
                        f"{np.shape(y)}: one cotangent of the output's shape per row"))
                if not len(v):  # no cotangents: empty stacks, made as the rows would make them
                    return _row_by_row(pullback, V, y)
                try:
                    grads = backward(saved, v)
                except Unbatchable:
                    grads = None  # this call's values are outside what the batched code does exactly
                except CotangentError as exc:
                    raise located(exc) from None
                if grads is not None:
                    return (grads,) if one_tuple else grads
        return _row_by_row(pullback, V, y)

    return batched


def _row_by_row(pullback, V, y):
    """Every row of ``V`` pulled back on its own, the results stacked."""
    parts = leaves(V) if is_node(y) else [V]
    sizes = {len(p) for p in parts if p is not None}
    if len(sizes) != 1 or any(np.ndim(p) == 0 for p in parts if p is not None):
        raise CotangentError("the batched cotangents need one leading axis of the same length on every array")
    (size,) = sizes
    rows = []
    for i in range(size):
        row = [None if p is None else p[i] for p in parts]
        rows.append(pullback(rebuild(V, row) if is_node(y) else row[0]))
    if not rows:  # no cotangents: empty stacks of the gradients' shapes
        zero = pullback(rebuild(V, [None if p is None else np.zeros(np.shape(p)[1:]) for p in parts])
                        if is_node(y) else np.zeros(np.shape(V)[1:]))
        return rebuild(zero, [np.zeros((0,) + np.shape(g), np.result_type(g, np.float64)) for g in leaves(zero)])
    first = rows[0]
    stacked = [np.stack([leaves(r)[k] for r in rows]) for k in range(len(leaves(first)))]
    return rebuild(first, stacked)
