"""Which names a ``try`` body binds and reads, for ``passes.statements``, which renames the
body's names and hands them on when it finishes. Each scope is Python's: this runs before
``normalize`` inlines comprehensions, and a comprehension's, lambda's or nested ``def``'s own
variables are not the function's (``scopes.scope_names``). ``it = np.sin([it for it in r])``
reads no ``it``: taking the comprehension's ``it`` for the function's had the lowered code
read ``it`` before anything bound it.

>>> import gast
>>> body = gast.parse("it = np.sin([it for it in r])\\ny = it + b").body
>>> sorted(bound_names(body)), sorted(exposed(body, set()))
(['it', 'y'], ['b', 'np', 'r'])
"""
import copy

import gast

from ..scopes import scope_names


def bound_names(stmts):
    """Names the statements bind in their own scope, but those they bind to functions they
    define only (``def f``, ``f = lambda ...``): calls of a local helper are resolved by name."""
    return scope_names(_without_functions(stmts))[1]


def _without_functions(stmts):
    """``stmts`` without the statements that define a function (compound statements copied)."""
    out = []
    for s in stmts:
        if isinstance(s, gast.FunctionDef) or (isinstance(s, gast.Assign) and isinstance(s.value, gast.Lambda)
                                               and all(isinstance(t, gast.Name) for t in s.targets)):
            continue
        if isinstance(s, (gast.If, gast.For, gast.While, gast.With, gast.Try)):
            s = copy.copy(s)
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(s, field, None), list):
                    setattr(s, field, _without_functions(getattr(s, field)))
            if isinstance(s, gast.Try):
                s.handlers = [copy.copy(h) for h in s.handlers]
                for h in s.handlers:
                    h.body = _without_functions(h.body)
        out.append(s)
    return out


def definitely_bound(stmts):
    """Names bound on every path through ``stmts`` that ends normally."""
    bound = set()
    for s in stmts:
        if isinstance(s, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
            targets = s.targets if isinstance(s, gast.Assign) else [s.target]
            if not isinstance(s, gast.AnnAssign) or s.value is not None:
                bound |= {n for t in targets for n in _stores(t)}
        elif isinstance(s, gast.If):
            bound |= definitely_bound(s.body) & definitely_bound(s.orelse)
        elif isinstance(s, gast.With):
            bound |= {n for i in s.items if i.optional_vars is not None for n in _stores(i.optional_vars)}
            bound |= definitely_bound(s.body)
        elif isinstance(s, gast.Try):  # the body and else ran, or a handler did; then finally
            done = definitely_bound(s.body + s.orelse)
            for h in s.handlers:
                done &= definitely_bound(h.body) | _caught_name(h)
            bound |= done | definitely_bound(s.finalbody)
    return bound


def bound_before(target, stmts, bound):
    """Names bound on every path that reaches the statement ``target`` in ``stmts``, given
    ``bound`` on entry (empty when ``target`` is not there: nothing is known)."""
    bound = set(bound)
    for s in stmts:
        if s is target:
            return bound
        for block, entry in _blocks(s, bound):
            found = bound_before(target, block, entry)
            if found:
                return found
        bound |= definitely_bound([s])
    return set()


def _blocks(s, bound):
    """The blocks of the compound statement ``s``, each with the names bound on entry to it."""
    if isinstance(s, gast.If):
        return [(s.body, bound), (s.orelse, bound)]
    if isinstance(s, gast.For):
        return [(s.body, bound | _stores(s.target)), (s.orelse, bound)]
    if isinstance(s, gast.While):
        return [(s.body, bound), (s.orelse, bound)]
    if isinstance(s, gast.With):
        return [(s.body, bound | {n for i in s.items if i.optional_vars is not None for n in _stores(i.optional_vars)})]
    if isinstance(s, gast.Try):
        return ([(s.body, bound), (s.orelse, bound | definitely_bound(s.body)), (s.finalbody, bound)]
                + [(h.body, bound | _caught_name(h)) for h in s.handlers])
    return []


def exposed(stmts, bound):
    """Names ``stmts`` may read before binding them, given ``bound`` is bound on entry."""
    found = set()
    bound = set(bound)
    for s in stmts:
        if isinstance(s, gast.If):
            found |= _reads(s.test) - bound
            found |= exposed(s.body, bound) | exposed(s.orelse, bound)
        elif isinstance(s, (gast.For, gast.While)):
            head = s.iter if isinstance(s, gast.For) else s.test
            found |= _reads(head) - bound
            inner = bound | (_stores(s.target) if isinstance(s, gast.For) else set())
            found |= exposed(s.body, inner) | exposed(s.orelse, bound)
        elif isinstance(s, gast.With):
            found |= _reads(s.items) - bound
            found |= exposed(s.body, bound | {n for i in s.items for n in _stores(i)})
        elif isinstance(s, gast.Try):
            found |= exposed(s.body, bound) | exposed(s.finalbody, bound)
            found |= exposed(s.orelse, bound | definitely_bound(s.body))
            for h in s.handlers:
                found |= (_reads(h.type) if h.type is not None else set()) - bound
                found |= exposed(h.body, bound | _caught_name(h))
        elif isinstance(s, gast.AugAssign):
            found |= _reads(s) - bound
            found |= {s.target.id} - bound if isinstance(s.target, gast.Name) else set()
        else:
            found |= _reads(s) - bound
        bound |= definitely_bound([s])
    return found


def bound_elsewhere(s, source):
    """(names bound outside the try body ``s`` in the function ``source`` (a
    ``statements._Scope``), parameters included; names read outside it)."""
    emptied = copy.copy(s)
    emptied.body = [gast.Pass()]
    read, bound = scope_names(replaced(source.stmts, s, [emptied]) or source.stmts)
    return bound | set(source.params), read


def replaced(stmts, target, stand_in):
    """A copy of the block ``stmts`` with ``target`` replaced by ``stand_in`` (the compound
    statements around it copied); None if absent."""
    for i, s in enumerate(stmts):
        if s is target:
            return stmts[:i] + list(stand_in) + stmts[i + 1:]
        holders = [s] + (s.handlers if isinstance(s, gast.Try) else [])
        for holder in holders:
            for field in ("body", "orelse", "finalbody"):
                block = getattr(holder, field, None)
                found = replaced(block, target, stand_in) if isinstance(block, list) else None
                if found is None:
                    continue
                outer = copy.copy(s)
                if holder is s:
                    setattr(outer, field, found)
                else:
                    handler = copy.copy(holder)
                    setattr(handler, field, found)
                    outer.handlers = [handler if h is holder else h for h in s.handlers]
                return stmts[:i] + [outer] + stmts[i + 1:]
    return None


def _caught_name(handler):
    return {handler.name.id} if handler.name is not None else set()


def _reads(node):
    return scope_names(node)[0]


def _stores(node):
    return scope_names(node)[1]
