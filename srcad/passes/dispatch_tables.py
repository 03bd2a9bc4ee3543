"""Dispatch tables: a call of an item of a dict, list or tuple of functions of the module
(``ACTS[act](z)``, or ``fn = ACTS[act]`` then ``fn(z)``), read as the branch Python takes among
the functions the table holds.

Guarantee: such a call becomes an ``if``/``else`` expression over the distinct functions the
table holds when the code is made, each branch taken where the table's item *is* that function
(``ACTS[act] is np.tanh``) and calling it by a name srcad resolves as any called function. The
last branch's call checks when it runs that the item is one of those functions, so the last one
(``errors.check_table_item``, inserted by ``normalize_calls``: else a clear error naming the
user's line; a missing key or index raises what Python raises), so the code never differentiates
a function the table no longer holds. A literal key calls its function directly (still checked).
Only where this is
provably the call Python makes:

- the table is a global (or closure) name bound nowhere in the function, denoting a dict, list
  or tuple of at most 16 items, each a function srcad reads (a ``def`` or ``lambda``, a bound
  method of your code: ``passes.stored_methods``) or has a rule for (the name is guarded:
  binding another table to it compiles anew);
- the key is a literal or a name (each branch reads the same value);
- ``fn = T[k]`` is a statement at the top level of the function's body, ``fn`` is bound nowhere
  else and read only as the callee of calls after it (not in a nested ``def`` or ``lambda``),
  ``k`` is a literal or a parameter the function never rebinds, and the function stores nothing
  into ``T``: the binding checks the item where Python reads it and ``fn`` keeps it, each call
  branching on ``fn is np.tanh`` (not on ``T[k]``, which a function called in between may change).

Any other call of an item of a dict, list or tuple of functions of the module (more items, an
item that is a class or a partial, a key that is an expression, ``fn`` bound in a branch) is
refused, naming the line and saying what works.

>>> import numpy as np
>>> from srcad import astutil as A
>>> from srcad.source import capture
>>> def relu(z):
...     return np.maximum(z, 0.0)
>>> ACTS = {"tanh": np.tanh, "relu": relu}
>>> def f(x, act):
...     return ACTS[act](2.0 * x)
>>> src = capture(f)
>>> read_dispatch_tables(src.node, src)
>>> print(A.to_source(src.node).strip())
def f(x, act):
    return np.tanh(2.0 * x) if ACTS[act] is np.tanh else relu(2.0 * x)
"""
import functools
import types
from typing import NamedTuple

import gast

from .. import astutil as A
from ..naming import BUILTIN, Namer
from .callees import Callee, denoted, lookup_path, path_expr, readable
from .local_partials import calls_of
from .method_calls import has_rule
from .module_aliases import name_bindings
from .stored_methods import stored_method, table_method_call

MOST_ITEMS = 16  # a branch per function: more would make code no smaller than a rule would need
_DONE = "dispatch_tables_read"  # on the FunctionDef: its tables are read already
_BOUND_ITEM = "dispatch_bound_item"  # on fn(...) of fn = T[k]: the functions fn may be
_WORKS = ("srcad differentiates a call of an item of a module-level dict, list or tuple of at most "
          f"{MOST_ITEMS} functions (defs, lambdas, methods bound to objects or functions with rules), indexed by "
          "a literal or a name")


def read_dispatch_tables(fdef, source):
    """Rewrite in place the calls of dispatch table items in ``fdef`` (the function ``source``
    reads) that the module docstring allows; refuse the others."""
    if A.anno(fdef, _DONE):
        return
    A.set_anno(fdef, _DONE, True)
    subscripted = {n.value.id for n in A.walk(fdef) if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name)}
    if not any(_may_be_table(name, source) for name in subscripted):
        return  # (most functions: nothing more to read)
    bindings = name_bindings(fdef)
    namer = Namer(A.all_names(fdef) | set(source.globals) | set(source.closure))
    _bound_items(fdef, bindings, source, namer)
    _TableCalls(source, bindings, namer).visit(fdef)


class TableItem(NamedTuple):
    """A call of the function ``expected`` as an item of a table, as ``table_item_check`` checks
    it when the code runs: the table and key (expressions, renamed with the tree it annotates
    when a helper is inlined), the functions the item may be and the user's text of the item."""
    table: gast.expr
    key: gast.expr
    expected: tuple
    text: str

    def renamed(self, mapping):
        return self._replace(key=A.replace_names(A.deepcopy(self.key), mapping))


def table_item_check(norm, call):
    """The statement ``check_table_item(T, k, (f,), where, 'T[k]')`` checking, when the code runs,
    the item a call annotated ``"table_item"`` calls; None for any other call."""
    found = A.anno(call, "table_item")
    if found is None:
        return None
    return _check(found, f"{norm.source.filename}:{getattr(call, 'lineno', '?')}: ", norm.namer, call)


