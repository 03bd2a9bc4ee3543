"""Jump elimination: ``break``, ``continue`` and early ``return`` as flags and guards.

Guarantee: afterwards a block holds no ``continue``, no ``return`` but (at the top level)
one final ``return``, and the only ``break`` is ``if _stopN: break`` as the last statement
of its loop's body. Every loop at every depth is rewritten, whether or not the loops around
it jump, with flags of its own: ``_skipN`` (skip the rest of this pass) is reset at the top
of each pass, ``_stopN`` (leave the loop) just before the loop starts. A ``return`` sets the
flags of every loop it leaves. A loop's ``else:`` becomes ``if not _stopN:`` after it (no
``else`` is left). ``check_jumps_eliminated`` holds the output to this.

>>> import gast
>>> from srcad.astutil import to_source
>>> from srcad.naming import Namer
>>> body = gast.parse('''
... for i in a:
...     for j in b:
...         if j > i:
...             break
...         s = s + j
... return s''').body
>>> print(to_source(eliminate_jumps(body, Namer(), None, top_level=True)).strip())
for i in a:
    _stop1 = False
    for j in b:
        _skip1 = False
        if j > i:
            _skip1 = True
            _stop1 = True
        if not _skip1:
            s = s + j
        if _stop1:
            break
return s
"""
import gast

from .. import astutil as A
from .statements import lower_statements


def is_break_guard(s):
    """``if _stopN: break``, the only ``break`` left after jump elimination."""
    return isinstance(s, gast.If) and len(s.body) == 1 and isinstance(s.body[0], gast.Break) and not s.orelse


def eliminate_jumps(body, namer, source, top_level, result=None, params=()):
    """Rewrite ``break``/``continue``/``return`` in ``body`` into flag assignments and guards.

    At the top level the function keeps a single final ``return``; for an inlined helper
    (``top_level=False``) every ``return e`` becomes ``result = e``. ``with`` and ``try``
    statements are lowered first (``passes.statements``; ``params``: the function's).
    """
    body = lower_statements(body, namer, source, params)  # with and try first: they may hold jumps
    returns = [n for s in body for n in _walk_stmts(s) if isinstance(n, gast.Return)]
    simple = len(returns) == 1 and body and body[-1] is returns[0]
    if not top_level and simple:
        last = body[-1]
        value = last.value if last.value is not None else A.const(None)
        return _eliminate_block(body[:-1], None, namer) + [gast.copy_location(A.assign(result, value), last)]
    if top_level and (not returns or simple):
        return _eliminate_block(body, None, namer)
    state = {"flag": namer.fresh("_returned"), "value": result or namer.fresh("_retval")}
    new = [A.assign(state["flag"], A.const(False)), A.assign(state["value"], A.const(None))]
    new += _eliminate_block(body, state, namer)
    if top_level:
        new.append(gast.Return(value=A.load(state["value"])))
    return new


def check_jumps_eliminated(stmts, source, in_loop=False):
    """Raise an internal srcad error if a jump survived in ``stmts`` (the body of a loop if
    ``in_loop``); see the module docstring."""
    for i, s in enumerate(stmts):
        last_in_loop = in_loop and i == len(stmts) - 1
        if isinstance(s, (gast.Break, gast.Continue)) or is_break_guard(s) and not last_in_loop:
            raise source.syntax_error(
                "internal error: srcad left a jump it cannot differentiate; please report this function", s)
        if isinstance(s, gast.If) and not is_break_guard(s):
            check_jumps_eliminated(s.body, source)
            check_jumps_eliminated(s.orelse, source)
        elif isinstance(s, (gast.For, gast.While)):
            check_jumps_eliminated(s.body, source, in_loop=True)


def _jumps(stmts):
    """Which of break/continue/return can leave this block (not counting inner loops' own)."""
    found = set()
    for s in stmts:
        for node in _walk_stmts(s):
            if isinstance(node, gast.Break):
                found.add("break")
            elif isinstance(node, gast.Continue):
                found.add("continue")
            elif isinstance(node, gast.Return):
                found.add("return")
    return found


