"""Lowered generated code kept across processes, in srcad's persistent cache (``SRCAD_CACHE_DIR``).

``passes.numba_lowering`` rewrites the generated adjoint into numba's subset; what it makes
depends only on the generated source and on what the free names it asks ``resolve`` about
denote (it compares them by identity with srcad's and NumPy's functions, and calls only
those). An entry keeps the lowered text, the generated line each of its statements comes
from (error messages point at the user's line through it), and every name the lowering
resolved with what it denoted: its import path, or the class of an object that has none
(a callee's stand-in). A later process uses the entry only if each name denotes the same
again, so lowering is skipped where its result would be the same.

Entries are ``srcad.cache_store`` entries: the same directory checks, no symlink followed, atomic
writes, a header and a content hash checked before use, nothing imported on reading; their
key names srcad's sources, Python, NumPy, numba and the generated source. A missing or
mismatching entry is a miss: the code is lowered afresh.

>>> record = Recorder(lambda name: {"np": np}.get(name))
>>> record("np") is np, record("other") is None
(True, True)
>>> [list(pair) for pair in record.answers()]
[['np', ['numpy', '']], ['other', None]]
"""
import json
import sys

import gast
import numpy as np

from .. import astutil as A
from .. import cache, cache_store

FORMAT = "srcad-numba-lowered 1"


class Recorder:
    """``resolve`` that remembers each name it was asked about and its answer."""

    def __init__(self, resolve):
        self.resolve, self.asked = resolve, {}

    def __call__(self, dotted):
        if dotted not in self.asked:
            self.asked[dotted] = self.resolve(dotted)
        return self.asked[dotted]

    def answers(self):
        """``[(name, description)]`` of every answer, or None if one cannot be described."""
        described = [(name, _description(obj)) for name, obj in sorted(self.asked.items())]
        return None if any(d is False for _, d in described) else described


def _description(obj):
    """What ``obj`` is, for identity tests in another process: its import path, ``None``, or
    ``["object of", class path]`` for an object with no path of its own; False if neither."""
    if obj is None:
        return None
    reference = cache._reference(obj)
    if reference is not None:
        return list(reference)
    kind = cache._reference(type(obj))
    return ["object of", list(kind)] if kind is not None else False


def _key_material(source, numba):
    return "\n".join([FORMAT, f"srcad {cache._srcad_fingerprint()}", f"python {sys.version}",
                      f"numpy {np.__version__}", f"numba {numba.__version__}", "source:", source])


def load(source, resolve, numba):
    """``(functions, count, text)`` lowered from ``source`` in an earlier process: gast
    function definitions with the generated source's line numbers, the first ``count`` of
    them those lowered from the generated functions (the rest their outlined branches), and
    the text they were parsed from; None on a miss."""
    if cache_store.directory() is None:
        return None
    payload = cache_store.load(_key_material(source, numba))
    if payload is None:
        return None
    try:
        entry = json.loads(payload)
        for name, description in entry["resolved"]:
            if _description(resolve(name)) != description:
                return None
        module = gast.parse(entry["text"])
        _renumber(module, entry["lines"])
        return module.body, entry["count"], entry["text"]
    except Exception:  # an entry of another layout: lower afresh
        return None


def store(source, lowered, count, text, recorder, numba):
    """Keep ``text`` (the source of ``lowered``, whose first ``count`` functions were lowered
    from ``source``'s) if every answer ``recorder`` gave can be checked again."""
    if cache_store.directory() is None:
        return False
    resolved = recorder.answers()
    lines = _statement_lines(lowered, text)
    if resolved is None or lines is None:
        return False
    entry = {"text": text, "lines": lines, "count": count, "resolved": resolved}
    return cache_store.store(_key_material(source, numba), json.dumps(entry, sort_keys=True))


def _statements(node, line=1):
    """``(statement, line)`` for the statements under ``node`` in source order, without
    srcad's comment lines (which print as comments, so parsing the text back has no
    statement for them); a statement the lowering made has its parent's line, as
    ``ast.fix_missing_locations`` gives it."""
    found = []
    for child in gast.iter_child_nodes(node):
        if isinstance(child, gast.stmt):
            own = getattr(child, "lineno", None) or line
            if not A.is_comment(child):
                found.append((child, own))
            found += _statements(child, own)
        elif not isinstance(child, gast.expr):
            found += _statements(child, line)  # an ExceptHandler, a match case
    return found


def _statement_lines(lowered, text):
    """For each statement of ``text`` parsed back, in order, the generated line of the
    statement of ``lowered`` it prints; None if the two do not pair up one to one."""
    original = _statements(gast.Module(body=lowered, type_ignores=[]))
    parsed = _statements(gast.parse(text))
    if len(original) != len(parsed) or any(type(a) is not type(b) for (a, _), (b, _) in zip(original, parsed)):
        return None
    return [line for _, line in original]


def _renumber(module, lines):
    """Give every statement its generated line, and each expression its statement's (columns
    are not kept: error messages name lines)."""
    statements = _statements(module)
    if len(statements) != len(lines):
        raise ValueError("an entry whose line table does not fit its text")
    for (stmt, _), line in zip(statements, lines):
        for node in [stmt, *_expressions(stmt)]:
            node.lineno = node.end_lineno = line
            node.col_offset = node.end_col_offset = 0


def _expressions(stmt):
    """The expression nodes of ``stmt`` itself (not of statements nested in it)."""
    out, todo = [], [c for c in gast.iter_child_nodes(stmt) if not isinstance(c, gast.stmt)]
    while todo:
        node = todo.pop()
        if isinstance(node, gast.stmt):
            continue
        if hasattr(node, "lineno"):
            out.append(node)
        todo.extend(gast.iter_child_nodes(node))
    return out