def _check(found, where, namer, node):
    """The statement ``check_table_item(...)`` of ``found`` (a ``TableItem``) at ``node``."""
    return gast.copy_location(gast.Expr(value=_checked_item(found, where, namer, node)), node)


def _checked_item(found, where, namer, node):
    """The expression ``check_table_item(T, k, (f,), where, 'T[k]')``: the item, once checked."""
    from ..errors import check_table_item

    def bound(name, obj):
        return A.set_anno(A.load(namer.unique(name)), BUILTIN, (name, obj))

    check = gast.Call(func=bound(check_table_item.__name__, check_table_item), args=[
        A.deepcopy(found.table), A.deepcopy(found.key), bound("made_for", found.expected),
        gast.Constant(value=where, kind=None), gast.Constant(value=found.text, kind=None)], keywords=[])
    A.set_anno(check, "callee", Callee("object", obj=check_table_item, name=check_table_item.__name__))
    return gast.copy_location(check, node)


def _may_be_table(name, source):
    """Does ``name`` denote, in the function's scope, a non-empty dict, list or tuple of callables?"""
    try:
        table = denoted([name], source)
    except (KeyError, AttributeError):
        return False
    if type(table) not in (dict, list, tuple):
        return False
    items = list(table.values()) if isinstance(table, dict) else list(table)
    # (objects of classes with a __call__: a list of them is read by item_methods, their calls and other methods)
    try:
        return bool(items) and all(callable(i) and not _callable_object(i) for i in items)
    except ReferenceError:  # a weak proxy whose object is gone: no table srcad reads
        return False


def _callable_object(obj):
    """An object a class of the user's module makes callable by a ``__call__``, no function nor class."""
    return not isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType, functools.partial)) and (
        getattr(type(obj), "__module__", "builtins") not in ("builtins", "numpy", "functools")
        and not has_rule(obj))


def _table(func, bindings, source):
    """``(name, table, functions)`` if ``func`` is ``T[k]`` of a global ``T`` bound nowhere in the
    function that holds a dict, list or tuple of functions only (the distinct ones, in order);
    else None. Raises where the table holds functions srcad cannot call this way."""
    if not (isinstance(func, gast.Subscript) and isinstance(func.value, gast.Name)
            and func.value.id not in bindings and not isinstance(func.slice, gast.Slice)):
        return None
    name = func.value.id
    if not _may_be_table(name, source):
        return None  # (objects of classes: their methods are called by item_methods)
    table = denoted([name], source)
    items = list(table.values()) if isinstance(table, dict) else list(table)
    text = A.to_source(func).strip()
    unknown = next((i for i in items if not _known(i)), None)
    if unknown is not None:
        raise source.syntax_error(
            f"'{text}' is an item of {name}, which holds {unknown!r}, not a function srcad reads or has a rule "
            f"for; {_WORKS}: define it with def (or a lambda) and put that into the table", func)
    if len(items) > MOST_ITEMS:
        raise source.syntax_error(
            f"'{text}' is an item of {name}, which holds {len(items)} functions; {_WORKS}: call the function "
            "you mean by its name, or split the table", func)
    key = func.slice
    if isinstance(key, gast.UnaryOp) and isinstance(key.op, gast.USub) and isinstance(key.operand, gast.Constant) \
            and type(key.operand.value) is int:  # T[-1]: the literal -1
        func.slice = gast.copy_location(gast.Constant(value=-key.operand.value, kind=None), key)
    if not isinstance(func.slice, (gast.Constant, gast.Name)):
        raise source.syntax_error(
            f"'{text}' is indexed by an expression; {_WORKS}: bind the key to a name first (key = ...)", func)
    lookup_path([name], source)  # guarded: another table bound to the name compiles anew
    distinct = list({id(i): i for i in items}.values())
    return name, table, distinct


def _known(obj):
    """Is ``obj`` a function srcad reads (a ``def``, ``lambda`` or bound method) or has a rule
    for, and no class (whose call makes an object, a table of which ``item_methods`` would read)?"""
    return not isinstance(obj, type) and (isinstance(obj, types.FunctionType) or has_rule(obj)
                                          or stored_method(obj) is not None)


