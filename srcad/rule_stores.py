"""The updates a rule template may make to ``d[...]`` (``t[...]``), and the check that it makes
no other store into one.

``template`` applies exactly these, each a statement of its own in the template's body, an
``if`` branch or a ``for`` over a ``*operands`` parameter:

- ``d[x] += e`` and ``d[x] -= e``: accumulate into the adjoint (tangent);
- ``d[x][index] += e`` (or ``-=``) and ``np.add.at(d[x], index, e)`` (or ``np.subtract.at``):
  update the adjoint buffer in place.

Any other store (``d[x] = e``, ``t[y] *= e``, ``d[x], d[c] = ...``, ``out=d[x]``, an update
inside a ``while`` loop) would read the adjoint, find it zero and be silently dropped, so a
rule holding one is refused when it is registered (a user's) or first parsed (srcad's own).
"""
import linecache

import gast

from . import astutil as A
from .errors import SrcadError

_UPDATE_OPS = (gast.Add, gast.Sub)
_UPDATE_UFUNCS = ("add", "subtract")  # np.add.at(d[x], index, e)


def is_marker(node, marker):
    """Is ``node`` ``d[...]`` (``marker`` "d") or ``t[...]``?"""
    return isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and node.value.id == marker


def update(stmt, marker):
    """``(kind, d[x])`` if ``stmt`` is an update ``template`` applies: kind "accumulate" for
    ``d[x] += e`` / ``-=``, "buffer" for an in-place update of the buffer ``d[x]``; else None."""
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, _UPDATE_OPS):
        if is_marker(stmt.target, marker):
            return "accumulate", stmt.target
        if isinstance(stmt.target, gast.Subscript) and is_marker(stmt.target.value, marker):
            return "buffer", stmt.target.value
    if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) and stmt.value.args:
        func = stmt.value.func
        if (isinstance(func, gast.Attribute) and func.attr == "at" and isinstance(func.value, gast.Attribute)
                and func.value.attr in _UPDATE_UFUNCS and is_marker(stmt.value.args[0], marker)):
            return "buffer", stmt.value.args[0]
    return None


def updated_params(rule):
    """The names ``p`` of the ``d[p]`` (``t[p]``) that the rule's updates update."""
    named = set()
    for stmt in _statements(rule):
        applied = update(stmt, rule.marker)
        if applied is not None and isinstance(applied[1].slice, gast.Name):
            named.add(applied[1].slice.id)
    return named


def check_stores(rule, body):
    """Refuse a store into ``d[...]`` (``t[...]``) in ``body`` that is not one of the updates,
    and any other change to an adjoint's memory (``rule_changes``)."""
    from .rule_changes import check_changes

    for stmt in _statements(rule, body):
        applied = update(stmt, rule.marker)
        for node, store in _stores(stmt, rule.marker):
            if applied is None or store is not applied[1]:
                _refuse(rule, node, store)
    check_changes(rule, body)


def _statements(rule, body=None):
    """The statements ``template`` emits one by one: those of the body, of ``if`` branches and
    of ``for`` loops over the ``*operands`` parameter (which are unrolled)."""
    varargs = {p.name for p in rule.params if p.kind == p.VAR_POSITIONAL}
    pending = list(rule.body if body is None else body)
    while pending:
        stmt = pending.pop(0)
        if isinstance(stmt, gast.If):
            pending[:0] = stmt.body + stmt.orelse
        elif isinstance(stmt, gast.For) and _over(stmt.iter) in varargs:
            pending[:0] = stmt.body
        else:
            yield stmt


def _over(iterable):
    """``operands`` for ``operands`` and ``enumerate(operands)``."""
    if (isinstance(iterable, gast.Call) and isinstance(iterable.func, gast.Name) and iterable.func.id == "enumerate"
            and len(iterable.args) == 1):
        iterable = iterable.args[0]
    return iterable.id if isinstance(iterable, gast.Name) else None


def _stores(stmt, marker):
    """``(node, d[x])`` for each store into a marker in ``stmt`` (``d[x]`` None where the marker
    name itself is bound): as a target, the buffer under a stored item or attribute, the
    buffer of a ``ufunc.at`` call, or an ``out=`` argument."""
    for node in A.walk(stmt):
        if isinstance(node, gast.Name) and node.id == marker and not isinstance(node.ctx, gast.Load):
            yield node, None
        elif isinstance(node, (gast.Subscript, gast.Attribute)) and not isinstance(node.ctx, gast.Load):
            buffer = node
            while isinstance(buffer, (gast.Subscript, gast.Attribute)) and not is_marker(buffer, marker):
                buffer = buffer.value
            if is_marker(buffer, marker):
                yield node, buffer
        elif (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and node.func.attr == "at"
              and node.args and is_marker(node.args[0], marker)):
            yield node, node.args[0]
        elif isinstance(node, gast.keyword) and node.arg == "out":
            for item in A.walk(node.value):
                if is_marker(item, marker):
                    yield node.value, item


def rule_line(rule, node):
    """``"file:line"`` of the template's ``node`` and the text of that line."""
    line = rule.lineno + getattr(node, "lineno", 1) - 1
    return f"{rule.filename}:{line}", linecache.getline(rule.filename, line).strip()


def _refuse(rule, node, buffer):
    from .rule_templates import describe

    m = rule.marker
    stored = f"{m}[x]" if buffer is None else A.to_source(buffer).strip()
    place, code = rule_line(rule, node)
    raise SrcadError(
        f"{place}: `{code}` in the rule for {describe(rule.key)} stores into {stored} in a way srcad does not "
        f"apply, so the statement would be silently lost: a rule only accumulates, with `{m}[x] += ...` or "
        f"`{m}[x] -= ...` (`{m}[x][index] += ...` and `np.add.at({m}[x], index, ...)` update the buffer in "
        f"place), each a statement of its own in the rule's body, an `if` branch or a `for` over a *args "
        f"parameter; write `{stored} += ...`")

