"""Array stacks: the float64 scalars a long loop saves kept 8 bytes each, not 40.

A value stack (``_x_stack.append(x)`` in a forward loop, ``x = _x_stack.pop()`` in its
reverse) holds each saved scalar as a 32-byte NumPy scalar in an 8-byte list slot. Guarantee:
afterwards such a stack is ``_x_stack = value_stack(n)`` made right before its forward loop,
written ``_x_stack[i] = x`` and read back ``x = _x_stack[i]`` at the trip's number ``i``:
``runtime.value_stack`` makes a float64 array for a loop of ``runtime_adjoints.LONG_LOOP`` trips or
more and a list (as fast as appending) for a shorter one, so the same code serves both. The
trip's number is the loop's variable itself over ``range(n)`` or ``range(c, n)`` with a small
literal ``c`` (the stack has ``n`` slots), else a counter ``_k1`` counted up first in each
forward trip and down last in each reverse one. It is done where all of these hold, each
known when the code is generated:

- the forward loop is a ``for`` over a name bound once, to ``range(...)``, a statement of the
  forward sweep itself (in no loop, branch or region), without ``else`` or a jump; its
  reverse is the one statement ``for ... in reversed(that name)`` of the reverse sweep,
  without ``else`` or a jump, and neither loop binds its variable in its body: each trip of
  one runs every statement of its body once, and the reverse runs its trips backwards;
- the stack is made empty and used only by one push, a statement of the forward loop's body,
  and one pop into the same name, a statement of the reverse loop's body;
- the name is a float64 scalar wherever it is bound (``shapes``), and srcad's placeholder
  ``x = None`` aside: where it may be one, the reverse sweep reads the name neither after
  the pop in the loop's body nor after the loop (the placeholder comes back as NaN there);
- the reverse sweep reads the name only as an operand of arithmetic (``+ - * / **``, unary
  ``-``) or of a NumPy ufunc: a value read back from an array is a new ``np.float64``, which
  no identity test (``is``) may see, and a Python float saved comes back as the same number.

The forward/backward pair (``codegen``) and code srcad differentiates again read the stacks
as lists (``as_lists``): the pair keeps the forward sweep's values for the backward calls, and
code read again is differentiated as it was before this pass.

>>> import gast, numpy as np
>>> from srcad import astutil as A
>>> from srcad.naming import BUILTIN, Namer
>>> from srcad.passes.resolve_calls import Callee
>>> from srcad.passes.shapes import Spec
>>> fn = gast.parse('''
... def f_adjoint(a, x, n, v=None):
...     _x_stack = []
...     _range1 = range(n)
...     for t in _range1:
...         _x_stack.append(x)
...         x = x + a * np.sin(x)
...     dx = v
...     for t in reversed(_range1):
...         x = _x_stack.pop()
...         dx = dx + dx * a * np.cos(x)
...     return dx
... ''').body[0]
>>> _ = A.set_anno(fn.body[1].value, "callee", Callee("object", obj=range, name="range"))
>>> _ = A.set_anno(fn.body[4].iter.func, BUILTIN, "reversed")
>>> _ = A.set_anno(fn, "specs", {"x": Spec((), np.float64)})
>>> _ = A.set_anno(fn, "n_forward", 4)
>>> _ = A.set_anno(fn, "namer", Namer(A.all_names(fn)))
>>> print(A.to_source(array_stacks(fn, lambda name, obj: name)).strip())
def f_adjoint(a, x, n, v=None):
    _range1 = range(n)
    _x_stack = value_stack(_range1.stop)
    for t in _range1:
        _x_stack[t] = x
        x = x + a * np.sin(x)
    dx = v
    for t in reversed(_range1):
        x = _x_stack[t]
        dx = dx + dx * a * np.cos(x)
    return dx
"""
import builtins
import collections
import copy

import gast
import numpy as np

from .. import astutil as A
from .. import runtime
from ..naming import BUILTIN, builtin
from .item_forms import pop_of, push_of
from .shapes import Spec

