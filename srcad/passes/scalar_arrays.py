"""Scalar arrays: a small float vector of known length becomes one name per item.

For the numba backend. An RK4 step of a 3-state system makes a dozen 3-element arrays per
step and its adjoint as many: compiled, each costs an allocation that takes longer than the
arithmetic on it. Guarantee: afterwards every *vector* ``x`` of the generated function is
gone, each read, assignment, update and value stack of it replaced by those of its items
``x_0 ... x_{n-1}``; everything else is as it was. A local name is a vector when, fail
closed, each of these holds:

- every binding of it gives a new float64 array of one length n <= 8, by an allowlisted
  form: a copy of a vector, ``np.array`` of a display of numbers (the specs say float64),
  ``+ - * / **`` of vectors and numbers, a unary minus, ``zeros_like``/``full_of`` of the
  length, the split of a vector's adjoint into its items, a pop of its value stack, or the
  ``None`` placeholder; a parameter of that shape is read item by item, never made one;
- every use of it is an allowlisted form: an operand of such an operation, an item read
  or update at a literal index, a copy, a push on its own value stack, the argument of
  ``zeros_like``, or an argument of ``finish`` (where the array is made again);
- a copy ``x = y`` (or a push, or the split) makes two names share one array. Items are
  copied, not shared, so either the shared array is never updated in place through any
  name that shares it, or ``y`` is dead after the copy (its next occurrence in the block
  binds it afresh, or it lives only in this block).

A name that fails any of these, and every name it is copied to or from, stays an array.

>>> import gast, numpy as np
>>> from srcad import astutil as A
>>> from srcad.passes.shape_values import Spec
>>> from srcad.naming import Namer
>>> fn = gast.parse('''
... def f_adjoint(x, v=None):
...     _t1 = x * 2.0
...     _t1 += x
...     y = _t1
...     return finish(y, x)
... ''').body[0]
>>> _ = A.set_anno(fn, "specs", {"x": Spec((2,), np.float64), "_t1": Spec((2,), np.float64)})
>>> _ = A.set_anno(fn, "n_forward", 3)
>>> _ = A.set_anno(fn, "namer", Namer({"x", "_t1", "y", "v"}))
>>> from srcad import runtime
>>> _ = A.set_anno(fn.body[-1].value.func, "denotes", runtime.finish)
>>> print(A.to_source(scalar_arrays(fn)).strip())
def f_adjoint(x, v=None):
    _t1_0 = x[0] * 2.0
    _t1_1 = x[1] * 2.0
    _t1_0 = _t1_0 + x[0]
    _t1_1 = _t1_1 + x[1]
    y_0 = _t1_0
    y_1 = _t1_1
    _vector1 = full_of((2,), 0.0)
    _vector1[0] = y_0
    _vector1[1] = y_1
    return finish(_vector1, x)
"""
import gast
import numpy as np

from .. import astutil as A
from .. import runtime
from ..naming import BUILTIN
from .item_forms import callee_is, denotes, is_copy, leaves, literal_index, pop_of, push_of, takes_arrays
from .vector_facts import Facts


def scalar_arrays(node):
    """Replace the vectors of the generated function ``node`` (annotated ``"specs"`` by
    ``infer_shapes``) by their items; see the module doc. Returns ``node``."""
    facts = Facts(node)
    rewrite = _Rewrite(node, facts, facts.vectors())
    if rewrite.vectors or rewrite.numbers:
        rewrite.run()
        _drop_dead_values(node, rewrite.item_names | facts.split_lists())
    return node


