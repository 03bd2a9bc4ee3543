"""Element updates and containers in the reverse transform: ``S[i] = e``, reads ``x[i]``,
``np.add.at``, ``L.append(e)`` and ``y = L.pop()``. An index of ints, slices, ``...`` and
``None`` only (``basic_index``) cannot repeat a position, so its adjoint is a plain ``+=``;
any other index goes through a helper that counts only the write NumPy keeps.

>>> import gast
>>> basic_index(gast.parse("x[i, 1:3]").body[0].value.slice, {"i"})
True
>>> basic_index(gast.parse("x[idx]").body[0].value.slice, {"i"})
False
"""
import builtins

import gast

from .. import astutil as A
from ..naming import builtin
from .callees import method_call
from .fresh import effect_targets
from .item_forms import reads_one_element
from .reverse_state import MAYBE, OWNED, ZERO


class Stores:
    """The element-update and container handling of ``_Reverse``."""

    def subscript_read(self, var, rhs):
        from .. import runtime

        base = rhs.value
        if not (isinstance(base, gast.Name) and base.id in self.active):
            return []
        g = A.load(self.dname(var))
        if base.id in self.split_items:  # x = t[k]: item k's own adjoint
            return self.accumulate(self.split_items[base.id][0][rhs.slice.value], g)
        d_base = self.dname(base.id)
        basic = basic_index(rhs.slice, self.int_names)
        # an item of a list, tuple or dict adds item by item; an index array (only an array
        # takes one) may repeat a position, so it scatters even where the base came from a container
        if basic and (base.id in self.added_as_containers or self.maybe_container(base.id)):
            if self.get(base.id) == ZERO and self.bound_by_callees_only(base.id):  # a user function's tuple
                self.state[base.id] = OWNED
                code = [A.assign(d_base, self.call("none_items", runtime.none_items, A.load(base.id)))]
            else:
                code = self.own(base.id)
            item = gast.Subscript(value=A.load(d_base), slice=A.deepcopy(rhs.slice), ctx=gast.Load())
            # a copy of the slot: add_grads returns its first argument where g is None, and a value
            # stored back into the array it views is one code differentiated again cannot save
            item = self.call("copy_value", runtime.copy_value, item)
            added = self.call("add_grads", runtime.add_grads, item, g)
            code.append(A.assign(gast.Subscript(value=A.load(d_base), slice=A.deepcopy(rhs.slice),
                                                ctx=gast.Store()), added))
            return code
        code = self.own(base.id)
        if basic:
            target = gast.Subscript(value=A.load(d_base), slice=A.deepcopy(rhs.slice), ctx=gast.Store())
            code.append(gast.AugAssign(target=target, op=gast.Add(), value=g))
        else:
            index = index_expr(rhs.slice)
            code.append(gast.Expr(value=self.call("scatter_add", runtime.scatter_add, A.load(d_base), index, g)))
        return code

    def bound_by_callees_only(self, var):
        """Is every binding of ``var`` a call of a user function srcad differentiates (whose
        backward takes a None item of its cotangent as zero)?"""
        binds = [s for s in A.walk_statements(self.node.body)
                 if isinstance(s, (gast.Assign, gast.AugAssign, gast.For)) and var in A.names_stored(
                     s.targets[0] if isinstance(s, gast.Assign) else s.target)]
        return bool(binds) and all(id(s) in self.primal_callees for s in binds)

    def subscript_store(self, var, index, value):
        from .. import runtime

        code = self.own(var)  # before reading: a 0-d adjoint may be a scalar until it is owned
        held = None
        d = self.dname(var)
        region = gast.Subscript(value=A.load(d), slice=A.deepcopy(index), ctx=gast.Load())
        if isinstance(value, gast.Name) and value.id in self.active:
            if basic_index(index, self.int_names) and self.stored_whole(var, index, value.id):
                g = self.element_or_copy(var, index, region)  # the region has the value's shape
            elif basic_index(index, self.int_names):  # unbroadcast leaves an item of a list as it is
                # a copy even of one element: unbroadcast may return it, which code differentiated
                # again would take for a view of the adjoint array
                g = self.call("unbroadcast", runtime.unbroadcast,
                              self.call("copy_value", runtime.copy_value, region), A.load(value.id))
            elif var in self.containers:  # a key of a dict
                g = self.call("copy_value", runtime.copy_value, region)
            else:  # an index array may repeat a position: only the write NumPy keeps counts
                g = self.call("stored_adjoint", runtime.stored_adjoint, A.load(d), index_expr(index),
                              A.load(value.id))
            if isinstance(index, gast.Slice) and self.maybe_container(var):  # L[a:b] = array: its rows
                g = self.call("stacked_grad", runtime.stacked_grad, g, A.load(value.id))
            g = self.stored_grad(var, g)
            if value.id == var:  # `S[idx] = S`: hold the region's cotangent, add it after zeroing
                held = self.namer.fresh("_g")
                code.append(A.assign(A.store(held), g))
            else:
                code.extend(self.accumulate(value.id, g))
        code.append(A.assign(gast.Subscript(value=A.load(d), slice=A.deepcopy(index), ctx=gast.Store()),
                             self.zero_slot(var, value, index)))
        if held:
            code.extend(self.accumulate(var, A.load(held)))
        return code

    def element_or_copy(self, var, index, region):
        """The adjoint ``region`` of ``var[index]`` as a value of its own: one element of a float
        array is a NumPy scalar already (marked ``"one_element"``, as ``record_values`` marks
        the forward sweep's, for code generation to write the fact down); else a copy."""
        from .. import runtime

        spec = self.spec(var)
        if getattr(getattr(spec, "dtype", None), "kind", None) == "f" and reads_one_element(spec, index, self.spec):
            return A.set_anno(region, "one_element", spec.dtype)
        return self.call("copy_value", runtime.copy_value, region)

    def stored_grad(self, var, g):
        """``g``, the adjoint of a value stored into ``var``, cut to zero at run time where ``var``
        holds integers or booleans (``into_dtype_of``); as it is where ``var`` is known to hold
        floats, or is a list, tuple or dict (which keep what they are given)."""
        from .. import runtime

        spec = self.spec(var)
        if var in self.containers or spec is not None and spec.dtype.kind in "fc":
            return g
        return self.call("into_dtype_of", runtime.into_dtype_of, g, A.load(var))

    def zero_slot(self, var, value, index):
        """What clears the slot ``value`` was stored into: ``0`` in an array; in a list, tuple
        or dict (or what is not known to be an array) ``runtime.cleared_slot``, which gives
        zeros shaped like a container ``value``, since later adjoints add to it item by item,
        and zeros like ``value`` for a slice (a list's slice takes no scalar)."""
        from .. import runtime

        if not self.maybe_container(var) and self.spec(var).python is None:
            return A.const(0)
        if isinstance(index, gast.Slice):
            return self.call("zeros_like", runtime.zeros_like, A.deepcopy(value))
        return self.call("cleared_slot", runtime.cleared_slot, A.deepcopy(value))

    def scatter_add(self, var, index, values):
        """``np.add.at(var, index, values)``: each added value's adjoint is its slot's."""
        from .. import runtime

        code = self.own(var) if self.may_be_0d_array(var) else []  # a float cannot be indexed
        gathered = gast.Subscript(value=A.load(self.dname(var)), slice=A.deepcopy(index), ctx=gast.Load())
        # a copy: a basic index gathers a view of d[var], which a reversed update of var (an
        # element store before the add) then changes in place
        gathered = self.call("copy_value", runtime.copy_value, gathered)
        return code + self.accumulate(values, self.call("unbroadcast", runtime.unbroadcast, gathered, A.load(values)))

    def append(self, var, value):
        code = self.own(var)
        pop = gast.Call(func=gast.Attribute(value=A.load(self.dname(var)), attr="pop", ctx=gast.Load()),
                        args=[], keywords=[])
        if isinstance(value, gast.Name) and value.id in self.active:
            code.extend(self.accumulate(value.id, pop))
        else:
            code.append(gast.Expr(value=pop))
        return code

    def unpop(self, stack, var):
        """The adjoint of ``var = stack.pop()``: push ``d[var]`` (or zeros) back onto ``d[stack]``,
        so it stays aligned with ``stack`` even where ``d[var]`` is zero."""
        from .. import runtime

        state = self.get(var) if var in self.active else ZERO
        self.state[var] = ZERO
        if stack not in self.active or (self.get(stack) == ZERO and state == ZERO):
            return []
        zeros = self.call("zeros_like", runtime.zeros_like, A.load(var))
        item = zeros if state == ZERO else A.load(self.dname(var))
        if state == MAYBE:
            test = gast.Compare(left=A.load(self.dname(var)), ops=[gast.Is()], comparators=[A.const(None)])
            item = gast.IfExp(test=test, body=zeros, orelse=A.load(self.dname(var)))
        push = gast.Attribute(value=A.load(self.dname(stack)), attr="append", ctx=gast.Load())
        return self.own(stack) + [gast.Expr(value=gast.Call(func=push, args=[item], keywords=[]))]


