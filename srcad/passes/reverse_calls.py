"""Calls in the reverse transform: rules of library functions, and calls to the user's own
Python functions, whose forward function returns its value and its residuals. The residuals
are a value like any other: saved per call (per loop iteration, per branch) by
``record_values``, and handed to the callee's backward function in the reverse sweep.

>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> from srcad.passes.normalize import normalize
>>> def inner(z):
...     return z * 2.0, z
>>> def f(x):
...     a, b = inner(x)
...     return a * b
>>> src = capture(f)
>>> sorted(call_results(normalize(resolve_calls(src.node, src), src)))
['_t1', 'a', 'b']
"""
import functools
import inspect

import gast
import numpy as np

from .. import astutil as A
from .. import registry
from ..errors import NoRuleError, no_method_rule
from ..template import instantiate
from ..template_binding import bind
from ..source import identifier
from .array_receivers import refuse_run_as_written
from .call_binding import (bind_arguments, call_classes, is_python_function, keyed_arguments, keyword_defaults,
                           only_reads, refuse_active_packing, refuse_derivative_call, user_function_call)
from .effect_refusals import refuse_effect_call
from .reverse_state import placeholder
from .method_calls import local_names
from .shape_rules import LINALG_SHAPES
from .fresh import only_logs
from .local_objects import unlowered_object


class _CallSite:
    """Where a rule is being instantiated, for error messages."""

    def __init__(self, ctx, node, what):
        self.ctx, self.node, self.what = ctx, node, what

    def error(self, message):
        return self.ctx.source.syntax_error(message, self.node)


