"""Batched pullbacks: the generated backward function rewritten to pull back a stack of
cotangents (a leading batch axis) in one call.

A batched adjoint is a different program, so this pass fails closed. A value is *batched*
when it depends on the cotangent; every operation on a batched value must be one this
module knows to compute, row by row, what the unbatched program computes for that row:

- elementwise ``+ - * /`` and unary minus, with the batched operand given axes of length
  1 after the batch axis where the other operand has more dimensions (NumPy aligns
  trailing axes: the batch axis must never meet one of the other operand's);
- ``@`` with one unbatched operand, and the runtime helpers ``matmul_dx``/``matmul_dy``,
  for operands of at most two dimensions; ``np.vdot`` with one unbatched operand;
- ``unbroadcast``, ``sum_to_reduced``, ``expand_reduced``, ``np.sum`` and ``.sum`` (axes
  shifted past the batch axis), ``np.reshape`` in C order, ``np.transpose`` and ``.T``,
  ``np.where`` with an unbatched condition, ``copy_grad``, ``grad_buffer``, ``add_grads``;
- reads, stores and in-place updates at basic indices (integers, slices, None, Ellipsis:
  the same positions in every row), checked when run;
- the cotangent check, zero adjoints (``zeros_like``) and ``finish`` of array or number
  arguments.

Anything else that touches a batched value (a call of another function, a method, an
attribute such as ``.shape``, a comparison, ``np.add.at``, an adjoint flowing into a
container, a user function's adjoint) makes ``batch_backward`` raise ``NotBatchable``;
a case the helpers find only when run (an array index, a Fortran-order reshape, a
matmul of stacks) raises ``batch_runtime.Unbatchable``. Either way the caller pulls back
one cotangent at a time, which is always right.

>>> import gast, numpy as np
>>> from srcad import astutil as A, runtime
>>> tree = gast.parse('''
... def f_backward(_saved, v=None):
...     x, y = _saved
...     dy = cotangent(v, y)
...     dx = unbroadcast(dy * np.cos(x), x)
...     return finish(dx, x)
... ''').body[0]
>>> known = {"cotangent": runtime.cotangent, "unbroadcast": runtime.unbroadcast, "finish": runtime.finish, "np": np}
>>> batched, helpers = batch_backward(tree, known.get)
>>> print(A.to_source(batched).strip())
def f_backward(_saved, v=None):
    x, y = _saved
    dy = batched_cotangent(v, y)
    dx = batched_unbroadcast(batched_left(mul, dy, np.cos(x)), x)
    return batched_finish(dx, x, v)
"""
import operator
import types

import gast
import numpy as np

from .. import astutil as A
from .. import batch_runtime as B
from .. import runtime as R
from ..rules.numpy_elementwise import broadcast_like


class NotBatchable(Exception):
    """The backward function does something the batched rewrite does not know to be exact."""


_ELEMENTWISE = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul, gast.Div: operator.truediv}

# call target -> (batched helper, positions that may hold an adjoint, most positional arguments)
_CALLS = {
    R.unbroadcast: (B.batched_unbroadcast, {0}, 2),
    R.rule_adjoint: (B.batched_rule_adjoint, {0}, 5),
    R.cotangent: (B.batched_cotangent, {0}, 2),
    R.cotangent_like: (B.batched_cotangent_like, {0}, 3),
    R.sum_to_reduced: (B.batched_sum_to_reduced, {0}, 4),
    R.expand_reduced: (B.batched_expand_reduced, {0}, 4),
    R.matmul_dx: (B.batched_matmul_dx, {0}, 3),
    R.matmul_dy: (B.batched_matmul_dy, {0}, 3),
    R.copy_grad: (R.copy_grad, {0}, 1),  # copies an array: right for a stack of them
    R.copy_value: (R.copy_value, {0}, 1),
    R.grad_buffer: (R.grad_buffer, {0}, 1),  # a batched value is an array already: returned as it is
    R.add_grads: (B.batched_add_grads, {0, 1}, 2),
    R.full_of: (B.batched_full_of, {1}, 2),
    R.container_grad: (B.batched_container_grad, {0}, 2),
    R.stored_adjoint: (B.batched_stored_adjoint, {0}, 3),
    R.transpose_back: (B.batched_transpose_back, {0}, 2),
    np.sum: (B.batched_sum, {0}, 2),
    np.reshape: (B.batched_reshape, {0}, 3),
    np.transpose: (B.batched_transpose, {0}, 2),
    np.broadcast_to: (B.batched_broadcast_to, {0}, 2),
    np.where: (B.batched_where, {1}, 3),
    np.matmul: (B.batched_matmul_right, {0}, 2),
    np.vdot: (B.batched_vdot_left, {0}, 2),
    broadcast_like: (B.batched_broadcast_like, {0}, 2),
}
# the same call with the adjoint at another position
_EITHER = {np.where: {2: B.batched_where_else}, np.matmul: {1: B.batched_matmul_left},
           np.vdot: {1: B.batched_vdot_right}}
