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
import types

import gast
import numpy as np

from .. import astutil as A
from .. import registry
from ..errors import NoRuleError, no_method_rule
from ..template import instantiate
from ..template_binding import bind
from ..source import identifier, srcad_api_function
from .reverse_state import placeholder
from .method_calls import argument_classes, local_names
from .shape_rules import LINALG_SHAPES
from .effect_calls import assignment_instead
from .memory_calls import (attributes_stored_by_helper, changes_nothing_outside, defaults_updated_by_helper,
                           globals_updated_by_helper, updated_by_helper)
from .fresh import effect_targets, only_logs, stores_in_a_global
from .local_objects import unlowered_object


class _CallSite:
    """Where a rule is being instantiated, for error messages."""

    def __init__(self, ctx, node, what):
        self.ctx, self.node, self.what = ctx, node, what

    def error(self, message):
        return self.ctx.source.syntax_error(message, self.node)


def is_python_function(obj):
    obj = getattr(obj, "__srcad_function__", obj)
    return isinstance(obj, types.FunctionType)


def user_function_call(callee):
    """Is ``callee`` a Python function without a rule, which srcad differentiates through its
    own forward sweep where the result and an argument carry derivatives (on copies of what it
    updates in place), and otherwise runs as written?"""
    return (callee is not None and callee.kind == "object" and registry.lookup(registry.VJP, callee.obj) is None
            and not registry.is_nondifferentiable(callee.obj) and is_python_function(callee.obj))


def only_reads(call):
    """Is ``call`` (made for its effect) of a function of yours srcad reads that changes nothing
    it is given, no global and no attribute (a check of its input, a print)? It runs as written."""
    return user_function_call(A.anno(call, "callee")) and changes_nothing_outside(call)


def refuse_derivative_call(source, obj, name, node):
    """A derivative srcad made (``srcad.adjoint(f)``, ``srcad.value_and_grad(f)``, ``D.grad``)
    is not ``f``: refuse to differentiate a call to it, rather than read the wrong source."""
    from .. import api

    made = isinstance(obj, types.MethodType) and isinstance(obj.__self__, api.Differentiable)
    made = made or srcad_api_function(obj)  # made in the API, its error boundary, a method of Differentiable
    if made:
        raise source.syntax_error(
            f"{name} is a derivative made by srcad; srcad differentiates a derivative only when "
            "the code calls srcad.grad(f)(...) directly. Write that, or wrap the call in "
            "srcad.stop_gradient if no derivative should flow through it", node)


def keyword_defaults(fn, bound, refs):
    """Keywords for ``fn``'s keyword-only parameters a call leaves to their defaults (``bound``:
    its ``inspect`` binding): the generated code of ``fn`` takes every parameter by position or
    name, without defaults, so the caller passes the objects ``fn`` holds (``refs`` names them)."""
    held = dict(getattr(fn, "__kwdefaults__", None) or {})
    code = fn.__code__
    if code.co_kwonlyargcount or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        # its code takes them all as plain parameters, without the positional defaults too
        # (pipeline.check_parameters): a parameter left out would take none, or another's
        positional, values = code.co_varnames[:code.co_argcount], fn.__defaults__ or ()
        held.update(zip(positional[len(positional) - len(values):], values))
    return [gast.keyword(arg=k, value=A.load(refs(f"{identifier(fn)}_{k}", v)))
            for k, v in held.items() if k not in bound.arguments]


def refuse_active_packing(source, call, fn, name, bound, carries):
    """Refuse a call of ``fn``, a compiled user function, that packs values carrying derivatives
    (``carries(name)``) into its ``*args`` or ``**kwargs`` (``bound``: ``inspect`` binding of the
    call's nodes), such as a decorator's ``wrapper(*args, **kwargs)`` that does more than pass
    the call on (``pass_through``): their derivatives would be lost."""
    for value in bound.arguments.values():
        items = value.values() if isinstance(value, dict) else value if isinstance(value, tuple) else ()
        if any(isinstance(item, gast.Name) and carries(item.id) for item in items):
            what = (f"{name}, a decorator's wrapper that does more than `return f(*args, **kwargs)` of the "
                    "function it wraps (srcad differentiates through that wrapper only)" if hasattr(fn, "__wrapped__")
                    else f"{name} (a decorator's wrapper?)")
            raise source.syntax_error(
                f"this call passes a value that carries a derivative into the *args or **kwargs of {what}, which "
                "srcad does not differentiate through; call the function it wraps, or give it a rule with "
                "srcad.custom_vjp", call)