_JUMPS = (gast.Break, gast.Continue, gast.Return, gast.Yield, gast.YieldFrom, gast.FunctionDef, gast.Lambda)
_ARITHMETIC = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)
_SMALL_START = 64  # ``range(c, n)`` with a literal c up to this: slots 0..c-1 stay unused


def array_stacks(node, ref):
    """Keep the value stacks of long scalar loops in indexed storage; see the module doc.
    ``ref(name, obj)`` names an object in generated code. Returns ``node``."""
    n = A.anno(node, "n_forward")
    fwd, rev = node.body[:n], node.body[n:]
    specs = A.anno(node, "specs") or {}
    if not any(_float64_scalar(specs, push_of(s)[1]) for loop in fwd if isinstance(loop, gast.For)
               for s in loop.body if push_of(s)):
        return node  # the common case: no loop of the forward sweep itself saves a float
    facts = _Facts(node, ref)
    made, rewritten = [], False
    for loop in fwd:
        reverse = _reverse_of(loop, facts)
        stacks = [] if reverse is None else [p for s in loop.body if (p := _stack(s, loop, reverse, rev, facts))]
        if stacks:
            made.append((loop, _rewrite(loop, reverse, stacks, facts)))
            rewritten = True
    if not rewritten:
        return node
    dropped = {id(facts.creation[stack]) for _, before in made for stack in before[1]}
    before_loop = {id(loop): statements for loop, (statements, _) in made}
    fwd = [t for s in fwd if id(s) not in dropped for t in before_loop.get(id(s), []) + [s]]
    node.body = fwd + rev
    A.set_anno(node, "n_forward", len(fwd))
    A.set_anno(node, "array_stacks", ref("value_stack", runtime.value_stack))
    return node


class _Facts:
    """What the pass reads off the whole function: each name's reads and bindings."""

    def __init__(self, node, ref):
        self.specs = A.anno(node, "specs") or {}
        self.namer = A.anno(node, "namer")
        self.np = ref("np", np)
        self.ref = ref
        self.uses = {}  # name -> its Name nodes
        self.parents = {}  # id(a Name node) -> the node holding it
        for parent in A.walk(node):
            if parent.__class__ is gast.Name:
                self.uses.setdefault(parent.id, []).append(parent)
            held = parent.__dict__
            for field in parent._fields:
                value = held.get(field)
                if value.__class__ is gast.Name:
                    self.parents[id(value)] = parent
                elif value.__class__ is list:
                    for child in value:
                        if child.__class__ is gast.Name:
                            self.parents[id(child)] = parent
        # the stacks made empty by a statement of the forward sweep itself
        n = A.anno(node, "n_forward")
        self.reverse_reads = {}  # name -> its loads in the reverse sweep
        for s in node.body[n:]:
            for u in A.walk(s):
                if isinstance(u, gast.Name) and isinstance(u.ctx, gast.Load):
                    self.reverse_reads.setdefault(u.id, []).append(u)
        # name -> the statements of the forward sweep's top level assigning it, and the reverse
        # sweep's top-level loops over ``reversed(name)``: read once per loop (``_reverse_of``)
        self.top_bindings, self.reversed_loops = {}, {}
        for s in node.body[:n]:
            if isinstance(s, gast.Assign):
                for target in {t.id for t in s.targets if isinstance(t, gast.Name)}:
                    self.top_bindings.setdefault(target, []).append(s)
        for s in node.body[n:]:
            if (isinstance(s, gast.For) and isinstance(s.iter, gast.Call) and not s.iter.keywords
                    and A.anno(s.iter.func, BUILTIN) == "reversed" and len(s.iter.args) == 1
                    and isinstance(s.iter.args[0], gast.Name)):
                self.reversed_loops.setdefault(s.iter.args[0].id, []).append(s)
        self.creation = {s.targets[0].id: s for s in node.body[:n] if isinstance(s, gast.Assign)
                         and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
                         and isinstance(s.value, gast.List) and not s.value.elts}
        self.placeholders = {s.targets[0].id for s in A.walk_statements(node.body) if isinstance(s, gast.Assign)
                             and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
                             and isinstance(s.value, gast.Constant) and s.value.value is None}

    def float64_scalar(self, name):
        return _float64_scalar(self.specs, name)


