"""Reverse transform: build the joint adjoint ``f_adjoint(*params, v)`` of a function in
A-normal form.

The result is a ``FunctionDef`` whose body is the *forward* sweep (the primal, plus trip
counters and ``Save`` placeholders) followed by the *reverse* sweep (rule instantiations
in reverse order, plus ``Restore`` placeholders), and finally ``return`` of the
gradients. The annotation ``"n_forward"`` says where the forward sweep ends. Placeholders
are decided by ``record_values`` (only values the reverse sweep reads are kept).

Adjoint variables are tracked statically: *zero* (no code yet: reading it drops the
rule), *owned* (a buffer only this variable refers to, updated in place), *shared* (may
alias the cotangent or another adjoint; copied before any in-place update) or *maybe*
(``None`` or a value, after control flow merges; guarded by ``is not None``).

This module walks the statements; the rooms it uses are ``reverse_state`` (adjoint states,
save/restore sites), ``reverse_loops``, ``reverse_calls`` (rules and the user's own
functions, bound by ``call_binding``; calls made for their effect refused by
``effect_refusals``) and ``reverse_stores`` (element updates and containers). The example runs the
whole pipeline: ``prove_finishes`` found that ``finish(dx, x)`` could only return ``dx``.

>>> import numpy as np
>>> from srcad.pipeline import Options, transform
>>> from srcad.passes.shapes import arg_spec
>>> def f(x):
...     return np.sin(x) * 2.0
>>> print(transform(f, Options(wrt=(0,), specs={"x": arg_spec(np.ones(3))})).joint_source.strip())
def f_adjoint(x, v=None):
    d_t2 = cotangent_like(v, (3,), 'float64')
    # line 2: return np.sin(x) * 2.0
    d_t1 = d_t2 * 2.0
    dx = d_t1 * np.cos(x)
    return dx
"""
import gast

from .. import astutil as A
from .. import registry
from ..errors import NoRuleError, no_attribute_rule
from ..rules import records
from .activity import scatter_add_args
from .in_place import argument_sharing_check, deep_copy, updated_parameters
from .jumps import is_break_guard
from .effect_refusals import refuse_helper_storing_outside, refuse_updating_a_default
from .reverse_calls import Calls, call_results
from .reverse_loops import Loops, binding_counts, mark_defined_before_loops
from .reverse_state import OWNED, SHARED, ZERO, AdjointState, Site, placeholder
from .reverse_stores import Stores, int_names, is_append, is_pop, mutated_names, split_tuple_results
from .shapes import Spec


