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
from ..rules import numpy_shapes
from .shape_values import Spec

MAX_ITEMS = 8
_ARITHMETIC = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)
_TOP = "top"  # not a vector, and nothing copied to or from it is one
_SCALAR = "scalar"
_NONE = "none"


def scalar_arrays(node):
    """Replace the vectors of the generated function ``node`` (annotated ``"specs"`` by
    ``infer_shapes``) by their items; see the module doc. Returns ``node``."""
    facts = _Facts(node)
    rewrite = _Rewrite(node, facts, facts.vectors())
    if rewrite.vectors or rewrite.numbers:
        rewrite.run()
        _drop_dead_values(node)
    return node


def _drop_dead_values(fn):
    """Drop what nothing reads any more: the value stack (and ``None`` placeholder) of a name
    the reverse sweep does not read (the split of an adjoint read a list and an array for
    their types only; its items read neither), and then the pure assignments of a name
    nothing reads."""
    n_forward = A.anno(fn, "n_forward")
    keep = {a.id for a in fn.args.args} | set(A.all_names(A.anno(fn, "output") or gast.Pass()))
    while True:
        stmts = list(A.every_statement(fn.body))
        reverse_reads = set() if n_forward is None else A.names_read(gast.Module(body=fn.body[n_forward:],
                                                                                 type_ignores=[]))
        stacks = {}  # stack -> names pushed on it
        for s in stmts:
            push = _push_of(s)
            if push is not None:
                stacks.setdefault(push[0], set()).add(push[1])
        popped = {(_pop_of(s), s.targets[0].id) for s in stmts if _pop_of(s)}
        dead_stacks = {} if n_forward is None else {
            stack: name for stack, (name, *more) in stacks.items()
            if not more and name not in reverse_reads - {stack} and {p for p in popped if p[0] == stack} <= {(stack, name)}
            and A.names_read(gast.Module(body=fn.body[n_forward:], type_ignores=[])) >= {stack}}
        reads = {}
        for s in stmts:
            push = _push_of(s)
            if push and push[0] in dead_stacks:
                continue
            for n in A.walk(s):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and not (_pop_of(s) in dead_stacks):
                    reads[n.id] = reads.get(n.id, 0) + 1

        def dead(s):
            if _push_of(s) and _push_of(s)[0] in dead_stacks or _pop_of(s) in dead_stacks:
                return True
            if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)):
                return False
            name = s.targets[0].id
            if name in dead_stacks:
                return isinstance(s.value, gast.List) and not s.value.elts
            if name in dead_stacks.values() and isinstance(s.value, gast.Constant) and s.value.value is None:
                return s in fn.body  # the placeholder its first push saved
            return name not in keep and not reads.get(name) and _pure(s.value)

        before = len(stmts)
        if n_forward is not None:
            forward = A.drop_statements(fn.body[:n_forward], dead)
            fn.body = forward + A.drop_statements(fn.body[n_forward:], dead)
            A.set_anno(fn, "n_forward", n_forward := len(forward))
        else:
            fn.body = A.drop_statements(fn.body, dead)
        if sum(1 for _ in A.every_statement(fn.body)) == before:
            return


def _pure(expr):
    """Can an assignment of ``expr`` be dropped: names, numbers, displays of them, arithmetic
    and item reads (which raise nothing the program relied on: they only ever ran before)."""
    if isinstance(expr, (gast.List, gast.Tuple)):
        return all(map(A.is_atom, expr.elts))
    return _leaves(expr) is not None


def _push_of(s):
    """``(stack, name)`` of ``stack.append(name)``."""
    if (isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) and isinstance(s.value.func, gast.Attribute)
            and s.value.func.attr == "append" and isinstance(s.value.func.value, gast.Name)
            and len(s.value.args) == 1 and isinstance(s.value.args[0], gast.Name) and not s.value.keywords):
        return s.value.func.value.id, s.value.args[0].id
    return None


