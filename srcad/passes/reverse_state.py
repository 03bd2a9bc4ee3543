"""What the reverse transform tracks: the static state of each adjoint variable, and the
sites where the forward sweep overwrites a value the reverse sweep may read.

An adjoint is *zero* (no code yet: reading it drops the rule), *owned* (a buffer only this
variable refers to, updated in place), *shared* (may alias the cotangent or another adjoint;
copied before any in-place update) or *maybe* (``None`` or a value, after control flow
merges; guarded by ``is not None``). Where paths join, code brings each adjoint to one state.

>>> loop_entry_state(ZERO, OWNED, invariant=False, defined_before=True)
'owned'
>>> loop_entry_state(ZERO, SHARED, invariant=False, defined_before=False)
'maybe'
"""
import gast
import numpy as np

from .. import astutil as A
from .shapes import Spec, region_shape

ZERO, OWNED, SHARED, MAYBE = "zero", "owned", "shared", "maybe"


class Site:
    """A place where the forward sweep overwrites a value the reverse sweep may need."""

    def __init__(self, ident, kind, var, index=None, in_loop=False, origin=None):
        self.id, self.kind, self.var, self.index, self.in_loop = ident, kind, var, index, in_loop
        self.origin = origin


def placeholder(role, site):
    node = gast.Expr(value=A.const(f"{role} {site.var}"))
    A.set_anno(node, role, site)
    return node


