"""What one compilation took from module state that its code does not read again: the facts
it depends on.

A rule template's module-level names (``K`` in ``d[x] += d[y] * K * np.cos(K * x)``) are
pasted into the generated code as the objects they are bound to when it is generated, and
an ``if FLAG:`` (``if cfg.SQUARE:``) of a template is decided then. Each such read is
recorded here (``record``) while the compilation that made it is in progress
(``collecting``), as ``(scope, path, object)``: ``scope`` the globals of the rule's module
(or the closure cell of a name the rule's factory binds, or a function whose defaults a rule
was bound to, or a template function of yours, whose code and defaults the rule was read from:
``Rule.current``), ``path`` the dotted name read (``("cfg", "SQUARE")``, ``("__code__",)``)
and ``object`` what it denoted.

Guarantees:

- every fact becomes a guard of the compiled code (``guards``), checked on every cache
  lookup and every call like the user's own globals: rebinding ``K`` recompiles, for every
  function whose code used the rule, including derivatives made before the change;
- the persistent cache stores the facts with the entry (``describe``; a function's code and
  defaults where its module names it) and uses an entry only if each still describes the same
  (``now``), in a process that has imported the module;
- a compilation inside another (a callee's) records into its own list: the caller is
  guarded on the callee's through the callee's guard.

>>> scope = {"K": 2.0}
>>> with collecting() as found:
...     record(scope, ("K",), scope["K"])
>>> [g.holds() for g in guards(found)]
[True]
>>> scope["K"] = 3.0
>>> [g.holds() for g in guards(found)]
[False]
"""
import contextlib
import inspect
import sys
import threading
import types

import numpy as np

from .astutil import LITERAL_TYPES
from .guards import _MISSING, Guard, _cell_contents, _follow
from .holding import made_anew

_LOCAL = threading.local()  # .stack: the fact lists of this thread's compilations in progress


@contextlib.contextmanager
def collecting():
    """Collect the facts recorded until the block ends; yields their list."""
    stack = getattr(_LOCAL, "stack", None)
    if stack is None:
        stack = _LOCAL.stack = []
    found = []
    stack.append(found)
    try:
        yield found
    finally:
        stack.pop()


def record(scope, path, obj):
    """The innermost compilation in progress depends on ``path`` denoting ``obj`` in the
    globals ``scope`` (nothing happens outside a compilation)."""
    stack = getattr(_LOCAL, "stack", None)
    if not stack:
        return
    found, path = stack[-1], tuple(path)
    if not any(s is scope and p == path for s, p, _ in found):
        found.append((scope, path, obj))


def guards(found):
    """The guards that the facts ``found`` still hold (``scope`` a globals dict, the closure
    cell of a rule made in a factory, or a function whose ``__defaults__`` (``__kwdefaults__``
    item) a rule was bound to)."""
    return [_guard(scope, path, obj) for scope, path, obj in found]


def _guard(scope, path, obj):
    if isinstance(scope, types.FunctionType):  # a function's defaults a rule was bound to, a template's code
        if path in (("__defaults__",), ("__code__",)):
            return Guard(path[0].strip("_"), scope, scope.__name__, (), obj)
        return Guard("kwdefault", scope, scope.__name__, path[1:], obj)
    cell = isinstance(scope, types.CellType)
    root = _cell_contents(scope) if cell else scope.get(path[0], _MISSING)
    # (``W.T.shape`` is a new tuple at every read: compared by its value instead)
    return Guard("cell" if cell else "scope", scope, path[0], path[1:],
                 made_anew(root, path[1:], obj, pasted=True) or obj)


def describe(found, describe_value):
    """The facts as ``[module name, path, description]`` for the persistent cache
    (``describe_value(obj, ())`` says what an object is), or None (not cached) if one is read
    in a scope that is no imported module's namespace, or is a value no description tells
    apart from others (``_exact``)."""
    out = []
    for scope, path, obj in found:
        if isinstance(scope, types.FunctionType):  # a template's code, a function's defaults:
            named = _function_path(scope)  # described where its module names it
            description = _exact(obj, describe_value)
            if named is None or description is None:
                return None
            out.append([named[0], [*named[1], *path], description])
            continue
        if isinstance(scope, types.CellType):  # a closure's: no module names it in another process
            return None
        name = scope.get("__name__")
        module = sys.modules.get(name) if isinstance(name, str) else None
        description = _exact(obj, describe_value)
        if module is None or vars(module) is not scope or description is None:
            return None
        out.append([name, list(path), description])
    return out


def now(described, describe_value):
    """The facts of a cache entry as ``(scope, path, object)`` if each still denotes an object
    described the same way in a module this process has imported; None otherwise (a miss)."""
    found = []
    for name, path, description in described:
        module = sys.modules.get(name)
        if module is None:
            return None
        scope, path = vars(module), tuple(path)
        part = next((i for i, p in enumerate(path) if p in _FUNCTION_PARTS), None)
        if part is not None:  # a function's code or defaults: the fact is the function's
            scope = inspect.unwrap(_follow(scope.get(path[0], _MISSING), path[1:part]))
            if not isinstance(scope, types.FunctionType):
                return None
            path = path[part:]
            obj = getattr(scope, path[0]) if len(path) == 1 else (scope.__kwdefaults__ or {}).get(path[1], _MISSING)
        else:
            obj = _follow(scope.get(path[0], _MISSING), path[1:])
        if obj is _MISSING or _exact(obj, describe_value) != description:
            return None
        found.append((scope, path, obj))
    return found


_FUNCTION_PARTS = ("__code__", "__defaults__", "__kwdefaults__")


def _function_path(fn):
    """``(module name, qualified name parts)`` under which ``fn`` (or what wraps it, a
    ``custom_vjp``) is found among imported modules, or None."""
    module = sys.modules.get(fn.__module__)
    parts = tuple(fn.__qualname__.split("."))
    if module is None or "<locals>" in parts:
        return None
    try:
        found = inspect.unwrap(_follow(vars(module).get(parts[0], _MISSING), parts[1:]))
    except ValueError:  # a cycle of __wrapped__
        return None
    return (module.__name__, parts) if found is fn else None


def _exact(value, describe_value):
    """A description of ``value`` that tells it from any other value a template could paste or
    decide on differently (a number, a string, a function by its code, a module by its name),
    or None (an array's data, an object's state)."""
    if isinstance(value, np.generic):
        return f"{type(value).__name__} {value!r}"
    if type(value) is tuple:
        items = [_exact(v, describe_value) for v in value]
        return None if None in items else f"tuple({', '.join(items)})"
    exact = type(value) in LITERAL_TYPES or isinstance(
        value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, np.ufunc, type, types.CodeType))
    return describe_value(value, ()) if exact else None
