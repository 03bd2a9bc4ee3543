"""Refuse, when code is compiled, a function whose call may rebind what that code was made for.

Compiled code takes some bindings as fixed, its guards (``Compiled.global_guards``): the
``np.sin`` it resolved ``act`` to and pasted the derivative of, a rule's module constant
``K``. They are checked when a call starts. Code srcad runs as written during the call (a
helper ``configure()`` doing ``global act; act = np.cos``) could rebind one after that check:
the generated code would compute with the new binding (it reads ``act`` live) and
differentiate the old one, a gradient of no function.

``check_not_rebound`` reads the bytecode of every function of yours the compiled function may
run (``sharing.functions_reached``: through its globals, closure cells and defaults, the
methods of the classes and objects they hold, functions' attributes, transitively) and raises, at the line of the
store, where one

- stores or deletes a guarded global of its module (``global act; act = ...``, ``del act``),
  or a guarded closure variable (``nonlocal act``);
- stores or deletes a guarded attribute (``cfg.act = ...``, ``setattr(cfg, "act", v)``) on
  the object guarded (or the module of a guarded global, or a class of yours an instance
  holds it from: ``Cfg.act = ...`` for ``inst.act``), when the code names it (a global, a
  closure variable, an attribute of them), or on any object when it does not
  (``sys.modules[__name__].act = ...``, ``c = Cfg; c.act = ...``, ``setattr(o, name, v)``),
  if the guarded one is yours (not an installed library's: ``self.sum = ...`` is not
  ``np.sum``; a method's ``self`` is no module nor function);
- reaches the inside of a function or namespace (``f.__globals__``, ``f.__closure__``,
  ``__kwdefaults__``, ``__dict__``, ``__setattr__``, other than read or copied where it is
  taken), calls ``importlib.reload``, or may rebind globals by reflection (``globals()``
  other than read where it is made; ``exec``; ``eval``) while some global is guarded.

It costs nothing per call (it runs once per compilation). It does not see code the
function is given at run time (a function passed as an argument, a method of an argument),
``vars(m)[name] = v``, nor another thread (see docs/limitations.md).
"""
import dis
import importlib
import linecache
import sys
import types

from .errors import SrcadSyntaxError
from .guards import _FUNCTION_PARTS, _MISSING, Guard, _CalleeGuard, _cell_contents, _follow, _scope_value
from .code_reading import installed_class, installed_object, nested_code
from .sharing import functions_reached

_ATTRIBUTE_STORES = {"STORE_ATTR", "DELETE_ATTR"}
_ATTRIBUTE_LOADS = {"LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR"}
_GLOBAL_STORES = {"STORE_GLOBAL", "DELETE_GLOBAL"}
_CELL_STORES = {"STORE_DEREF", "DELETE_DEREF"}
_SETTERS = frozenset({"setattr", "delattr"})
_ATTRIBUTE_SETTERS = frozenset({"__setattr__", "__delattr__"})
# what reaches the mutable inside of a function or a namespace: f.__globals__["act"] = ..., f.__closure__[0]
# .cell_contents = ... (f.__code__, f.__defaults__ are set by an attribute store, seen as one)
_INSIDES = frozenset({"__globals__", "__closure__", "__kwdefaults__", "__dict__"})
_SCOPE_WRITERS = frozenset({"globals", "exec", "eval"})
_DICT_READS = frozenset({"get", "__getitem__", "__contains__", "keys", "values", "items", "copy"})


class _Targets:
    """The bindings guards hold: globals (``(id(scope), name)``), closure cells (ids),
    attributes (name -> ids of the objects guarded: the module of a guarded global, the class
    of an instance, the classes of yours it inherits from), the attribute names guarded on an
    object of yours, and those on modules and functions of yours (``not_self``): an attribute
    store on an object the code does not name may hit them (``sys.modules[__name__].act = ...``)."""

    def __init__(self):
        self.names, self.cells, self.attributes, self.yours, self.not_self = set(), set(), {}, set(), set()

    def add(self, guards, seen):
        for g in guards:
            if isinstance(g, _CalleeGuard):  # a callee's code runs within the call: what it was made for too
                fn = g.fn()
                if fn is not None and id(g.compiled) not in seen:
                    seen.add(id(g.compiled))
                    self.add(g.compiled.global_guards(fn), seen)
            elif isinstance(g, Guard):
                self._add(g)

    def _add(self, g):
        if g.kind in _FUNCTION_PARTS or g.kind == "kwdefault":  # f.__code__ = ..., f.__defaults__ = ...
            self._attribute(g.holder, _FUNCTION_PARTS.get(g.kind, "__kwdefaults__"))
            return
        if g.kind == "scope":
            self.names.add((id(g.holder), g.name))
            module = sys.modules.get(g.holder.get("__name__"))
            if module is not None and getattr(module, "__dict__", None) is g.holder:
                self._attribute(module, g.name)
            else:  # (a namespace of no module: fail closed)
                self.not_self.add(g.name)
            value = g.holder.get(g.name, _MISSING)
        elif g.kind == "cell":
            self.cells.add(id(g.holder))
            value = _cell_contents(g.holder)
        elif g.kind == "object":
            value = g.holder
        else:
            return
        for attr in g.attrs:  # every attribute on the path: rebinding cfg.sub changes cfg.sub.act
            if value is _MISSING:
                break
            self._attribute(value, attr)
            value = _follow(value, (attr,))

    def _attribute(self, holder, attr):
        """``holder.attr`` is guarded: so is ``attr`` of the classes of yours ``holder`` is (or
        inherits) it from (``Cfg.act = ...`` changes ``cfg.act``)."""
        cls = holder if isinstance(holder, type) else type(holder)
        for h in (holder, *(c for c in cls.__mro__ if c is not holder and not installed_class(c))):
            self.attributes.setdefault(attr, set()).add(id(h))
        if not installed_object(holder):  # (a method's self is no module nor function)
            (self.not_self if isinstance(holder, (types.ModuleType, types.FunctionType)) else self.yours).add(attr)

    def hit(self, name, holder, through_self):
        """May setting the attribute ``name`` (None: a name made at run time) of ``holder``
        (``_MISSING``: an object the code does not name) rebind a guard? ``through_self``: the
        object is a method's ``self`` (an instance, not a module)."""
        if holder is not _MISSING:
            return id(holder) in self.attributes.get(name, ())
        if name is None:
            return bool(self.yours or self.not_self and not through_self)
        return name in self.yours or name in self.not_self and not through_self


