"""Lists of objects and functions the function makes itself and iterates over, for
``resolve_calls``: ``layers = [Dense(W1, 0.0), Dense(W2, 1.0)]``, ``fs = [lambda z: ..., np.sin]``,
then ``for layer in layers: x = layer(x)``.

Guarantee: such a loop is unrolled, one copy of its body per item, the loop variable in each
copy the item itself (``for i, layer in enumerate(layers)``, ``for i in range(len(layers))``:
``i`` the item's index, a constant; ``layers[k]`` the item ``k`` picks); ``for layer, w in
zip(layers, other)`` stays a loop, over ``zip(range(n), other)``, one branch per item, so it
stops and takes from ``other`` as Python does. Each item made by a call or a lambda is bound
to a name of its own where the list was made (``layers_0 = Dense(W1, 0.0)``), so that
``local_objects`` and ``local_functions`` lower it as if the user had written it so; an item
that is a function of the module (``np.sin``, ``f``) or one defined once by ``def`` in the
function before the list is written in the copy as that name. The program that results runs
exactly what Python runs, and it is done only where that is provably so: the list is a
display (a list or tuple, no ``*``, at most ``MAX_ITEMS`` items) bound by an assignment at
the function's top level, its name bound nowhere else and read, after that assignment and in
the function's own scope, only as what ``for`` loops iterate over (``layers``;
``enumerate(layers)``, ``range(len(layers))``, ``zip(layers, ...)`` with no other such list
and no keyword: the builtins) or as ``layers[k]``, ``k`` an integer literal within the list or
the index of such a loop over it around the read (so the list is never mutated, aliased,
returned or passed on, and holds those items whenever it is read); each item is a lambda, a
call of a class of the module (``local_classes.made_class``) or such a function; a loop's
variables are names, the index and the item bound by no other statement and read only in the
body of such loops (not in their ``else``, after them, or in a lambda, ``def`` or
comprehension, which could read it later: late binding), and the body has no ``break`` or
``continue`` of its own and defines no function or class (its copies would bind it again); no
loop over the list is inside another loop over the same list, nor inside one binding the same
variable. Anything else is left as it is, and refused as before where a derivative needs it
("'layer' is a local variable ...", an item's name in messages the loop's variable or
``layers[k]``).

>>> import numpy as np
>>> from srcad.source import capture
>>> from srcad.astutil import to_source
>>> if True:  # (one example: the class and the function in one file, as in a module)
...     class Dense:
...         def __init__(self, W):
...             self.W = W
...         def __call__(self, x):
...             return np.tanh(x @ self.W)
...     def f(x, W1, W2):
...         layers = [Dense(W1), Dense(W2)]
...         for layer in layers:
...             x = layer(x)
...         return x
>>> src = capture(f)
>>> unroll_local_lists(src.node, src)
>>> print(to_source(src.node).strip())
def f(x, W1, W2):
    layers_0 = Dense(W1)
    layers_1 = Dense(W2)
    x = layers_0(x)
    x = layers_1(x)
    return x
>>> def g(x, W1, W2):
...     layers = [Dense(W1), Dense(W2)]
...     for i, layer in enumerate(layers):
...         x = layer(x) * (i + 1)
...     for i in range(len(layers)):
...         x = layers[i](x)
...     return layers[-1](x)
>>> src = capture(g)
>>> unroll_local_lists(src.node, src)
>>> print(to_source(src.node).strip())
def g(x, W1, W2):
    layers_0 = Dense(W1)
    layers_1 = Dense(W2)
    x = layers_0(x) * (0 + 1)
    x = layers_1(x) * (1 + 1)
    x = layers_0(x)
    x = layers_1(x)
    return layers_1(x)
>>> def h(x, W1, W2, scales):
...     layers = [Dense(W1), Dense(W2)]
...     for layer, s in zip(layers, scales):
...         x = s * layer(x)
...     return x
>>> src = capture(h)
>>> unroll_local_lists(src.node, src)
>>> print(to_source(src.node).strip())
def h(x, W1, W2, scales):
    layers_0 = Dense(W1)
    layers_1 = Dense(W2)
    for layers_index, s in zip(range(2), scales):
        if layers_index == 0:
            x = s * layers_0(x)
        else:
            x = s * layers_1(x)
    return x
"""
import builtins

import gast

from .. import astutil as A
from .callees import dotted, local_names
from .local_classes import fresh_in, made_class
from .local_functions import SCOPES
from .local_objects import mark_unlowered
from .local_list_comprehensions import fuse_comprehensions

