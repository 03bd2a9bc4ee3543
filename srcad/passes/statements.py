"""``with`` and ``try`` statements as *regions*: code the analyses read as plain branches,
which ``passes.regions`` turns back into real ``try`` statements in the generated code.

Guarantee: afterwards no ``With`` or ``Try`` is left. Each becomes a *region*
``_regionN = True; if _regionN: body`` (its test carries the annotation ``"region"``, a
``Region``) followed by code that runs after it; a ``return``, ``break`` or ``continue``
inside the body leaves it through ``passes.jumps`` as any branch, and statements marked
``"always_runs"`` (a manager's exit, a ``finally`` body) run after a jump too.

- ``with m(...) as a: body`` runs ``a = _withN.__enter__()``, the region, then
  ``_withN.__exit__(None, None, None)``; if the body raises, the generated code calls
  ``__exit__`` with the exception and re-raises it. Only managers that do not touch values
  and never swallow an exception are accepted (``CONTEXT_MANAGERS``, and classes registered
  with ``srcad.extend.register_context_manager``); anything else is refused at its line.
- ``try: body except E as e: h ... else: orelse finally: cleanup``: the body runs in the
  region with every name it binds renamed; the region's flag ``_tryN`` records whether it
  finished and ``_caughtN`` which handler caught. After it, ``if _tryN:`` binds the body's
  names and runs ``orelse``, else the handler ``_caughtN`` names runs (``e`` bound to the
  exception, a bare ``raise`` re-raising it). The reverse sweep thus differentiates the
  branch that ran, as for an ``if`` on a recorded flag. Python leaves what the body bound
  before the exception visible to the handler and after it; srcad differentiates the body
  whole or not at all, so each such name a handler or later code reads must be bound again by
  every handler first (else refused). ``cleanup`` runs after all of it, and when an exception
  leaves, before it propagates; ``except BaseException: ...; raise`` (code srcad generated
  reads so) is a cleanup too. Refused: ``try`` with ``except`` inside a loop of the
  differentiated code (stacks of saved values would lose their order; call a module-level
  function holding the ``try`` instead), a body that updates in place arrays, lists or dicts it
  did not make itself (``passes.try_bodies``),
  a name bound on some paths of the body only and read outside it (unless it is bound on
  every path to the ``try``: where the body does not bind it, it keeps that value), and
  ``return``/``break``/``continue`` in ``finally``. An exception in the reverse sweep
  propagates: no handler runs for it.

>>> import gast
>>> from srcad.astutil import to_source
>>> from srcad.naming import Namer
>>> body = gast.parse('''
... try:
...     L = chol(S)
... except ValueError:
...     L = S
... y = L''').body
>>> print(to_source(lower_statements(body, Namer(), None)).strip())
_try1 = True
_caught1 = 0
_exception1 = None
if _try1:
    _try1_L = chol(S)
if _try1:
    L = _try1_L
else:
    L = S
y = L
"""
import contextlib
import sys
import warnings

import gast
import numpy as np

from .. import astutil as A
from ..code_reading import attribute_now
from .callees import Callee
from .try_bodies import outside_update
from .try_names import bound_elsewhere, bound_before, bound_names, definitely_bound, exposed, replaced

#: managers that touch no value srcad differentiates and never swallow an exception
CONTEXT_MANAGERS = {np.errstate, np.printoptions, warnings.catch_warnings, contextlib.nullcontext,
                    contextlib.redirect_stdout, contextlib.redirect_stderr}


def register_context_manager(cls):
    """Let ``with cls(...):`` run in differentiated code: ``cls`` promises that entering and
    leaving change no array or value the function computes with, and that its ``__exit__``
    never swallows an exception. Returns ``cls`` (usable as a class decorator)."""
    CONTEXT_MANAGERS.add(cls)
    return cls


class Region:
    """What ``passes.regions`` needs to rebuild a ``try`` around a region's body."""

    def __init__(self, kind, manager=None, flag=None, caught=None, exception=None, handlers=(), cleanup=(),
                 name=None):
        self.kind = kind  # "with", "except" or "finally"
        self.manager = manager  # with: the name holding the context manager
        self.flag, self.caught, self.exception = flag, caught, exception  # except: the names it sets
        self.handlers = list(handlers)  # except: the exception type expressions (None: bare except)
        self.raw_cleanup = list(cleanup)  # finally: what runs before an exception propagates ...
        self.cleanup = []  # ... normalised (by ``prepare_region``)
        self.name = name  # finally: the name the exception is bound to while it runs