class _Reverse(AdjointState, Loops, Calls, Stores):
    """The reverse transform of one function: the sweeps statement by statement."""

    def __init__(self, node, source, wrt, refs, callees):
        self.node = node
        self.source = source
        self.namer = A.anno(node, "namer")
        self.active = A.anno(node, "active")
        self.varied = A.anno(node, "varied") or set()
        self.specs = A.anno(node, "specs") or {}
        # lists, tuples and dicts: known from the code, or from the arguments' structure
        self.containers = A.anno(node, "containers") | (A.anno(node, "container_values") or set())
        # what a user's function returned may be a tuple: its adjoint is added item by item
        self.added_as_containers = self.containers | (call_results(node) - set(self.specs))
        self.wrt = wrt
        self.refs = refs
        self.callees = callees
        self.state = {}
        self.maybe_items = set()  # containers whose adjoint's items may be None (cotangent_items)
        self.adjoint_names = {}  # variable -> the name of its adjoint
        self.adjoint_of = {}  # ... and back
        self.split_items = split_tuple_results(node, A.anno(node, "item_specs") or {}, self.active, self.rule_of)
        self.item_of = {key: (name, k) for name, (keys, _) in self.split_items.items() for k, key in enumerate(keys)}
        self.sites = []
        self.int_names = int_names(node)
        self.updated_in_place = _sharing(mutated_names(node.body), A.anno(node, "views") or [])
        self.bindings = binding_counts(node)  # statements binding each name (before the sweeps add any)
        mark_defined_before_loops(node.body, {a.id for a in node.args.args})
        self.primal_callees = {}  # id(stmt) -> (backward name, residuals name, arguments, residuals site)
        self.block = None  # (statements, index) of the statement being reversed
        self.calls_by_block = {}  # id(statements) -> (statements, reusable calls): block_calls

    def site(self, kind, var, loops, index=None, origin=None):
        s = Site(len(self.sites), kind, var, index, bool(loops), origin)
        self.sites.append(s)
        return s

    def forward(self, stmts, loops=()):
        out = []
        unmarked = 0  # out[unmarked:] may lack an origin (made since the last statement with one)
        for s in stmts:
            origin = A.anno(s, "origin")
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                var = s.targets[0].id
                site = self.site("name", var, loops, origin=origin)
                A.set_anno(s, "site", site)
                out.append(placeholder("save", site))
                if is_pop(s.value):  # the reverse sweep pushes the popped value back
                    stack = s.value.func.value.id
                    A.set_anno(s, "pop_site", self.site("pop", stack, loops, index=A.load(var), origin=origin))
                out.extend(self.forward_assign(s, var, loops))
            elif isinstance(s, gast.Assign):  # S[index] = value
                target = s.targets[0]
                site = self.site("subscript", target.value.id, loops, index=target.slice, origin=origin)
                A.set_anno(s, "site", site)
                out.append(placeholder("save", site))
                out.append(s)
            elif isinstance(s, gast.Expr) and is_append(s):
                site = self.site("append", s.value.func.value.id, loops, origin=origin)
                A.set_anno(s, "site", site)
                out.append(s)
            elif isinstance(s, gast.Expr) and scatter_add_args(s) is not None:  # np.add.at(a, i, v)
                buffer, index, _ = scatter_add_args(s)
                site = self.site("subscript", buffer.id, loops, index=index, origin=origin)
                A.set_anno(s, "site", site)
                out.append(placeholder("save", site))
                out.append(s)
            elif isinstance(s, gast.If):
                if is_break_guard(s):
                    out.append(s)
                    continue
                out.append(gast.If(test=s.test, body=self.forward(s.body, loops) or [gast.Pass()],
                                   orelse=self.forward(s.orelse, loops)))
            elif isinstance(s, (gast.For, gast.While)):
                out.extend(self.forward_loop(s, loops))
            else:
                out.append(s)
            if origin is not None:
                for new in out[unmarked:]:
                    if A.anno(new, "origin") is None:
                        A.set_anno(new, "origin", origin)
                unmarked = len(out)
        return out

    def reverse(self, stmts):
        out = []
        last_line = None
        outer = self.block
        for k in reversed(range(len(stmts))):
            s = stmts[k]
            self.block = (stmts, k)  # where the statement is: the forward values available to its rule
            code = self.reverse_stmt(s)
            self.block = outer
            origin = A.anno(s, "origin")
            line = getattr(origin, "lineno", None)
            if code and line is not None and line != last_line and _has_code(code):
                out.append(A.comment(f"line {line}: {self.source.line(line).strip()}"))
                last_line = line
            out.extend(code)
        return out

    def reverse_stmt(self, s):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and is_pop(s.value):
            code = self.unpop(s.value.func.value.id, s.targets[0].id)
            return code + [placeholder("restore", A.anno(s, "pop_site")), placeholder("restore", A.anno(s, "site"))]
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and s.targets[0].id in self.split_items:
            items = self.split_items[s.targets[0].id][0]  # the rule reads them through read_item
            code = self.rule(s.targets[0].id, s) if any(self.get(k) != ZERO for k in items) else []
            self.state.update(dict.fromkeys(items, ZERO))
            return code + [placeholder("restore", A.anno(s, "site"))]
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            var = s.targets[0].id
            if var in self.active:  # (compiled apart: its updates go to copies)
                refuse_updating_a_default(self.source, s.value, A.anno(s, "origin") or s)
            owned = self.get(var) == OWNED
            code = self.guarded(var, lambda: self.rule(var, s)) if var in self.active else []
            if var not in self.active:  # the call runs as written: what it stores must not escape
                refuse_helper_storing_outside(self.source, s.value, self.varied, A.anno(s, "origin") or s)
            if owned:
                self.hand_on(var, code)
            self.state[var] = ZERO
            code.append(placeholder("restore", A.anno(s, "site")))
            if id(s) in self.primal_callees:  # the callee's residuals are a value like any other
                code.append(placeholder("restore", self.primal_callees[id(s)][3]))
            return code
        if isinstance(s, gast.Assign):
            target = s.targets[0]
            var = target.value.id
            code = []
            if var in self.active:
                code = self.guarded(var, lambda: self.subscript_store(var, target.slice, s.value), consume=False)
            return code + [placeholder("restore", A.anno(s, "site"))]
        if isinstance(s, gast.Expr) and is_append(s):
            var = s.value.func.value.id
            code = []
            if var in self.active:
                code = self.guarded(var, lambda: self.append(var, s.value.args[0]), consume=False)
            return code + [placeholder("restore", A.anno(s, "site"))]
        if isinstance(s, gast.Expr) and scatter_add_args(s) is not None:
            buffer, index, values = scatter_add_args(s)
            code = []
            if buffer.id in self.active and isinstance(values, gast.Name) and values.id in self.active:
                code = self.guarded(buffer.id, lambda: self.scatter_add(buffer.id, index, values.id), consume=False)
            return code + [placeholder("restore", A.anno(s, "site"))]
        if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
            self.check_effect_only_call(s)
            return []
        if isinstance(s, gast.If):
            if is_break_guard(s):
                return []
            return [self.branch(s.test, lambda: self.reverse(s.body), lambda: self.reverse(s.orelse))]
        if isinstance(s, (gast.For, gast.While)):
            return self.reverse_loop(s)
        return []

    def rule(self, var, s):
        rhs = s.value
        d = A.load(self.dname(var))
        if isinstance(rhs, gast.Name):
            return self.accumulate(rhs.id, d) if rhs.id in self.active else []
        if isinstance(rhs, (gast.Constant, gast.Compare, gast.JoinedStr)):
            return []
        if isinstance(rhs, (gast.Tuple, gast.List)):
            code = []
            for i, elt in enumerate(rhs.elts):
                if isinstance(elt, gast.Name) and elt.id in self.active:
                    item = gast.Subscript(value=A.load(self.dname(var)), slice=A.const(i), ctx=gast.Load())
                    code.extend(self.accumulate_maybe(elt.id, item) if var in self.maybe_items
                                else self.accumulate(elt.id, item))
            return code
        if isinstance(rhs, gast.Dict):
            code = []
            for key, value in zip(rhs.keys, rhs.values):
                if isinstance(value, gast.Name) and value.id in self.active:
                    item = gast.Subscript(value=A.load(self.dname(var)), slice=A.deepcopy(key), ctx=gast.Load())
                    code.extend(self.accumulate(value.id, item))
            return code
        if isinstance(rhs, gast.Subscript):
            return self.subscript_read(var, rhs)
        if isinstance(rhs, gast.BinOp):
            return self.apply(registry.VJP, type(rhs.op), var, [rhs.left, rhs.right], [], s,
                              f"the operator {type(rhs.op).__name__}")
        if isinstance(rhs, gast.UnaryOp):
            if isinstance(rhs.op, (gast.Not, gast.Invert)):
                return []
            return self.apply(registry.VJP, type(rhs.op), var, [rhs.operand], [], s,
                              f"the operator {type(rhs.op).__name__}")
        if isinstance(rhs, gast.Attribute):
            if rhs.attr in registry.NONDIFF_ATTRIBUTES:
                return []
            fn = registry.ATTRIBUTES.get(rhs.attr)
            spec = self.spec(rhs.value.id) if fn is None and isinstance(rhs.value, gast.Name) else None
            if isinstance(spec, Spec) and spec.python is None:  # an array: no field, and no rule (x.flat)
                raise NoRuleError(self.where(s) + no_attribute_rule(rhs.attr))
            if fn is None:  # a field of a named tuple or dataclass: checked when the code runs
                return self.apply(registry.VJP, records.field, var, [rhs.value, A.const(rhs.attr)], [], s,
                                  f"the attribute .{rhs.attr}")
            return self.apply(registry.VJP, fn, var, [rhs.value], [], s, f"the attribute .{rhs.attr}")
        if isinstance(rhs, gast.Call):
            return self.call_rule(var, rhs, s)
        raise self.source.syntax_error(f"srcad cannot differentiate {type(rhs).__name__}", s)


