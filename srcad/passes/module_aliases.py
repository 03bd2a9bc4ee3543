"""A module held in a name of the function (the array-API idiom): ``xp = np`` or
``m = np.linalg`` bound once in the function, or a parameter whose default is a module
(``def energy(x, xp=np)``), read as the module itself.

Guarantee: afterwards every read of such a name is the dotted name of the module it holds
(``xp.sin(x)`` is ``np.sin(x)``, resolved and guarded like any global), and a parameter's
module is checked when the code runs (``errors.check_module``: a call passing another
module raises rather than runs NumPy's code). Only two forms are read so, where the name
provably holds that module at every read:

- a local bound once, by ``name = <dotted name of a module>`` (or ``name: T = ...``) at the
  top level of a function's body (not in a branch, loop, ``try`` or ``with``), read only
  after it there;
- a parameter with such a default;
- ``import numpy as np2`` (``import math``) so placed, of a module imported already that a
  global name of the function's module holds (``np``): read as that name, the statement
  dropped (it would only bind the name).

Neither may be bound anywhere else in the function (nested functions included), and the
dotted name's first name must be a global or closure name everywhere in it. Any other name
some binding of which is a module (bound twice, in a branch, ``if xp is None: xp = np``) is
refused at that binding, saying so; a module-level alias (``XP = np``) is a global, read as such.
"""
import sys
import types

import gast

from .. import astutil as A
from ..errors import check_module
from ..naming import BUILTIN
from .callees import Callee, denoted, dotted, lookup_path, path_expr

_DONE = "module_aliases_read"  # on the FunctionDef: its aliases are read already


def read_module_aliases(fdef, source):
    """Rewrite in place the reads of the module aliases of ``fdef`` (the function ``source``
    reads) and of the functions defined in it, as the module docstring says."""
    if A.anno(fdef, _DONE):
        return
    A.set_anno(fdef, _DONE, True)
    bindings = name_bindings(fdef)
    reads, checked = _reads(fdef), _checked(fdef, source)
    scopes = [n for n in A.walk(fdef) if isinstance(n, gast.FunctionDef)]
    why_not = {}  # name -> why a binding of it to a module is not read as the module

    def alias(name, value, scope, after=None, kept=()):
        """Is ``name``, bound to ``value`` in ``scope``, read as the module ``value`` names? Its
        reads but ``kept`` (their ids) become that name."""
        path = _module_path(value, source)
        if path is None:
            return False
        if len(bindings[name]) != 1:
            why_not[name] = _MORE_THAN_ONCE
        elif path[0] in bindings:
            why_not[name] = f"'{path[0]}' is a name of this function too" + (
                f" (give the parameter a name of its own: {_other_name(name)}={'.'.join(path)})"
                if name == path[0] else "")
        elif not _inside(reads.get(name, ()), scope, after):
            why_not[name] = "it is read before it is bound, or outside the function binding it"
        else:
            lookup_path(path, source)  # guarded like a called name
            _Substitute({id(r) for r in reads.get(name, ()) if id(r) not in kept}, path).visit(fdef)
            why_not[name] = None
        return why_not[name] is None

    for scope in scopes:
        for param, default in _defaults(scope):
            unchecked = [r for r in reads.get(param.id, ()) if id(r) not in checked]
            if alias(param.id, default, scope, kept=checked) and unchecked:
                scope.body.insert(0, _check(scope, param.id, dotted(default), source))
    for scope in scopes:
        for index, stmt in enumerate(scope.body):
            if _alias_name(stmt) is not None and alias(_alias_name(stmt), stmt.value, scope, after=index):
                scope.body[index] = gast.copy_location(gast.Pass(), stmt)  # read nowhere now
            imported = _imported_module(stmt, source)
            if imported is None:
                continue
            name, path = imported
            same = (path == [name] and len(bindings[name]) == 1  # import numpy as np, np global: the same np
                    and _inside(reads.get(name, ()), scope, after=index))
            if same or alias(name, path_expr(path), scope, after=index):
                scope.body[index] = gast.copy_location(gast.Pass(), stmt)
    for name, found in sorted(bindings.items()):
        to_module = [b for b in found if _module_bound(name, b, source)] if why_not.get(name, "") is not None else []
        if to_module:
            why = why_not.get(name) or (_MORE_THAN_ONCE if len(found) > 1 else _NOT_PLAIN)
            _refuse(name, why, to_module[0][1] if isinstance(to_module[0], tuple) else to_module[0], source)


