"""Calls in forward mode (``passes/forward.py``): a call with a jvp rule is instantiated from
it, a method through the function it stands for; the user's own Python function calls its
own jvp (compiled once); a ``custom_vjp`` without a forward rule is refused.
"""
import functools
import types

import gast

from .. import astutil as A
from .. import registry
from ..errors import NoRuleError, no_method_rule
from ..source import identifier
from ..template import instantiate
from ..template_binding import bind
from .fresh import only_logs
from .method_calls import local_names
from .local_objects import unlowered_object
from .forward_flow import SHARED, ZERO
from .array_receivers import refuse_run_as_written
from .call_binding import (bind_arguments, call_classes, keyed_arguments, keyword_defaults, only_reads,
                           refuse_active_packing, refuse_derivative_call)
from .effect_refusals import refuse_effect_call, refuse_storing_in_a_global


class _CallSite:
    """Where a rule is being instantiated, for error messages."""

    def __init__(self, source, node, what):
        self.source, self.node, self.what = source, node, what

    def error(self, message):
        return self.source.syntax_error(message, self.node)


def _user_function(obj):
    """The plain Python function behind ``obj`` if srcad can read it, else None."""
    fn = getattr(obj, "__srcad_function__", obj)
    return fn if isinstance(fn, types.FunctionType) else None




def refuse_custom_vjp_body(obj, error):
    """A ``srcad.custom_vjp`` with no forward rule: differentiating its body in forward mode
    would disagree with the rule reverse mode uses (a straight-through estimator, a wrapped
    solver), so forward mode refuses it."""
    if registry.lookup(registry.VJP, obj) is not None:
        name = getattr(obj, "__name__", "the function")
        raise error(f"{name} has a custom vjp rule but no forward-mode rule, and its body's derivative may differ "
                    f"from that rule; register one with @{name}.defjvp (a template like `t[y] += t[x] * ...`) "
                    "for jvp, hvp, hessian and forward-mode jacobians")