def _drop_dead_values(fn, droppable):
    """Drop what nothing reads any more: the value stack (and ``None`` placeholder) of a name
    the reverse sweep does not read (the split of an adjoint read a list and an array for
    their types only; its items read neither), and then the pure assignments of the names in
    ``droppable`` (items, and the lists that were split) that nothing reads."""
    n_forward = A.anno(fn, "n_forward")
    if n_forward is None:
        return
    while True:
        stmts = list(A.every_statement(fn.body))
        reverse_reads = A.names_read(gast.Module(body=fn.body[n_forward:], type_ignores=[]))
        pushed = {}  # stack -> the names pushed on it
        for push in filter(None, map(push_of, stmts)):
            pushed.setdefault(push[0], set()).add(push[1])
        popped = {(pop_of(s), s.targets[0].id) for s in stmts if pop_of(s)}
        dead_stacks = {stack: name for stack, (name, *more) in pushed.items()
                       if not more and stack in reverse_reads and name not in reverse_reads
                       and {p for p in popped if p[0] == stack} <= {(stack, name)}}
        reads = {}
        for s in stmts:
            if (push_of(s) or (None,))[0] in dead_stacks or pop_of(s) in dead_stacks:
                continue
            for n in A.walk(s):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                    reads[n.id] = reads.get(n.id, 0) + 1

        def dead(s):
            if (push_of(s) or (None,))[0] in dead_stacks or pop_of(s) in dead_stacks:
                return True
            if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)):
                return False
            name = s.targets[0].id
            if name in dead_stacks:
                return isinstance(s.value, gast.List) and not s.value.elts
            if name in dead_stacks.values() and isinstance(s.value, gast.Constant) and s.value.value is None:
                return s in fn.body  # the placeholder its first push saved
            return name in droppable and not reads.get(name) and _pure(s.value)

        forward = A.drop_statements(fn.body[:n_forward], dead)
        fn.body = forward + A.drop_statements(fn.body[n_forward:], dead)
        n_forward = len(forward)
        A.set_anno(fn, "n_forward", n_forward)
        if sum(1 for _ in A.every_statement(fn.body)) == len(stmts):
            return


def _pure(expr):
    """Can an assignment of ``expr`` be dropped: names, numbers, displays of them, arithmetic
    and item reads (which raise nothing the program relied on: they only ever ran before)."""
    if isinstance(expr, (gast.List, gast.Tuple)):
        return all(map(A.is_atom, expr.elts))
    return leaves(expr) is not None