def _sharing(names, views):
    """``names`` and every name that may share memory with one of them (``views``:
    (view, base, statement) from the aliasing check)."""
    out = set(names)
    grown = True
    while grown:
        grown = False
        for view, base, _ in views:
            if (view in out) != (base in out):
                out |= {view, base}
                grown = True
    return out


def _bind_discarded_pops(stmts, namer):
    """``L.pop()`` for its effect becomes ``_poppedN = L.pop()``: the reverse sweep pushes
    the popped item's (zero) adjoint back, so ``L``'s adjoint stays aligned with ``L``."""
    for i, s in enumerate(stmts):
        if isinstance(s, gast.Expr) and is_pop(s.value):
            bound = gast.copy_location(A.assign(namer.fresh("_popped"), s.value), s)
            stmts[i] = A.set_anno(bound, "origin", A.anno(s, "origin"))
        elif isinstance(s, (gast.If, gast.For, gast.While)):
            _bind_discarded_pops(s.body, namer)
            _bind_discarded_pops(s.orelse, namer)


def _built_as_display(node, name):
    """Is ``name`` bound once, by a tuple or list display (``return h, cache``)?"""
    binds = [s for s in A.walk(node) if isinstance(s, (gast.Assign, gast.AugAssign, gast.For))
             and name in A.names_stored(s.targets[0] if isinstance(s, gast.Assign) else s.target)]
    return len(binds) == 1 and isinstance(binds[0], gast.Assign) and isinstance(binds[0].value, (gast.Tuple, gast.List))