class CallTangents:
    """The call statements of ``forward``'s transformer, which provides the tangent state
    (``get``, ``read``, ``tname``, ``state``) and the context (``source``, ``refs``, ``namer``,
    ``callees``, ``active``, ``containers``)."""

    @functools.cached_property
    def caller_locals(self):
        return local_names(self.node)  # (``call_classes`` at every call of a function of yours)

    def where(self, node):
        line = getattr(A.anno(node, "origin") or node, "lineno", None)
        text = self.source.line(line).strip() if line else ""
        return f"{self.source.filename}:{line}: in {text!r}: " if line else f"{self.source.filename}: "

    def call(self, var, s):
        rhs = s.value
        callee = A.anno(rhs, "callee")
        if callee.kind == "method":
            if callee.name in registry.NONDIFF_METHODS:
                return [s]
            fn = registry.METHODS.get(callee.name)
            if fn is None:
                raise NoRuleError(self.where(s) + (unlowered_object(rhs) or no_method_rule(callee.name)))
            return [s] + self.apply(fn, var, [rhs.func.value] + rhs.args, rhs.keywords, s,
                                    f"the method .{callee.name}()")
        obj = callee.obj
        if registry.is_nondifferentiable(obj):
            return [s]
        if registry.lookup(registry.JVP, obj) is None and _user_function(obj) is not None:
            refuse_derivative_call(self.source, obj, callee.name, A.anno(s, "origin") or s)
            refuse_custom_vjp_body(obj, lambda message: self.source.syntax_error(message, A.anno(s, "origin") or s))
            return self.user_call(var, s, _user_function(obj))
        return [s] + self.apply(obj, var, rhs.args, rhs.keywords, s, callee.name)

    def apply(self, key, var, args, keywords, s, what):
        rule = registry.lookup(registry.JVP, key)
        if rule is None and unlowered_object(s):
            raise NoRuleError(self.where(s) + unlowered_object(s))
        if rule is None:
            name = registry.describe(key)
            raise NoRuleError(
                self.where(s) + f"{what} ({name}) has no forward-mode (jvp) derivative rule. Register one with "
                f"@srcad.extend.register_jvp({registry.registration_name(key, what)}) (a template like "
                "`t[y] += t[x] * np.cos(x)`), or mark it "
                "with srcad.extend.register_nondifferentiable if no derivative flows through it.")
        bound = bind(rule, args, keywords, _CallSite(self.source, s, what))
        return instantiate(rule, A.load(var) if var else A.const(None), bound, self, self.namer, self.refs)

    def effect_call(self, s):
        """A call for its effect: in-place helpers (``scatter_add``) with rules mutate tangents
        too; any other call for its effect on a value that carries a derivative is refused, as
        in reverse mode (a zero tangent would be a guess)."""
        call = s.value
        callee = A.anno(call, "callee")
        touched = set()
        for arg in call.args + [k.value for k in call.keywords]:
            touched |= A.names_read(arg)
        if callee.kind == "method" and isinstance(call.func.value, gast.Name):
            if callee.name not in registry.NONDIFF_METHODS and (touched | {call.func.value.id}) & self.varied:
                refuse_effect_call(self.source, call, sorted((touched | {call.func.value.id}) & self.varied),
                                   A.anno(s, "origin") or s)
            return []
        varied = touched & self.varied  # stored in a global, a value no output reads may be read back
        if varied and callee.kind == "object" and not only_logs(callee.obj):
            refuse_storing_in_a_global(self.source, callee, f"{callee.name}(...)",
                                       sorted(n for n in varied if not n.startswith("_")), s)
        if callee.kind != "object" or registry.is_nondifferentiable(callee.obj) or only_logs(callee.obj):
            return []
        if registry.lookup(registry.JVP, callee.obj) is None:  # np.fill_diagonal(buf, v), a helper filling buf
            if varied and not only_reads(call):
                refuse_effect_call(self.source, call, sorted(varied), A.anno(s, "origin") or s)
            return []
        if not any(n in self.active or self.get(n) != ZERO for n in touched):
            return []
        return self.apply(callee.obj, None, call.args, call.keywords, s, callee.name)

    def user_call(self, var, s, fn):
        """``y = g(a, b)`` for the user's own function ``g``: call its jvp."""
        rhs = s.value
        bound = bind_arguments(self.source, fn, rhs, fn.__name__, lambda name: self.read(name) is not None)
        refuse_active_packing(self.source, rhs, fn, fn.__name__, bound, lambda name: self.read(name) is not None)
        wrt = tuple(p for p, a in bound.arguments.items() if isinstance(a, gast.Name) and self.read(a.id) is not None)
        if not wrt:
            refuse_run_as_written(self.source, rhs, A.anno(s, "origin") or s)
            return [s]
        containers = tuple(p for p, a in bound.arguments.items()
                           if isinstance(a, gast.Name) and a.id in self.containers)
        arrays, numbers = ([p for p, a in bound.arguments.items() if isinstance(a, gast.Name) and a.id in known]
                           for known in (A.anno(rhs, "array_arguments") or (), self.numbers))
        specs = A.anno(self.node, "specs") or {}  # (where the caller's shapes are known: ``pipeline``)
        known = {p: specs[a.id] for p, a in bound.arguments.items() if isinstance(a, gast.Name) and a.id in specs}
        jvp_fn, tangent_params = self.callees(fn, wrt, containers, self.source, rhs,
                                              classes=call_classes(self.node, fn, rhs, bound, self.source,
                                                                   self.caller_locals),
                                              arrays=tuple(arrays), numbers=tuple(numbers), specs=known,
                                              keyed=keyed_arguments(self.node, bound))
        name = self.refs(f"{identifier(fn)}_jvp", jvp_fn)
        tangents = [gast.keyword(arg=tangent_params[p], value=self.read(bound.arguments[p].id)) for p in wrt]
        keywords = list(rhs.keywords) + keyword_defaults(fn, bound, self.refs) + tangents
        call = gast.Call(func=A.load(name), args=list(rhs.args), keywords=keywords)
        target = gast.Tuple(elts=[A.store(var), A.store(self.tname(var))], ctx=gast.Store())
        self.state[var] = SHARED
        return [gast.Assign(targets=[target], value=call, type_comment=None)]