def split_tuple_results(node, item_specs, active, rule_of):
    """Tuple results whose adjoint the reverse pass keeps item by item: ``{name: (item
    adjoint keys, item specs)}``. Fail closed, by what is known safe: ``name`` is active, bound
    once, by a call whose rule (``rule_of(call)``) reads its result's adjoint only through
    ``item_grad(d[y], k, y)``, its items' shapes and dtypes are known, and every other read of
    it is ``x = name[k]`` with a literal ``k``, later in the same block (``s, logdet =
    np.linalg.slogdet(S)``). Then no tuple of zeros is made, and the result itself is not
    kept for the reverse sweep."""
    from ..template import reads_result_by_item

    candidates = {name for name in item_specs if name in active}
    if not candidates:
        return {}
    binds, reads, item_reads = {}, {}, {}
    for block in A.blocks(node.body):
        for i, s in enumerate(block):
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and s.targets[0].id in candidates:
                binds.setdefault(s.targets[0].id, []).append((id(block), i, s))
            if (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
                    and isinstance(s.value, gast.Subscript) and isinstance(s.value.value, gast.Name)
                    and s.value.value.id in candidates and isinstance(s.value.slice, gast.Constant)
                    and type(s.value.slice.value) is int):
                item_reads.setdefault(s.value.value.id, []).append((id(block), i, s.value.slice.value))
    stores = {}
    for n in A.walk(node):
        if isinstance(n, gast.Name) and n.id in candidates:
            table = reads if isinstance(n.ctx, gast.Load) else stores
            table[n.id] = table.get(n.id, 0) + 1
    split = {}
    for name in sorted(candidates):
        bound = binds.get(name, [])
        if len(bound) != 1 or stores.get(name) != 1 or name in A.names_stored(node.args):  # no other binding
            continue
        block, at, s = bound[0]
        if not isinstance(s.value, gast.Call):
            continue
        rule = rule_of(s.value)
        if rule is None or not reads_result_by_item(rule):
            continue
        items = item_specs[name]
        found = item_reads.get(name, [])
        if len(found) != reads.get(name, 0) or any(b != block or i <= at or not 0 <= k < len(items)
                                                   for b, i, k in found):
            continue
        split[name] = (tuple(f"{name}[{k}]" for k in range(len(items))), items)
    return split