def _line_comments(stmts, source):
    """``stmts`` with a ``# line N: ...`` comment before each run of statements made from the
    user's line N, in every block, loop bodies too (``sourcemap`` reads them: a warning or
    error inside a loop names the line in the loop, not the loop's header)."""
    out, last = [], None
    for s in stmts:
        line = getattr(A.anno(s, "origin"), "lineno", None)
        if line is not None and line != last and A.anno(s, "save") is None:
            at = len(out)
            while at and A.anno(out[at - 1], "save") is not None:  # before the statement's saves
                at -= 1
            out.insert(at, A.comment(f"line {line}: {source.line(line).strip()}"))
            last = line
        if isinstance(s, (gast.For, gast.While, gast.If)):
            s.body = _line_comments(s.body, source)
            s.orelse = _line_comments(s.orelse, source)
        out.append(s)
    return out


def _has_code(code):
    return any(A.anno(c, "restore") is None for c in code)


def reverse(node, source, wrt, refs, callees):
    """Build the joint adjoint of ``node`` (A-normal form, with activity); see module doc."""
    from .. import runtime

    _bind_discarded_pops(node.body, A.anno(node, "namer"))
    rv = _Reverse(node, source, wrt, refs, callees)
    body = list(node.body)
    ret = body.pop() if body and isinstance(body[-1], gast.Return) else gast.Return(value=A.const(None))
    params = [a.id for a in node.args.args]
    # differentiated integers are reals; arguments updated in place are copied first
    param_specs = A.anno(node, "param_specs") or {}
    # (not in srcad's own code: generated residuals keep their ints, a rule helper its axes)
    entry = [A.assign(p, rv.call("as_real", runtime.as_real, A.load(p))) for p in wrt
             if not (isinstance(param_specs.get(p), Spec) and param_specs[p].dtype.kind in "fc")
             and not source.is_srcads()]
    numbers = [p for p, spec in param_specs.items() if isinstance(spec, Spec) and spec.python is not None]
    checked, mutated, deep = updated_parameters(body, params, mutated_names(body), source,
                                                A.anno(node, "array_params") or (), numbers)
    sharing = argument_sharing_check(checked, params, source, refs, deep)
    entry = ([sharing] if sharing is not None else []) + entry  # (before as_real makes new arrays)
    entry += [A.assign(p, deep_copy(source, refs, p) if p in deep
                       else rv.call("copy_value", runtime.copy_value, A.load(p))) for p in sorted(mutated)]
    fwd = _line_comments(entry + rv.forward(body), source)
    out = ret.value
    v = rv.namer.unique("v")
    rev = []
    if isinstance(out, gast.Name) and out.id in rv.active:
        spec = rv.spec(out.id)
        if spec is not None and spec.python is None:  # checked against the known shape: y itself is not needed
            shape = gast.Tuple(elts=[A.const(n) for n in spec.shape], ctx=gast.Load())
            check = rv.call("cotangent_like", runtime.cotangent_like, A.load(v), shape, A.const(spec.dtype.name))
        elif _built_as_display(node, out.id) and not source.is_generated():
            # (a, b): a None item of v stays None, a zero the reverse sweep skips (no 0 · inf)
            check = rv.call("cotangent_items", runtime.cotangent_items, A.load(v), A.load(out.id))
            rv.maybe_items.add(out.id)
        else:
            check = rv.call("cotangent", runtime.cotangent, A.load(v), A.load(out.id))
        rev.append(A.assign(rv.dname(out.id), check))
        rv.state[out.id] = SHARED
    else:
        # bound, not called for its effect: the code srcad generates is valid srcad input
        rev.append(A.assign(rv.namer.fresh("_checked_v"), rv.call("cotangent", runtime.cotangent, A.load(v), out)))
    rev.extend(rv.reverse(body))
    grads = []
    for p in wrt:
        g = A.load(rv.dname(p)) if rv.get(p) != ZERO else A.const(None)
        finished = rv.call("finish", runtime.finish, g, A.load(p))
        if rv.get(p) not in (ZERO, OWNED):  # it may alias the cotangent or another gradient
            finished.args.append(A.const(True))
        grads.append(finished)
    result = grads[0] if len(grads) == 1 else gast.Tuple(elts=grads, ctx=gast.Load())
    rev.append(gast.Return(value=result))
    args = gast.arguments(
        args=[A.store(p) for p in params] + [A.store(v)], posonlyargs=[], vararg=None, kwonlyargs=[],
        kw_defaults=[], kwarg=None, defaults=[A.const(None)])
    for a in args.args:
        a.ctx = gast.Param()
    adj = gast.FunctionDef(name=f"{node.name}_adjoint", args=args, body=fwd + rev, decorator_list=[],
                           returns=None, type_comment=None, type_params=[])
    A.set_anno(adj, "n_forward", len(fwd))
    A.set_anno(adj, "output", out)
    A.set_anno(adj, "params", params)
    A.set_anno(adj, "cotangent", v)
    A.set_anno(adj, "namer", rv.namer)
    A.set_anno(adj, "wrt", tuple(wrt))
    A.set_anno(adj, "adjoint_names", set(rv.adjoint_names.values()))
    A.set_anno(adj, "adjoint_of", dict(rv.adjoint_of))
    A.set_anno(adj, "views", A.anno(node, "views") or [])
    A.set_anno(adj, "derivative_free", A.anno(node, "derivative_free") or frozenset())
    A.set_anno(adj, "specs", rv.specs)
    return adj