def _float64_scalar(specs, name):
    spec = specs.get(name)
    return isinstance(spec, Spec) and spec.shape == () and spec.dtype == np.float64


def _plain(loop):
    """A ``for`` over a name, without ``else`` or a jump, not binding its variable in its body."""
    if not (isinstance(loop, gast.For) and isinstance(loop.target, gast.Name) and not loop.orelse):
        return False
    body = gast.Module(body=loop.body, type_ignores=[])
    return not any(isinstance(n, _JUMPS) for n in A.walk(body)) and loop.target.id not in A.names_stored(body)


def _range_call(name, facts):
    """The ``range(...)`` call ``name`` is bound to, where that is its only binding, else None."""
    bindings = facts.top_bindings.get(name, [])
    stored = [u for u in facts.uses.get(name, ()) if not isinstance(u.ctx, gast.Load)]
    if len(bindings) != 1 or len(stored) != 1 or len(bindings[0].targets) != 1:
        return None
    call = bindings[0].value
    callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
    if callee is None or callee.kind != "object" or callee.obj is not builtins.range or call.keywords:
        return None
    return call


def _reverse_of(loop, facts):
    """The reverse loop of the forward loop ``loop`` where both are plain, else None."""
    if not (_plain(loop) and isinstance(loop.iter, gast.Name) and _range_call(loop.iter.id, facts) is not None):
        return None
    found = facts.reversed_loops.get(loop.iter.id, [])
    reads = [u for u in facts.uses.get(loop.iter.id, ()) if isinstance(u.ctx, gast.Load)]
    if len(found) != 1 or not _plain(found[0]) or len(reads) != 2:  # the two loops' reads only
        return None
    return found[0]


def _stack(push, loop, reverse, rev, facts):
    """``(stack, name)`` of the push ``push`` (a statement of ``loop``'s body) where its stack
    can be indexed storage, else None."""
    found = push_of(push)
    if found is None:
        return None
    stack, name = found
    pops = [s for s in reverse.body if pop_of(s) == stack]
    if stack not in facts.creation or len(pops) != 1 or pops[0].targets[0].id != name:
        return None
    if len(facts.uses.get(stack, ())) != 3 or not facts.float64_scalar(name):  # made, pushed, popped
        return None
    if not all(_reads_a_number(u, facts) for u in facts.reverse_reads.get(name, ())):
        return None
    if name in facts.placeholders:  # the first trip may push srcad's ``None``: its slot is never read
        after_pop = reverse.body[next(i for i, s in enumerate(reverse.body) if s is pops[0]) + 1:]
        after_loop = rev[next(i for i, s in enumerate(rev) if s is reverse) + 1:]
        if any(isinstance(u, gast.Name) and u.id == name and isinstance(u.ctx, gast.Load)
               for s in after_pop + after_loop for u in A.walk(s)):
            return None
    return stack, name


def _reads_a_number(read, facts):
    """Is ``read`` an operand of arithmetic or of a NumPy ufunc (without keywords): a read
    that sees only the number, never the object?"""
    parent = facts.parents.get(id(read))
    if isinstance(parent, gast.BinOp):
        return isinstance(parent.op, _ARITHMETIC)
    if isinstance(parent, gast.UnaryOp):
        return isinstance(parent.op, (gast.USub, gast.UAdd))
    if isinstance(parent, gast.Call) and any(a is read for a in parent.args) and not parent.keywords:
        func = parent.func
        return (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and func.value.id == facts.np
                and isinstance(getattr(np, func.attr, None), np.ufunc))
    return False


