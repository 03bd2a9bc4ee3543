r"""Vector facts: which small float arrays of a generated function can be their items.

``passes.scalar_arrays`` replaces a *vector* (a local float64 array of a known length up to
``MAX_ITEMS``) by one name per item; this module decides, fail closed, which names are
vectors: every binding and use of every name of the function, by form, then the lengths
(an optimistic fixpoint for loops, then every unknown an array), then the vectors whose uses
or shared memory forbid it. The module doc of ``passes.scalar_arrays`` states the rules.

>>> import gast, numpy as np
>>> from srcad import astutil as A
>>> from srcad.passes.shape_values import Spec
>>> def facts(src):
...     fn = gast.parse(src).body[0]
...     return Facts(A.set_anno(fn, "specs", {"x": Spec((3,), np.float64)}))
>>> facts("def f(x):\n    a = x * 2.0\n    b = a\n    c = b * a").vectors()
{'a': 3, 'b': 3, 'c': 3}
>>> facts("def f(x):\n    a = x * 2.0\n    b = a\n    a += x\n    c = b * a").vectors()  # b sees the update
{}
"""
import gast
import numpy as np

from .. import astutil as A
from .. import runtime
from ..rules import numpy_shapes
from .item_forms import (ARITHMETIC, callee_is, denotes, elementwise, is_copy, leaves, literal_index, push_of,
                         takes_arrays)
from .shape_values import Spec

MAX_ITEMS = 8
_TOP = "top"  # not a vector, and nothing copied to or from it is one
_SCALAR = "scalar"
_NONE = "none"