class AdjointState:
    """Adjoint variables of ``_Reverse``: their names, states and the code that updates them
    (the handler protocol of ``template.instantiate``: is_active, read, read_item, accumulate,
    own, spec, rule_branch).

    ``split_items`` maps a tuple result whose adjoint is kept item by item to (the names of
    its items' adjoints, their specs); ``item_of`` maps each such name to (tuple, index)."""

    def dname(self, var):
        name = self.adjoint_names.get(var)
        if name is None:
            item = self.item_of.get(var)  # an item of a tuple result kept apart: d<tuple>_<k>
            name = self.namer.unique("d" + (var if item is None else f"{item[0]}_{item[1]}"))
            self.adjoint_names[var] = name
            self.adjoint_of[name] = var
        return name

    def primal(self, var):
        """The value whose adjoint ``var`` names: the variable, or an item of a tuple result."""
        item = self.item_of.get(var)
        if item is None:
            return A.load(var)
        return gast.Subscript(value=A.load(item[0]), slice=A.const(item[1]), ctx=gast.Load())

    def get(self, var):
        return self.state.get(var, ZERO)

    def fn(self, name, obj):
        return A.set_anno(A.load(self.refs(name, obj)), "denotes", obj)

    def call(self, name, obj, *args):
        return gast.Call(func=self.fn(name, obj), args=list(args), keywords=[])

    # the handler protocol of template.instantiate: is_active, read, read_item, accumulate, own, spec,
    # rule_branch

    def is_active(self, var):
        return var in self.active

    def spec(self, var):
        """The shape and dtype of ``var`` if known at generation time (``passes.shapes.Spec``)."""
        item = self.item_of.get(var)
        return self.specs.get(var) if item is None else self.split_items[item[0]][1][item[1]]

    def read(self, var):
        if var in self.split_items:  # read only through read_item (template.reads_result_by_item)
            raise AssertionError(f"srcad: the adjoint of {var} is kept item by item")
        if self.get(var) == ZERO:
            return None
        return A.load(self.dname(var))

    def read_item(self, result, k):
        """The adjoint of item ``k`` of the tuple result ``result`` where it is kept item by item
        (zeros of the item where that one is zero), else None: ``item_grad(d[y], k, y)``."""
        from .. import runtime

        var = result.id if isinstance(result, gast.Name) else None
        if var not in self.split_items:
            return None
        items = self.split_items[var][0]
        if not 0 <= k < len(items):
            raise AssertionError(f"srcad: item {k} of a {len(items)}-tuple")
        state = self.get(items[k])
        zeros = self.call("zeros_like", runtime.zeros_like, self.primal(items[k]))
        if state == ZERO:
            return zeros
        d = A.load(self.dname(items[k]))
        if state == MAYBE:
            test = gast.Compare(left=A.load(self.dname(items[k])), ops=[gast.Is()], comparators=[A.const(None)])
            return gast.IfExp(test=test, body=zeros, orelse=d)
        return d

    def accumulate(self, var, expr):
        from .. import runtime

        if self._real_valued(var) and self._may_be_complex(expr):
            # a real value's cotangent is real: the imaginary part of a complex contribution (from
            # z + r, r real) belongs to Im z, which r does not move
            numpy = A.set_anno(A.load(self.refs("np", np)), "denotes", np)
            expr = gast.Call(func=gast.Attribute(value=numpy, attr="real", ctx=gast.Load()), args=[expr], keywords=[])
        d = self.dname(var)
        state = self.get(var)
        container = self.maybe_container(var)
        if var in self.added_as_containers:  # a NumPy function that took a list as an array gives an array adjoint
            expr = self.call("container_grad", runtime.container_grad, expr, A.load(var))
        if state == ZERO:
            self.state[var] = OWNED if (_fresh(expr) and not container) else SHARED
            stmt = A.assign(d, expr)
            if not container and (_fresh(expr) or self.owned_adjoint(expr)):
                A.set_anno(stmt, "exclusive_origin", True)  # for passes.needless_copies
            return [stmt]
        if container:
            self.state[var] = SHARED if state == MAYBE else OWNED
            return [A.assign(d, self.call("add_grads", runtime.add_grads, A.load(d), expr))]
        if state in (OWNED, SHARED) and _is_full(expr):
            expr = expr.args[1]  # adding np.full(shape, s) (or full_of) to an adjoint of that shape adds s
        # adding -g is subtracting g: the same IEEE result (a - b is a + (-b)), one pass and no temporary less
        op, expr = (gast.Sub(), expr.operand) if _negation(expr) else (gast.Add(), expr)
        if state == OWNED and self.scalar_shaped(var):  # NumPy arithmetic makes a new scalar: no buffer to keep
            return [A.assign(d, gast.BinOp(left=A.load(d), op=op, right=expr))]
        if state == OWNED and not self.complex_valued(var):
            return [gast.AugAssign(target=A.store(d), op=op, value=expr)]
        if state == OWNED:  # its first part may be real (the adjoint of np.real(z)): no update in place
            return [A.assign(d, gast.BinOp(left=A.load(d), op=op, right=expr))]
        if state == SHARED:
            self.state[var] = OWNED
            return [A.assign(d, gast.BinOp(left=A.load(d), op=op, right=expr))]
        if isinstance(op, gast.Sub):
            expr = gast.UnaryOp(op=gast.USub(), operand=expr)
        # maybe: None or a value
        self.state[var] = SHARED
        return [A.assign(d, gast.IfExp(
                test=gast.Compare(left=A.load(d), ops=[gast.Is()], comparators=[A.const(None)]),
                body=expr, orelse=gast.BinOp(left=A.load(d), op=gast.Add(), right=A.deepcopy(expr))))]

    def complex_valued(self, var):
        spec = self.spec(var)
        return isinstance(spec, Spec) and spec.dtype.kind == "c"

    def _real_valued(self, var):
        spec = self.spec(var)
        return isinstance(spec, Spec) and spec.dtype.kind in "fiub"

    def _may_be_complex(self, expr):
        """Does ``expr`` read a complex value or the adjoint of one (by the shapes srcad knows)?"""
        return any(self.complex_valued(self.adjoint_of.get(name, name)) for name in A.names_read(expr))

    def accumulate_maybe(self, var, expr):
        """``accumulate`` of ``expr`` that may be None (an item of a cotangent for a tuple
        output): the adjoint becomes *maybe*, or is added to with ``add_grads`` (None is zero)."""
        from .. import runtime

        d = self.dname(var)
        state = self.get(var)
        if var in self.added_as_containers:
            expr = self.call("container_grad", runtime.container_grad, expr, A.load(var))
        if state == ZERO:
            self.state[var] = MAYBE
            return [A.assign(d, expr)]
        self.state[var] = MAYBE if state == MAYBE else SHARED
        return [A.assign(d, self.call("add_grads", runtime.add_grads, A.load(d), expr))]

    def stored_whole(self, var, index, value):
        """Is ``var[index] = value`` known to write ``value`` unbroadcast (the region's shape is
        the value's, both known when the code is generated)?"""
        spec = self.spec(value)
        if var in self.added_as_containers or not isinstance(spec, Spec) or spec.python is not None:
            return False
        return region_shape(var, index, self.specs) == spec.shape

    def hand_on(self, var, code):
        """``var``'s owned adjoint buffer, given whole to one other adjoint by ``code`` (``u = w``,
        ``u = w.copy()``: ``dw = du``) as ``var``'s adjoint ends here, is that adjoint's own:
        it may be updated in place without a copy. Only when ``code`` reads it once."""
        d = self.dname(var)
        reads = [n for n in A.walk(gast.Module(body=code, type_ignores=[])) if isinstance(n, gast.Name) and n.id == d]
        given = [s for s in code if isinstance(s, gast.Assign) and isinstance(s.value, gast.Name) and s.value.id == d
                 and isinstance(s.targets[0], gast.Name)]
        if len(reads) != 1 or len(given) != 1:
            return
        other = self.adjoint_of.get(given[0].targets[0].id)
        if other is not None and other != var and self.get(other) == SHARED:
            if not self.maybe_container(other) and not self.may_be_0d_array(other):
                self.state[other] = OWNED

    def owned_adjoint(self, expr):
        """Is ``expr`` the name of an owned adjoint of an array or number (a buffer no other
        live name refers to)?"""
        if not isinstance(expr, gast.Name):
            return False
        owner = self.adjoint_of.get(expr.id)  # adjoint names are unique (``dname``)
        return owner is not None and self.get(owner) == OWNED and not self.maybe_container(owner)

    def maybe_container(self, var):
        """May ``var`` hold a list, tuple or dict? Only a value known to be an array or a
        number has an adjoint that ``+`` adds (on a list ``+=`` would concatenate); any other
        is added by ``add_grads``, item by item."""
        return var in self.added_as_containers or not isinstance(self.spec(var), Spec)

    def own(self, var):
        """Make the adjoint of ``var`` a buffer that may be updated in place."""
        state = self.get(var)
        self.state[var] = OWNED
        return self.owned_from(var, state)

    def owned_from(self, var, state, buffer=True):
        """The code that makes the adjoint of ``var``, now in ``state``, an owned buffer: a
        private copy, and an ndarray where ``var`` may be a 0-d array (NumPy arithmetic on 0-d
        arrays gives scalars, and the cotangent may be a float: neither can be written into).

        Without ``buffer`` (a loop's entry and end: nothing is written into the adjoint but
        through ``own``), the owned adjoint of a value known to be a scalar may be an immutable
        number, which ``accumulate`` adds to out of place and ``own`` makes a buffer when one
        is written into."""
        from .. import runtime

        d = self.dname(var)
        zeros = self.call("zeros_like", runtime.zeros_like, self.primal(var))
        copy = self.call("copy_grad", runtime.copy_grad, A.load(d))
        if state == OWNED:
            value = A.load(d)
        elif state == ZERO:
            value = zeros
        elif state == SHARED:
            value = copy
        else:
            test = gast.Compare(left=A.load(d), ops=[gast.Is()], comparators=[A.const(None)])
            value = gast.IfExp(test=test, body=zeros, orelse=copy)
        if self.may_be_0d_array(var) and (buffer or not self.scalar_shaped(var)):
            value = self.call("grad_buffer", runtime.grad_buffer, value)
        elif state == OWNED:
            return []
        stmt = A.assign(d, value)
        if value is copy:
            A.set_anno(stmt, "ownership_copy", True)  # passes.needless_copies may drop it
        return [stmt]

    def scalar_shaped(self, var):
        """Is ``var`` known to have shape ``()`` (a NumPy scalar or a 0-d array, whose
        adjoint ``d + g`` adds into a new scalar)?"""
        spec = self.spec(var)
        return isinstance(spec, Spec) and spec.shape == () and var not in self.added_as_containers

    def may_be_0d_array(self, var):
        """Is ``var`` possibly a 0-d array (shape unknown, or ``()`` and not a Python number)?"""
        if var in self.added_as_containers:
            return False
        spec = self.spec(var)
        return spec is None or spec.shape == () and spec.python is None

    def guarded(self, var, make, consume=True):
        """Run ``make`` with ``d[var]`` live; wrap in ``is not None`` if it may be None."""
        state = self.get(var)
        if state == ZERO:
            return []
        if state != MAYBE:
            return make()
        d = self.dname(var)
        test = gast.Compare(left=A.load(d), ops=[gast.IsNot()], comparators=[A.const(None)])

        def live():
            self.state[var] = SHARED
            code = make()
            if consume:
                self.state[var] = ZERO
            return code

        def dead():
            if consume:
                self.state[var] = ZERO
            return []

        return [self.branch(test, live, dead)]

    def rule_branch(self, test, make_body, make_orelse):
        """A run-time ``if`` inside a rule template (handler protocol of template.instantiate)."""
        return self.branch(test, make_body, make_orelse)

    def branch(self, test, make_body, make_orelse):
        before = dict(self.state)
        body = make_body()
        after_body = self.state
        self.state = dict(before)
        orelse = make_orelse()
        after_orelse = self.state
        self.state = self.merge([(after_body, body), (after_orelse, orelse)])
        return gast.If(test=test, body=body or [gast.Pass()], orelse=orelse)

    def merge(self, branches):
        merged = {}
        for var in sorted(set().union(*(st for st, _ in branches))):  # sorted: generated code is deterministic
            states = [st.get(var, ZERO) for st, _ in branches]
            if all(s == states[0] for s in states):
                merged[var] = states[0]
                continue
            target = MAYBE if (ZERO in states or MAYBE in states) else SHARED
            for (st, code), s in zip(branches, states):
                if s == ZERO:
                    code.append(A.assign(self.dname(var), A.const(None)))
            merged[var] = target
        return merged

    def convert(self, var, have, want):
        if have == want and var in self.adjoint_names:  # (most calls: a loop brings every adjoint to its state)
            return []
        from .. import runtime

        d = self.dname(var)
        if have == want or want == SHARED and have == OWNED:
            return []
        if want == MAYBE:
            return [A.assign(d, A.const(None))] if have == ZERO else []
        if want == SHARED and have == ZERO:
            return [A.assign(d, self.call("zeros_like", runtime.zeros_like, self.primal(var)))]
        if want == OWNED:  # from ``have``, not the current state: a loop converts at its entry and its end
            return self.owned_from(var, have, buffer=False)
        raise AssertionError(f"cannot bring adjoint of {var} from {have} to {want}")