def check_not_rebound(fn, guards):
    """Raise ``SrcadSyntaxError`` at the line of code ``fn``'s call may run that rebinds one of
    ``guards`` (``Compiled.global_guards(fn)``); see the module's docstring."""
    targets = _Targets()
    targets.add(guards, set())
    if not (targets.names or targets.cells or targets.attributes):
        return
    for function in functions_reached([fn]):
        for nested in nested_code(function.__code__):
            _check_stores(function, nested, targets, fn)


def _check_stores(function, code, targets, fn):
    """Refuse a store in ``code`` (``function``'s or nested in it) into one of ``targets``,
    or a way to one (reflection)."""
    ops = list(dis.get_instructions(code))
    for i, op in enumerate(ops):
        what = None
        if op.opname in _GLOBAL_STORES and (id(function.__globals__), op.argval) in targets.names:
            what = f"rebinds the global '{op.argval}'"
        elif op.opname in _CELL_STORES and op.argval in function.__code__.co_freevars:
            cell = function.__closure__[function.__code__.co_freevars.index(op.argval)]
            if id(cell) in targets.cells:
                what = f"rebinds the variable '{op.argval}' of an enclosing function"
        elif op.opname in _ATTRIBUTE_STORES and (
                targets.hit(op.argval, _named_object(function, ops, i - 1), _is_self(code, ops[i - 1]))
                or op.argval == "cell_contents" and targets.cells):
            what = f"sets the attribute '{op.argval}'"
        elif op.opname == "LOAD_GLOBAL" and op.argval in _SETTERS:
            if targets.hit(*_setattr_arguments(function, code, ops, i)):
                what = f"calls {op.argval}"
        elif op.opname in _ATTRIBUTE_LOADS and (op.argval in _INSIDES and not (
                op.argval != "__closure__" and (_read_at_once(ops, i) or _copied(ops, i))) or op.argval in _ATTRIBUTE_SETTERS and (
                targets.yours or targets.not_self and not _on_self(code, ops, i))):
            what = f"reads {op.argval} (a way to rebind globals, closure variables, function parts)"
        elif op.opname == "LOAD_GLOBAL" and op.argval in _SCOPE_WRITERS and targets.names \
                and not (op.argval == "globals" and _read_at_once(ops, _call_of(ops, i))):
            what = f"may rebind globals through {op.argval}()"
        elif op.argval == "reload" and _reloads(function, code, ops, i):
            what = "reloads a module (importlib.reload), rebinding its globals"
        if what is not None:
            _refuse(function, code, op, what, fn)


def _is_self(code, op, first=False):
    """Does ``op`` load (last, or ``first``: 3.13 loads two at once) the ``self`` of a method
    (an instance: not a module)?"""
    names = op.argval if op.opname == "LOAD_FAST_LOAD_FAST" else (op.argval,) if op.opname == "LOAD_FAST" else ()
    return bool(names) and names[0 if first else -1] == "self" and code.co_argcount > 0 and code.co_varnames[0] == "self"