def mutated_names(stmts):
    names = set()
    for s in A.every_statement(stmts):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript):
            names.add(s.targets[0].value.id)
        elif isinstance(s, gast.Expr) and is_append(s):
            names.add(s.value.func.value.id)
        elif isinstance(s, gast.Assign) and is_pop(s.value):
            names.add(s.value.func.value.id)
        elif isinstance(s, gast.Expr):  # w.sort(), np.copyto(w, ...): a parameter's is copied first
            names |= effect_targets(s)
    return names


def is_append(s):
    return method_call(s.value, "append") and len(s.value.args) == 1


def is_pop(rhs):
    """``L.pop()`` (no index): what generated value stacks do."""
    return method_call(rhs, "pop") and not rhs.args and not rhs.keywords


def int_names(node):
    ints = set()
    changed = True
    while changed:
        changed = False
        for s in A.every_statement(node.body):
            name = None
            if isinstance(s, gast.For) and isinstance(s.target, gast.Name):
                name = s.target.id
            elif isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and _is_int(s.value, ints):
                name = s.targets[0].id
            if name is not None and name not in ints:
                ints.add(name)
                changed = True
    return ints


def _is_int(e, ints):
    if isinstance(e, gast.Constant):
        return isinstance(e.value, int) and not isinstance(e.value, bool)
    if isinstance(e, gast.Name):
        return e.id in ints
    if isinstance(e, gast.BinOp) and isinstance(e.op, (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)):
        return _is_int(e.left, ints) and _is_int(e.right, ints)
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub):
        return _is_int(e.operand, ints)
    if isinstance(e, gast.Call):
        callee = A.anno(e, "callee")
        return callee is not None and callee.kind == "object" and callee.obj in (builtins.len, builtins.int)
    if isinstance(e, gast.Subscript) and isinstance(e.value, gast.Name):
        return e.value.id in ints  # an item of a shape tuple
    if isinstance(e, gast.Attribute):
        return e.attr in ("shape", "ndim", "size")
    return False


def basic_index(index, ints):
    """Ints, slices, ``...`` and ``None`` only: no repeated positions, ``+=`` is exact."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    for p in parts:
        if isinstance(p, gast.Slice):
            continue
        if isinstance(p, gast.Constant) and (p.value is None or p.value is Ellipsis or type(p.value) is int):
            continue
        if isinstance(p, gast.UnaryOp) and isinstance(p.operand, gast.Constant):
            continue
        if isinstance(p, gast.Name) and p.id in ints:
            continue
        return False
    return True


def index_expr(index):
    """An index as a value (slices become ``slice(...)``) to pass to a helper."""
    if isinstance(index, gast.Slice):
        parts = [p if p is not None else A.const(None) for p in (index.lower, index.upper, index.step)]
        return gast.Call(func=builtin("slice"), args=[A.deepcopy(p) for p in parts], keywords=[])
    if isinstance(index, gast.Tuple):
        return gast.Tuple(elts=[index_expr(e) for e in index.elts], ctx=gast.Load())
    return A.deepcopy(index)
