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
    return finish(dx, x)
"""
import builtins
import inspect
import types

import gast

from .. import astutil as A
from .. import registry
from ..errors import NoRuleError
from ..template import bind, instantiate
from ..source import identifier
from .activity import scatter_add_args
from .normalize import is_break_guard
from .resolve_calls import method_call
from .shapes import Spec

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


class _CallSite:
    """Where a rule is being instantiated, for error messages."""

    def __init__(self, ctx, node, what):
        self.ctx, self.node, self.what = ctx, node, what

    def error(self, message):
        return self.ctx.source.syntax_error(message, self.node)


def _is_python_function(obj):
    obj = getattr(obj, "__srcad_function__", obj)
    return isinstance(obj, types.FunctionType)


class _Reverse:
    def __init__(self, node, source, wrt, refs, callees):
        self.node = node
        self.source = source
        self.namer = A.anno(node, "namer")
        self.active = A.anno(node, "active")
        self.varied = A.anno(node, "varied") or set()
        # lists, tuples and dicts: known from the code, or from the arguments' structure
        self.containers = A.anno(node, "containers") | (A.anno(node, "container_values") or set())
        self.wrt = wrt
        self.refs = refs
        self.callees = callees
        self.state = {}
        self.adjoint_names = {}
        self.sites = []
        self.int_names = _int_names(node)
        _mark_defined_before_loops(node.body, {a.id for a in node.args.args})
        self.specs = A.anno(node, "specs") or {}
        self.primal_callees = {}  # id(stmt) -> (backward name, saved name, wrt param names)

    # ---- adjoint variables ---------------------------------------------------------
    def dname(self, var):
        name = self.adjoint_names.get(var)
        if name is None:
            name = self.namer.unique("d" + var)
            self.adjoint_names[var] = name
        return name

    def get(self, var):
        return self.state.get(var, ZERO)

    def fn(self, name, obj):
        return A.load(self.refs(name, obj))

    def call(self, name, obj, *args):
        return gast.Call(func=self.fn(name, obj), args=list(args), keywords=[])

    # the handler protocol of template.instantiate: is_active, read, accumulate, own, spec, rule_branch
    def is_active(self, var):
        return var in self.active

    def spec(self, var):
        """The shape and dtype of ``var`` if known at generation time (``passes.shapes.Spec``)."""
        return self.specs.get(var)

    def read(self, var):
        if self.get(var) == ZERO:
            return None
        return A.load(self.dname(var))

    def accumulate(self, var, expr):
        from .. import runtime

        d = self.dname(var)
        state = self.get(var)
        container = var in self.containers
        if state == ZERO:
            self.state[var] = OWNED if (_fresh(expr) and not container) else SHARED
            return [A.assign(d, expr)]
        if container:
            self.state[var] = SHARED if state == MAYBE else OWNED
            return [A.assign(d, self.call("add_grads", runtime.add_grads, A.load(d), expr))]
        if state in (OWNED, SHARED) and _is_full(expr):
            expr = expr.args[1]  # adding np.full(shape, s) to an adjoint of that shape adds s
        if state == OWNED:
            return [gast.AugAssign(target=A.store(d), op=gast.Add(), value=expr)]
        if state == SHARED:
            self.state[var] = OWNED
            return [A.assign(d, gast.BinOp(left=A.load(d), op=gast.Add(), right=expr))]
        # maybe: None or a value
        self.state[var] = SHARED
        return [A.assign(d, gast.IfExp(
                test=gast.Compare(left=A.load(d), ops=[gast.Is()], comparators=[A.const(None)]),
                body=expr, orelse=gast.BinOp(left=A.load(d), op=gast.Add(), right=A.deepcopy(expr))))]

    def own(self, var):
        """Make the adjoint of ``var`` a buffer that may be updated in place."""
        from .. import runtime

        d = self.dname(var)
        state = self.get(var)
        self.state[var] = OWNED
        if state == OWNED:
            return []
        zeros = self.call("zeros_like", runtime.zeros_like, A.load(var))
        copy = self.call("copy_grad", runtime.copy_grad, A.load(d))
        if state == ZERO:
            return [A.assign(d, zeros)]
        if state == SHARED:
            return [A.assign(d, copy)]
        test = gast.Compare(left=A.load(d), ops=[gast.Is()], comparators=[A.const(None)])
        return [A.assign(d, gast.IfExp(test=test, body=zeros, orelse=copy))]

    # ---- forward sweep -------------------------------------------------------------
    def site(self, kind, var, loops, index=None, origin=None):
        s = Site(len(self.sites), kind, var, index, bool(loops), origin)
        self.sites.append(s)
        return s

    def forward(self, stmts, loops=()):
        out = []
        for s in stmts:
            origin = A.anno(s, "origin")
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                var = s.targets[0].id
                site = self.site("name", var, loops, origin=origin)
                A.set_anno(s, "site", site)
                out.append(placeholder("save", site))
                if _is_pop(s.value):  # the reverse sweep pushes the popped value back
                    stack = s.value.func.value.id
                    A.set_anno(s, "pop_site", self.site("pop", stack, loops, index=A.load(var), origin=origin))
                out.extend(self.forward_assign(s, var, loops))
            elif isinstance(s, gast.Assign):  # S[index] = value
                target = s.targets[0]
                site = self.site("subscript", target.value.id, loops, index=target.slice, origin=origin)
                A.set_anno(s, "site", site)
                out.append(placeholder("save", site))
                out.append(s)
            elif isinstance(s, gast.Expr) and _is_append(s):
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
            elif isinstance(s, gast.For):
                counter = None
                site = self.site("name", s.target.id, loops, origin=origin)
                A.set_anno(s, "site", site)
                out.append(placeholder("save", site))
                body = self.forward(s.body, loops + (s,))
                if any(isinstance(n, gast.Break) for n in gast.walk(gast.Module(body=s.body, type_ignores=[]))):
                    counter = self.namer.fresh("_n")
                    csite = self.site("name", counter, loops)
                    A.set_anno(s, "counter", (counter, csite))
                    out.append(placeholder("save", csite))
                    out.extend(_counter(counter, body))
                out.append(gast.For(target=s.target, iter=s.iter, body=body, orelse=[], type_comment=None))
            elif isinstance(s, gast.While):
                counter = self.namer.fresh("_n")
                csite = self.site("name", counter, loops)
                A.set_anno(s, "counter", (counter, csite))
                out.append(placeholder("save", csite))
                body = self.forward(s.body, loops + (s,))
                out.extend(_counter(counter, body))
                out.append(gast.While(test=s.test, body=body, orelse=[]))
            else:
                out.append(s)
            if origin is not None:
                for new in out:
                    if A.anno(new, "origin") is None:
                        A.set_anno(new, "origin", origin)
        return out

    def forward_assign(self, s, var, loops):
        rhs = s.value
        callee = A.anno(rhs, "callee") if isinstance(rhs, gast.Call) else None
        if (callee is None or callee.kind != "object" or var not in self.active
                or registry.lookup(registry.VJP, callee.obj) is not None
                or registry.is_nondifferentiable(callee.obj) or not _is_python_function(callee.obj)):
            return [s]
        # a call to the user's own Python function: run its forward sweep, keep its state
        fn = getattr(callee.obj, "__srcad_function__", callee.obj)
        try:
            bound = inspect.signature(fn).bind(*rhs.args, **{k.arg: k.value for k in rhs.keywords})
        except TypeError as exc:
            raise self.source.syntax_error(f"bad call to {callee.name}: {exc}", rhs) from None
        wrt = tuple(p for p, a in bound.arguments.items()
                    if isinstance(a, gast.Name) and a.id in self.active)
        if not wrt:
            return [s]
        container_params = tuple(p for p, a in bound.arguments.items()
                                 if isinstance(a, gast.Name) and a.id in self.containers)
        forward_fn, backward_fn = self.callees(fn, wrt, container_params, self.source, rhs)
        base = identifier(fn)  # a lambda's name is no identifier
        fwd_name = self.refs(f"{base}_forward", forward_fn)
        bwd_name = self.refs(f"{base}_backward", backward_fn)
        saved = self.namer.fresh(f"_{base}_saved")
        site = self.site("name", saved, loops)
        call = gast.Call(func=A.load(fwd_name), args=rhs.args, keywords=rhs.keywords)
        self.primal_callees[id(s)] = (bwd_name, saved, [bound.arguments[p] for p in wrt])
        target = gast.Tuple(elts=[A.store(var), A.store(saved)], ctx=gast.Store())
        return [placeholder("save", site), gast.Assign(targets=[target], value=call, type_comment=None)]

    # ---- reverse sweep -------------------------------------------------------------
    def reverse(self, stmts):
        out = []
        last_line = None
        for s in reversed(stmts):
            code = self.reverse_stmt(s)
            origin = A.anno(s, "origin")
            line = getattr(origin, "lineno", None)
            if code and line is not None and line != last_line and _has_code(code):
                out.append(A.comment(f"line {line}: {self.source.line(line).strip()}"))
                last_line = line
            out.extend(code)
        return out

    def reverse_stmt(self, s):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and _is_pop(s.value):
            code = self.unpop(s.value.func.value.id, s.targets[0].id)
            return code + [placeholder("restore", A.anno(s, "pop_site")), placeholder("restore", A.anno(s, "site"))]
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            var = s.targets[0].id
            code = self.guarded(var, lambda: self.rule(var, s)) if var in self.active else []
            self.state[var] = ZERO
            return code + [placeholder("restore", A.anno(s, "site"))]
        if isinstance(s, gast.Assign):
            target = s.targets[0]
            var = target.value.id
            code = []
            if var in self.active:
                code = self.guarded(var, lambda: self.subscript_store(var, target.slice, s.value), consume=False)
            return code + [placeholder("restore", A.anno(s, "site"))]
        if isinstance(s, gast.Expr) and _is_append(s):
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
        for var in set().union(*(st for st, _ in branches)):
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

    def reverse_loop(self, s):
        assigned = A.names_stored(gast.Module(body=s.body, type_ignores=[]))
        if isinstance(s, gast.For):
            assigned.add(s.target.id)
        entry = dict(self.state)
        start = dict(entry)
        snapshot = (dict(self.namer.counters), set(self.namer.taken), dict(self.adjoint_names))
        for _ in range(6):
            self.namer.counters, self.namer.taken, self.adjoint_names = (
                dict(snapshot[0]), set(snapshot[1]), dict(snapshot[2]))
            self.state = dict(start)
            body = self.reverse(s.body)
            end = self.state
            target = {}
            defined = A.anno(s, "defined_before") or set()
            for var in set(start) | set(end):
                a, b = start.get(var, ZERO), end.get(var, ZERO)
                target[var] = _join(a, b, var not in assigned, var in defined)
            if all(target[v] == start.get(v, ZERO) for v in target):
                break
            start = target
        pre = []
        for var, want in sorted(start.items()):
            pre.extend(self.convert(var, entry.get(var, ZERO), want))
        for var, want in sorted(start.items()):
            body.extend(self.convert(var, end.get(var, ZERO), want))
        self.state = dict(start)
        counter = A.anno(s, "counter")
        if isinstance(s, gast.For):
            rng = A.load(s.iter.id)
            if counter is not None:
                rng = gast.Subscript(value=rng, slice=gast.Slice(None, A.load(counter[0]), None), ctx=gast.Load())
            it = gast.Call(func=A.load("reversed"), args=[rng], keywords=[])
            loop = gast.For(target=A.store(s.target.id), iter=it, body=body or [gast.Pass()], orelse=[],
                            type_comment=None)
            post = [placeholder("restore", A.anno(s, "site"))]
        else:
            it = gast.Call(func=A.load("range"), args=[A.load(counter[0])], keywords=[])
            loop = gast.For(target=A.store(self.namer.fresh("_i")), iter=it, body=body or [gast.Pass()],
                            orelse=[], type_comment=None)
            post = []
        if counter is not None:
            post.append(placeholder("restore", counter[1]))
        return pre + [loop] + post

    def convert(self, var, have, want):
        from .. import runtime

        d = self.dname(var)
        if have == want or want == SHARED and have == OWNED:
            return []
        if want == MAYBE:
            return [A.assign(d, A.const(None))] if have == ZERO else []
        if want == SHARED and have == ZERO:
            return [A.assign(d, self.call("zeros_like", runtime.zeros_like, A.load(var)))]
        if want == OWNED:
            if have == ZERO:
                return [A.assign(d, self.call("zeros_like", runtime.zeros_like, A.load(var)))]
            if have == SHARED:
                return [A.assign(d, self.call("copy_grad", runtime.copy_grad, A.load(d)))]
            if have == MAYBE:
                return self.own(var)
        raise AssertionError(f"cannot bring adjoint of {var} from {have} to {want}")

    # ---- rules for one assignment --------------------------------------------------------
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
                    code.extend(self.accumulate(elt.id, item))
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
            if fn is None:
                raise NoRuleError(self.where(s) + f"no derivative rule for the attribute .{rhs.attr}; "
                                  "srcad.extend.register_attribute maps an attribute to a function with a rule")
            return self.apply(registry.VJP, fn, var, [rhs.value], [], s, f"the attribute .{rhs.attr}")
        if isinstance(rhs, gast.Call):
            return self.call_rule(var, rhs, s)
        raise self.source.syntax_error(f"srcad cannot differentiate {type(rhs).__name__}", s)

    def where(self, node):
        line = getattr(A.anno(node, "origin") or node, "lineno", None)
        text = self.source.line(line).strip() if line else ""
        return f"{self.source.filename}:{line}: in {text!r}: " if line else f"{self.source.filename}: "

    def call_rule(self, var, rhs, s):
        callee = A.anno(rhs, "callee")
        if id(s) in self.primal_callees:
            bwd, saved, args = self.primal_callees[id(s)]
            pullback = gast.Call(func=A.load(bwd), args=[A.load(saved), A.load(self.dname(var))], keywords=[])
            if len(args) == 1:  # one gradient comes back as itself, several as a tuple
                return self.accumulate(args[0].id, pullback)
            grads = self.namer.fresh("_g")
            code = [A.assign(grads, pullback)]
            for i, arg in enumerate(args):
                item = gast.Subscript(value=A.load(grads), slice=A.const(i), ctx=gast.Load())
                code.extend(self.accumulate(arg.id, item))
            return code
        if callee.kind == "method":
            if callee.name in registry.NONDIFF_METHODS:
                return []
            fn = registry.METHODS.get(callee.name)
            if fn is not None and registry.is_nondifferentiable(fn):
                return []
            if fn is None:
                raise NoRuleError(
                    self.where(s) + f"no derivative rule for the method .{callee.name}(); "
                    "srcad.extend.register_method maps a method to a function with a rule")
            return self.apply(registry.VJP, fn, var, [rhs.func.value] + rhs.args, rhs.keywords, s,
                              f"the method .{callee.name}()")
        obj = callee.obj
        if registry.is_nondifferentiable(obj):
            return []
        return self.apply(registry.VJP, obj, var, rhs.args, rhs.keywords, s, callee.name)

    def apply(self, table, key, var, args, keywords, s, what):
        rule = registry.lookup(table, key)
        if rule is None:
            if _is_python_function(key):
                raise NoRuleError(self.where(s) + f"{what} has no derivative rule")
            shown = what if "." in what else registry.describe(key)
            raise NoRuleError(
                self.where(s) + f"{what} ({registry.describe(key)}) has no derivative rule and no Python "
                f"source to differentiate. Register one with @srcad.extend.register_vjp({shown}), mark it "
                "with srcad.extend.register_nondifferentiable, or wrap the call in srcad.stop_gradient if "
                "no derivative should flow through it.")
        site = _CallSite(self, s, what)
        if any(k.arg == "out" and not (isinstance(k.value, gast.Constant) and k.value.value is None) for k in keywords):
            raise self.source.syntax_error(
                f"srcad does not differentiate {what} with out= (it writes into an existing array); "
                "assign the result instead", A.anno(s, "origin") or s)
        bound = bind(rule, args, keywords, site)
        return instantiate(rule, A.load(var), bound, self, self.namer, self.refs)

    def subscript_read(self, var, rhs):
        from .. import runtime

        base = rhs.value
        if not (isinstance(base, gast.Name) and base.id in self.active):
            return []
        d_base = self.dname(base.id)
        g = A.load(self.dname(var))
        if base.id in self.containers:
            code = self.own(base.id)
            item = gast.Subscript(value=A.load(d_base), slice=A.deepcopy(rhs.slice), ctx=gast.Load())
            added = self.call("add_grads", runtime.add_grads, item, g)
            code.append(A.assign(gast.Subscript(value=A.load(d_base), slice=A.deepcopy(rhs.slice),
                                                ctx=gast.Store()), added))
            return code
        code = self.own(base.id)
        if _basic_index(rhs.slice, self.int_names):
            target = gast.Subscript(value=A.load(d_base), slice=A.deepcopy(rhs.slice), ctx=gast.Store())
            code.append(gast.AugAssign(target=target, op=gast.Add(), value=g))
        else:
            index = _index_expr(rhs.slice)
            code.append(gast.Expr(value=self.call("scatter_add", runtime.scatter_add, A.load(d_base), index, g)))
        return code

    def subscript_store(self, var, index, value):
        from .. import runtime

        code = []
        d = self.dname(var)
        region = gast.Subscript(value=A.load(d), slice=A.deepcopy(index), ctx=gast.Load())
        if isinstance(value, gast.Name) and value.id in self.active:
            if var in self.containers:
                g = self.call("copy_value", runtime.copy_value, region)
            elif _basic_index(index, self.int_names):
                g = self.call("unbroadcast", runtime.unbroadcast,
                              self.call("copy_value", runtime.copy_value, region), A.load(value.id))
            else:  # an index array may repeat a position: only the write NumPy keeps counts
                g = self.call("stored_adjoint", runtime.stored_adjoint, A.load(d), _index_expr(index),
                              A.load(value.id))
            code.extend(self.accumulate(value.id, g))
        code.extend(self.own(var))
        code.append(A.assign(gast.Subscript(value=A.load(d), slice=A.deepcopy(index), ctx=gast.Store()),
                             A.const(0)))
        return code

    def scatter_add(self, var, index, values):
        """``np.add.at(var, index, values)``: each added value's adjoint is its slot's."""
        from .. import runtime

        gathered = gast.Subscript(value=A.load(self.dname(var)), slice=A.deepcopy(index), ctx=gast.Load())
        return self.accumulate(values, self.call("unbroadcast", runtime.unbroadcast, gathered, A.load(values)))

    def check_effect_only_call(self, s):
        """A call for its effect must not touch values that carry derivatives: srcad cannot
        see what it changes (an in-place method, a helper that fills an array)."""
        call = s.value
        callee = A.anno(call, "callee")
        if callee is None or (callee.kind == "object" and registry.is_nondifferentiable(callee.obj)):
            return
        if callee.kind == "method" and callee.name in registry.NONDIFF_METHODS:
            return
        operands = list(call.args) + [k.value for k in call.keywords]
        if callee.kind == "method":
            operands.append(call.func.value)
        touched = sorted({n.id for o in operands for n in gast.walk(o) if isinstance(n, gast.Name)} & self.varied)
        if touched:
            what = f".{callee.name}()" if callee.kind == "method" else f"{callee.name}(...)"
            raise self.source.syntax_error(
                f"srcad cannot see what the call {what} changes in '{touched[0]}', which carries a derivative; "
                "assign its result instead of calling it for its effect (or wrap the argument in "
                "srcad.stop_gradient if no derivative should flow)", A.anno(s, "origin") or s)

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


def _mutated_names(stmts):
    names = set()
    for s in gast.walk(gast.Module(body=stmts, type_ignores=[])):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript):
            names.add(s.targets[0].value.id)
        elif isinstance(s, gast.Expr) and _is_append(s):
            names.add(s.value.func.value.id)
        elif isinstance(s, gast.Assign) and _is_pop(s.value):
            names.add(s.value.func.value.id)
    return names


def _counter(name, body):
    """``name = 0`` before a loop and ``name = name + 1`` first in its body."""
    step = A.assign(name, gast.BinOp(left=A.load(name), op=gast.Add(), right=A.const(1)))
    body.insert(0, A.set_anno(step, "counter_init", True))
    return [A.set_anno(A.assign(name, A.const(0)), "counter_init", True)]


def _mark_defined_before_loops(stmts, defined):
    """Annotate each loop with the names bound on every path that reaches it."""
    defined = set(defined)
    for s in stmts:
        if isinstance(s, (gast.For, gast.While)):
            A.set_anno(s, "defined_before", set(defined))
            inner = defined | ({s.target.id} if isinstance(s, gast.For) else set())
            _mark_defined_before_loops(s.body, inner)
        elif isinstance(s, gast.If):
            defined |= _mark_defined_before_loops(s.body, defined) & _mark_defined_before_loops(s.orelse, defined)
        elif isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            defined.add(s.targets[0].id)
    return defined


def _join(a, b, invariant, defined_before):
    """The state an adjoint must have at the top of a reverse loop body (``a`` at entry,
    ``b`` at the end of the body)."""
    if a == b:
        return a
    if invariant:  # not assigned in the loop: materialize a buffer once, before the loop
        return OWNED
    if defined_before and a == ZERO and b in (OWNED, SHARED):
        return b  # carried by the loop and bound before it: zeros once, before the loop
    if ZERO in (a, b) or MAYBE in (a, b):
        return MAYBE
    return SHARED


def _is_full(expr):
    return (isinstance(expr, gast.Call) and isinstance(expr.func, gast.Attribute) and expr.func.attr == "full"
            and isinstance(expr.func.value, gast.Name) and expr.func.value.id == "np" and len(expr.args) == 2
            and not expr.keywords)


def _fresh(expr):
    """Does ``expr`` build a new value (so the adjoint may own it)?"""
    return isinstance(expr, (gast.BinOp, gast.UnaryOp))


def _has_code(code):
    return any(A.anno(c, "restore") is None for c in code)


def _is_append(s):
    return method_call(s.value, "append") and len(s.value.args) == 1


def _is_pop(rhs):
    """``L.pop()`` (no index): what generated value stacks do."""
    return method_call(rhs, "pop") and not rhs.args and not rhs.keywords



def _int_names(node):
    ints = set()
    changed = True
    while changed:
        changed = False
        for s in gast.walk(node):
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


def _basic_index(index, ints):
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


def _index_expr(index):
    """An index as a value (slices become ``slice(...)``) to pass to a helper."""
    if isinstance(index, gast.Slice):
        parts = [p if p is not None else A.const(None) for p in (index.lower, index.upper, index.step)]
        return gast.Call(func=A.load("slice"), args=[A.deepcopy(p) for p in parts], keywords=[])
    if isinstance(index, gast.Tuple):
        return gast.Tuple(elts=[_index_expr(e) for e in index.elts], ctx=gast.Load())
    return A.deepcopy(index)


def reverse(node, source, wrt, refs, callees):
    """Build the joint adjoint of ``node`` (A-normal form, with activity); see module doc."""
    from .. import runtime

    rv = _Reverse(node, source, wrt, refs, callees)
    body = list(node.body)
    ret = body.pop() if body and isinstance(body[-1], gast.Return) else gast.Return(value=A.const(None))
    params = [a.id for a in node.args.args]
    # differentiated integers are reals; arguments updated in place are copied first
    param_specs = A.anno(node, "param_specs") or {}
    entry = [A.assign(p, rv.call("as_real", runtime.as_real, A.load(p))) for p in wrt
             if not (isinstance(param_specs.get(p), Spec) and param_specs[p].dtype.kind in "fc")]
    mutated = _mutated_names(body) & set(params)
    entry += [A.assign(p, rv.call("copy_value", runtime.copy_value, A.load(p))) for p in sorted(mutated)]
    fwd = entry + rv.forward(body)
    fwd_lines = []
    last = None
    for s in fwd:
        line = getattr(A.anno(s, "origin"), "lineno", None)
        if line is not None and line != last and A.anno(s, "save") is None:
            fwd_lines.append(A.comment(f"line {line}: {source.line(line).strip()}"))
            last = line
        fwd_lines.append(s)
    fwd = fwd_lines
    out = ret.value
    v = rv.namer.unique("v")
    rev = []
    if isinstance(out, gast.Name) and out.id in rv.active:
        spec = rv.spec(out.id)
        if spec is not None and spec.python is None:  # checked against the known shape: y itself is not needed
            shape = gast.Tuple(elts=[A.const(n) for n in spec.shape], ctx=gast.Load())
            check = rv.call("cotangent_like", runtime.cotangent_like, A.load(v), shape, A.const(spec.dtype.name))
        else:
            check = rv.call("cotangent", runtime.cotangent, A.load(v), A.load(out.id))
        rev.append(A.assign(rv.dname(out.id), check))
        rv.state[out.id] = SHARED
    else:
        rev.append(gast.Expr(value=rv.call("cotangent", runtime.cotangent, A.load(v), out)))
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
    A.set_anno(adj, "views", A.anno(node, "views") or [])
    return adj