def _setattr_arguments(function, code, ops, i):
    """For ``setattr(o, name, v)`` (``ops[i]`` loads ``setattr``): the object (if named: a
    chain ``g.a.b``), the name (if a string written there: else None) and whether the object
    is a method's ``self``. A first argument not read that simply is an object not named."""
    j, after = i + 1, lambda k: ops[k].opname if k < len(ops) else ""
    while after(j + 1) in ("LOAD_ATTR", "LOAD_METHOD"):
        j += 1
    if after(j + 1) == "LOAD_CONST" and isinstance(ops[j + 1].argval, str) and after(j + 2).startswith("LOAD_") \
            and after(j + 2) not in ("LOAD_ATTR", "LOAD_METHOD"):
        return ops[j + 1].argval, _named_object(function, ops, j), j == i + 1 and _is_self(code, ops[i + 1])
    if after(i + 1) == "LOAD_FAST_LOAD_FAST":  # (3.13: setattr(self, k, ...))
        return None, _MISSING, _is_self(code, ops[i + 1], first=True)
    simple = all(after(k).startswith("LOAD_") and after(k) not in ("LOAD_ATTR", "LOAD_METHOD") for k in (i + 2, i + 3))
    return None, _MISSING, simple and _is_self(code, ops[i + 1])


def _on_self(code, ops, i):
    """Does the method ``ops[i]`` loads (``__setattr__``) act on a method's ``self``
    (``super().__setattr__``, ``object.__setattr__(self, ...)``, ``self.__setattr__``)?"""
    return ops[i].opname == "LOAD_SUPER_ATTR" or (i > 0 and _is_self(code, ops[i - 1])
                                                    or i + 1 < len(ops) and _is_self(code, ops[i + 1], first=True))


def _reloads(function, code, ops, i):
    """Does ``ops[i]`` (of ``reload``) load ``importlib.reload``, or a ``reload`` of no object
    named where the code imports ``importlib`` itself?"""
    if ops[i].opname not in ("LOAD_GLOBAL", "LOAD_DEREF", "LOAD_ATTR", "LOAD_METHOD", "IMPORT_FROM"):
        return False
    found = _named_object(function, ops, i) if ops[i].opname != "IMPORT_FROM" else _MISSING
    return found is importlib.reload or found is _MISSING and "importlib" in code.co_names


def _call_of(ops, i):
    """The call of what ``ops[i]`` loads (its first: 3.10 ``CALL_FUNCTION``, later ``CALL``)."""
    return next((k for k in range(i + 1, len(ops)) if ops[k].opname.startswith("CALL")), None)


def _read_at_once(ops, j):
    """Is the namespace ``ops[j]`` makes (``globals()``, ``f.__globals__``) only read where it
    is made (``globals()["G"]``, ``globals().get(k)``, ``{**f.__globals__}``)?"""
    if j is None or j + 2 >= len(ops):
        return False
    after, then = ops[j + 1], ops[j + 2]
    return (after.opname.startswith("LOAD_") and after.opname not in ("LOAD_ATTR", "LOAD_METHOD")
            and then.opname == "BINARY_SUBSCR") or (after.opname in ("LOAD_ATTR", "LOAD_METHOD")
                                                    and after.argval in _DICT_READS) or after.opname in (
                                                        "DICT_UPDATE", "DICT_MERGE")


def _copied(ops, i):
    """Is the namespace ``ops[i]`` loads (``f.__globals__``) copied: ``dict(f.__globals__, ...)``?"""
    while i > 0 and ops[i].opname in ("LOAD_ATTR", "LOAD_METHOD"):
        i -= 1
    i -= 1 + (i > 0 and ops[i - 1].opname == "PUSH_NULL")
    return i >= 0 and ops[i].opname == "LOAD_GLOBAL" and ops[i].argval == "dict"


def _named_object(function, ops, i):
    """The object the instructions ending at ``ops[i]`` load, if they name it: a global or
    closure variable and attributes of it; ``_MISSING`` otherwise (a local, a parameter)."""
    attrs = []
    while i >= 0 and ops[i].opname in ("LOAD_ATTR", "LOAD_METHOD"):
        attrs.append(ops[i].argval)
        i -= 1
    if i < 0 or ops[i].opname not in ("LOAD_GLOBAL", "LOAD_DEREF"):
        return _MISSING
    name, free = ops[i].argval, function.__code__.co_freevars
    if (ops[i].opname == "LOAD_DEREF") != (name in free):  # (a cell of a nested function's own)
        return _MISSING
    return _follow(_scope_value(function, name), tuple(reversed(attrs)))


def _line_of(code, op):
    """The line of ``code`` the instruction ``op`` is on (its first line for None)."""
    line = code.co_firstlineno
    for offset, lineno in dis.findlinestarts(code) if op is not None else ():
        if offset > op.offset:
            break
        line = lineno or line  # (Python 3.13: None for code of no line)
    return line


def _refuse(function, code, op, what, fn):
    line = _line_of(code, op)
    where = fn.__code__
    raise SrcadSyntaxError(
        f"{function.__qualname__} {what} while {fn.__qualname__} runs ({fn.__qualname__}, at "
        f"{where.co_filename}:{where.co_firstlineno}, may call it): srcad compiled the derivative for what it denoted "
        "when the call began (a derivative rule chosen for it, or its value pasted into the code), so the result "
        "would be computed with the new binding and differentiated with the old one. Bind it before calling the "
        "differentiated function, outside it, or pass what changes as an argument",
        code.co_filename, line, None, linecache.getline(code.co_filename, line))