class Calls:
    """The call handling of ``_Reverse``."""

    @functools.cached_property
    def caller_locals(self):
        return local_names(self.node)  # (``call_classes`` at every call of a function of yours)

    def forward_assign(self, s, var, loops):
        rhs = s.value
        callee = A.anno(rhs, "callee") if isinstance(rhs, gast.Call) else None
        if var not in self.active or not user_function_call(callee):
            return [s]
        # a call to the user's own Python function: run its forward sweep, keep its state
        fn = getattr(callee.obj, "__srcad_function__", callee.obj)
        self.refuse_derivative_call(fn, callee.name, rhs)
        bound = bind_arguments(self.source, fn, rhs, callee.name, lambda name: name in self.active)
        refuse_active_packing(self.source, rhs, fn, callee.name, bound, lambda name: name in self.active)
        wrt = tuple(p for p, a in bound.arguments.items()
                    if isinstance(a, gast.Name) and a.id in self.active)
        if not wrt:
            refuse_run_as_written(self.source, rhs, A.anno(s, "origin") or s)
            return [s]
        container_params = tuple(p for p, a in bound.arguments.items()
                                 if isinstance(a, gast.Name) and a.id in self.added_as_containers)
        known = {p: self.spec(a.id) for p, a in bound.arguments.items()  # the callee is specialised on them
                 if isinstance(a, gast.Name) and self.spec(a.id) is not None}
        forward_fn, backward_fn = self.callees(fn, wrt, container_params, self.source, rhs, known,
                                               classes=call_classes(self.node, fn, rhs, bound, self.source,
                                                                    self.caller_locals),
                                               constant_params=self.constant_arguments(fn, bound),
                                               keyed=keyed_arguments(self.node, bound))
        base = identifier(fn)  # a lambda's name is no identifier
        fwd_name = self.refs(f"{base}_forward", forward_fn)
        bwd_name = self.refs(f"{base}_backward", backward_fn)
        saved = self.namer.fresh(f"_{base}_saved")
        site = self.site("name", saved, loops)
        call = gast.Call(func=A.load(fwd_name), args=[self.snapshot(a) for a in rhs.args],
                         keywords=[gast.keyword(arg=k.arg, value=self.snapshot(k.value)) for k in rhs.keywords]
                         + keyword_defaults(fn, bound, self.refs))
        self.primal_callees[id(s)] = (bwd_name, saved, [bound.arguments[p] for p in wrt], site)
        target = gast.Tuple(elts=[A.store(var), A.store(saved)], ctx=gast.Store())
        return [placeholder("save", site), gast.Assign(targets=[target], value=call, type_comment=None)]

    def constant_arguments(self, fn, bound):
        """The parameters of ``fn`` a call (``bound``) gives constants at every order: literals,
        values of no parameter of the caller's (``"derivative_free"``), defaults."""
        free = A.anno(self.node, "derivative_free") or ()
        constant = []
        for p, param in inspect.signature(fn, follow_wrapped=False).parameters.items():
            if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                continue
            arg = bound.arguments.get(p)
            if arg is None or isinstance(arg, gast.Constant) or (isinstance(arg, gast.Name) and arg.id in free):
                constant.append(p)
        return tuple(constant)

    def snapshot(self, arg):
        """``arg`` for a callee's forward function: a copy if its memory is updated in place
        anywhere in this function, since the callee's residuals keep what they were given."""
        from .. import runtime

        if isinstance(arg, gast.Name) and arg.id in self.updated_in_place:
            return self.call("copy_value", runtime.copy_value, arg)
        return arg

    def where(self, node):
        line = getattr(A.anno(node, "origin") or node, "lineno", None)
        text = self.source.line(line).strip() if line else ""
        return f"{self.source.filename}:{line}: in {text!r}: " if line else f"{self.source.filename}: "

    def call_rule(self, var, rhs, s):
        callee = A.anno(rhs, "callee")
        if id(s) in self.primal_callees:
            bwd, saved, args, _ = self.primal_callees[id(s)]
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
                raise NoRuleError(self.where(s) + (unlowered_object(rhs) or no_method_rule(callee.name)))
            return self.apply(registry.VJP, fn, var, [rhs.func.value] + rhs.args, rhs.keywords, s,
                              f"the method .{callee.name}()")
        obj = callee.obj
        if registry.is_nondifferentiable(obj):
            return []
        operands = rhs.args + [k.value for k in rhs.keywords]
        if is_python_function(obj) and registry.lookup(registry.VJP, obj) is None and not any(
                isinstance(n, gast.Name) and n.id in self.varied for o in operands for n in gast.walk(o)):
            return []  # a function of yours called on constants: nothing flows back into them
        return self.apply(registry.VJP, obj, var, rhs.args, rhs.keywords, s, callee.name)

    def rule_of(self, rhs):
        """The VJP rule ``call_rule`` instantiates for the call ``rhs`` of a library function (None
        for a method, a user function or one without a rule)."""
        callee = A.anno(rhs, "callee")
        if callee is None or callee.kind != "object" or registry.is_nondifferentiable(callee.obj):
            return None
        rule = registry.lookup(registry.VJP, callee.obj)
        return rule if isinstance(rule, registry.Rule) else None

    def refuse_derivative_call(self, obj, name, node):
        refuse_derivative_call(self.source, obj, name, node)

    def apply(self, table, key, var, args, keywords, s, what):
        rule = registry.lookup(table, key)
        if rule is None:
            self.refuse_derivative_call(key, what, A.anno(s, "origin") or s)
            if unlowered_object(s):
                raise NoRuleError(self.where(s) + unlowered_object(s))
            if is_python_function(key):
                raise NoRuleError(self.where(s) + f"{what} has no derivative rule")
            raise NoRuleError(
                self.where(s) + f"{what} ({registry.describe(key)}) has no derivative rule and no Python "
                f"source to differentiate. Register one with "
                f"@srcad.extend.register_vjp({registry.registration_name(key, what)}), mark it "
                "with srcad.extend.register_nondifferentiable, or wrap the call in srcad.stop_gradient if "
                "no derivative should flow through it.")
        site = _CallSite(self, s, what)
        if any(k.arg == "out" and not (isinstance(k.value, gast.Constant) and k.value.value is None) for k in keywords):
            raise self.source.syntax_error(
                f"srcad does not differentiate {what} with out= (it writes into an existing array); "
                "assign the result instead", A.anno(s, "origin") or s)
        bound = bind(rule, args, keywords, site)
        return self.reuse_forward_values(instantiate(rule, A.load(var), bound, self, self.namer, self.refs))

    def reuse_forward_values(self, code):
        """``code`` (a rule's) with each call of a deterministic NumPy function that the
        forward sweep made on the same operands earlier in this block (``Si = np.linalg.inv(S)``
        before ``np.linalg.slogdet(S)``, whose rule inverts ``S``) replaced by the name it was
        bound to: the reverse sweep reads every name as the forward sweep had it at this
        statement, and none of them is rebound or updated in between."""
        available = self.available_call
        # (the first call replaced is one the rule wrote: if none of those is available, none is)
        if not any(available(key) is not None for key in _call_keys(code)):
            return code
        return [_Reuse(available).visit(c) for c in code]

    def available_call(self, key):
        """The name of the ``name = f(operands)`` statement (``key``: ``(f, operand names)``)
        before the one being reversed in its block, ``f`` a deterministic NumPy function, none
        of the names bound again up to and including that statement; None if there is none."""
        if self.block is None:
            return None
        stmts, k = self.block
        name = None
        for j, bound, horizon in self.block_calls(stmts).get(key, ()):  # in order: the latest call wins
            if j < k < horizon:
                name = bound
        return name

    def block_calls(self, stmts):
        """``key -> [(index, name, horizon), ...]`` (in order) of each ``name = f(operands)`` in
        ``stmts`` that ``available_call`` may reuse: available to the statements after it and
        before ``horizon``, the first one that binds ``name`` or an operand again. Computed once
        per block (one backward scan), so reversing a block stays linear in its length."""
        cached = self.calls_by_block.get(id(stmts))
        if cached is not None and cached[0] is stmts:
            return cached[1]
        next_store, calls = {}, []
        for j in reversed(range(len(stmts))):
            t = stmts[j]
            if isinstance(t, gast.Assign) and isinstance(t.targets[0], gast.Name):
                callee = A.anno(t.value, "callee") if isinstance(t.value, gast.Call) else None
                key = _call_key(callee.obj if callee is not None and callee.kind == "object" else None, t.value)
                names = {t.targets[0].id, *key[1]} if key is not None else ()
                if key is not None and not names & self.updated_in_place:
                    calls.append((j, key, t.targets[0].id, min(next_store.get(n, len(stmts)) for n in names)))
            for n in A.names_stored(t):
                next_store[n] = j
        by_key = {}
        for j, key, name, horizon in reversed(calls):
            by_key.setdefault(key, []).append((j, name, horizon))
        self.calls_by_block[id(stmts)] = (stmts, by_key)  # keeps stmts alive: its id stays unique
        return by_key

    def check_effect_only_call(self, s):
        """A call for its effect must not touch values that carry derivatives: srcad cannot
        see what it changes (an in-place method, a helper that fills an array)."""
        call = s.value
        callee = A.anno(call, "callee")
        if callee is None or (callee.kind == "object" and (registry.is_nondifferentiable(callee.obj)
                                                           or only_logs(callee.obj))):
            return  # (a logging call only formats its arguments)
        if callee.kind == "method" and callee.name in registry.NONDIFF_METHODS:
            return
        if only_reads(call):
            return
        operands = list(call.args) + [k.value for k in call.keywords]
        if callee.kind == "method":
            operands.append(call.func.value)
        touched = sorted({n.id for o in operands for n in gast.walk(o) if isinstance(n, gast.Name)} & self.varied)
        if touched:
            refuse_effect_call(self.source, call, touched, A.anno(s, "origin") or s)