class _Scope:
    """The function being lowered: its source (for errors and names), its statements and
    its parameters (to tell which names a try body alone binds); ``user_names`` maps the
    names an enclosing try body's lowering gave to the user's (for messages)."""

    def __init__(self, source, stmts, params, user_names=None):
        self.source, self.stmts, self.params = source, list(stmts), set(params)
        self.user_names = user_names or {}

    def __getattr__(self, name):
        return getattr(self.source, name)


def lower_statements(body, namer, source, params=()):
    """``body`` (of a function with ``params``) with every ``with`` and ``try`` statement
    lowered to a region (module doc)."""
    return _lower_block(body, namer, _Scope(source, body, params) if source is not None else None)


def _lower_block(body, namer, source):
    out = []
    for s in body:
        if isinstance(s, gast.With):
            out.extend(_lower_with(s, namer, source))
        elif isinstance(s, gast.Try):
            out.extend(_lower_try(s, namer, source))
        else:
            for field in ("body", "orelse"):
                if isinstance(s, (gast.If, gast.For, gast.While)):
                    setattr(s, field, _lower_block(getattr(s, field), namer, source))
            out.append(s)
    return out


def _region(kind, namer, body, stmt, **info):
    flag = info.get("flag") or namer.fresh("_region")
    region = Region(kind, flag=flag, **{k: v for k, v in info.items() if k != "flag"})
    test = A.set_anno(A.load(flag), "region", region)
    setup = [] if kind == "except" else [gast.copy_location(A.assign(flag, A.const(True)), stmt)]
    return setup + [gast.copy_location(gast.If(test=test, body=body or [gast.Pass()], orelse=[]), stmt)], region


def _method(name, receiver, args):
    call = gast.Call(func=gast.Attribute(value=A.load(receiver), attr=name, ctx=gast.Load()), args=args,
                     keywords=[])
    return A.set_anno(call, "callee", Callee("method", name=name))


def _lower_with(s, namer, source):
    if not s.items:
        return _lower_block(s.body, namer, source)
    item, rest = s.items[0], s.items[1:]
    body = [gast.copy_location(gast.With(items=rest, body=s.body, type_comment=None), s)] if rest else s.body
    _check_manager(item.context_expr, source, s)
    manager = namer.fresh("_with")
    out = [gast.copy_location(A.assign(manager, item.context_expr), s)]
    enter = _method("__enter__", manager, [])
    entered = A.assign(item.optional_vars, enter) if item.optional_vars is not None else gast.Expr(value=enter)
    out.append(gast.copy_location(entered, s))
    region, _ = _region("with", namer, _lower_block(body, namer, source), s, manager=manager)
    out.extend(region)
    leave = gast.Expr(value=_method("__exit__", manager, [A.const(None)] * 3))
    out.append(A.set_anno(gast.copy_location(leave, s), "always_runs", True))
    return out


def _check_manager(expr, source, s):
    callee = A.anno(expr, "callee") if isinstance(expr, gast.Call) else None
    obj = callee.obj if callee is not None and callee.kind == "object" else None
    testing = sys.modules.get("numpy.testing")  # imported by code that uses it; srcad does not import it
    try:
        known = obj in CONTEXT_MANAGERS or testing is not None and obj is testing.suppress_warnings
    except TypeError:  # unhashable
        known = False
    if not known:
        what = f"'{callee.name}'" if callee is not None and callee.name else "this context manager"
        raise source.syntax_error(
            f"srcad runs a with statement only for context managers known not to touch the values it "
            f"differentiates and never to swallow an exception (np.errstate, warnings.catch_warnings, "
            f"contextlib.nullcontext, np.printoptions, ...); {what} is not one of them. If it is such a "
            f"manager (a timer, a logger), register its class with srcad.extend.register_context_manager",
            expr)


