"""Forward transform: build ``f_jvp(*params, *tangents) -> (y, y_dot)`` from a function in
A-normal form with activity.

The result is the primal statements in their order, each followed by the statements that
compute the tangents of what it assigns (instantiated from the ``t[...]`` rules of
``registry.JVP``). Branches and loops stay as they are, with tangent code inside; nothing
is saved. A tangent is tracked statically: *zero* (no variable exists: rules that read it
are dropped), *owned* (a buffer only this variable refers to) or *shared* (may alias the
caller's tangent or another tangent; copied before an in-place update). Where control flow
joins a path on which a tangent is zero with one on which it is live, the zero path gets
``x_dot = zeros_like(x)``: at the end of a branch, before a loop, or at the end of a loop
body. Element updates ``S[i] = e`` become ``S_dot[i] = e_dot``; ``L.append(e)`` and
``L.pop()`` are mirrored on ``L_dot``; displays become displays of tangents; calls of the
user's own Python functions call their own jvp (compiled once).

The returned tangent is shaped like the output (zeros if it does not depend on ``wrt``).

>>> import numpy as np
>>> from srcad.pipeline import Options, transform_jvp
>>> def f(x, c):
...     y = 2.0
...     if c > 0:
...         y = np.sin(x)
...     return y
>>> print(transform_jvp(f, Options(wrt=("x",))).source.strip())
def f_jvp(x, c, x_dot):
    x = as_real(x)
    # line 2: y = 2.0
    y = 2.0
    # line 3: if c > 0:
    _t1 = c > 0
    if _t1:
        # line 4: y = np.sin(x)
        y = np.sin(x)
        y_dot = x_dot * np.cos(x)
    else:
        y_dot = zeros_like(y)
    return y, finish_tangent(y_dot, y)
"""
import gast

from .. import astutil as A
from .. import registry
from ..rules import records
from .activity import _NONDIFF_OPS, scatter_add_args
from .forward_calls import CallTangents
from .forward_flow import OWNED, SHARED, ZERO, mutated_in_place, read_before_assigned, read_counts
from .in_place import argument_sharing_check, deep_copy, updated_parameters
from .jumps import is_break_guard
from .effect_refusals import refuse_helper_storing_outside, refuse_updating_a_default
from .callees import method_call