def _rewrite(loop, reverse, stacks, facts):
    """Index the ``stacks`` ((stack, name) pairs) of ``loop`` and its ``reverse``; return
    ``(statements to run before the loop, the stacks)``."""
    range_name = loop.iter.id
    by_trip = _indexed_by_trip(loop, reverse, facts)
    if by_trip:
        forward_index, reverse_index = A.load(loop.target.id), A.load(reverse.target.id)
        size = gast.Attribute(value=A.load(range_name), attr="stop", ctx=gast.Load())
        before = []
    else:
        counter = facts.namer.fresh("_k")
        forward_index = reverse_index = A.load(counter)
        size = gast.Call(func=builtin("len"), args=[A.load(range_name)], keywords=[])
        before = [A.assign(counter, A.const(-1))]
        loop.body.insert(0, gast.AugAssign(target=A.store(counter), op=gast.Add(), value=A.const(1)))
        reverse.body.append(gast.AugAssign(target=A.store(counter), op=gast.Sub(), value=A.const(1)))
    make = A.load(facts.ref("value_stack", runtime.value_stack))
    before += [A.assign(stack, gast.Call(func=make, args=[A.deepcopy(size)], keywords=[])) for stack, _ in stacks]
    chosen = dict(stacks)
    for body, index, indexed in ((loop.body, forward_index, _written), (reverse.body, reverse_index, _read)):
        for i, s in enumerate(body):
            stack = (push_of(s) or (None,))[0] if body is loop.body else pop_of(s)
            if stack in chosen:
                body[i] = gast.copy_location(indexed(stack, chosen[stack], A.deepcopy(index)), s)
    return before, [stack for stack, _ in stacks]


def _indexed_by_trip(loop, reverse, facts):
    """Is the loop's variable its trip's slot: ``range(n)``, or ``range(c, n)`` with a small
    literal ``c``?"""
    (binding,) = [facts.parents[id(u)] for u in facts.uses[loop.iter.id] if not isinstance(u.ctx, gast.Load)]
    args = binding.value.args
    if len(args) == 1:
        return True
    start = args[0]
    return (len(args) == 2 and isinstance(start, gast.Constant) and type(start.value) is int
            and 0 <= start.value <= _SMALL_START)


def _written(stack, name, index):
    target = gast.Subscript(value=A.load(stack), slice=index, ctx=gast.Store())
    return gast.Assign(targets=[target], value=A.load(name), type_comment=None)


def _read(stack, name, index):
    return A.assign(name, gast.Subscript(value=A.load(stack), slice=index, ctx=gast.Load()))


def as_lists(parts, is_value_stack):
    """Copies of ``parts`` (lists of statements of one function: its forward and reverse
    sweeps) with the stacks ``array_stacks`` indexed as lists again: ``S = value_stack(n)`` ->
    ``S = []``, ``S[i] = x`` -> ``S.append(x)``, ``x = S[i]`` -> ``x = S.pop()``, and the
    counters' statements dropped. ``is_value_stack(name)``: does the name denote
    ``runtime.value_stack`` here? The copies share the statements they do not change (as
    ``A.copy_blocks``' do): ``parts`` are left as they were."""
    parts = [list(stmts) for stmts in parts]
    stmts = [s for part in parts for s in part]
    stacks = {s.targets[0].id for s in A.walk_statements(stmts) if isinstance(s, gast.Assign)
              and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Call)
              and isinstance(s.value.func, gast.Name) and is_value_stack(s.value.func.id)}
    if not stacks:
        return parts
    indices = {part[1].id for s in A.walk_statements(stmts) for part in (_stored_item(s, stacks), _read_item(s, stacks))
               if part is not None and isinstance(part[1], gast.Name)}
    dropped = {id(s) for found in _counter_statements(stmts, indices).values() for s in found}
    modules = [gast.Module(body=part, type_ignores=[]) for part in parts]
    for module in modules:
        _relist(module, stacks, dropped)
    return [module.body for module in modules]