class _Rewrite:
    """Each statement on a vector as statements on its items (the module doc's guarantee)."""

    def __init__(self, fn, facts, vectors):
        self.fn, self.facts, self.vectors = fn, facts, vectors
        self.numbers = facts.numbers(vectors)
        namer = A.anno(fn, "namer")
        self.items = {v: [namer.unique(f"{v}_{i}") for i in range(n)] for v, n in sorted(vectors.items())}
        self.stacks = {stack: [namer.unique(f"_{item}_stack") for item in self.items[name]]
                       for name, stack, *_ in facts.push_sites if name in vectors}
        self.namer = namer
        self.item_names = {item for items in self.items.values() for item in items}

    def run(self):
        fn = self.fn
        n_forward = A.anno(fn, "n_forward")
        forward = self.block(fn.body[:n_forward]) if n_forward is not None else []
        rest = self.block(fn.body[n_forward:] if n_forward is not None else fn.body)
        fn.body = forward + rest
        if n_forward is not None:
            A.set_anno(fn, "n_forward", len(forward))

    def block(self, stmts):
        pushes = self._moved_pushes(stmts)
        out = []
        for s in stmts:
            if id(s) in pushes and pushes[id(s)] is None:
                continue  # moved down to the binding it saves the value before
            if self._snapshot_of_number(s):
                continue
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    setattr(s, field, self.block(inner))
            for handler in getattr(s, "handlers", ()):
                handler.body = self.block(handler.body)
            out.extend(self.statement(s, pushes.get(id(s)) or ()))
        return out

    def _moved_pushes(self, stmts):
        """``{id(push): None, id(binding): [push...]}``: a push of a vector moves to just before
        the next binding of it in the block (each item is pushed right before its assignment,
        as the numba lowering wants); a push with no later binding stays."""
        moved = {}
        for k, s in enumerate(stmts):
            push = self.push_of(s)
            if push is None:
                continue
            for later in stmts[k + 1:]:
                if isinstance(later, (gast.If, gast.For, gast.While, gast.Try, gast.With)) and \
                        push[1] in A.all_names(later):
                    break
                if push[1] in A.names_stored(later) or self._updates(later, push[1]):
                    moved[id(s)] = None
                    moved.setdefault(id(later), []).append(s)
                    break
        return moved

    def _snapshot_of_number(self, s):
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
                and is_copy(s.value) and isinstance(s.value.args[0], gast.Name)):
            return False
        name = s.targets[0].id
        return s.value.args[0].id == name and (name in self.numbers or name in self.vectors)

    def push_of(self, s):
        """``(stack, vector)`` of a push on a vector's value stack."""
        push = push_of(s)
        return push if push is not None and push[0] in self.stacks else None

    @staticmethod
    def _updates(s, name):
        target = s.target if isinstance(s, gast.AugAssign) else s.targets[0] if isinstance(s, gast.Assign) else None
        return isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) and target.value.id == name

    def statement(self, s, pushes):
        """The statements replacing ``s``; ``pushes``: pushes of the vector it binds, moved here."""
        vector_target = self._vector_target(s)
        if vector_target is None:
            push = self.push_of(s)
            if push is not None:
                return [self._push(push[0], i) for i in range(len(self.items[push[1]]))]
            return self._materialised(self._read_items(s))
        name, index = vector_target
        count = len(self.items[name])
        if index is not None:  # an update of one item: every item is pushed first
            return [self._push(self.push_of(p)[0], i) for p in pushes for i in range(count)] + [
                self._item_statement(s, name, index % count, True)]
        out = []
        for i in range(count):
            out.extend(self._push(self.push_of(p)[0], i) for p in pushes)
            out.append(self._item_statement(s, name, i, False))
        return out

    def _vector_target(self, s):
        """``(vector, None)`` for a statement binding a vector, ``(vector, index)`` for one updating an item."""
        target = s.target if isinstance(s, gast.AugAssign) else s.targets[0] if (
            isinstance(s, gast.Assign) and len(s.targets) == 1) else None
        if isinstance(target, gast.Name) and target.id in self.vectors:
            return target.id, None
        if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) \
                and target.value.id in self.vectors:
            return target.value.id, literal_index(target.slice)
        return None

    def _push(self, stack, i):
        item = self.items[next(iter(self.facts.pushes[stack]))][i]
        return gast.Expr(value=gast.Call(func=gast.Attribute(value=A.load(self.stacks[stack][i]), attr="append",
                                                            ctx=gast.Load()), args=[A.load(item)], keywords=[]))

    def _item_statement(self, s, name, i, one_item):
        """Item ``i``'s assignment for the statement ``s`` binding (or, ``one_item``, updating)
        the vector ``name``. An item is always a number of its own: an update is a new number
        (``x_0 = x_0 + y_0``, never ``+=``, which would change a 0-d array in place), and a
        name that could hold a 0-d array is read through ``+`` (a new number)."""
        item = A.store(self.items[name][i])
        if isinstance(s, gast.AugAssign):
            target = A.load(self.items[name][i])
            return A.assign(item, gast.BinOp(left=target, op=s.op, right=self._item_of(s.value, i, one_item)))
        rhs = s.value
        if one_item:
            return A.assign(item, self._number(self._item_of(rhs, i, True)))
        if isinstance(rhs, gast.Constant) and rhs.value is None:
            return A.assign(item, A.const(None))
        if isinstance(rhs, gast.Call):
            if callee_is(rhs, np.array):
                return A.assign(item, self._number(
                    gast.Subscript(value=A.load(rhs.args[0].id), slice=A.const(i), ctx=gast.Load()),
                    all(self._is_number(e) for e in self.facts.displayed(rhs.args[0].id))))
            if denotes(rhs.func, runtime.zeros_like):
                return A.assign(item, A.const(0.0))
            if denotes(rhs.func, runtime.full_of):
                return A.assign(item, self._number(A.deepcopy(rhs.args[1])))
            if is_copy(rhs):
                return A.assign(item, self._item_of(rhs.args[0], i, False))
            if denotes(rhs.func, runtime.container_grad):
                return A.assign(item, A.load(self.items[rhs.args[0].args[0].id][i]))
            stack = rhs.func.value.id  # a pop
            return A.assign(item, gast.Call(func=gast.Attribute(value=A.load(self.stacks[stack][i]), attr="pop",
                                                                ctx=gast.Load()), args=[], keywords=[]))
        return A.assign(item, self._item_of(rhs, i, False))

    def _number(self, expr, known=False):
        """``expr``, or ``+expr`` where it could be a 0-d array (shared, changeable in place)."""
        if known or self._is_number(expr):
            return expr
        return gast.UnaryOp(op=gast.UAdd(), operand=expr)

    def _is_number(self, expr):
        """Is ``expr`` certainly a number (a literal, an item, the result of arithmetic)?"""
        if isinstance(expr, (gast.Constant, gast.BinOp, gast.UnaryOp)):
            return True
        if isinstance(expr, gast.Name):
            return expr.id in self.item_names or self.facts.made_number(expr.id)
        return False

    def _item_of(self, expr, i, scalar):
        """Item ``i`` of an arithmetic expression of vectors and numbers (``scalar``: it is a
        number already, only its item reads change)."""
        if isinstance(expr, gast.Name):
            if scalar or expr.id not in self.vectors and self.facts._param_length(expr.id) is None:
                return A.deepcopy(expr)
            if expr.id in self.vectors:
                return A.load(self.items[expr.id][i])
            return gast.Subscript(value=A.load(expr.id), slice=A.const(i), ctx=gast.Load())
        if isinstance(expr, gast.Subscript) and isinstance(expr.value, gast.Name) and expr.value.id in self.vectors:
            return A.load(self.items[expr.value.id][literal_index(expr.slice) % self.vectors[expr.value.id]])
        if isinstance(expr, gast.BinOp):
            return gast.BinOp(left=self._item_of(expr.left, i, scalar), op=expr.op,
                              right=self._item_of(expr.right, i, scalar))
        if isinstance(expr, gast.UnaryOp):
            return gast.UnaryOp(op=expr.op, operand=self._item_of(expr.operand, i, scalar))
        return A.deepcopy(expr)

    def _read_items(self, s):
        """``s`` with its item reads of vectors (``v[1]``) read from the items, and a value
        stack of a vector made one per item."""
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name) \
                and s.targets[0].id in self.stacks:
            return [A.assign(stack, gast.List(elts=[], ctx=gast.Load())) for stack in self.stacks[s.targets[0].id]]
        vectors, items = self.vectors, self.items

        class Reads(A.Transformer):
            def visit_Subscript(self, node):
                if isinstance(node.value, gast.Name) and node.value.id in vectors and isinstance(node.ctx, gast.Load):
                    return A.load(items[node.value.id][literal_index(node.slice) % vectors[node.value.id]])
                return self.generic_visit(node)

        return [Reads().visit(s)]

    def _materialised(self, stmts):
        """Before a statement passing a vector to ``finish`` or to a NumPy function that
        returns a new value, the vector made an array again."""
        out = []
        for s in stmts:
            made = {}
            for call in A.walk(s):
                if takes_arrays(call):
                    for k, a in enumerate(call.args):
                        if isinstance(a, gast.Name) and a.id in self.vectors:
                            if a.id not in made:
                                made[a.id] = self.namer.fresh("_vector")
                                out.extend(self._array_of(made[a.id], a.id))
                            call.args[k] = A.load(made[a.id])
            out.append(s)
        return out

    def _array_of(self, array, vector):
        full_of = A.set_anno(A.load("full_of"), BUILTIN, ("full_of", runtime.full_of))
        n = self.vectors[vector]
        stmts = [A.assign(array, gast.Call(func=full_of, args=[gast.Tuple(elts=[A.const(n)], ctx=gast.Load()),
                                                                A.const(0.0)], keywords=[]))]
        for i, item in enumerate(self.items[vector]):
            stmts.append(A.assign(gast.Subscript(value=A.load(array), slice=A.const(i), ctx=gast.Store()),
                                  A.load(item)))
        return stmts