def refuse_active_spread(source, call, name, carries):
    """Refuse a call of a compiled user function with ``*seq`` whose items carry derivatives
    (``carries(name)``): the callee's parameters bind to its items only when the code runs, so
    their derivatives would be lost. (A ``def`` of the caller's module is inlined instead, where
    the items bind as Python binds them: ``passes.binding``.)"""
    for arg in call.args:
        if isinstance(arg, gast.Starred) and any(carries(n) for n in A.names_read(arg)):
            raise source.syntax_error(
                f"srcad differentiates a call of {name} with a *spread argument only where it inlines the function "
                "(a def at the top level of this module, not a lambda); pass the arguments one by one", call)


def bind_arguments(source, fn, call, name, carries):
    """The ``inspect`` binding of ``call``'s nodes to the parameters of ``fn``, a user function
    compiled apart. A ``**mapping`` (a global ``functools.partial``'s keywords) binds only when
    the code runs: the parameters it may fill are left out, as constants (what it holds
    carries no derivative, else the call is refused: ``carries(name)``)."""
    refuse_active_spread(source, call, name, carries)
    named = {k.arg: k.value for k in call.keywords if k.arg is not None}
    spread = [k.value for k in call.keywords if k.arg is None]
    for mapping in spread:
        if any(carries(n) for n in A.names_read(mapping)) or getattr(fn, "__kwdefaults__", None):
            raise source.syntax_error(
                f"srcad differentiates a call of {name} with a **mapping argument only where it inlines the "
                "function (a def at the top level of this module, not a lambda) and nothing in the mapping carries "
                "a derivative; pass the arguments by name one by one", call)
    signature = inspect.signature(fn, follow_wrapped=False)
    try:
        return signature.bind_partial(*call.args, **named) if spread else signature.bind(*call.args, **named)
    except TypeError as exc:
        raise source.syntax_error(f"bad call to {name}: {exc}", call) from None


def call_classes(fn_node, fn, call, bound, source, local):
    """``argument_classes`` of ``call`` of ``fn`` (``bound``: ``bind_arguments``; ``local``: the
    caller's ``local_names``), with those of the default objects it leaves out (``def inner(x,
    box=GBOX)``; none where a ``**mapping`` may fill them): its code is compiled for them."""
    from ..held_objects import object_classes

    left = [] if any(k.arg is None for k in call.keywords) else [
        (p, param.default) for p, param in inspect.signature(fn, follow_wrapped=False).parameters.items()
        if p not in bound.arguments and param.default is not param.empty]
    return argument_classes(fn_node, bound.arguments, source, local) + object_classes(
        [p for p, _ in left], [d for _, d in left])


def keyed_arguments(node, bound):
    """The parameters of a function of yours that a call (``bound``) in ``node`` gives a dict
    whose keys are strings throughout (activity's ``"string_keyed"``)."""
    keyed = A.anno(node, "string_keyed") or ()
    return tuple(p for p, a in bound.arguments.items() if isinstance(a, gast.Name) and a.id in keyed)


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
        available = self.available_calls()
        if not available:
            return code

        class Reuse(gast.NodeTransformer):
            def visit_Call(self, node):
                self.generic_visit(node)
                key = _call_key(_numpy_function(node.func), node)
                return A.load(available[key]) if key in available else node

        return [Reuse().visit(c) for c in code]

    def available_calls(self):
        """``(function, operand names) -> name`` of ``name = f(operands)`` statements before
        the one being reversed in its block, ``f`` a deterministic NumPy function, none of the
        names bound again up to and including that statement."""
        if self.block is None:
            return {}
        stmts, k = self.block
        available = {}
        for j, key, name, horizon in self.block_calls(stmts):  # in order: the latest call wins
            if j < k < horizon:
                available[key] = name
        return available

    def block_calls(self, stmts):
        """``(index, key, name, horizon)`` of each ``name = f(operands)`` in ``stmts`` that
        ``available_calls`` may reuse: available to the statements after it and before
        ``horizon``, the first one that binds ``name`` or an operand again. Computed once per
        block (one backward scan), so reversing a block stays linear in its length."""
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
        calls.reverse()
        self.calls_by_block[id(stmts)] = (stmts, calls)  # keeps stmts alive: its id stays unique
        return calls

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