def _numpy_function(func):
    """The NumPy function a rule's ``np.linalg.inv`` denotes (rules name NumPy ``np``), or None."""
    path = []
    while isinstance(func, gast.Attribute):
        path.insert(0, func.attr)
        func = func.value
    if not (isinstance(func, gast.Name) and func.id == "np" and path):
        return None
    obj = np
    for attr in path:
        obj = getattr(obj, attr, None)
    return obj


def _call_key(fn, call):
    """``(fn, operand names)`` of a call of a deterministic NumPy function on names only."""
    deterministic = isinstance(fn, np.ufunc) or any(fn is f for f in LINALG_SHAPES)
    if not deterministic or not isinstance(call, gast.Call) or call.keywords:
        return None
    if not call.args or not all(isinstance(a, gast.Name) for a in call.args):
        return None
    return fn, tuple(a.id for a in call.args)


def _call_keys(code):
    """The ``_call_key`` of each call in ``code`` that has one."""
    keys = []
    for n in A.walk(gast.Module(body=code, type_ignores=[])):
        if isinstance(n, gast.Call):
            key = _call_key(_numpy_function(n.func), n)
            if key is not None:
                keys.append(key)
    return keys


class _Reuse(gast.NodeTransformer):
    """``reuse_forward_values``' replacement of calls by the names ``available(key)`` gives."""

    def __init__(self, available):
        self.available = available

    def visit_Call(self, node):
        self.generic_visit(node)
        key = _call_key(_numpy_function(node.func), node)
        name = self.available(key) if key is not None else None
        return A.load(name) if name is not None else node


def call_results(node):
    """Names bound to what a Python function returned (a tuple, perhaps: the forward
    function srcad generates returns the value and its residuals) and items of them.
    Their adjoints are added with ``add_grads``, which is also right for arrays."""
    names = set()
    grown = True
    while grown:
        grown = False
        for s in A.every_statement(node.body):
            if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)) or s.targets[0].id in names:
                continue
            rhs = s.value
            callee = A.anno(rhs, "callee") if isinstance(rhs, gast.Call) else None
            if (callee is not None and callee.kind == "object" and is_python_function(callee.obj)
                    and registry.lookup(registry.VJP, callee.obj) is None) or (
                    isinstance(rhs, gast.Subscript) and isinstance(rhs.value, gast.Name) and rhs.value.id in names):
                names.add(s.targets[0].id)
                grown = True
    return names
