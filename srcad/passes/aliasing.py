"""Aliasing check: refuse in-place updates whose effect on other names srcad cannot see.

NumPy views share memory: after ``r = A[0]; r[1] = x`` the array ``A`` has changed too.
srcad keeps the primal's exact semantics, but its adjoint follows names, so an in-place
update through one name that another name still reads afterwards would give a silently
wrong gradient. Afterwards this pass guarantees that for every in-place update of ``S``
(``S[i] = e``, ``S[i] += e``, ``S.append(e)``):

- no other name that may share ``S``'s memory (``y = S``, a basic slice ``S[1:3]``, ``S.T``,
  ``S.reshape(...)``, a container item ``params["W"]``) is read after the update, and
- ``S`` is not a view of a parameter (that would change the caller's array).

Otherwise it raises ``SrcadSyntaxError`` at the update, saying to use ``.copy()``. The
annotation ``"views"`` lists ``(view, base, statement)`` for every name that may share
another's memory (``record_values`` copies views the reverse sweep reads).

>>> import numpy as np
>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> from srcad.passes.normalize import normalize
>>> def f(x):
...     A = np.zeros((2, 2))
...     r = A[0]
...     r[1] = x
...     return A.sum()
>>> src = capture(f)
>>> try:
...     check_aliasing(normalize(resolve_calls(src.node, src), src), src)
... except SyntaxError as e:
...     print(e.msg)
in-place update of 'r', which shares memory with 'A' (line 3), and 'A' is read after it; write 'r = A[0].copy()' (or update 'A' itself)
"""
import builtins

import gast
import numpy as np

from .. import astutil as A
from .activity import scatter_add_args

_VIEW_METHODS = {"reshape", "transpose", "ravel", "squeeze", "swapaxes", "diagonal", "view", "T"}
_VIEW_FUNCTIONS = {np.reshape, np.transpose, np.ravel, np.squeeze, np.swapaxes, np.diagonal, np.expand_dims,
                   np.moveaxis, np.broadcast_to, np.asarray, np.atleast_1d, np.atleast_2d,
                   builtins.list, builtins.tuple, builtins.reversed}  # their items are the argument's


def _view_source(rhs, containers):
    """The name ``rhs`` may be a view of (or the same object as), or None."""
    if isinstance(rhs, gast.Name):
        return rhs.id
    if isinstance(rhs, gast.Subscript) and isinstance(rhs.value, gast.Name):
        return rhs.value.id if _maybe_view_index(rhs.slice) else None
    if isinstance(rhs, gast.Attribute) and rhs.attr in _VIEW_METHODS and isinstance(rhs.value, gast.Name):
        return rhs.value.id
    if isinstance(rhs, gast.Call):
        callee = A.anno(rhs, "callee")
        if callee.kind == "method" and callee.name in _VIEW_METHODS and isinstance(rhs.func.value, gast.Name):
            return rhs.func.value.id
        if callee.kind == "object" and any(callee.obj is f for f in _VIEW_FUNCTIONS):
            if rhs.args and isinstance(rhs.args[0], gast.Name):
                return rhs.args[0].id
    return None


def _maybe_view_index(index):
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    for p in parts:
        if isinstance(p, gast.List):
            return False
    return True


def _statements(stmts, loops=(), in_branch=False):
    """Every simple statement in textual order, with the loops that contain it (statements
    inside a branch are annotated ``in_branch``)."""
    for s in stmts:
        A.set_anno(s, "in_branch", in_branch)
        if isinstance(s, gast.If):
            yield from _statements(s.body, loops, True)
            yield from _statements(s.orelse, loops, True)
        elif isinstance(s, (gast.For, gast.While)):
            yield from _statements(s.body, loops + (s,), False)
        else:
            yield s, loops


def check_aliasing(node, source):
    """Raise ``SrcadSyntaxError`` for unsafe in-place updates (see module doc); return ``node``."""
    params = {a.id for a in node.args.args}
    flat = list(_statements(node.body))
    position = {id(s): i for i, (s, _) in enumerate(flat)}
    links = {}  # name -> [(other name, defining statement)]
    views = []  # (view, base, defining statement): for record_values
    for s, loops in flat:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            other = _view_source(s.value, ())
            if other is not None and other != s.targets[0].id:
                links.setdefault(s.targets[0].id, []).append((other, s, loops))
                links.setdefault(other, []).append((s.targets[0].id, s, loops))
                views.append((s.targets[0].id, other, s))
    for s, loops in flat:
        mutated = _mutated(s)
        if mutated is None or mutated not in links:
            continue
        argument = next((b for b in sorted(_bases(mutated, links)) if b in params), None)
        if argument is not None:
            raise source.syntax_error(
                f"in-place update of '{mutated}', which shares memory with the argument '{argument}'; "
                f"srcad never changes the caller's arrays: copy first ('{mutated} = ...copy()')",
                A.anno(s, "origin") or s)
        for other, link, link_loops in links[mutated]:
            if _read_after(other, s, loops, link, link_loops, flat, position):
                origin = A.anno(link, "origin") or link
                text = source.line(getattr(origin, "lineno", None)).strip()
                hint = text.split("=", 1)[1].strip() if "=" in text else "..."
                raise source.syntax_error(
                    f"in-place update of '{mutated}', which shares memory with '{other}' "
                    f"(line {getattr(origin, 'lineno', '?')}), and '{other}' is read after it; "
                    f"write '{mutated if link.targets[0].id == mutated else other} = {hint}.copy()' "
                    f"(or update '{other if link.targets[0].id == mutated else mutated}' itself)",
                    A.anno(s, "origin") or s)
    A.set_anno(node, "views", views)
    return node


def _bases(name, links):
    """The names ``name`` may be a view of, through any chain of views (``r = x[0]; q = r[1:]``)."""
    found, todo = set(), [name]
    while todo:
        view = todo.pop()
        for other, link, _ in links.get(view, ()):
            if link.targets[0].id == view and other not in found:
                found.add(other)
                todo.append(other)
    return found


def _mutated(s):
    if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript):
        return s.targets[0].value.id
    added = scatter_add_args(s) if isinstance(s, gast.Expr) else None
    if added is not None:  # np.add.at(buffer, index, values) updates buffer in place
        return added[0].id
    if (isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) and isinstance(s.value.func, gast.Attribute)
            and s.value.func.attr == "append" and isinstance(s.value.func.value, gast.Name)):
        return s.value.func.value.id
    return None


def _read_after(name, mutation, loops, link, link_loops, flat, position):
    """Is ``name`` read after ``mutation`` while the memory it shares may be stale?"""
    m, made = position[id(mutation)], position[id(link)]
    reads = [(position[id(s)], s_loops) for s, s_loops in flat
             if s is not mutation and name in A.names_read(s)]
    # a read is current if the name was bound anew before it (unconditionally, at this loop depth)
    rebound = [position[id(s)] for s, s_loops in flat
               if s_loops == loops and not A.anno(s, "in_branch") and isinstance(s, gast.Assign)
               and isinstance(s.targets[0], gast.Name) and s.targets[0].id == name]
    if made < m:
        if any(p > m and not any(m < q < p for q in rebound) for p, _ in reads):
            return True
        # in a loop, the update also precedes the next iteration's reads of a view made outside it
        outer = [loop for loop in loops if loop not in link_loops]
        return any(loop in r_loops for p, r_loops in reads for loop in outer)
    # made after the update in the same loop: reads before it see last iteration's view
    shared = [loop for loop in loops if loop in link_loops]
    return any(p < made and any(loop in r_loops for loop in shared) and not any(q < p for q in rebound)
               for p, r_loops in reads)