class Facts:
    """Every binding and every use of every name of the function, by form."""

    def __init__(self, fn):
        self.specs = A.anno(fn, "specs") or {}
        self.kinds = {}  # name -> its kind, once ``vectors`` decided
        self.adjoint_of = A.anno(fn, "adjoint_of") or {}  # adjoint name -> the name it is the adjoint of
        self.params = {a.id for a in fn.args.args}
        output = A.anno(fn, "output")
        self.output = output.id if isinstance(output, gast.Name) else None
        self.bindings = {}  # name -> [(form, statement, operands...)]
        self.uses = {}  # name -> [(role, the name bound or the stack pushed to)]
        self.copies = []  # (target, source, block, position): two names that may share one array
        self.updated = set()  # names whose array an update in place changes
        self.pushes = {}  # stack -> names pushed on it
        self.push_sites = []  # (name, stack, block, position)
        self.direct = {}  # name -> [(block id, position)] of the statements it occurs in
        self.nested = {}  # name -> [(block id, position)] of the compound statements it occurs in
        self.top = id(fn.body)
        for block in A.blocks(fn.body):
            for k, s in enumerate(block):
                if isinstance(s, (gast.If, gast.For, gast.While, gast.Try, gast.With)):
                    for name in A.all_names(s):
                        self.nested.setdefault(name, []).append((id(block), k))
                    for name in self._compound(s):  # its test, target, iterable: read here
                        self.direct.setdefault(name, []).append((id(block), k))
                    continue
                for name in A.all_names(s):
                    self.direct.setdefault(name, []).append((id(block), k))
                self._statement(s, block, k)

    # -- gathering ------------------------------------------------------------------------

    def _bind(self, name, form, s, *operands):
        self.bindings.setdefault(name, []).append((form, s) + operands)

    def _use(self, node, role, target=None):
        for n in A.walk(node):
            if isinstance(n, gast.Name):
                self.uses.setdefault(n.id, []).append((role, target))

    def _useleaves(self, expr, role, target):
        """An arithmetic expression's names as ``role`` (``operand`` or ``scalar``), its item
        reads as reads, a ufunc's arguments as arrays (a vector is made one for it)."""
        for leaf in leaves(expr):
            if isinstance(leaf, gast.Call):
                self._use(leaf, "array", target)
            elif isinstance(leaf, gast.Subscript):
                self.uses.setdefault(leaf.value.id, []).append(("read", literal_index(leaf.slice)))
            else:
                self._use(leaf, role, target)

    def _other(self, node, s):
        """Names in a form of no vector: their bindings and uses count against them."""
        for n in A.walk(node):
            if isinstance(n, gast.Name):
                if isinstance(n.ctx, gast.Store):
                    self._bind(n.id, "other", s)
                else:
                    self.uses.setdefault(n.id, []).append(("other", None))

    def _compound(self, s):
        headers = {gast.If: ("test",), gast.While: ("test",), gast.For: ("target", "iter"), gast.Try: (),
                   gast.With: ("items",)}[type(s)]
        names = set()
        for field in headers:
            value = getattr(s, field)
            for part in value if isinstance(value, list) else [value]:
                self._other(part, s)
                names |= A.all_names(part)
        return names

    def _statement(self, s, block, k):
        if isinstance(s, gast.Expr) and self._push(s, block, k):
            return
        if isinstance(s, gast.AugAssign):
            return self._update(s, s.target, s)
        if isinstance(s, gast.Assign) and len(s.targets) == 1:
            target = s.targets[0]
            if isinstance(target, gast.Name):
                return self._assign(target.id, s.value, s, block, k)
            if isinstance(target, gast.Subscript):
                return self._update(s, target, s)
        if isinstance(s, (gast.Return, gast.Expr)) or isinstance(s, gast.Assign):
            return self._finishing(s)
        if not isinstance(s, (gast.Pass, gast.Break, gast.Continue)):
            self._other(s, s)

    def _finishing(self, s):
        """A statement of no vector form: a vector it passes to ``finish`` or to a NumPy
        function that returns a new value (``np.sum(v)``) is made an array again there."""
        exempt = set()
        for call in A.walk(s):
            if takes_arrays(call):
                for a in call.args:
                    if isinstance(a, gast.Name):
                        exempt.add(id(a))
                        self.uses.setdefault(a.id, []).append(("array", None))
        for n in A.walk(s):
            if isinstance(n, gast.Name) and id(n) not in exempt:
                if isinstance(n.ctx, gast.Store):
                    self._bind(n.id, "other", s)
                else:
                    self.uses.setdefault(n.id, []).append(("other", None))

    def _push(self, s, block, k):
        push = push_of(s)
        if push is not None:
            stack, name = push
            self.pushes.setdefault(stack, set()).add(name)
            self.push_sites.append((name, stack, block, k))
            self.uses.setdefault(name, []).append(("push", stack))
            self.uses.setdefault(stack, []).append(("stack", None))
            return True
        return False

    def _update(self, s, target, stmt):
        value = s.value
        if isinstance(s, gast.AugAssign):
            value = gast.BinOp(left=A.deepcopy(target), op=s.op, right=s.value) if isinstance(s.op, ARITHMETIC) else None
        if isinstance(target, gast.Name) and value is not None and leaves(value) is not None:
            self.updated.add(target.id)
            self._bind(target.id, "arith", stmt, value)
            return self._useleaves(s.value, "operand", target.id)
        if (isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) and literal_index(target.slice) is not None
                and value is not None and leaves(value) is not None):
            name = target.value.id
            self.updated.add(name)
            self._bind(name, "item", stmt, literal_index(target.slice), value)
            return self._useleaves(s.value, "scalar", name)
        self._other(s, s)

    def _assign(self, name, rhs, s, block, k):
        if isinstance(rhs, gast.Name):
            self.copies.append((name, rhs.id, block, k))
            self._use(rhs, "copy", name)
            return self._bind(name, "copy", s, rhs.id)
        if isinstance(rhs, gast.Constant) and rhs.value is None:
            return self._bind(name, "none", s)
        if isinstance(rhs, (gast.List, gast.Tuple)) and all(map(A.is_atom, rhs.elts)):
            self._use(rhs, "display", name)
            return self._bind(name, "display", s, rhs.elts)
        if is_copy(rhs) and isinstance(rhs.args[0], gast.Name) and rhs.args[0].id == name:
            return self._bind(name, "snapshot", s)  # a number's snapshot: dropped (``numbers``)
        if is_copy(rhs) and leaves(rhs.args[0]) is not None:
            rhs = rhs.args[0]  # a copy of an item is the item; of a vector, its items: nothing shared
        if leaves(rhs) is not None:
            self._useleaves(rhs, "operand", name)
            return self._bind(name, "arith", s, rhs)
        if isinstance(rhs, gast.Call) and not rhs.keywords:
            args = rhs.args
            if callee_is(rhs, np.array) and len(args) == 1 and isinstance(args[0], gast.Name):
                self._use(args[0], "list", name)
                return self._bind(name, "array", s, args[0].id)
            if denotes(rhs.func, runtime.zeros_like) and len(args) == 1 and isinstance(args[0], gast.Name):
                self._use(args[0], "zeros", name)
                return self._bind(name, "zeros", s, args[0].id)
            if (denotes(rhs.func, runtime.full_of) and len(args) == 2 and isinstance(args[0], gast.Tuple)
                    and len(args[0].elts) == 1 and literal_index(args[0].elts[0]) is not None and A.is_atom(args[1])):
                self._use(args[1], "scalar", name)
                return self._bind(name, "full", s, literal_index(args[0].elts[0]), args[1])
            if (denotes(rhs.func, runtime.cotangent_like) and len(args) == 3 and isinstance(args[1], gast.Tuple)
                    and not args[1].elts):
                self._use(rhs, "other", name)
                return self._bind(name, "number", s)  # the cotangent of a number: a float
            split = self._split(rhs)
            if split is not None:
                self.copies.append((name, split[0], block, k))
                self._use(A.load(split[0]), "split", name)
                self._use(A.load(split[1]), "split", name)
                self._use(A.load(split[2]), "display", name)
                return self._bind(name, "split", s, *split)
            if (isinstance(rhs.func, gast.Attribute) and rhs.func.attr == "pop" and not args
                    and isinstance(rhs.func.value, gast.Name)):
                self.uses.setdefault(rhs.func.value.id, []).append(("stack", None))
                return self._bind(name, "pop", s, rhs.func.value.id)
        self._bind(name, "other", s)
        self._finishing(rhs)

    @staticmethod
    def _split(call):
        """``(g, y, L)`` of ``container_grad(array_grad(g, L, y), L)``: the adjoint of ``y = np.array(L)`` by item."""
        inner = call.args[0] if len(call.args) == 2 else None
        if (denotes(call.func, runtime.container_grad) and isinstance(inner, gast.Call)
                and denotes(inner.func, numpy_shapes.array_grad) and len(inner.args) == 3 and not inner.keywords
                and all(isinstance(a, gast.Name) for a in inner.args + call.args[1:])
                and inner.args[1].id == call.args[1].id):
            return inner.args[0].id, inner.args[2].id, inner.args[1].id
        return None

    # -- deciding -------------------------------------------------------------------------

    def vectors(self):
        """``{name: length}`` of the names that become their items."""
        kinds, forced = {}, set()
        while True:
            for final in (False, True):  # optimistic first (loops), then every unknown is an array
                for _ in range(200):
                    new = {n: _TOP if n in forced else self._kind(n, kinds, final) for n in self.bindings}
                    if new == kinds:
                        break
                    kinds = new
                else:
                    self.kinds = {}
                    return {}
            vectors = {n: k for n, k in kinds.items() if isinstance(k, int)}
            unsafe = self._unsafe(vectors)
            if not unsafe:
                self.kinds = kinds
                return vectors
            forced |= unsafe

    def numbers(self, vectors):
        """Names always bound to a number made here (arithmetic, an item of a vector): a
        snapshot ``x = copy_value(x)`` of one copies nothing (numbers are never updated in
        place; the items of vectors are numbers, see ``scalar_arrays``)."""
        found = set()
        for name, bindings in self.bindings.items():
            if name in vectors or not any(form == "snapshot" for form, *_ in bindings):
                continue
            if self.kinds.get(name) == _SCALAR and all(
                    form in ("none", "pop", "snapshot") or form == "arith" and self._made_number(operands[0], vectors)
                    for form, s, *operands in bindings):
                found.add(name)
        return found

    def split_lists(self):
        """The lists whose arrays' adjoints are split into items (``container_grad(array_grad(g, L, y), L)``)."""
        return {operands[2] for bindings in self.bindings.values() for form, s, *operands in bindings
                if form == "split"}

    def displayed(self, name):
        """The items of every list display ``name`` is bound to."""
        return [item for form, s, *operands in self.bindings.get(name, ()) if form == "display" for item in operands[0]]

    def made_number(self, name):
        """Is every binding of ``name`` arithmetic on numbers (a new number, never an array, nor
        a 0-d array)?"""
        bindings = self.bindings.get(name, ())
        return bool(bindings) and self.kinds.get(name) == _SCALAR and all(
            form in ("number", "none", "pop", "snapshot") or form == "arith" and isinstance(
                operands[0], (gast.BinOp, gast.UnaryOp, gast.Call)) for form, s, *operands in bindings)

    def _made_number(self, expr, vectors):
        if isinstance(expr, gast.Subscript):
            return expr.value.id in vectors or self._param_length(expr.value.id) is not None
        return isinstance(expr, (gast.BinOp, gast.UnaryOp, gast.Call))

    def _param_length(self, name):
        spec = self.specs.get(name)
        if (name in self.params and name not in self.bindings and isinstance(spec, Spec) and spec.python is None
                and spec.dtype == np.float64 and len(spec.shape) == 1 and 1 <= spec.shape[0] <= MAX_ITEMS
                and name not in self.updated):
            return spec.shape[0]
        return None

    def _scalar_spec(self, name):
        spec = self.specs.get(name)
        return isinstance(spec, Spec) and spec.shape == () and spec.dtype.kind in "fiu" and spec.python is not bool

    def _operand(self, name, kinds, final):
        if name in self.params:
            if name in self.bindings:
                return _TOP
            return self._param_length(name) or (_SCALAR if self._scalar_spec(name) else _TOP)
        if self._scalar_spec(name):
            return _SCALAR
        if name not in self.bindings:
            return _TOP  # a global, a loop variable, a name of no form
        kind = kinds.get(name)
        if kind is None or kind == _NONE:  # nothing known yet, or only a placeholder so far
            return _TOP if final else None
        return kind

    def _expr_kind(self, expr, kinds, final):
        if isinstance(expr, gast.Constant):
            return _SCALAR if type(expr.value) in (int, float) else _TOP
        if isinstance(expr, gast.Name):
            return self._operand(expr.id, kinds, final)
        if isinstance(expr, gast.Call):
            parts = [self._expr_kind(a, kinds, final) for a in expr.args]
            return _TOP if _TOP in parts else None if None in parts else (
                _SCALAR if all(p == _SCALAR for p in parts) else _TOP)
        if isinstance(expr, gast.Subscript):
            source = self._operand(expr.value.id, kinds, final)
            if source is None:
                return None
            return _SCALAR if isinstance(source, int) and -source <= literal_index(expr.slice) < source else _TOP
        if isinstance(expr, gast.UnaryOp):
            if isinstance(expr.operand, gast.Constant):  # a negative literal
                return _SCALAR if type(expr.operand.value) in (int, float) else _TOP
            return self._expr_kind(expr.operand, kinds, final)
        parts = [self._expr_kind(expr.left, kinds, final), self._expr_kind(expr.right, kinds, final)]
        if _TOP in parts:
            return _TOP
        if None in parts:
            return None
        lengths = {k for k in parts if isinstance(k, int)}
        if not lengths:
            return _SCALAR
        if len(lengths) > 1 or not isinstance(expr.op, ARITHMETIC):
            return _TOP
        return lengths.pop()

    def _kind(self, name, kinds, final):
        if self._scalar_spec(name):
            return _SCALAR
        if name in self.params or name == self.output or name in self.pushes:
            return _TOP
        found = None
        for form, s, *operands in self.bindings[name]:
            kind = self._binding_kind(name, form, operands, kinds, final)
            if kind is None:
                if final:
                    return _TOP
                continue
            if found in (None, _NONE):
                found = kind if kind != _NONE or found is None else found
            elif kind not in (_NONE, found):
                return _TOP
        if isinstance(found, int):
            spec = self.specs.get(name)
            return found if spec is None or spec == Spec((found,), np.float64) else _TOP
        return _TOP if final and found is None else found

    def _binding_kind(self, name, form, operands, kinds, final):
        if form == "none":
            return _NONE
        if form == "number":
            return _SCALAR
        if form == "copy":
            kind = self._operand(operands[0], kinds, final)
            return _TOP if kind == _NONE else kind
        if form == "arith":
            return self._expr_kind(operands[0], kinds, final)
        if form == "array":
            length = self._display_length(operands[0])
            return length if length is not None and self.specs.get(name) == Spec((length,), np.float64) else _TOP
        if form == "zeros":
            kind = self._operand(operands[0], kinds, final)
            return kind if kind is None or isinstance(kind, int) else _TOP
        if form == "full":
            length, value = operands
            return length if 1 <= length <= MAX_ITEMS and self._float(value) else _TOP
        if form == "split":
            g, y = (self._operand(o, kinds, final) for o in operands[:2])
            if g is None or y is None:
                return None
            return g if isinstance(g, int) and g == y else _TOP
        if form in ("pop", "item", "snapshot"):
            return _NONE  # a value the name had, or an item of it: no kind of its own
        return _TOP  # "other", "display"

    def _float(self, atom):
        """Is ``atom`` a float (``full_of`` of it is a float array)?"""
        if isinstance(atom, gast.Constant):
            return type(atom.value) is float
        spec = self.specs.get(atom.id) if isinstance(atom, gast.Name) else None
        if isinstance(spec, Spec):
            return spec.shape == () and spec.dtype.kind == "f"
        primal = self.specs.get(self.adjoint_of.get(atom.id)) if isinstance(atom, gast.Name) else None
        return isinstance(primal, Spec) and primal.shape == () and primal.dtype.kind == "f"  # an adjoint of a float

    def _display_length(self, name):
        """The length of every list display ``name`` is bound to, if each item of each is a float."""
        lengths = set()
        for form, s, *operands in self.bindings.get(name, ()):
            if form == "display":
                if not all(self._float(item) for item in operands[0]):
                    return None
                lengths.add(len(operands[0]))
            elif form not in ("none", "pop"):
                return None
        length = lengths.pop() if len(lengths) == 1 else None
        return length if length is not None and 1 <= length <= MAX_ITEMS else None

    def _unsafe(self, vectors):
        """Vectors used or bound in a form not allowed for them, or sharing an array that an
        update in place changes."""
        unsafe = set()
        for v, n in vectors.items():
            for role, target in self.uses.get(v, ()):
                if role in ("operand", "copy", "zeros", "split") and target not in vectors:
                    unsafe.add(v)
                elif role == "read" and not -n <= target < n:
                    unsafe.add(v)
                elif role == "push" and not self._own_stack(target, v):
                    unsafe.add(v)
                elif role not in ("operand", "copy", "zeros", "split", "read", "push", "array"):
                    unsafe.add(v)
            for form, s, *operands in self.bindings[v]:
                if form == "item" and not -n <= operands[0] < n:
                    unsafe.add(v)
                if form == "pop" and not self._own_stack(operands[0], v):
                    unsafe.add(v)
                if form == "arith" and v in {leaf.value.id for leaf in leaves(operands[0])
                                             if isinstance(leaf, gast.Subscript)}:
                    unsafe.add(v)  # an item of itself: its items would be assigned one by one
                if form == "arith" and not elementwise(operands[0]):
                    unsafe.add(v)
                if form == "split" and (v in self.updated or any(r != "read" for r, _ in self.uses.get(v, ()))):
                    unsafe.add(v)  # a list of items in NumPy code: only ever read by item
        return unsafe | self._shared_and_updated(vectors)

    def _own_stack(self, stack, name):
        """Is ``stack`` a value stack of ``name`` alone: bound to ``[]``, pushed ``name``, popped into it?"""
        return (self.pushes.get(stack) == {name} and all(
            form == "display" and not operands[0] for form, s, *operands in self.bindings.get(stack, ()))
            and all(role == "stack" for role, _ in self.uses.get(stack, ()))
            and all(name == n for n, bindings in self.bindings.items() for form, s, *operands in bindings
                    if form == "pop" and operands[0] == stack))

    def _shared_and_updated(self, vectors):
        parent = {}

        def root(n):
            while parent.get(n, n) != n:
                n = parent[n]
            return n

        def is_vector(n):
            return n in vectors or self._param_length(n) is not None

        for target, source, block, k in self.copies:
            if is_vector(target) and is_vector(source) and not self._dead_after(source, block, k):
                parent[root(target)] = root(source)
        for name, stack, block, k in self.push_sites:
            if name in vectors and not self._dead_after(name, block, k):
                parent[root(stack)] = root(name)
        groups = {}
        for n in list(parent):
            groups.setdefault(root(n), {root(n)}).add(n)
        unsafe = set()
        for group in groups.values():
            if group & self.updated:
                unsafe |= group & set(vectors)
        return unsafe

    def _dead_after(self, name, block, k):
        """Is ``name`` dead after ``block[k]``: bound afresh where it next occurs in the block;
        or occurring nowhere after it, in the function's body, or in a block it occurs only in,
        bound afresh where it first occurs there (so no loop carries it around)?"""
        if name in self.params:
            return False
        direct = [p for b, p in self.direct.get(name, []) if b == id(block)]
        nested = [p for b, p in self.nested.get(name, []) if b == id(block)]
        later = sorted([(p, True) for p in direct if p > k] + [(p, False) for p in nested if p > k])
        if later:
            position, is_direct = later[0]
            return is_direct and _binds_afresh(block[position], name)
        if id(block) == self.top:
            return True
        # (a compound statement's own test or target is a direct occurrence in its block)
        return not nested and len(direct) == len(self.direct.get(name, [])) and _binds_afresh(block[min(direct)], name)


def _binds_afresh(s, name):
    return (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
            and s.targets[0].id == name and name not in A.names_read(s.value))