class _Forward(CallTangents):
    """The tangent code of one function, statement by statement (calls: ``CallTangents``)."""

    def __init__(self, node, source, wrt, refs, callees, numbers):
        self.node, self.source = node, source
        # the parameters given Python numbers, where never bound again: a function of yours they are passed
        # to is compiled knowing it, and the arrays it is given (``"array_arguments"``, passes.memory)
        self.numbers = set(numbers) - A.names_stored(node)
        self.namer = A.anno(node, "namer")
        self.active = A.anno(node, "active")
        self.varied = A.anno(node, "varied") or set()  # active, or varied only through what no output reads
        self.refs = refs
        self.callees = callees
        self.containers = A.anno(node, "containers")
        self.reads = read_counts(node)
        self.loops = []  # the loops being transformed, outermost first
        self.state = {}
        self.tangent_names = {}
        self.views = {}  # var -> the vars whose tangent buffers var's tangent may view (share)
        self.primal = None  # the value of the statement whose tangent is being made
        self.bound = set()  # names certainly bound here
        self.preinit = set()  # names that need ``x = None`` at entry so zeros_like(x) can run
        self.arithmetic = False  # is the statement being differentiated an operator?
        self.last_line = None

    # ---- tangent variables -------------------------------------------------------------
    def tname(self, var):
        name = self.tangent_names.get(var)
        if name is None:
            name = self.namer.unique(var + "_dot")
            self.tangent_names[var] = name
        return name

    def get(self, var):
        return self.state.get(var, ZERO)

    def helper(self, name, *args):
        from .. import runtime

        return gast.Call(func=A.load(self.refs(name, getattr(runtime, name))), args=list(args), keywords=[])

    def zeros(self, var):
        """``var_dot = zeros_like(var)``; ``var`` is bound to None at entry if it may be unbound here."""
        if var not in self.bound:
            self.preinit.add(var)
        return A.assign(self.tname(var), self.helper("zeros_like", A.load(var)))

    # the handler protocol of template.instantiate: is_active, read, read_item, accumulate, own, rule_branch
    def is_active(self, var):
        return var in self.active

    def read_item(self, result, k):
        return None  # tangents of tuple results are kept whole

    def read(self, var):
        if var not in self.active or self.get(var) == ZERO:
            return None
        return A.load(self.tname(var))

    def accumulate(self, var, expr):
        name = self.tname(var)
        container = var in self.containers
        if self.get(var) == ZERO:
            # a list or dict display is a new container; any other (L.copy(): L's tangent) may be one in use
            new = isinstance(expr, (gast.List, gast.Tuple, gast.Dict)) if container else self.fresh(expr)
            self.state[var] = OWNED if new else SHARED
            self.views.pop(var, None)
            if self.state[var] == SHARED:
                read = A.names_read(expr)
                self.share([other for other, tangent in self.tangent_names.items() if tangent in read], var,
                           mirrored=isinstance(self.primal, (gast.Subscript, gast.Attribute))
                           and isinstance(expr, (gast.Subscript, gast.Attribute)))
            return [A.assign(name, expr)]
        self.state[var] = OWNED
        if container or not self.arithmetic:  # a call may return a tuple: add item by item
            return [A.assign(name, self.helper("add_grads", A.load(name), expr))]
        return [A.assign(name, gast.BinOp(left=A.load(name), op=gast.Add(), right=expr))]

    def share(self, sources, var, mirrored=False):
        """``var``'s tangent may be (part of) the tangents of ``sources``. A view that the primal
        makes too (``B = A[0]``; ``B_dot = A_dot[0]``) is the aliasing check's business, so
        ``var`` only remembers what it views. Anything else (``B = A[0].copy()``; ``B_dot =
        A_dot[0]``: new memory in the primal, not in the tangent) leaves no source, nor
        anything a source views, owning its buffer: an in-place update copies it first."""
        reached = set(sources)
        for other in sources:
            reached |= self.views.get(other, set())
        self.views[var] = reached
        if not mirrored:
            for other in reached:
                if self.get(other) == OWNED:
                    self.state[other] = SHARED

    def fresh(self, expr):
        """Does ``expr`` build a new value that the tangent may own?"""
        if isinstance(expr, (gast.BinOp, gast.UnaryOp)):
            return True
        from .. import runtime

        fresh_helpers = {self.refs(n, getattr(runtime, n)) for n in ("zeros_like", "copy_grad")}
        return isinstance(expr, gast.Call) and isinstance(expr.func, gast.Name) and expr.func.id in fresh_helpers

    def own(self, var):
        """Make the tangent of ``var`` a buffer that may be updated in place (an ndarray where
        ``var`` may be a 0-d array: NumPy arithmetic on 0-d arrays gives scalars)."""
        state = self.get(var)
        self.state[var] = OWNED
        code = []
        if state == ZERO:
            code.append(self.zeros(var))
        elif state == SHARED:  # a container's own copy: its items are the primal's items' tangents
            copy = "copy_value" if var in self.containers else "copy_grad"
            code.append(A.assign(self.tname(var), self.helper(copy, A.load(self.tname(var)))))
        if var not in self.containers:  # forward mode knows no shapes: any array may be 0-d
            code.append(A.assign(self.tname(var), self.helper("grad_buffer", A.load(self.tname(var)))))
        return code

    def convert(self, var, have, want):
        """Code that brings the tangent of ``var`` from state ``have`` to ``want``."""
        if have == want or want == SHARED and have == OWNED or want == ZERO:
            return []
        if have == ZERO:
            return [self.zeros(var)]
        if want == OWNED:  # shared -> owned
            copy = "copy_value" if var in self.containers else "copy_grad"
            return [A.assign(self.tname(var), self.helper(copy, A.load(self.tname(var))))]
        return []

    # ---- statements --------------------------------------------------------------------
    def block(self, stmts):
        out = []
        for s in stmts:
            origin = A.anno(s, "origin") or s
            line = getattr(origin, "lineno", None)
            if line is not None and line != self.last_line and not isinstance(s, (gast.If, gast.For, gast.While)):
                out.append(A.comment(f"line {line}: {self.source.line(line).strip()}"))
                self.last_line = line
            out.extend(self.stmt(s))
        return out

    def stmt(self, s):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            var = s.targets[0].id
            self.bound.add(var)  # the tangent code runs after the primal statement
            if method_call(s.value, "pop"):
                return [s] + self.pop(s.value, var)
            if var in self.active:
                refuse_updating_a_default(self.source, s.value, A.anno(s, "origin") or s)  # (compiled apart)
                self.state[var] = ZERO
                return self.assignment(var, s)
            self.state.pop(var, None)
            refuse_helper_storing_outside(self.source, s.value, self.varied, A.anno(s, "origin") or s)
            return [s]
        if isinstance(s, gast.Assign):  # S[index] = value
            target = s.targets[0]
            var = target.value.id
            return (self.subscript_store(var, target.slice, s.value) if var in self.active else []) + [s]
        if isinstance(s, gast.Expr) and method_call(s.value, "append") and len(s.value.args) == 1:
            var = s.value.func.value.id
            return (self.append(var, s.value.args[0]) if var in self.active else []) + [s]
        if isinstance(s, gast.Expr) and method_call(s.value, "pop"):
            return [s] + self.pop(s.value, None)
        if isinstance(s, gast.Expr) and scatter_add_args(s) is not None:
            return [s] + self.scatter_add(*scatter_add_args(s), s.value.func)
        if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
            return [s] + self.effect_call(s)
        if isinstance(s, gast.If):
            if is_break_guard(s):
                return [s]
            return [self.branch(s)]
        if isinstance(s, (gast.For, gast.While)):
            return self.loop(s)
        return [s]

    def scatter_add(self, buffer, index, values, func):
        """``np.add.at(buffer, index, values)`` adds the values' tangents the same way."""
        tangent = self.read(values.id) if isinstance(values, gast.Name) and buffer.id in self.active else None
        if tangent is None:
            return []
        call = gast.Call(func=A.deepcopy(func), args=[A.load(self.tname(buffer.id)), A.deepcopy(index), tangent],
                         keywords=[])
        return self.own(buffer.id) + [gast.Expr(value=call)]

    def assignment(self, var, s):
        """The primal ``var = rhs`` and the statements computing ``var_dot``."""
        rhs = self.primal = s.value
        code = [s]
        self.arithmetic = isinstance(rhs, (gast.BinOp, gast.UnaryOp))  # operators give arrays or numbers
        if isinstance(rhs, gast.Name):
            tangent = self.read(rhs.id)
            if tangent is not None:
                code.extend(self.accumulate(var, tangent))
        elif isinstance(rhs, (gast.Constant, gast.Compare, gast.JoinedStr)):
            pass
        elif isinstance(rhs, (gast.Tuple, gast.List)):
            elts = [self.read_or_zeros(e) for e in rhs.elts]
            if any(self.read(e.id) is not None for e in rhs.elts if isinstance(e, gast.Name)):
                code.extend(self.accumulate(var, type(rhs)(elts=elts, ctx=gast.Load())))
        elif isinstance(rhs, gast.Dict):
            if any(self.read(v.id) is not None for v in rhs.values if isinstance(v, gast.Name)):
                display = gast.Dict(keys=[A.deepcopy(k) for k in rhs.keys],
                                    values=[self.read_or_zeros(v) for v in rhs.values])
                code.extend(self.accumulate(var, display))
        elif isinstance(rhs, gast.Subscript):
            if isinstance(rhs.value, gast.Name) and self.read(rhs.value.id) is not None:
                item = gast.Subscript(value=self.read(rhs.value.id), slice=A.deepcopy(rhs.slice), ctx=gast.Load())
                code.extend(self.accumulate(var, item))
        elif isinstance(rhs, gast.BinOp):
            if not isinstance(rhs.op, _NONDIFF_OPS):
                code.extend(self.apply(type(rhs.op), var, [rhs.left, rhs.right], [], s,
                                       f"the operator {type(rhs.op).__name__}"))
        elif isinstance(rhs, gast.UnaryOp):
            if not isinstance(rhs.op, (gast.Not, gast.Invert)):
                code.extend(self.apply(type(rhs.op), var, [rhs.operand], [], s,
                                       f"the operator {type(rhs.op).__name__}"))
        elif isinstance(rhs, gast.Attribute):
            if rhs.attr not in registry.NONDIFF_ATTRIBUTES:
                fn = registry.ATTRIBUTES.get(rhs.attr)
                if fn is None:  # a field of a named tuple or dataclass: checked when the code runs
                    code.extend(self.apply(records.field, var, [rhs.value, A.const(rhs.attr)], [], s,
                                           f"the attribute .{rhs.attr}"))
                else:
                    code.extend(self.apply(fn, var, [rhs.value], [], s, f"the attribute .{rhs.attr}"))
        elif isinstance(rhs, gast.Call):
            code = self.call(var, s)
        else:
            raise self.source.syntax_error(f"srcad cannot differentiate {type(rhs).__name__}", s)
        return code

    def read_or_zeros(self, atom):
        """The tangent of an operand, or an explicit zero of its shape."""
        tangent = self.read(atom.id) if isinstance(atom, gast.Name) else None
        return tangent if tangent is not None else self.helper("zeros_like", A.deepcopy(atom))

    # ---- containers and element updates --------------------------------------------------
    def subscript_store(self, var, index, value):
        tangent = self.read(value.id) if isinstance(value, gast.Name) else None
        if tangent is None:
            if self.get(var) == ZERO:
                return []  # the whole tangent is still zero
            if var in self.containers or isinstance(index, gast.Slice):  # a list's slice takes no scalar
                tangent = self.helper("zeros_like", A.deepcopy(value))
            else:
                tangent = A.const(0.0)
        elif var not in self.containers:  # an array of integers or booleans truncates what it is given
            tangent = self.helper("into_dtype_of", tangent, A.load(var))
        code = self.own(var)
        target = gast.Subscript(value=A.load(self.tname(var)), slice=A.deepcopy(index), ctx=gast.Store())
        code.append(A.assign(target, tangent))
        return code

    def append(self, var, value):
        tangent = self.read(value.id) if isinstance(value, gast.Name) else None
        if tangent is None and self.get(var) == ZERO:
            return []
        code = self.own(var)  # before the primal append: the tangent list matches the list so far
        item = tangent if tangent is not None else self.helper("zeros_like", A.deepcopy(value))
        push = gast.Attribute(value=A.load(self.tname(var)), attr="append", ctx=gast.Load())
        code.append(gast.Expr(value=gast.Call(func=push, args=[item], keywords=[])))
        return code

    def pop(self, call, var):
        """``y = L.pop(...)``: pop the tangent list in step, whether or not ``y`` needs a tangent."""
        stack = call.func.value.id
        if var is not None:
            self.state[var] = ZERO
        if stack not in self.active or self.get(stack) == ZERO:
            return []
        popped = gast.Call(func=gast.Attribute(value=A.load(self.tname(stack)), attr="pop", ctx=gast.Load()),
                           args=[A.deepcopy(a) for a in call.args], keywords=[])
        code = self.own(stack) if self.get(stack) == SHARED else []  # the list's tangent may be another's
        if var is not None and var in self.active:
            self.state[var] = SHARED
            return code + [A.assign(self.tname(var), popped)]
        return code + [gast.Expr(value=popped)]

    # ---- control flow ----------------------------------------------------------------------
    def read_outside(self, stmt):
        """Names read somewhere other than inside ``stmt``: their tangents must be right after it.
        Inside a loop that includes all the loop reads: its next pass runs ``stmt`` again."""
        if self.loops:  # a loop's next pass reads again what the loop reads
            stmt = self.loops[0]
        inside = read_counts(stmt)
        outside = {name for name, n in self.reads.items() if n > inside[name]}
        return outside | set(inside) if self.loops else outside

    def branch(self, s):
        return self.join_paths(s.test, lambda: self.block(s.body), lambda: self.block(s.orelse), self.read_outside(s))

    def rule_branch(self, test, make_body, make_orelse):
        """A run-time ``if`` inside a rule template (handler protocol of template.instantiate)."""
        return self.join_paths(test, make_body, make_orelse, set(self.active))

    def join_paths(self, test, make_body, make_orelse, live_after):
        """``if test: body else: orelse``, with zero tangents materialized where paths join."""
        before_state, before_bound = dict(self.state), set(self.bound)
        body = make_body()
        body_state, body_bound = self.state, self.bound
        self.state, self.bound = dict(before_state), set(before_bound)
        orelse = make_orelse()
        paths = [(body_state, body_bound, body), (self.state, self.bound, orelse)]
        merged = {}
        for var in sorted(set(body_state) | set(self.state)):  # sorted: the same text in every process
            states = [st.get(var, ZERO) for st, _, _ in paths]
            if all(x == ZERO for x in states) or var not in live_after:
                continue
            merged[var] = OWNED if all(x in (ZERO, OWNED) for x in states) else SHARED
            for (st, bound, code), have in zip(paths, states):
                if have == ZERO:
                    self.bound = bound
                    code.append(self.zeros(var))
        self.state = merged
        self.bound = body_bound & paths[1][1]
        return gast.If(test=test, body=body or [gast.Pass()], orelse=orelse)

    def loop(self, s):
        """Iterate the body's tangent states to a fixpoint; zeros are materialized where paths join."""
        entry, bound_before = dict(self.state), set(self.bound)
        mutated = mutated_in_place(s.body)
        # only tangents read before they are assigned in the body, or after the loop, carry over
        needed = read_before_assigned(s.body, {s.target.id} if isinstance(s, gast.For) else ()) | self.read_outside(s)
        start = dict(entry)
        self.loops.append(s)
        try:
            return self.loop_fixpoint(s, entry, bound_before, mutated, needed, start)
        finally:
            self.loops.pop()

    def loop_fixpoint(self, s, entry, bound_before, mutated, needed, start):
        snapshot = (dict(self.namer.counters), set(self.namer.taken), dict(self.tangent_names), set(self.preinit))
        while True:
            self.namer.counters, self.namer.taken = dict(snapshot[0]), set(snapshot[1])
            self.tangent_names, self.preinit = dict(snapshot[2]), set(snapshot[3])
            self.state, self.last_line = dict(start), None
            self.bound = bound_before | ({s.target.id} if isinstance(s, gast.For) else set())
            body = self.block(s.body)
            end = self.state
            target = {}
            for var in sorted(set(start) | set(end)):
                have = {start.get(var, ZERO), end.get(var, ZERO)}
                if have == {ZERO} or var not in needed:
                    continue
                owned = have <= {ZERO, OWNED} or (var in mutated and var not in self.containers)
                target[var] = OWNED if owned else SHARED
            if target == {v: x for v, x in start.items() if x != ZERO}:
                break
            start = target
        end_bound = self.bound
        self.bound = bound_before
        pre = [c for var in sorted(start) for c in self.convert(var, entry.get(var, ZERO), start[var])]
        self.bound = end_bound
        tail = [c for var in sorted(start) for c in self.convert(var, end.get(var, ZERO), start[var])]
        if body and is_break_guard(body[-1]):
            body[-1:-1] = tail
        else:
            body.extend(tail)
        self.state, self.bound, self.last_line = dict(start), bound_before, None
        if isinstance(s, gast.For):
            new = gast.For(target=s.target, iter=s.iter, body=body or [gast.Pass()], orelse=[], type_comment=None)
        else:
            new = gast.While(test=s.test, body=body or [gast.Pass()], orelse=[])
        return pre + [new]