_KEYWORDS = {np.sum: ("axis", "keepdims"), np.reshape: ("order",), np.transpose: ("axes",)}
_METHODS = {"sum": (B.batched_sum, ("axis", "keepdims"))}


def batch_backward(tree, resolve):
    """The batched version of the generated backward function ``tree`` (a gast ``FunctionDef``
    ``f_backward(_saved, v=None)``; not changed), and the helpers it adds (name -> object).

    Guarantees: called with the same saved values and a cotangent array of shape
    ``(B,) + y.shape``, the result's rows are what ``tree`` returns for each row (gradients
    of shape ``(B,) + x.shape``), or a helper raises ``batch_runtime.Unbatchable``.
    ``resolve(name)`` gives the object a free name of the generated code denotes (None if
    unknown). Raises ``NotBatchable`` for anything outside the allowlist above.
    """
    return _Batcher(tree, resolve).run()


def _element_reads_assigned(tree):
    """``(tree, ids)``: ``tree`` with each element read written as a fact (``a: np.float64 =
    dR[i]``, from ``codegen``, for code differentiated again) a plain assignment, and the ids of
    those assignments. Unbatched, the element is a NumPy scalar, a value of its own that a
    later ``dR[i] = 0`` does not change; batched, it is a view of a column: copied
    (``_Batcher._assign``)."""
    ids = set()

    class Plain(gast.NodeTransformer):
        def visit_AnnAssign(self, node):
            if node.value is None or not isinstance(node.target, gast.Name):
                return node
            assign = gast.copy_location(gast.Assign(targets=[node.target], value=node.value, type_comment=None), node)
            ids.add(id(assign))
            return assign

    return Plain().visit(tree), ids