def _counter_statements(stmts, names):
    """Of ``names``, those whose every binding is ``name = -1``, ``name += 1`` or ``name -= 1``
    (the counters ``array_stacks`` made), each with those statements: one walk for them all."""
    found, other = {name: [] for name in names}, set()
    for s in A.walk_statements(stmts):
        if isinstance(s, gast.Assign):
            for t in s.targets:
                if isinstance(t, gast.Name) and t.id in found:
                    if len(s.targets) == 1 and _minus_one(s.value):
                        found[t.id].append(s)
                    else:
                        other.add(t.id)
        elif isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name) and s.target.id in found:
            if isinstance(s.op, (gast.Add, gast.Sub)) and isinstance(s.value, gast.Constant) and s.value.value == 1:
                found[s.target.id].append(s)
            else:
                other.add(s.target.id)
    stores = collections.Counter(n.id for s in stmts for n in A.walk(s)
                                 if isinstance(n, gast.Name) and n.id in found and isinstance(n.ctx, gast.Store))
    return {name: statements for name, statements in found.items()
            if name not in other and statements and stores[name] == len(statements)}


def _minus_one(value):
    """Is ``value`` the literal -1 (as made, or as read back: ``-(1)``)?"""
    if isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.USub):
        value = value.operand
        return isinstance(value, gast.Constant) and type(value.value) is int and value.value == 1
    return isinstance(value, gast.Constant) and type(value.value) is int and value.value == -1


def _relist(node, stacks, dropped):
    """Rewrite the statement lists under ``node`` in place (see ``as_lists``), each statement
    changed, or holding one, a copy (``node``'s own lists are new)."""
    for field in ("body", "orelse", "finalbody"):
        stmts = getattr(node, field, None)
        if not isinstance(stmts, list):
            continue
        out = []
        for s in stmts:
            if id(s) in dropped:
                continue
            stored, read = _stored_item(s, stacks), _read_item(s, stacks)
            if stored is not None:
                push = gast.Attribute(value=A.load(stored[0]), attr="append", ctx=gast.Load())
                s = gast.copy_location(gast.Expr(value=gast.Call(func=push, args=[A.deepcopy(stored[2])],
                                                                 keywords=[])), s)
            elif read is not None:
                pop = gast.Attribute(value=A.load(read[0]), attr="pop", ctx=gast.Load())
                s = gast.copy_location(A.assign(read[2], gast.Call(func=pop, args=[], keywords=[])), s)
            elif (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and s.targets[0].id in stacks
                  and isinstance(s.value, gast.Call)):
                s = A.deepcopy(s)
                s.value = gast.List(elts=[], ctx=gast.Load())
            elif _holds_statements(s):
                s = copy.copy(s)  # (its lists are made anew below)
                _relist(s, stacks, dropped)
            out.append(s)
        setattr(node, field, out or ([gast.Pass()] if field == "body" else []))
    if getattr(node, "handlers", None):
        node.handlers = [copy.copy(handler) for handler in node.handlers]
        for handler in node.handlers:
            _relist(handler, stacks, dropped)


def _holds_statements(s):
    """Does ``s`` hold statement lists (a branch, a loop, ``try``, ``with``, a ``def``)?"""
    return any(isinstance(getattr(s, field, None), list) for field in ("body", "orelse", "finalbody", "handlers"))


def _stored_item(s, stacks):
    """``(stack, index, value)`` of ``stack[index] = value``."""
    if (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Subscript)
            and isinstance(s.targets[0].value, gast.Name) and s.targets[0].value.id in stacks):
        return s.targets[0].value.id, s.targets[0].slice, s.value
    return None


def _read_item(s, stacks):
    """``(stack, index, name)`` of ``name = stack[index]``."""
    if (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.Subscript) and isinstance(s.value.value, gast.Name)
            and s.value.value.id in stacks):
        return s.value.value.id, s.value.slice, s.targets[0].id
    return None