MAX_ITEMS = 16  # a display is written by hand: more items would only grow the unrolled code


def unroll_local_lists(fn, source):
    """Unroll in ``fn`` each loop over a list the module doc allows (in place), after fusing
    each loop over a list of objects a comprehension makes with it (``local_list_comprehensions``)."""
    fuse_comprehensions(fn, source)
    locals_ = local_names(fn)
    lists = {}  # list name -> (top-level index of its assignment, the assignment, its items' kinds)
    for index, stmt in enumerate(fn.body):
        found = _display(stmt, index, fn, locals_, source)
        if found is not None:
            lists.setdefault(found[0], []).append((index, stmt, found[1]))
    lists = {name: made[0] for name, made in lists.items() if len(made) == 1}
    if not lists:
        return
    displays = dict(lists)
    seen = _Occurrences(lists, builtins=_builtins_here(locals_, source))
    seen.visit_block(fn.body, top=None, loops=(), nested=False)
    reads = {id(n.value): n for n in A.walk(fn) if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name)}
    loops = {id(loop): loop for loop in seen.loops if _loop_fits(loop, lists, seen)}
    while True:  # a loop variable may be bound only by loops that are unrolled too; an index read only in them
        failed = {_iterated(loop).id for loop in loops.values() if not _variable_fits(loop, loops, seen)}
        failed |= {name for name in lists if not _reads_fit(name, lists[name], loops, seen, reads)}
        if not failed:
            break
        loops = {key: loop for key, loop in loops.items() if _iterated(loop).id not in failed}
        lists = {name: made for name, made in lists.items() if name not in failed}
    used = {node.id for node, _, _, _ in seen.names if id(node) in reads} | {_iterated(loop).id for loop in loops.values()}
    lists = {name: made for name, made in lists.items() if name in used}
    for name in set(displays) - set(lists):
        _mark_kept(name, displays[name][1], loops, seen, locals_, source)
    if not lists:
        return
    taken = {n.id for n in A.walk(fn) if isinstance(n, gast.Name)} | locals_
    items = {}  # list name -> the expression each item is in the loop's copies
    made_at = {}  # id of a list's assignment -> the assignments binding its items to names
    positions = {}  # an item's name -> where it is in its list (``layers[0]``)
    for name, (_, assign, kinds) in lists.items():
        items[name], made_at[id(assign)] = [], []
        for i, (kind, value) in enumerate(zip(kinds, assign.value.elts)):
            if kind == "name":
                items[name].append(value)
                continue
            item = fresh_in(f"{name}_{i}", taken)
            taken.add(item)
            positions[item] = f"{name}[{i}]"
            bound = gast.Assign(targets=[A.store(item)], value=value, type_comment=None)
            made_at[id(assign)].append(gast.copy_location(bound, assign))
            items[name].append(A.load(item))
    shown = {}  # an item's name in messages: the variable of the first loop over its list, else list[k]
    for loop in loops.values():
        item = _roles(loop)[1]
        for made in made_at.get(id(lists[_iterated(loop).id][1]), ()) if item is not None else ():
            shown.setdefault(made.targets[0].id, item.id)
    for item, position in positions.items():
        shown.setdefault(item, position)
    A.set_anno(source.node, "renamed_from", {**(A.anno(source.node, "renamed_from") or {}), **shown})
    fn.body = _rewrite(fn.body, made_at, loops, items, lambda name: _fresh_index(taken, name))
    _ItemReads(items).visit(fn)


def _fresh_index(taken, name):
    """A name for the index of a zip loop over the list ``name`` no other name of the function has."""
    name = fresh_in(f"{name}_index", taken)
    taken.add(name)
    return name


def _mark_kept(name, assign, loops, seen, locals_, source):
    """The refusal of a derivative through an object of a list ``name`` left as it is says
    what was written and what to write instead (not that the class has no source)."""
    unrolled = {id(_iterated(loop)) for loop in loops.values()}
    read = next((node for node, _, _, _ in seen.names
                 if node.id == name and node is not assign.targets[0] and id(node) not in unrolled), None)
    line = getattr(read, "lineno", None)
    where = f"'{name}' is read otherwise (line {line}: {source.line(line).strip()!r})" if line else (
        f"'{name}' is bound again or read in a way srcad cannot follow")
    for item in assign.value.elts:
        made = made_class(gast.Assign(targets=[A.store("_")], value=item, type_comment=None), locals_, source) if (
            isinstance(item, gast.Call)) else None
        if made is not None:
            mark_unlowered(item, (
                f"'{name}' is a list of objects of your class {made[0].__qualname__} made in this function (line "
                f"{getattr(assign, 'lineno', '?')}); srcad reads such objects only where the list is read by for loops "
                f"over it alone ('for item in {name}: ...', one copy of the body per item): here {where}; loop over "
                f"it with for (total = total + item.w), or make the list of the values the objects hold"))