def _pop_of(s):
    """The stack of ``name = stack.pop()``."""
    if (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.Call) and isinstance(s.value.func, gast.Attribute)
            and s.value.func.attr == "pop" and not s.value.args and isinstance(s.value.func.value, gast.Name)):
        return s.value.func.value.id
    return None


def _denotes(func, obj):
    return isinstance(func, gast.Name) and A.anno(func, "denotes") is obj


def _callee_is(call, obj):
    callee = A.anno(call, "callee")
    return callee is not None and getattr(callee, "obj", None) is obj


def _index(node):
    """The literal integer of a subscript's index, or None."""
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    if (isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and isinstance(node.operand, gast.Constant)
            and type(node.operand.value) is int):
        return -node.operand.value
    return None


# NumPy functions whose result is new memory (no view of an argument, nothing kept): a
# vector passed to one is made an array again for the call
_NEW_RESULTS = frozenset(map(id, (np.sum, np.mean, np.prod, np.dot, np.vdot, np.inner, np.outer, np.max, np.min,
                                  np.linalg.norm, np.cumsum, np.concatenate, np.stack)))


def _takes_arrays(call):
    """Is ``call`` one whose array arguments a vector may be made again for?"""
    if not isinstance(call, gast.Call):
        return False
    if _denotes(call.func, runtime.finish):
        return True
    obj = getattr(A.anno(call, "callee"), "obj", None)
    return obj is not None and (id(obj) in _NEW_RESULTS or isinstance(obj, np.ufunc))


def _is_copy(node):
    """Is ``node`` ``copy_value(x)``, a copy of a value that shares no memory with it?"""
    return (isinstance(node, gast.Call) and (_denotes(node.func, runtime.copy_value) or _callee_is(node, runtime.copy_value))
            and len(node.args) == 1 and not node.keywords)


def _number(node):
    return isinstance(node, gast.Constant) and type(node.value) in (int, float)



def _leaves(expr):
    """The atoms and item reads under an arithmetic expression, or None if it is something else."""
    if A.is_atom(expr) and not isinstance(expr, gast.Tuple):
        return [expr]
    if isinstance(expr, gast.Subscript) and isinstance(expr.value, gast.Name) and _index(expr.slice) is not None:
        return [expr]
    if isinstance(expr, gast.BinOp):
        left, right = _leaves(expr.left), _leaves(expr.right)
        return None if left is None or right is None else left + right
    if isinstance(expr, gast.UnaryOp) and isinstance(expr.op, (gast.USub, gast.UAdd)):
        return _leaves(expr.operand)
    if _scalar_call(expr):
        return [expr]
    return None


def _scalar_call(expr):
    """Is ``expr`` a ufunc's call on atoms (a number, when they are numbers)?"""
    return (isinstance(expr, gast.Call) and isinstance(getattr(A.anno(expr, "callee"), "obj", None), np.ufunc)
            and not expr.keywords and all(A.is_atom(a) for a in expr.args))


def _elementwise(expr):
    """Is every operation in the arithmetic expression ``expr`` one that acts item by item?"""
    if isinstance(expr, gast.BinOp):
        return isinstance(expr.op, _ARITHMETIC) and _elementwise(expr.left) and _elementwise(expr.right)
    if isinstance(expr, gast.UnaryOp):
        return _elementwise(expr.operand)
    return True