def loop_entry_state(a, b, invariant, defined_before):
    """The state an adjoint must have at the top of a reverse loop body (``a`` at entry,
    ``b`` at the end of the body)."""
    if a == b:
        return a
    if invariant and defined_before:  # not assigned in the loop: materialize a buffer once, before the loop
        return OWNED  # (only for a value bound before it: one bound only in an earlier loop may be unbound)
    if defined_before and a == ZERO and b in (OWNED, SHARED):
        return b  # carried by the loop and bound before it: zeros once, before the loop
    if ZERO in (a, b) or MAYBE in (a, b):
        return MAYBE
    return SHARED


def _is_full(expr):
    """``np.full(shape, s)``, or a rule's ``full_of(shape, s)`` (known by what its name denotes)."""
    from .. import runtime

    if not (isinstance(expr, gast.Call) and len(expr.args) == 2 and not expr.keywords):
        return False
    func = expr.func
    if isinstance(func, gast.Name):
        return A.anno(func, "denotes") is runtime.full_of
    return (isinstance(func, gast.Attribute) and func.attr == "full" and isinstance(func.value, gast.Name)
            and func.value.id == "np")


def _fresh(expr):
    """Does ``expr`` build a new value (so the adjoint may own it)?"""
    return isinstance(expr, (gast.BinOp, gast.UnaryOp))


def _negation(expr):
    """Is ``expr`` ``-g``?"""
    return isinstance(expr, gast.UnaryOp) and isinstance(expr.op, gast.USub)