class _TableCalls(gast.NodeTransformer):
    """``T[k](args)`` as the branches of the module docstring."""

    def __init__(self, source, bindings, namer):
        self.source, self.bindings, self.namer = source, bindings, namer

    def visit_Call(self, call):
        self.generic_visit(call)
        held = A.anno(call, _BOUND_ITEM)
        if held is not None:  # fn(...) of fn = T[k], checked where bound: fn is one of these
            return self.branches(call, call.func, held)
        found = _table(call.func, self.bindings, self.source)
        if found is None:
            return call
        name, table, functions = found
        text, key = A.to_source(call.func).strip(), call.func.slice
        if isinstance(key, gast.Constant):
            try:
                held = table[key.value]
            except (KeyError, IndexError, TypeError):
                held = None  # raised when it runs, by the last branch's check
            functions = [held] if held is not None else functions
        # the tests before the last branch find the item among the others: that branch checks it is the last
        item = TableItem(A.load(name), A.deepcopy(key), tuple(functions), text)
        return self.branches(call, call.func, functions, item)

    def branches(self, call, item, functions, checked=None):
        """``call`` as ``f(...) if item is f else g(...)`` over ``functions``; the last branch
        annotated to check the ``TableItem`` ``checked`` when it runs."""
        branches = [self.branch(call, f) for f in functions]
        if checked is not None:
            A.set_anno(branches[-1], "table_item", checked)
        result = branches[-1]
        for function, branch in zip(functions[-2::-1], branches[-2::-1]):
            test = gast.Compare(left=A.deepcopy(item), ops=[gast.Is()], comparators=[self.named(function)])
            result = gast.IfExp(test=test, body=branch, orelse=result)
        return gast.copy_location(result, call)

    def branch(self, call, function):
        """``call`` as the call of ``function`` (of a bound method's function on its object:
        ``passes.stored_methods``)."""
        new = gast.copy_location(gast.Call(func=self.named(function), args=[A.deepcopy(a) for a in call.args],
                                           keywords=[A.deepcopy(k) for k in call.keywords]), call)
        if stored_method(function) is not None:
            table_method_call(new, new.func, function, A.to_source(call.func).strip())
            return new
        A.set_anno(new, "callee", Callee("object", obj=readable(function), name=A.to_source(new.func).strip()))
        return new

    def named(self, function):
        """An expression denoting ``function``: its global name, a module's attribute (``np.tanh``)
        or, for a lambda, a name bound to it in the generated code."""
        name = getattr(function, "__name__", "")
        paths = [[name]] + [[m, name] for m, v in self.source.globals.items() if isinstance(v, types.ModuleType)]
        for path in paths:
            try:
                if name.isidentifier() and path[0] not in self.bindings and denoted(path, self.source) is function:
                    lookup_path(path, self.source)
                    return path_expr(path)
            except (KeyError, AttributeError):
                continue
        label = self.namer.unique("_" + name if name.isidentifier() else "_item")
        return A.set_anno(A.load(label), BUILTIN, (label, function))


def _bound_items(fdef, bindings, source, namer):
    """``fn = T[k]`` then ``fn(...)``: each call as ``T[k](...)``, the binding as the check of the
    item (module docstring); a name bound to a table's item otherwise and called is refused."""
    params = {name for name, found in bindings.items() if any(isinstance(b, tuple) and b[0] is fdef for b in found)}
    for index, stmt in enumerate(list(fdef.body)):
        found = _item_binding(stmt, bindings, source)
        if found is None:
            continue
        name, key = stmt.targets[0].id, stmt.value.slice
        if len(bindings[name]) != 1 or _stored_into(fdef, found[0]):
            continue
        if not (isinstance(key, gast.Constant) or key.id in params and len(bindings[key.id]) == 1):
            continue
        calls = calls_of(name, fdef, fdef.body[index + 1:])
        if calls is None:
            continue
        for call in calls:
            A.set_anno(call, _BOUND_ITEM, found[2])
        text = A.to_source(stmt.value).strip()
        item = TableItem(A.load(found[0]), A.deepcopy(key), tuple(found[2]), text)
        stmt.value = _checked_item(item, f"{source.filename}:{stmt.lineno}: ", namer, stmt.value)
    for stmt in A.walk(fdef):
        found = _item_binding(stmt, bindings, source)
        called = found and next((c for c in A.walk(fdef) if isinstance(c, gast.Call) and isinstance(c.func, gast.Name)
                                 and c.func.id == stmt.targets[0].id), None)
        if called:
            name, text = stmt.targets[0].id, A.to_source(stmt.value).strip()
            raise source.syntax_error(
                f"'{name}' is bound to {text} (line {stmt.lineno}), an item of a dispatch table, which srcad reads "
                f"only as '{name} = {text}' at the top level of the function, {name} bound nowhere else and only "
                f"called after it, the key a literal or a parameter the function does not rebind, and nothing "
                f"stored into {found[0]}; write it so, or call {text}(...) directly", called)


def _item_binding(stmt, bindings, source):
    """``_table``'s answer for ``stmt`` if it is ``fn = T[k]`` of a dispatch table, else None."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name):
        return _table(stmt.value, bindings, source)
    return None


def _stored_into(fdef, name):
    """Does ``fdef`` store into, delete from or call a method of the global ``name``?"""
    for n in A.walk(fdef):
        if isinstance(n, gast.Subscript) and not isinstance(n.ctx, gast.Load) and isinstance(n.value, gast.Name):
            if n.value.id == name:
                return True
        if isinstance(n, gast.Attribute) and isinstance(n.value, gast.Name) and n.value.id == name:
            return True
    return False