def _display(stmt, index, fn, locals_, source):
    """``(name, kinds)`` for ``name = [item, ...]`` whose items all have a kind (``_item_kind``)."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, (gast.List, gast.Tuple)) and len(stmt.value.elts) <= MAX_ITEMS):
        return None
    kinds = [_item_kind(item, stmt, index, fn, locals_, source) for item in stmt.value.elts]
    if None in kinds:
        return None
    return stmt.targets[0].id, kinds


def _item_kind(item, assign, index, fn, locals_, source):
    """"made" for a lambda or a call of a class of the module; "name" for a function named by a
    global dotted name or by a ``def`` at the top of ``fn`` before the list, the only binding of
    its name; None for anything else."""
    if isinstance(item, gast.Lambda):
        return "made"
    if isinstance(item, gast.Call):
        trial = gast.Assign(targets=[A.store("_")], value=item, type_comment=None)
        made = made_class(trial, locals_, source)
        return "made" if made is not None and made[1] is None else None  # (another module's: its message names no item)
    parts = dotted(item)
    if parts is None:
        return None
    root = parts[0]
    if root not in locals_:
        stored = any(isinstance(n, gast.Name) and n.id == root and not isinstance(n.ctx, gast.Load)
                     or isinstance(n, (gast.Global, gast.Nonlocal)) and root in n.names for n in A.walk(fn))
        return None if stored else "name"
    binders = [s for s in A.walk(fn) if isinstance(s, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef))
               and s.name == root]
    stores = [n for n in A.walk(fn) if isinstance(n, gast.Name) and n.id == root and not isinstance(n.ctx, gast.Load)]
    defined_before = [s for s in fn.body[:index] if isinstance(s, gast.FunctionDef) and s.name == root]
    if len(parts) == 1 and len(binders) == 1 and not stores and defined_before == binders:
        return "name"
    return None


class _Occurrences:
    """Where each name of the function sits: the top-level statement holding it, the loops over
    candidate lists whose bodies hold it, whether a nested scope holds it."""

    def __init__(self, lists, builtins):
        self.lists = lists
        self.builtins = builtins  # which of enumerate, range and len are the builtins here
        self.names = []  # (Name node, top-level index, enclosing candidate loops, in a nested scope)
        self.loops = []  # candidate loops of the function's own scope
        self.where = {}  # id of a candidate loop -> (top-level index, enclosing candidate loops)
        self.declared = set()  # names a global or nonlocal statement declares

    def visit_block(self, stmts, top, loops, nested):
        for index, stmt in enumerate(stmts):
            self.visit(stmt, index if top is None else top, loops, nested)

    def visit(self, node, top, loops, nested):
        if isinstance(node, gast.Name):
            self.names.append((node, top, loops, nested))
            return
        if isinstance(node, (gast.Global, gast.Nonlocal)):
            self.declared.update(node.names)
        inner = nested or isinstance(node, SCOPES)
        if isinstance(node, gast.For) and not nested and _candidate(node, self.lists, self.builtins):
            self.loops.append(node)
            self.where[id(node)] = (top, loops)
            for part in (node.target, node.iter):
                self.visit(part, top, loops, nested)
            for stmt in node.body:
                self.visit(stmt, top, loops + (node,), nested)
            for stmt in node.orelse:
                self.visit(stmt, top, loops, nested)
            return
        for field in node._fields:
            value = getattr(node, field, None)
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, gast.AST):
                    self.visit(child, top, loops, inner)


def _loop_fits(loop, lists, seen):
    """The loop may be unrolled as far as it alone goes: not inside another loop over its list,
    its body jumps out of nothing and defines nothing."""
    name = _iterated(loop).id
    _, enclosing = seen.where[id(loop)]
    return (name not in seen.declared
            and not any(_iterated(outer).id == name for outer in enclosing)
            and not _own_jumps(loop.body) and not _defines(loop.body))


def _reads_fit(name, made, loops, seen, reads):
    """Whether the list ``name`` is read, after it is made and outside nested scopes, only as
    what the ``loops`` iterate over or as ``name[k]`` of one item: ``k`` a constant within the
    list, or the index of such a loop over it around the read."""
    made_index, assign, _ = made
    iters = {id(_iterated(loop)) for loop in loops.values()}
    for node, where, enclosing, nested in seen.names:
        if node.id != name or node is assign.targets[0]:
            continue
        if where <= made_index or nested:
            return False
        if id(node) in iters:
            continue
        read = reads.get(id(node))
        if read is None or not isinstance(read.ctx, gast.Load):
            return False
        indices = {_roles(outer)[0].id for outer in enclosing
                   if id(outer) in loops and _iterated(outer).id == name and _roles(outer)[0] is not None}
        if not (isinstance(read.slice, gast.Name) and read.slice.id in indices
                or _constant_index(read.slice, len(assign.value.elts)) is not None):
            return False
    return True


def _constant_index(node, length):
    """The item ``node``, an integer literal (``-1`` too), picks of a list of ``length`` items;
    None for anything else, or one outside the list (Python raises IndexError)."""
    negative = isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub)
    value = node.operand if negative else node
    if not (isinstance(value, gast.Constant) and type(value.value) is int):
        return None
    k = -value.value if negative else value.value
    return k % length if -length <= k < length else None


class _ItemReads(gast.NodeTransformer):
    """``name[k]`` of an unrolled list, its index now a constant, as a copy of item ``k``."""

    def __init__(self, items):
        self.items = items

    def visit_Subscript(self, node):
        self.generic_visit(node)
        items = self.items.get(node.value.id) if isinstance(node.value, gast.Name) else None
        k = None if items is None else _constant_index(node.slice, len(items))
        return node if k is None else gast.copy_location(A.deepcopy(items[k]), node)


def _defines(stmts):
    """Whether ``stmts`` define a function or class (``def``, ``h = lambda``), which srcad reads
    only where it is bound once: copies would bind it again."""
    return any(isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef))
               or isinstance(n, gast.Assign) and isinstance(n.value, gast.Lambda) for s in stmts for n in A.walk(s))


def _variable_fits(loop, loops, seen):
    """The loop's variable is bound only by loops being unrolled and read only in their bodies,
    outside nested scopes; no such loop sits in another binding the same name."""
    return all(_one_variable_fits(var.id, loop, loops, seen) for var in _roles(loop) if var is not None)


def _one_variable_fits(var, loop, loops, seen):
    def bound_by(other):
        return var in {v.id for v in _roles(other) if v is not None}

    if var in seen.declared or any(bound_by(outer) for outer in seen.where[id(loop)][1] if id(outer) in loops):
        return False
    targets = {id(v) for other in loops.values() for v in _roles(other) if v is not None}
    for node, _, enclosing, nested in seen.names:
        if node.id != var or id(node) in targets:
            continue
        if nested or not isinstance(node.ctx, gast.Load):
            return False
        if not any(id(outer) in loops and bound_by(outer) for outer in enclosing):
            return False
    return True


def _builtins_here(locals_, source):
    """Which of ``enumerate``, ``range``, ``len`` and ``zip`` are the builtins in the function
    (no name of the function or module hides them)."""
    def builtin(name):
        try:
            return name not in locals_ and source.lookup(name) is getattr(builtins, name)
        except KeyError:
            return False
    return {name for name in ("enumerate", "range", "len", "zip") if builtin(name)}


def _call_of(node, name, builtins_):
    """The one argument of ``name(arg)``, the builtin, or None."""
    return (node.args[0] if isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
            and node.func.id == name and name in builtins_ and len(node.args) == 1 and not node.keywords
            and not isinstance(node.args[0], gast.Starred) else None)


def _candidate(loop, lists, builtins_):
    """Whether ``loop`` iterates over a list of ``lists``: ``for v in L``, ``for i, v in
    enumerate(L)``, ``for i in range(len(L))`` or ``for v, w in zip(L, other)`` (the
    builtins; ``other`` no list of ``lists``), its variables names."""
    it, target = loop.iter, loop.target
    if isinstance(it, gast.Name):
        return it.id in lists and isinstance(target, gast.Name)
    if _zipped(it, builtins_):
        return (isinstance(it.args[0], gast.Name) and it.args[0].id in lists
                and not any(isinstance(a, gast.Name) and a.id in lists for a in it.args[1:])
                and isinstance(target, gast.Tuple) and len(target.elts) == len(it.args)
                and all(isinstance(v, gast.Name) for v in target.elts)
                and len({v.id for v in target.elts}) == len(target.elts))
    counted = _call_of(it, "enumerate", builtins_)
    if counted is not None:
        return (isinstance(counted, gast.Name) and counted.id in lists and isinstance(target, gast.Tuple)
                and len(target.elts) == 2 and all(isinstance(v, gast.Name) for v in target.elts)
                and target.elts[0].id != target.elts[1].id)
    length = _call_of(_call_of(it, "range", builtins_), "len", builtins_)
    return isinstance(length, gast.Name) and length.id in lists and isinstance(target, gast.Name)


def _zipped(it, builtins_):
    """Whether ``it`` is ``zip(a, b, ...)`` of the builtins ``zip`` and ``range``, no ``*``, no keyword."""
    return (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id == "zip"
            and {"zip", "range"} <= builtins_ and len(it.args) >= 2 and not it.keywords
            and not any(isinstance(a, gast.Starred) for a in it.args))


def _iterated(loop):
    """The name of the list a candidate loop iterates over (its node in the loop)."""
    it = loop.iter
    if isinstance(it, gast.Name):
        return it
    return it.args[0] if it.func.id in ("enumerate", "zip") else it.args[0].args[0]


def _roles(loop):
    """A candidate loop's ``(index, item)`` variables, None where it binds none."""
    if isinstance(loop.iter, gast.Call) and loop.iter.func.id == "zip":
        return None, loop.target.elts[0]
    if isinstance(loop.target, gast.Tuple):
        return tuple(loop.target.elts)
    return (None, loop.target) if isinstance(loop.iter, gast.Name) else (loop.target, None)