class _Facts:
    """Every binding and every use of every name of the function, by form."""

    def __init__(self, fn):
        self.specs = A.anno(fn, "specs") or {}
        self.adjoints = set(A.anno(fn, "adjoint_names") or ())
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

    def _use_leaves(self, expr, role, target):
        """An arithmetic expression's names as ``role`` (``operand`` or ``scalar``), its item
        reads as reads, a ufunc's arguments as arrays (a vector is made one for it)."""
        for leaf in _leaves(expr):
            if isinstance(leaf, gast.Call):
                self._use(leaf, "array", target)
            elif isinstance(leaf, gast.Subscript):
                self.uses.setdefault(leaf.value.id, []).append(("read", _index(leaf.slice)))
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
            if _takes_arrays(call):
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
        call = s.value
        if (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and call.func.attr == "append"
                and isinstance(call.func.value, gast.Name) and len(call.args) == 1
                and isinstance(call.args[0], gast.Name) and not call.keywords):
            stack, name = call.func.value.id, call.args[0].id
            self.pushes.setdefault(stack, set()).add(name)
            self.push_sites.append((name, stack, block, k))
            self.uses.setdefault(name, []).append(("push", stack))
            self.uses.setdefault(stack, []).append(("stack", None))
            return True
        return False

    def _update(self, s, target, stmt):
        value = s.value
        if isinstance(s, gast.AugAssign):
            value = gast.BinOp(left=A.deepcopy(target), op=s.op, right=s.value) if isinstance(s.op, _ARITHMETIC) else None
        if isinstance(target, gast.Name) and value is not None and _leaves(value) is not None:
            self.updated.add(target.id)
            self._bind(target.id, "arith", stmt, value)
            return self._use_leaves(s.value, "operand", target.id)
        if (isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) and _index(target.slice) is not None
                and value is not None and _leaves(value) is not None):
            name = target.value.id
            self.updated.add(name)
            self._bind(name, "item", stmt, _index(target.slice), value)
            return self._use_leaves(s.value, "scalar", name)
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
        if _is_copy(rhs) and isinstance(rhs.args[0], gast.Name) and rhs.args[0].id == name:
            return self._bind(name, "snapshot", s)  # a number's snapshot: dropped (``numbers``)
        if _is_copy(rhs) and _leaves(rhs.args[0]) is not None:
            rhs = rhs.args[0]  # a copy of an item is the item; of a vector, its items: nothing shared
        if _leaves(rhs) is not None:
            self._use_leaves(rhs, "operand", name)
            return self._bind(name, "arith", s, rhs)
        if isinstance(rhs, gast.Call) and not rhs.keywords:
            args = rhs.args
            if _callee_is(rhs, np.array) and len(args) == 1 and isinstance(args[0], gast.Name):
                self._use(args[0], "list", name)
                return self._bind(name, "array", s, args[0].id)
            if _denotes(rhs.func, runtime.zeros_like) and len(args) == 1 and isinstance(args[0], gast.Name):
                self._use(args[0], "zeros", name)
                return self._bind(name, "zeros", s, args[0].id)
            if (_denotes(rhs.func, runtime.full_of) and len(args) == 2 and isinstance(args[0], gast.Tuple)
                    and len(args[0].elts) == 1 and _index(args[0].elts[0]) is not None and A.is_atom(args[1])):
                self._use(args[1], "scalar", name)
                return self._bind(name, "full", s, _index(args[0].elts[0]), args[1])
            if (_denotes(rhs.func, runtime.cotangent_like) and len(args) == 3 and isinstance(args[1], gast.Tuple)
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
        if (_denotes(call.func, runtime.container_grad) and isinstance(inner, gast.Call)
                and _denotes(inner.func, numpy_shapes.array_grad) and len(inner.args) == 3 and not inner.keywords
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
                    return {}
            vectors = {n: k for n, k in kinds.items() if isinstance(k, int)}
            unsafe = self._unsafe(vectors)
            if not unsafe:
                return vectors
            forced |= unsafe

    def numbers(self, vectors):
        """Names always bound to a number made here (arithmetic, an item of a vector): a
        snapshot ``x = copy_value(x)`` of one copies nothing (numbers are never updated in
        place; the items of vectors are numbers, see ``_Rewrite._number``)."""
        found = set()
        for name, bindings in self.bindings.items():
            if name in vectors or not any(form == "snapshot" for form, *_ in bindings):
                continue
            if all(form in ("none", "pop", "snapshot") or form == "arith" and self._made_number(operands[0], vectors)
                   for form, s, *operands in bindings):
                found.add(name)
        return found

    def displayed(self, name):
        """The items of every list display ``name`` is bound to."""
        return [item for form, s, *operands in self.bindings.get(name, ()) if form == "display" for item in operands[0]]

    def made_number(self, name):
        """Is every binding of ``name`` arithmetic (a new number, never a 0-d array)?"""
        bindings = self.bindings.get(name, ())
        return bool(bindings) and all(
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
            return _SCALAR if isinstance(source, int) and -source <= _index(expr.slice) < source else _TOP
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
        if len(lengths) > 1 or not isinstance(expr.op, _ARITHMETIC):
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
        return isinstance(atom, gast.Name) and atom.id in self.adjoints  # an adjoint: a float

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
                if form == "arith" and v in {leaf.value.id for leaf in _leaves(operands[0])
                                             if isinstance(leaf, gast.Subscript)}:
                    unsafe.add(v)  # an item of itself: its items would be assigned one by one
                if form == "arith" and not _elementwise(operands[0]):
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
            push = self._push_of(s)
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
                and _is_copy(s.value) and isinstance(s.value.args[0], gast.Name)):
            return False
        name = s.targets[0].id
        return s.value.args[0].id == name and (name in self.numbers or name in self.vectors)

    def _push_of(self, s):
        if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) and isinstance(s.value.func, gast.Attribute) \
                and s.value.func.attr == "append" and isinstance(s.value.func.value, gast.Name) \
                and s.value.func.value.id in self.stacks:
            return s.value.func.value.id, s.value.args[0].id
        return None

    @staticmethod
    def _updates(s, name):
        target = s.target if isinstance(s, gast.AugAssign) else s.targets[0] if isinstance(s, gast.Assign) else None
        return isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) and target.value.id == name

    def statement(self, s, pushes):
        """The statements replacing ``s``; ``pushes``: pushes of the vector it binds, moved here."""
        vector_target = self._vector_target(s)
        if vector_target is None:
            push = self._push_of(s)
            if push is not None:
                return [self._push(push[0], i) for i in range(len(self.items[push[1]]))]
            return self._materialised(self._read_items(s))
        name, index = vector_target
        count = len(self.items[name])
        if index is not None:  # an update of one item: every item is pushed first
            return [self._push(self._push_of(p)[0], i) for p in pushes for i in range(count)] + [
                self._item_statement(s, name, index % count, True)]
        out = []
        for i in range(count):
            out.extend(self._push(self._push_of(p)[0], i) for p in pushes)
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
            return target.value.id, _index(target.slice)
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
            if _callee_is(rhs, np.array):
                return A.assign(item, self._number(
                    gast.Subscript(value=A.load(rhs.args[0].id), slice=A.const(i), ctx=gast.Load()),
                    all(self._is_number(e) for e in self.facts.displayed(rhs.args[0].id))))
            if _denotes(rhs.func, runtime.zeros_like):
                return A.assign(item, A.const(0.0))
            if _denotes(rhs.func, runtime.full_of):
                return A.assign(item, self._number(A.deepcopy(rhs.args[1])))
            if _is_copy(rhs):
                return A.assign(item, self._item_of(rhs.args[0], i, False))
            if _denotes(rhs.func, runtime.container_grad):
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
            return A.load(self.items[expr.value.id][_index(expr.slice) % self.vectors[expr.value.id]])
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
                    return A.load(items[node.value.id][_index(node.slice) % vectors[node.value.id]])
                return self.generic_visit(node)

        return [Reads().visit(s)]

    def _materialised(self, stmts):
        """Before a statement passing a vector to ``finish`` or to a NumPy function that
        returns a new value, the vector made an array again."""
        out = []
        for s in stmts:
            made = {}
            for call in A.walk(s):
                if _takes_arrays(call):
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