def _lower_try(s, namer, source):
    for stmt in s.finalbody:
        for node in gast.walk(stmt):
            if isinstance(node, (gast.Return, gast.Break, gast.Continue)):
                raise source.syntax_error(
                    "srcad does not support return, break or continue in a finally block (it would discard "
                    "an exception); move it after the try statement", node)
    if _only_reraises(s, source):  # cleanup, then the exception goes on: nothing is caught
        handler = s.handlers[0]
        out, _ = _region("finally", namer, _lower_block(s.body, namer, source), s,
                         cleanup=_lower_block(handler.body, namer, source), name=handler.name)
        out += _lower_block(s.orelse, namer, source)
    elif s.handlers:
        out = _lower_handlers(s, namer, source)
    else:
        out = _lower_block(s.body + s.orelse, namer, source)
    if not s.finalbody:
        return out
    cleanup = _lower_block(s.finalbody, namer, source)
    region, _ = _region("finally", namer, out, s, cleanup=_lower_block(A.deepcopy(s.finalbody), namer, source))
    for stmt in cleanup:
        A.set_anno(stmt, "always_runs", True)
    return region + cleanup


def _only_reraises(s, source):
    """``try: ... except BaseException: cleanup; raise``, as code srcad generated reads: the
    handler catches everything, jumps nowhere and ends by re-raising what it caught."""
    if len(s.handlers) != 1 or source is None:
        return False
    handler = s.handlers[0]
    last = handler.body[-1]
    if not (isinstance(last, gast.Raise) and last.exc is None):
        return False
    if any(isinstance(n, (gast.Return, gast.Break, gast.Continue, gast.Raise, gast.Try))
           for stmt in handler.body[:-1] for n in gast.walk(stmt)):
        return False
    if handler.type is None:
        return True
    parts = []
    node = handler.type
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, gast.Name):
        return False
    try:
        obj = source.lookup(node.id)
        for attr in reversed(parts):
            obj = attribute_now(obj, attr)
    except (KeyError, AttributeError):
        return False
    return obj is BaseException


def _lower_handlers(s, namer, source):
    flag, caught, exception = namer.fresh("_try"), namer.fresh("_caught"), namer.fresh("_exception")
    bound = sorted(bound_names(s.body))
    renames = {name: f"{flag}_{name}" for name in bound}
    namer.reserve(renames.values())
    body = A.replace_names(A.deepcopy(gast.Module(body=s.body, type_ignores=[])), renames).body
    read_first = exposed(s.body, set()) & set(bound)
    definite = definitely_bound(s.body)
    # names the body reads before binding them start from the enclosing scope's values
    setup = [A.assign(flag, A.const(True)), A.assign(caught, A.const(0)), A.assign(exception, A.const(None))]
    # a name bound nowhere else starts as None (Python: unbound), so it can be handed on
    elsewhere, read_outside = bound_elsewhere(s, source) if source is not None else (set(bound), set(bound))
    partly = set(bound) - definite - read_first
    # bound on every path to the try: where the body does not bind it, it keeps that value
    carried = partly & read_outside & bound_before(s, source.stmts, source.params) if source is not None else set()
    refused = sorted((partly - carried) & elsewhere & read_outside)
    if refused:
        raise source.syntax_error(
            f"srcad differentiates a try body that binds each name it hands on on every path; "
            f"'{_user_name(source, refused[0])}' is bound on some paths of this try body only and read outside it: "
            f"assign it on every path of the body (or on every path before the try statement)", s)
    if source is not None and not source.is_generated():  # (generated code reads them under its flags)
        _check_handlers_rebind(s, set(bound) & read_outside, source)
    setup += [A.assign(renames[n], A.load(n) if n in elsewhere else A.const(None))
              for n in sorted(read_first | carried | (partly - elsewhere))]
    setup = [gast.copy_location(x, s) for x in setup]
    handed_on = definite | read_first | carried | (partly - elsewhere)
    commit = [gast.copy_location(A.assign(n, A.load(renames[n])), s) for n in bound if n in handed_on]
    # a try nested in the body is judged among the body's names as renamed: bound by the setup,
    # read after it where the names they stand for are (else '_try1_s', bound only here, would
    # start as None: unbound)
    reads = [A.assign(n, A.load(renames[n])) for n in sorted(handed_on & read_outside)]
    inner = _with_stand_in(source, s, renames, setup + [gast.If(test=A.load(flag), body=body, orelse=[]),
                                               gast.If(test=A.load(flag), body=reads or [gast.Pass()], orelse=[])])
    region, _ = _region("except", namer, _lower_block(body, namer, inner), s, flag=flag, caught=caught,
                        exception=exception, handlers=[h.type for h in s.handlers])
    orelse = _lower_block(s.orelse, namer, source)
    handlers = []
    for i, h in enumerate(s.handlers):
        hbody = _lower_block(h.body, namer, source)
        hbody = [_reraise(x, exception) for x in hbody]
        if h.name is not None:
            hbody.insert(0, gast.copy_location(A.assign(h.name, A.load(exception)), h))
        handlers.append((i + 1, gast.copy_location(gast.If(test=None, body=hbody or [gast.Pass()], orelse=[]), h)))
    chain = []
    for index, branch in reversed(handlers):
        if not chain:  # the last handler: nothing else can have caught it
            chain = branch.body
            continue
        branch.test = gast.Compare(left=A.load(caught), ops=[gast.Eq()], comparators=[A.const(index)])
        branch.orelse = chain
        chain = [branch]
    dispatch = gast.If(test=A.load(flag), body=commit + orelse or [gast.Pass()], orelse=chain)
    return setup + region + [gast.copy_location(dispatch, s)]


