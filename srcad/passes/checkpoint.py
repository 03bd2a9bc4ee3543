"""Checkpointed loops, front end: ``for t in srcad.checkpointed(range(n), segment=k):`` becomes
``_checkpointN = k`` followed by ``for t in range(n):`` whose body starts with the marker
``_in_checkpointN = True``; the function's annotation ``"checkpoints"`` maps each marker name
``_in_checkpointN`` to ``(_checkpointN, the loop's line)``. Every later stage sees a plain range loop (forward
mode needs nothing more); the reverse transform (``checkpoint_adjoint``) finds the loop by the
marker in its body, which normalisation keeps there whatever it writes around the loop.

Refused at the user's line, with what to write instead: ``checkpointed`` anywhere but as the
iterable of a ``for`` statement of the differentiated function itself (not a nested ``def`` or
``lambda``), an argument that is not ``range(...)`` written in the call, a loop that can end
early (``break`` of this loop, ``return``) and a loop with an ``else`` block.

>>> import srcad
>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> from srcad.astutil import to_source
>>> def f(x, n):
...     for t in srcad.checkpointed(range(n), segment=4):
...         x = x * 2.0
...     return x
>>> src = capture(f)
>>> print(to_source(checkpoint_loops(resolve_calls(src.node, src), src)).strip())
def f(x, n):
    _checkpoint1 = 4
    for t in range(n):
        _in_checkpoint1 = True
        x = x * 2.0
    return x
"""
import builtins

import gast

from .. import astutil as A
from ..checkpointing import checkpointed

_BLOCKS = ("body", "orelse", "finalbody")


def _is_call_to(node, obj):
    callee = A.anno(node, "callee") if isinstance(node, gast.Call) else None
    return callee is not None and callee.kind == "object" and callee.obj is obj


def _nested_scopes(node):
    return isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef))


def _walk_scope(nodes):
    """Every node under ``nodes`` outside nested functions, lambdas and classes."""
    todo = list(nodes)
    while todo:
        n = todo.pop()
        yield n
        if not _nested_scopes(n):
            todo.extend(A.child_nodes(n))


def _loop_exits(body):
    """``break`` statements of the loop whose body is ``body`` and ``return`` statements in it."""
    todo = list(body)
    while todo:
        n = todo.pop()
        if isinstance(n, (gast.Break, gast.Return)):
            yield n
        elif isinstance(n, (gast.For, gast.While, gast.AsyncFor)):  # breaks in their bodies are theirs
            todo.extend(r for r in _walk_scope(n.body) if isinstance(r, gast.Return))
            todo.extend(n.orelse)
        elif not _nested_scopes(n):
            todo.extend(A.child_nodes(n))


def checkpoint_loops(node, source):
    """Replace each ``for t in checkpointed(range(...), segment=k)`` of ``node`` by a marker and
    a plain range loop (see the module doc); refuse every other use of ``checkpointed``."""
    taken = A.all_names(node) | set(source.closure)
    markers = {}

    def marker_names():
        i = len(markers) + 1
        while f"_checkpoint{i}" in taken or f"_in_checkpoint{i}" in taken:
            i += 1
        taken.update((f"_checkpoint{i}", f"_in_checkpoint{i}"))
        return f"_checkpoint{i}", f"_in_checkpoint{i}"

    def block(stmts):
        out = []
        for s in stmts:
            if isinstance(s, gast.For) and _is_call_to(s.iter, checkpointed):
                out.extend(rewrite(s))
                continue
            if not _nested_scopes(s):
                for field in _BLOCKS:
                    if isinstance(getattr(s, field, None), list):
                        setattr(s, field, block(getattr(s, field)))
                for handler in getattr(s, "handlers", []):
                    handler.body = block(handler.body)
            out.append(s)
        return out

    def rewrite(s):
        call = s.iter
        keywords = {k.arg: k.value for k in call.keywords}
        if len(call.args) != 1 or isinstance(call.args[0], gast.Starred) or set(keywords) - {"segment"}:
            raise source.syntax_error(
                "srcad.checkpointed takes the loop's range and an optional segment= length: "
                "write `for t in srcad.checkpointed(range(n), segment=k):`", call)
        steps = call.args[0]
        if not _is_call_to(steps, builtins.range):
            raise source.syntax_error(
                "srcad.checkpointed needs range(...) written in the call (the trip count must be known "
                "when the loop starts): write `for t in srcad.checkpointed(range(n)):`", steps)
        if not isinstance(s.target, gast.Name):
            raise source.syntax_error("a checkpointed loop needs a plain name as its variable", s.target)
        if s.orelse:
            raise source.syntax_error(
                "srcad does not checkpoint a loop with an else block: move the else block after the loop",
                s)
        for exit_ in _loop_exits(s.body):
            what = "break" if isinstance(exit_, gast.Break) else "return"
            raise source.syntax_error(
                f"srcad does not checkpoint a loop that can end early ({what} inside it): its segments are "
                "cut from the trip count known when the loop starts. Drop srcad.checkpointed here, or "
                f"compute a flag instead of the {what}", exit_)
        name, inside = marker_names()
        markers[inside] = (name, s.lineno)
        segment = keywords.get("segment", A.const(None))
        marker = gast.copy_location(A.assign(name, segment), s)
        s.iter = steps
        s.body = [gast.copy_location(A.assign(inside, A.const(True)), s)] + block(s.body)
        return [marker, s]

    node.body = block(node.body)
    for n in _walk_scope(node.body):  # what is left: every use not rewritten above
        if _nested_scopes(n):
            for inner in gast.walk(n):
                if _is_call_to(inner, checkpointed):
                    raise source.syntax_error(
                        "srcad.checkpointed marks a loop of the differentiated function itself, not of a "
                        "nested def or lambda: move the loop into the function (or into a module-level "
                        "function it calls)", inner)
        if _is_call_to(n, checkpointed):
            raise source.syntax_error(
                "srcad.checkpointed(...) only marks the iterable of a for statement: write "
                "`for t in srcad.checkpointed(range(n)):`", n)
    if markers:
        A.set_anno(node, "checkpoints", markers)
    return node