def _walk_stmts(stmt):
    """Statements inside ``stmt``; an inner loop's body contributes only its returns."""
    yield stmt
    if isinstance(stmt, gast.If):
        for s in stmt.body + stmt.orelse:
            yield from _walk_stmts(s)
    elif isinstance(stmt, (gast.For, gast.While)):
        for s in stmt.body:
            for inner in _walk_stmts(s):
                if not isinstance(inner, (gast.Break, gast.Continue)):
                    yield inner
        for s in stmt.orelse:  # a loop's ``else`` runs after it: its jumps are the enclosing loop's
            yield from _walk_stmts(s)


class _Loop:
    def __init__(self, skip, stop):
        self.skip, self.stop = skip, stop


def _guard(flag, stmts):
    test = gast.UnaryOp(op=gast.Not(), operand=A.load(flag))
    return gast.If(test=test, body=stmts, orelse=[])


def _eliminate_block(stmts, state, namer, loops=()):
    out = []
    for i, s in enumerate(stmts):
        rest = stmts[i + 1:]
        if isinstance(s, gast.Return):
            if state is None:  # the single final return
                out.append(s)
                return out
            if s.value is not None:
                out.append(gast.copy_location(A.assign(state["value"], s.value), s))
            out.append(gast.copy_location(A.assign(state["flag"], A.const(True)), s))
            for loop in loops:
                out.append(A.assign(loop.skip, A.const(True)))
                out.append(A.assign(loop.stop, A.const(True)))
            return out
        if isinstance(s, (gast.Break, gast.Continue)):
            loop = loops[-1]
            out.append(gast.copy_location(A.assign(loop.skip, A.const(True)), s))
            if isinstance(s, gast.Break):
                out.append(gast.copy_location(A.assign(loop.stop, A.const(True)), s))
            return out
        if isinstance(s, gast.If):
            jumps = _jumps([s])
            s.body = _eliminate_block(s.body, state, namer, loops) or [gast.Pass()]
            s.orelse = _eliminate_block(s.orelse, state, namer, loops)
            out.append(s)
            if jumps and rest:
                out.extend(_guarded_rest(rest, state, namer, loops))
                return out
            continue
        if isinstance(s, (gast.For, gast.While)):
            inner = _jumps(s.body)
            stop = None
            if inner:
                loop = _Loop(namer.fresh("_skip"), namer.fresh("_stop"))
                body = [A.assign(loop.skip, A.const(False))]
                body += _eliminate_block(s.body, state, namer, loops + (loop,))
                if inner & {"break", "return"}:
                    stop = loop.stop
                    body.append(gast.If(test=A.load(stop), body=[gast.Break()], orelse=[]))
                    out.append(A.assign(stop, A.const(False)))
                s.body = body
            else:  # no jump leaves this loop, but loops inside it may jump: rewrite them too
                s.body = _eliminate_block(s.body, state, namer, loops) or [gast.Pass()]
            out.append(s)
            if s.orelse:  # ``else:`` runs when the loop ends without ``break``
                rest = ([gast.If(test=gast.UnaryOp(op=gast.Not(), operand=A.load(stop)), body=s.orelse, orelse=[])]
                        if stop else s.orelse) + rest
                s.orelse = []
            if "return" in inner and rest:
                out.extend(_guarded_rest(rest, state, namer, loops))
                return out
            out.extend(_eliminate_block(rest, state, namer, loops))
            return out
        out.append(s)
    return out


def _guarded_rest(rest, state, namer, loops):
    """The statements after a statement that may jump, run only if it did not jump; those
    marked ``"always_runs"`` right after it (the exit of the context manager, the ``finally``
    body of the ``try`` that statement is, the jump inside it) run either way. The cleanup of a
    later ``with`` or ``try`` is guarded with it: Python never enters a statement after a jump."""
    flag = loops[-1].skip if loops else state["flag"]
    leading = 0
    while leading < len(rest) and A.anno(rest[leading], "always_runs"):
        leading += 1
    out = list(rest[:leading])
    if rest[leading:]:
        out.append(_guard(flag, _eliminate_block(rest[leading:], state, namer, loops)))
    return out