_MORE_THAN_ONCE = "it is bound more than once (assigned again, in a branch, deleted, or in a nested function too)"
_NOT_PLAIN = ("it is bound in a branch, loop, try or with, by a tuple assignment or ':=', or as a lambda's parameter, "
              "not by 'name = module' at the top level of the function")


def name_bindings(fdef):
    """name -> the nodes binding it anywhere in ``fdef``: an assignment (once per name its
    targets bind), ``(function, parameter)``, any other store or deletion, a ``def``, an import,
    ``global``/``nonlocal``."""
    found, assigned = {}, set()
    for n in A.walk(fdef):  # (an Assign comes before its targets)
        if isinstance(n, (gast.FunctionDef, gast.Lambda)):
            if n is not fdef and isinstance(n, gast.FunctionDef):
                found.setdefault(n.name, []).append(n)
            args = n.args
            for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
                if a is not None:
                    found.setdefault(a.id, []).append((n, a))
        elif isinstance(n, (gast.Assign, gast.AnnAssign, gast.NamedExpr)) and n.value is not None:
            for t in A.walk(gast.Tuple(elts=_targets(n), ctx=gast.Store())):
                if isinstance(t, gast.Name):
                    assigned.add(id(t))
                    found.setdefault(t.id, []).append(n)
        elif isinstance(n, gast.Name) and not isinstance(n.ctx, (gast.Load, gast.Param)) and id(n) not in assigned:
            found.setdefault(n.id, []).append(n)
        elif isinstance(n, (gast.Import, gast.ImportFrom)):
            for alias in n.names:
                found.setdefault((alias.asname or alias.name).split(".")[0], []).append(n)
        elif isinstance(n, (gast.Global, gast.Nonlocal)):
            for name in n.names:
                found.setdefault(name, []).append(n)
    return found


def _reads(fdef):
    """name -> the ``Name`` nodes loading it anywhere in ``fdef``."""
    found = {}
    for n in A.walk(fdef):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            found.setdefault(n.id, []).append(n)
    return found


def _checked(fdef, source):
    """The ids of the values ``check_module`` calls in ``fdef`` check (generated code read again
    keeps its checks of its parameters)."""
    return {id(n.args[0]) for n in A.walk(fdef) if isinstance(n, gast.Call) and n.args and _is_check(n.func, source)}


def _is_check(func, source):
    """Is ``func`` the name of ``check_module`` (``check_module_`` where generated code took that name)?"""
    if not isinstance(func, gast.Name) or func.id.rstrip("_") != "check_module":
        return False
    if A.anno(func, BUILTIN) is not None:
        return A.anno(func, BUILTIN)[1:] == (check_module,)
    try:
        return source.lookup(func.id) is check_module
    except KeyError:
        return False


def _module_path(expr, source):
    """The dotted name ``expr`` as a list if it denotes a module now, else None."""
    parts = dotted(expr) if expr is not None else None
    try:
        return parts if parts is not None and isinstance(denoted(parts, source), types.ModuleType) else None
    except (KeyError, AttributeError):
        return None


def _module_bound(name, binding, source):
    """Does ``binding`` (an item of ``name_bindings``) bind ``name`` to a dotted name of a module?"""
    if isinstance(binding, (gast.Assign, gast.AnnAssign, gast.NamedExpr)):
        return any(_module_path(value, source) is not None for target in _targets(binding)
                   for value in _values_bound(name, target, binding.value))
    if isinstance(binding, tuple):
        return any(p is binding[1] and _module_path(d, source) is not None for p, d in _defaults(binding[0]))
    return False