def forward(node, source, wrt, refs, callees, numbers=()):
    """Build ``f_jvp`` from ``node`` (A-normal form with activity); see the module doc.
    ``numbers``: the parameters the code is only ever given Python numbers.

    The new ``FunctionDef`` carries the annotation ``"tangent_params"`` (parameter name ->
    name of its tangent parameter), and ``node``'s ``"shapes_proved"`` (``aliasing``).
    """
    from .. import runtime

    fw = _Forward(node, source, wrt, refs, callees, numbers)
    body = list(node.body)
    ret = body.pop() if body and isinstance(body[-1], gast.Return) else gast.Return(value=A.const(None))
    params = [a.id for a in node.args.args]
    fw.bound = set(params)
    tangents = {p: fw.tname(p) for p in wrt}
    # differentiated integers are reals, except in srcad's own code (trip counts, a rule helper's axes)
    entry = [A.assign(p, fw.helper("as_real", A.load(p))) for p in wrt if not source.is_srcads()]
    checked, mutated, deep = updated_parameters(body, params, mutated_in_place(body), source,
                                                A.anno(node, "array_params") or (), numbers)
    sharing = argument_sharing_check(checked, params, source, refs, deep)
    entry = ([sharing] if sharing is not None else []) + entry  # (before as_real makes new arrays)
    entry += [A.assign(p, deep_copy(source, refs, p) if p in deep else gast.Call(
        func=A.load(refs("copy_value", runtime.copy_value)), args=[A.load(p)], keywords=[])) for p in sorted(mutated)]
    for p in wrt:
        fw.state[p] = SHARED
        if p in mutated:  # the caller's tangent must not change either
            entry.append(A.assign(tangents[p], fw.helper("copy_grad", A.load(tangents[p]))))
            fw.state[p] = OWNED
    code = fw.block(body)
    out = ret.value
    tangent = fw.read(out.id) if isinstance(out, gast.Name) else None
    finished = fw.helper("finish_tangent", tangent or A.const(None), A.deepcopy(out))
    # it may alias the caller's tangent; a list, tuple or dict of its own may hold it as an item
    if tangent is not None and (fw.get(out.id) != OWNED or out.id in fw.containers):
        finished.args.append(A.const(True))
    result = gast.Tuple(elts=[A.deepcopy(out), finished], ctx=gast.Load())
    head = [A.assign(var, A.const(None)) for var in sorted(fw.preinit)]
    defaults = list(source.node.args.defaults)
    names = params + ([] if defaults else [tangents[p] for p in wrt])
    kwonly = [tangents[p] for p in wrt] if defaults else []
    args = gast.arguments(
        args=[gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None) for p in names],
        posonlyargs=[], vararg=None,
        kwonlyargs=[gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None) for p in kwonly],
        kw_defaults=[None] * len(kwonly), kwarg=None, defaults=defaults)
    fn = gast.FunctionDef(name=f"{node.name}_jvp", args=args, body=head + entry + code + [gast.Return(value=result)],
                          decorator_list=[], returns=None, type_comment=None, type_params=[])
    A.set_anno(fn, "tangent_params", tangents)
    A.set_anno(fn, "shapes_proved", A.anno(node, "shapes_proved"))
    A.set_anno(fn, "namer", fw.namer)
    return fn