def _check_handlers_rebind(s, names, source):
    """Python leaves a name the body bound before the exception with that value in the
    handler and after it. srcad differentiates the body as a whole or not at all, so a
    handler must bind again each such name that is read outside the body before reading it
    (or end by raising)."""
    for h in s.handlers:
        raises = bool(h.body) and isinstance(h.body[-1], gast.Raise)
        read_first = exposed(h.body, {h.name.id} if h.name is not None else set())
        stale = sorted(n for n in names if n in read_first or not raises and n not in definitely_bound(h.body))
        if stale:
            name = _user_name(source, stale[0])
            raise source.syntax_error(
                f"'{name}' is bound in this try body and read after the exception handler without being "
                f"bound again there: Python would give it the value the body reached before the exception, "
                f"and srcad differentiates the body as a whole or not at all. Bind '{name}' in every "
                f"except clause before reading it (or compute it before the try statement)", h)


def _reraise(stmt, exception):
    """A bare ``raise`` in a handler re-raises the exception it handles."""
    for node in gast.walk(stmt):
        if isinstance(node, gast.Raise) and node.exc is None:
            node.exc = A.load(exception)
    return stmt


def _with_stand_in(source, target, renames, stand_in):
    """``source`` (a ``_Scope``) with the statement ``target`` replaced by the statements
    ``stand_in`` (the compound statements around it copied), in which ``renames`` hold; ``source``
    itself where it does not hold ``target`` or is None."""
    stmts = replaced(source.stmts, target, stand_in) if source is not None else None
    if stmts is None:
        return source
    shown = {new: _user_name(source, old) for old, new in renames.items()}
    return _Scope(source.source, stmts, source.params, {**source.user_names, **shown})


def _user_name(source, name):
    return source.user_names.get(name, name) if isinstance(source, _Scope) else name


def prepare_region(norm, test, body, stmt):
    """After the body of a region is normalised: normalise its cleanup (``norm``'s block),
    and refuse what a ``try`` region with handlers cannot keep exact: inside a loop (saved
    values are stacked per pass) or updating memory in place (an exception half-way through
    would leave it changed with no record)."""
    region = A.anno(test, "region")
    if region is not None and region.raw_cleanup:
        region.cleanup, region.raw_cleanup = norm.block(region.raw_cleanup), []
    if region is None or region.kind != "except":
        return
    if getattr(norm, "loop_depth", 0):
        helper, depth = norm.inlining[-1] if norm.inlining else (None, 0)
        if depth and depth == norm.loop_depth and helper not in norm.local_functions:
            raise norm.error(
                f"srcad does not differentiate a try statement with except inside a loop; this one is in {helper}, "
                f"which srcad inlines into the loop that calls it (it has *args, **kwargs or keyword-only "
                f"parameters, or the call passes * or ** or a function): give {helper} plain parameters and call "
                f"it with plain arguments, so that it is compiled as a function of its own", stmt)
        raise norm.error(
            "srcad does not differentiate a try statement with except inside a loop; put the try "
            "statement in a function defined at module level and call it from the loop", stmt)
    update = outside_update(body, set())
    if update is not None:
        raise norm.error(
            "srcad differentiates a try body (with except) that updates no array, list or dict in place "
            "other than those the body made itself (an exception half-way would leave it changed); build new "
            "values in the body and assign them, or move the update after the try statement",
            next(n for n in (A.anno(update, "origin"), update, stmt) if getattr(n, "lineno", None)))

