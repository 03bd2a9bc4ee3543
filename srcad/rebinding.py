"""Refuse, when code is compiled, a function whose call may rebind what that code was made for.

Compiled code takes some bindings as fixed, its guards (``Compiled.global_guards``): the
``np.sin`` it resolved ``act`` to and pasted the derivative of, a rule's module constant
``K``. They are checked when a call starts. Code srcad runs as written during the call (a
helper ``configure()`` doing ``global act; act = np.cos``) could rebind one after that check:
the generated code would compute with the new binding (it reads ``act`` live) and
differentiate the old one, a gradient of no function.

``check_not_rebound`` reads the bytecode of every function of yours the compiled function may
run (``sharing.functions_reached``: through its globals, closure cells and defaults, the
methods of the classes and objects they hold, transitively) and raises, at the line of the
store, where one

- stores or deletes a guarded global of its module (``global act; act = ...``, ``del act``),
  or a guarded closure variable (``nonlocal act``);
- stores or deletes a guarded attribute (``cfg.act = ...``, ``setattr(cfg, "act", v)``) on
  the object guarded, when the code names it (a global, a closure variable, an attribute of
  them), or on any object when it does not (``obj.act = ...``, ``setattr(o, name, v)``,
  ``__setattr__``, ``__dict__``), if the guarded one is yours (not an installed library's:
  ``self.sum = ...`` is not ``np.sum``);
- may rebind globals by reflection (``globals()`` other than read where it is made, as in
  ``globals()["G"]``; ``exec``; ``eval``) while some global is guarded.

It costs nothing per call (it runs once per compilation). It does not see code the
function is given at run time (a function passed as an argument, a method of an argument),
``vars(m)[name] = v``, nor another thread (see docs/limitations.md).
"""
import dis
import linecache
import types

from .errors import SrcadSyntaxError
from .guards import _FUNCTION_PARTS, _MISSING, Guard, _CalleeGuard, _cell_contents, _follow, _scope_value
from .code_reading import code_names, installed_class, nested_code, not_yours, reflective
from .sharing import functions_reached

_ATTRIBUTE_STORES = {"STORE_ATTR", "DELETE_ATTR"}
_GLOBAL_STORES = {"STORE_GLOBAL", "DELETE_GLOBAL"}
_CELL_STORES = {"STORE_DEREF", "DELETE_DEREF"}
_SETTERS = frozenset({"setattr", "delattr"})
_ATTRIBUTE_SETTERS = frozenset({"__setattr__", "__delattr__", "__dict__"})
_SCOPE_WRITERS = frozenset({"globals", "exec", "eval"})
_DICT_READS = frozenset({"get", "__getitem__", "__contains__", "keys", "values", "items", "copy"})


class _Targets:
    """The bindings guards hold: globals (``(id(scope), name)``), closure cells (ids),
    attributes (name -> ids of the objects guarded), and the attribute names guarded on an
    object of yours (which an attribute store on an object not named may hit)."""

    def __init__(self):
        self.names, self.cells, self.attributes, self.yours = set(), set(), {}, set()

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
        self.attributes.setdefault(attr, set()).add(id(holder))
        installed = (not_yours(holder.__name__, getattr(holder, "__file__", None))
                     if isinstance(holder, types.ModuleType) else installed_class(type(holder)))
        if not installed:
            self.yours.add(attr)


def check_not_rebound(fn, guards):
    """Raise ``SrcadSyntaxError`` at the line of code ``fn``'s call may run that rebinds one of
    ``guards`` (``Compiled.global_guards(fn)``); see the module's docstring."""
    targets = _Targets()
    targets.add(guards, set())
    if not (targets.names or targets.cells or targets.attributes):
        return
    for function in functions_reached([fn]):
        code = function.__code__
        for nested in nested_code(code):
            _check_stores(function, nested, targets, fn)
        if targets.yours and reflective(code, code_names(code), frozenset(), _ATTRIBUTE_SETTERS):
            _refuse(function, code, None, "sets attributes by reflection (__setattr__, __dict__)", fn)


def _check_stores(function, code, targets, fn):
    """Refuse a store in ``code`` (``function``'s or nested in it) into one of ``targets``."""
    ops = list(dis.get_instructions(code))
    for i, op in enumerate(ops):
        what = None
        if op.opname in _GLOBAL_STORES and (id(function.__globals__), op.argval) in targets.names:
            what = f"rebinds the global '{op.argval}'"
        elif op.opname in _CELL_STORES and op.argval in function.__code__.co_freevars:
            cell = function.__closure__[function.__code__.co_freevars.index(op.argval)]
            if id(cell) in targets.cells:
                what = f"rebinds the variable '{op.argval}' of an enclosing function"
        elif op.opname in _ATTRIBUTE_STORES and op.argval in targets.attributes:
            holder = _named_object(function, ops, i - 1)
            if id(holder) in targets.attributes[op.argval] or holder is _MISSING and op.argval in targets.yours:
                what = f"sets the attribute '{op.argval}'"
        elif op.opname == "LOAD_GLOBAL" and op.argval in _SETTERS:
            holder = _named_object(function, ops, i + 1)
            name = ops[i + 2].argval if i + 2 < len(ops) and ops[i + 2].opname == "LOAD_CONST" else None
            if (name in targets.attributes and id(holder) in targets.attributes[name]
                    or targets.yours and (holder is _MISSING or name is None)):
                what = f"calls {op.argval}"
        elif op.opname == "LOAD_GLOBAL" and op.argval in _SCOPE_WRITERS and targets.names \
                and not (op.argval == "globals" and _read_at_once(ops, i)):
            what = f"may rebind globals through {op.argval}()"
        if what is not None:
            _refuse(function, code, op, what, fn)


def _read_at_once(ops, i):
    """Is the dict ``globals()`` (the call of what ``ops[i]`` loads) only read where it is made
    (``globals()["G"]``, ``globals().get(k)``)?"""
    j = next((k for k in range(i + 1, len(ops)) if ops[k].opname.startswith("CALL")), None)  # (3.10: CALL_FUNCTION)
    if j is None or j + 2 >= len(ops):
        return False
    after, then = ops[j + 1], ops[j + 2]
    return (after.opname.startswith("LOAD_") and after.opname not in ("LOAD_ATTR", "LOAD_METHOD")
            and then.opname == "BINARY_SUBSCR") or (after.opname in ("LOAD_ATTR", "LOAD_METHOD")
                                                    and after.argval in _DICT_READS)


def _named_object(function, ops, i):
    """The object the instructions ending at ``ops[i]`` load, if they name it: a global or
    closure variable and attributes of it; ``_MISSING`` otherwise (a local, a parameter)."""
    attrs = []
    while i >= 0 and ops[i].opname == "LOAD_ATTR":
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