class _Batcher:
    def __init__(self, tree, resolve):
        self.tree, self.element_reads = _element_reads_assigned(A.deepcopy(tree))
        self.resolve = resolve
        self.cotangent = tree.args.args[1].id
        self.taken = A.all_names(tree)
        self.helpers = {}
        self.batched = self._batched_names()

    def run(self):
        self.tree.body = self._block(self.tree.body)
        return self.tree, self.helpers

    # ---- which names hold batched values -------------------------------------------

    def _batched_names(self):
        """Names that ever hold a value depending on the cotangent: one batched type per name
        for the whole function (loops and branches included), found by iterating to a fixpoint."""
        batched = {self.cotangent}
        stmts = list(A.walk_statements(self.tree.body))
        changed = True
        while changed:
            changed = False
            for s in stmts:
                if isinstance(s, (gast.Assign, gast.AugAssign)) and A.names_read(s.value) & batched:
                    targets = s.targets if isinstance(s, gast.Assign) else [s.target]
                    for t in targets:
                        base = _base_name(t)
                        if base is None:
                            raise NotBatchable("an adjoint stored into something other than a name")
                        if base not in batched:
                            batched.add(base)
                            changed = True
                buffer = self._scattered_into(s)
                if buffer is not None and A.names_read(s.value.args[2]) & batched and buffer not in batched:
                    batched.add(buffer)
                    changed = True
        return batched

    def _scattered_into(self, s):
        """The buffer a ``scatter_add(buffer, index, g)`` statement updates in place, or None."""
        if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) and self._callee(s.value.func) is R.scatter_add \
                and len(s.value.args) == 3 and isinstance(s.value.args[0], gast.Name) and not s.value.keywords:
            return s.value.args[0].id
        return None

    # ---- statements ------------------------------------------------------------------

    def _block(self, stmts):
        return [out for s in stmts for out in self._statement(s)]

    def _statement(self, s):
        if isinstance(s, gast.Assign):
            return [self._assign(s)]
        if isinstance(s, gast.AugAssign):
            return [self._augassign(s)]
        if isinstance(s, (gast.If, gast.While)):
            s.test = self._unbatched(s.test)
            s.body, s.orelse = self._block(s.body), self._block(s.orelse)
            return [s]
        if isinstance(s, gast.For):
            if A.names_stored(s.target) & self.batched:
                raise NotBatchable("a loop over adjoints")
            s.iter = self._unbatched(s.iter)
            s.body, s.orelse = self._block(s.body), self._block(s.orelse)
            return [s]
        if isinstance(s, gast.Return):
            return [gast.Return(value=self._returned(s.value))]
        if self._scattered_into(s) in self.batched:
            return [gast.Expr(value=self._scatter_add(s.value))]
        if isinstance(s, (gast.Expr, gast.Raise, gast.Pass, gast.Break, gast.Continue)):
            if A.names_read(s) & self.batched:
                raise NotBatchable(f"a statement {type(s).__name__} that reads an adjoint")
            return [s]
        raise NotBatchable(f"a statement {type(s).__name__}")

    def _assign(self, s):
        if len(s.targets) != 1:
            raise NotBatchable("a chained assignment")
        target = s.targets[0]
        if isinstance(target, gast.Name):
            if target.id not in self.batched:
                return s
            value, batched = self._expr(s.value)
            if not batched:
                value = self._batched_zero(s.value)
            elif id(s) in self.element_reads:
                value = self._call("copy_value", R.copy_value, [value])
            return A.assign(target, value)
        if isinstance(target, gast.Subscript) and _base_name(target) in self.batched:
            value, batched = self._expr(s.value)
            index = self._index(target.slice)
            if not batched:  # a slot cleared: 0 in every row
                if isinstance(s.value, gast.Call) and self._callee(s.value.func) is R.cleared_slot:
                    value = self._call("batched_cleared_slot", B.batched_cleared_slot, s.value.args)
                elif not (isinstance(s.value, gast.Constant) and s.value.value == 0):
                    raise NotBatchable("an unbatched value stored into an adjoint")
                return A.assign(gast.Subscript(value=self._target_base(target), slice=index, ctx=gast.Store()), value)
            return gast.Expr(value=self._call("batched_store", B.batched_store,
                                              [self._target_base(target), self._as_value(index), value]))
        if A.names_read(s) & self.batched or A.names_stored(target) & self.batched:
            raise NotBatchable("an adjoint in a structured assignment")
        return s

    def _augassign(self, s):
        base = _base_name(s.target)
        if base not in self.batched:
            return s
        value, batched = self._expr(s.value)
        op = type(s.op)
        if batched and op in (gast.Add, gast.Sub):
            if isinstance(s.target, gast.Name):
                aligned = self._call("aligned_batched", B.aligned_batched, [value, A.load(s.target.id)])
                return gast.AugAssign(target=s.target, op=s.op, value=aligned)
            helper = B.batched_add_at if op is gast.Add else B.batched_subtract_at
            return gast.Expr(value=self._call(helper.__name__, helper,
                                              [self._target_base(s.target),
                                               self._as_value(self._index(s.target.slice)), value]))
        if not batched and op in (gast.Mult, gast.Div) and isinstance(s.target, gast.Name):
            # scaling in place: a factor of more dimensions than a row is refused when run
            factor = self._call("batched_factor", B.batched_factor, [value, A.load(s.target.id)])
            return gast.AugAssign(target=s.target, op=s.op, value=factor)
        raise NotBatchable("an in-place update of an adjoint")

    def _scatter_add(self, call):
        buffer, index, value = call.args
        value, batched = self._expr(value)
        if not batched:
            raise NotBatchable("an unbatched value scattered into an adjoint")
        return self._call("batched_scatter_add", B.batched_scatter_add, [buffer, self._unbatched(index), value])

    def _target_base(self, target):
        if not isinstance(target.value, gast.Name):
            raise NotBatchable("a store through nested indexing")
        return A.load(target.value.id)

    def _batched_zero(self, value):
        """The batched form of an unbatched value assigned to an adjoint: ``None``, or a zero."""
        if isinstance(value, gast.Constant) and value.value is None:
            return value
        if isinstance(value, gast.Call) and self._callee(value.func) is R.grad_buffer and len(value.args) == 1:
            value = value.args[0]  # a batched zero is an array: a buffer already
        if isinstance(value, gast.Call) and self._callee(value.func) is R.zeros_like and len(value.args) == 1 \
                and not value.keywords and not A.names_read(value) & self.batched:
            return self._call("batched_zeros", B.batched_zeros, [A.load(self.cotangent), value.args[0]])
        raise NotBatchable("an adjoint given a value that does not depend on the cotangent")

    def _returned(self, value):
        if isinstance(value, gast.Tuple):
            return gast.Tuple(elts=[self._finished(e) for e in value.elts], ctx=gast.Load())
        return self._finished(value)

    def _finished(self, value):
        if not (isinstance(value, gast.Call) and self._callee(value.func) is R.finish and not value.keywords
                and len(value.args) in (2, 3)):
            raise NotBatchable("a gradient returned other than by finish")
        g, x, *shared = value.args
        g_new, batched = self._expr(g)
        if not batched and not (isinstance(g, gast.Constant) and g.value is None):
            raise NotBatchable("a gradient that does not depend on the cotangent")
        x = self._unbatched(x)
        return self._call("batched_finish", B.batched_finish,
                          [g_new, x, A.load(self.cotangent)] + [self._unbatched(a) for a in shared])

    # ---- expressions ---------------------------------------------------------------

    def _unbatched(self, node):
        """``node`` unchanged if it does not depend on the cotangent (``g is None`` counts as
        not: every row is None or none is)."""
        if not A.names_read(node) & self.batched:
            return node
        if (isinstance(node, gast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (gast.Is, gast.IsNot))
                and isinstance(node.comparators[0], gast.Constant) and node.comparators[0].value is None
                and isinstance(node.left, gast.Name)):
            return node
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
            node.operand = self._unbatched(node.operand)
            return node
        if isinstance(node, gast.BoolOp):
            node.values = [self._unbatched(v) for v in node.values]
            return node
        raise NotBatchable("a test or index that reads an adjoint")

    def _expr(self, node):
        """``(new node, batched)``."""
        if not A.names_read(node) & self.batched:
            return node, False
        if isinstance(node, gast.Name):
            return node, True
        if isinstance(node, gast.BinOp):
            return self._binop(node), True
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
            node.operand = self._expr(node.operand)[0]
            return node, True
        if isinstance(node, gast.Call):
            return self._call_site(node), True
        if isinstance(node, gast.Attribute) and node.attr == "T":
            value, batched = self._expr(node.value)
            return self._call("batched_transpose", B.batched_transpose, [value]), batched
        if isinstance(node, gast.Subscript):
            value, batched = self._expr(node.value)
            if not batched:
                raise NotBatchable("an index that reads an adjoint")
            return gast.Subscript(value=value, slice=self._index(node.slice), ctx=gast.Load()), True
        if isinstance(node, gast.Compare):
            return self._unbatched(node), False
        if isinstance(node, gast.IfExp):
            node.test = self._unbatched(node.test)
            branches = []
            for branch in (node.body, node.orelse):  # a branch that is no adjoint is None or a zero
                new, batched = self._expr(branch)
                branches.append(new if batched else self._batched_zero(branch))
            node.body, node.orelse = branches
            return node, True
        raise NotBatchable(f"an expression {type(node).__name__} on an adjoint")

    def _binop(self, node):
        left, lb = self._expr(node.left)
        right, rb = self._expr(node.right)
        op = type(node.op)
        if op is gast.MatMult:
            if lb and rb:
                raise NotBatchable("a product of two adjoints")
            if lb:
                return self._call("batched_matmul_right", B.batched_matmul_right, [left, right])
            return self._call("batched_matmul_left", B.batched_matmul_left, [left, right])
        if op not in _ELEMENTWISE:
            raise NotBatchable(f"the operator {op.__name__} on an adjoint")
        fn = _ELEMENTWISE[op]
        name = self._ref(fn.__name__, fn)
        if lb and rb:
            return self._call("batched_both", B.batched_both, [A.load(name), left, right])
        if _is_number(right) or _is_number(left):  # a number broadcasts against any row
            return gast.BinOp(left=left, op=node.op, right=right)
        if lb:
            return self._call("batched_left", B.batched_left, [A.load(name), left, right])
        return self._call("batched_right", B.batched_right, [A.load(name), left, right])

    def _call_site(self, node):
        if isinstance(node.func, gast.Attribute) and A.names_read(node.func.value) & self.batched:
            return self._method(node)
        callee = self._callee(node.func)
        if callee is R.finish:  # a gradient's own adjoint (second order): finish of every row
            return self._finished(node)
        entry = _CALLS.get(callee) if _hashable(callee) else None
        if entry is None:
            raise NotBatchable(f"a call of {A.to_source(node.func).strip()} on an adjoint")
        helper, may_batch, most = entry
        if len(node.args) > most or any(isinstance(a, gast.Starred) for a in node.args):
            raise NotBatchable(f"a call of {A.to_source(node.func).strip()} with more positional arguments")
        positions = {i for i, a in enumerate(node.args) if A.names_read(a) & self.batched}
        if len(positions) == 1 and positions <= set(_EITHER.get(callee, {})):
            (position,) = positions
            helper, may_batch = _EITHER[callee][position], positions
        allowed = _KEYWORDS.get(callee, ())
        if any(k.arg not in allowed for k in node.keywords):
            raise NotBatchable("a call with keywords the batched helper does not take")
        args = []
        for i, a in enumerate(node.args):
            new, batched = self._expr(a)
            if batched and i not in may_batch:
                raise NotBatchable(f"an adjoint as argument {i} of {A.to_source(node.func).strip()}")
            args.append(new)
        keywords = [gast.keyword(arg=k.arg, value=self._unbatched(k.value)) for k in node.keywords]
        if helper is callee:
            node.args, node.keywords = args, keywords
            return node
        return self._call(helper.__name__, helper, args, keywords)

    def _method(self, node):
        entry = _METHODS.get(node.func.attr)
        if entry is None or node.args:
            raise NotBatchable(f"the method .{node.func.attr}() of an adjoint")
        helper, allowed = entry
        if any(k.arg not in allowed for k in node.keywords):
            raise NotBatchable("a method call with keywords the batched helper does not take")
        value = self._expr(node.func.value)[0]
        keywords = [gast.keyword(arg=k.arg, value=self._unbatched(k.value)) for k in node.keywords]
        return self._call(helper.__name__, helper, [value], keywords)

    def _index(self, index):
        """A per-example index as an index of the batched value: the batch axis first, whole;
        each part that is not literally basic is checked when run."""
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        out = [gast.Slice(lower=None, upper=None, step=None)]
        for p in parts:
            p = self._unbatched(p)
            out.append(p if _basic_literal(p) else self._call("batched_index_part", B.batched_index_part, [p]))
        return gast.Tuple(elts=out, ctx=gast.Load())

    def _as_value(self, index):
        """An index (a tuple that may hold slices) as an expression a call can take."""
        def part(p):
            if not isinstance(p, gast.Slice):
                return p
            bounds = [b if b is not None else A.const(None) for b in (p.lower, p.upper, p.step)]
            return self._call("slice", slice, bounds)

        return gast.Tuple(elts=[part(p) for p in index.elts], ctx=gast.Load())

    # ---- names -----------------------------------------------------------------------

    def _callee(self, func):
        """The object a call's function expression denotes (a name, or a module's attribute)."""
        if isinstance(func, gast.Name):
            return self.resolve(func.id)
        if isinstance(func, gast.Attribute):
            base = self._callee(func.value)
            if isinstance(base, types.ModuleType):
                return getattr(base, func.attr, None)
        return None

    def _call(self, name, obj, args, keywords=()):
        return gast.Call(func=A.load(self._ref(name, obj)), args=list(args), keywords=list(keywords))

    def _ref(self, name, obj):
        """A name for ``obj`` that no name of the function uses."""
        while (name in self.taken or name in self.helpers) and self.helpers.get(name) is not obj:
            name += "_"
        self.helpers[name] = obj
        return name


def _base_name(target):
    while isinstance(target, gast.Subscript):
        target = target.value
    return target.id if isinstance(target, gast.Name) else None


def _hashable(obj):
    try:
        hash(obj)
    except TypeError:
        return False
    return True


def _is_number(node):
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return isinstance(node, gast.Constant) and type(node.value) in (int, float)


def _basic_literal(node):
    """An index part that is an integer, None, Ellipsis or a slice as written."""
    if isinstance(node, gast.Slice):
        return True  # bounds that are not integers are NumPy's error, in every row alike
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        node = node.operand
    return isinstance(node, gast.Constant) and (node.value is None or node.value is Ellipsis
                                                 or type(node.value) is int)