def _values_bound(name, target, value):
    """The expressions an assignment of ``value`` to ``target`` binds ``name`` to, item by item
    where both are tuples or lists of one length (``xp, k = np, 2.0``)."""
    if isinstance(target, gast.Name):
        return [value] if target.id == name else []
    if (isinstance(target, (gast.Tuple, gast.List)) and isinstance(value, (gast.Tuple, gast.List))
            and len(target.elts) == len(value.elts)):
        return [v for t, e in zip(target.elts, value.elts) for v in _values_bound(name, t, e)]
    return []


def _defaults(fn):
    """``(parameter, default)`` of the parameters of ``fn`` that have a default."""
    args = fn.args
    positional = args.posonlyargs + args.args
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    return pairs + [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]


def _targets(assignment):
    return assignment.targets if isinstance(assignment, gast.Assign) else [assignment.target]


def _alias_name(stmt):
    """``name`` if ``stmt`` is ``name = <dotted name>`` (or ``name: T = <dotted name>``), else None."""
    if (isinstance(stmt, (gast.Assign, gast.AnnAssign)) and stmt.value is not None and len(_targets(stmt)) == 1
            and isinstance(_targets(stmt)[0], gast.Name) and dotted(stmt.value) is not None):
        return _targets(stmt)[0].id
    return None


def _imported_module(stmt, source):
    """``(name, [global])`` for ``import m as name`` (``import m``) of one module ``m`` that is
    imported already and that a global name ``global`` holds; else None."""
    if not (isinstance(stmt, gast.Import) and len(stmt.names) == 1):
        return None
    imported = stmt.names[0]
    if imported.asname is None and "." in imported.name:
        return None  # (``import a.b`` binds ``a``, and imports ``a.b`` too)
    module = sys.modules.get(imported.name)
    if module is None:
        return None
    name = imported.asname or imported.name
    holders = sorted((g != name, g) for g, value in source.globals.items() if value is module and g not in source.closure)
    return (name, [holders[0][1]]) if holders else None


def _inside(reads, scope, after=None):
    """Are all ``reads`` in ``scope``'s body (in its statements after the ``after``-th, if given)?"""
    statements = scope.body if after is None else scope.body[after + 1:]
    inner = {id(n) for stmt in statements for n in A.walk(stmt)}
    return all(id(r) in inner for r in reads)


class _Substitute(A.Transformer):
    """The names ``reads`` (their ids) become the dotted name ``path``."""

    def __init__(self, reads, path):
        self.reads, self.path = reads, path

    def visit_Name(self, node):
        return gast.copy_location(path_expr(self.path), node) if id(node) in self.reads else node


def _check(scope, name, path, source):
    """The statement checking, when ``scope`` runs, that its parameter ``name`` holds the module
    its default ``path`` names (``errors.check_module``)."""
    checker = A.set_anno(A.load("check_module"), BUILTIN, ("check_module", check_module))
    where = f"{source.filename}:{getattr(scope, 'lineno', '?')}: "
    args = [A.load(name), path_expr(path), A.const(".".join(path)), A.const(name), A.const(where)]
    call = gast.Call(func=checker, args=args, keywords=[])
    A.set_anno(call, "callee", Callee("object", obj=check_module, name="check_module"))
    return gast.copy_location(gast.Expr(value=call), scope.body[0])


def _other_name(name):
    """A parameter name for a module that is not ``name`` (``np`` gives ``xp``)."""
    return "xp" if name != "xp" else "mod"


def _refuse(name, why, at, source):
    """The error, at ``at`` (where ``name`` is bound to a module), for a module bound in a form
    srcad does not read as the module (``why``)."""
    alias = name.upper() if name != name.upper() else name + "_"
    raise source.syntax_error(
        f"'{name}' holds a module, and {why}: srcad reads a module held in a name of the function only when it is "
        f"bound once, by '{name} = module' at the top level of the function before it is read, or is a "
        f"parameter whose default is a module ({_other_name(name)}=np) never assigned in the function; bind the module at "
        f"module level instead ({alias} = np at the top of the module) and use that name", at)