def _own_jumps(stmts):
    """Whether ``stmts`` (a loop's body) hold a ``break`` or ``continue`` of that loop."""
    for stmt in stmts:
        if isinstance(stmt, (gast.Break, gast.Continue)):
            return True
        if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            continue
        if isinstance(stmt, (gast.For, gast.AsyncFor, gast.While)):
            if _own_jumps(stmt.orelse):  # a loop's else belongs to the loop around it
                return True
            continue
        for block in [getattr(stmt, f, []) for f in ("body", "orelse", "finalbody")] + [
                h.body for h in getattr(stmt, "handlers", ())] + [c.body for c in getattr(stmt, "cases", ())]:
            if _own_jumps(block):
                return True
    return False


def _rewrite(stmts, made_at, loops, items, fresh):
    """``stmts`` with each list's assignment replaced by its items' and each loop unrolled
    (inner loops first, so an outer loop copies the unrolled inner ones); a loop over ``zip``
    stays a loop, over ``zip(range(n), other)``, its body one branch per item (``fresh``: a
    new name for the index)."""
    out = []
    for stmt in stmts:
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt) and not isinstance(stmt, SCOPES):
                setattr(stmt, field, _rewrite(inner, made_at, loops, items, fresh))
        for part in list(getattr(stmt, "handlers", ())) + list(getattr(stmt, "cases", ())):
            part.body = _rewrite(part.body, made_at, loops, items, fresh)
        if id(stmt) in made_at:
            out.extend(made_at[id(stmt)])
        elif id(stmt) in loops and isinstance(stmt.iter, gast.Call) and stmt.iter.func.id == "zip":
            out.append(_zip_branches(stmt, items[_iterated(stmt).id], fresh(_iterated(stmt).id)))
        elif id(stmt) in loops:
            index, variable = _roles(stmt)
            for k, item in enumerate(items[_iterated(stmt).id]):
                bound = {**({variable.id: item} if variable else {}), **({index.id: A.const(k)} if index else {})}
                out.extend(A.replace_names(s, bound) for s in A.deepcopy(stmt.body))
            out.extend(stmt.orelse)
        else:
            out.append(stmt)
    return out or [gast.Pass()]  # a loop over an empty list leaves its block empty


def _zip_branches(loop, items, counter):
    """``for item, w in zip(L, other): body`` as ``for counter, w in zip(range(n), other):``
    with one branch per item, ``if counter == 0: body(item 0) elif ...``: zip stops where
    Python's does and takes from ``other`` as often."""
    variable = loop.target.elts[0].id
    branches = [gast.Pass()]
    for k in reversed(range(len(items))):
        copy = [A.replace_names(s, {variable: items[k]}) for s in A.deepcopy(loop.body)]
        if k == len(items) - 1:
            branches = copy
            continue
        test = gast.Compare(left=A.load(counter), ops=[gast.Eq()], comparators=[A.const(k)])
        branches = [gast.If(test=test, body=copy, orelse=branches)]
    counted = gast.Call(func=A.load("range"), args=[A.const(len(items))], keywords=[])
    loop.iter.args[0] = gast.copy_location(counted, loop.iter.args[0])
    loop.target.elts[0] = A.store(counter)
    loop.body = branches
    return loop