def refuse_effect_call(source, call, touched, node):
    """Refuse ``call``, made for its effect, given values that carry derivatives (``touched``,
    their names), in both modes: srcad cannot see what the call changes. The message names
    what the call changes where srcad knows it (an in-place method's receiver, ``np.copyto``'s
    first argument, what a helper of yours updates) and what carries a derivative."""
    callee = A.anno(call, "callee")
    what = f".{callee.name}()" if callee.kind == "method" else f"{callee.name}(...)"
    named = [t for t in touched if not t.startswith("_")]  # not a temporary of srcad's
    refuse_storing_in_a_global(source, callee, what, named, node)
    by_helper = [] if effect_targets(gast.Expr(value=call)) else updated_by_helper(call)  # a function of yours
    changed = [n for n in sorted(effect_targets(gast.Expr(value=call))) or by_helper if not n.startswith("_")]
    target = f"on '{changed[0]}' " if changed else ""
    given = (f"given {', '.join(repr(n) for n in named)}, which carr{'y' if len(named) > 1 else 'ies'} a derivative"
             if named else "given a value carrying a derivative")
    if not changed:
        advice = f"make {callee.name} return what it computes and assign that instead of changing an argument in place"
    elif by_helper:
        text = A.to_source(call).strip()
        call_text = text if not any(n.startswith("_") for n in A.names_read(call)) else f"{callee.name}(...)"
        advice = (f"make {callee.name} return the new value of '{changed[0]}' and assign it "
                  f"('{changed[0]} = {call_text}')")
    else:
        advice = assignment_instead(call, changed[0])
    raise source.syntax_error(
        f"srcad does not differentiate the call {what} made for its effect {target}{given}: it cannot see "
        f"what the call changes; {advice}, or wrap the argument in srcad.stop_gradient if no derivative "
        "should flow", node)


def refuse_updating_a_default(source, call, node):
    """Refuse a call srcad compiles apart (its result carries a derivative) of a function of
    yours that leaves out a parameter whose default object it updates in place (Python's one
    default, shared by every call): the compiled function updates a copy. (Run as written,
    ``refuse_helper_storing_outside`` decides.)"""
    callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
    if callee is None or not user_function_call(callee):
        return
    defaults = defaults_updated_by_helper(call)
    if defaults:
        raise source.syntax_error(
            f"{callee.name}(...) updates in place the default of its parameter '{defaults[0]}', an object every "
            "call shares, which srcad would not update as Python does: give the function a fresh one "
            f"('{defaults[0]}=None' and make it in the function), or pass it explicitly", node)


def refuse_helper_storing_outside(source, call, varied, node):
    """Refuse ``a = memo(x)`` whose result needs no derivative (so srcad runs the call as
    written) where ``memo`` is a function of yours given a value carrying one (``varied``: the
    names that carry one) that stores what it computes in a global (``CACHE.append(a)``): read
    back, it would carry no derivative (its result is read instead, differentiated, where needed)."""
    callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
    if callee is None:
        return
    operands = [a.value if isinstance(a, gast.Starred) else a for a in call.args] + [k.value for k in call.keywords]
    named = sorted({n.id for o in operands for n in gast.walk(o) if isinstance(n, gast.Name)} & varied)
    if named and A.anno(call, "changes_arguments"):  # (``memory``: r = heapq.heappush(L, v) is the statement)
        refuse_effect_call(source, call, named, node)
    if not user_function_call(callee):
        return
    outside = globals_updated_by_helper(call) if named else []
    if outside:
        where = f"{outside[0]}, and srcad reads that as a constant"
    else:
        attributes = attributes_stored_by_helper(call) if named else []
        if not attributes:
            return
        owner = f"'{attributes[0]}'" if attributes[0] in A.names_read(call) else f"'{attributes[0]}', a global,"
        where = f"an attribute of {owner} and srcad runs the call as written (its result needs no derivative)"
    given = [n for n in named if not n.startswith("_")]
    which = f"'{given[0]}', which carries a derivative" if given else "a value carrying a derivative"
    raise source.syntax_error(
        f"{callee.name}(...), given {which}, stores what it computes in {where}, so whatever reads it back would "
        f"carry no derivative: return the value from {callee.name} and use that, or store srcad.stop_gradient(...) "
        "of it (a history, a log)", node)


def refuse_storing_in_a_global(source, callee, what, named, node):
    """Refuse ``HISTORY.append(y)`` on a list (dict, set) of the module with ``y`` carrying a
    derivative, saying what to do: a global is read as a constant, so whatever reads it back
    would carry none."""
    if callee.kind == "object" and stores_in_a_global(callee.obj):
        which = f"'{named[0]}', which carries a derivative," if named else "a value carrying a derivative"
        raise source.syntax_error(
            f"srcad does not differentiate the call {what}: it stores {which} in a list or dict of your "
            "module, and srcad reads a global as a constant, so whatever reads it back would carry no "
            f"derivative. To keep the value (a history, a log), store srcad.stop_gradient("
            f"{named[0] if named else 'value'}); to compute with it, keep the list in the function", node)


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
