"""Inlining: helpers defined in the function (``def``, ``lambda``) and comprehensions
(list, dict, generator expressions), and helpers specialised on a function they are passed.

Guarantee: an inlined scope never reads or overwrites a name of the scope around it by
accident. Every local of an inlined helper (parameters, assignments, loop variables) gets a
fresh ``<helper>_<name>`` name at each call, and every comprehension variable a fresh
``_<name>N`` name, as Python 3 gives comprehensions a scope of their own; the names a helper
reads but does not bind are the enclosing function's, as in Python. A comprehension's first
iterable is evaluated in the enclosing scope, the rest of it in its own. Arguments bind as
Python binds them: positional-only, keyword-only and default parameters, ``*rest`` (a tuple
of the extra positional arguments) and ``**options`` (a dict of the extra keywords).

A parameter given a function known when compiling (``StaticFunction``: ``rk4(lorenz, y)``,
``np.tanh``, a lambda, ``functools.partial(g, c=0.3)``): each call of it in the helper is a
call of that function, resolved in the caller's scope and guarded like a name the caller
calls, and passing it on passes the same function. A parameter called
whose function is known only at run time is refused (``unknown_function``).

>>> import gast
>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> from srcad.passes.normalize import normalize
>>> from srcad.astutil import to_source
>>> def f(y):
...     e = y[0]
...     pieces = [e * 3.0 for e in y]
...     return e
>>> src = capture(f)
>>> print(to_source(normalize(resolve_calls(src.node, src), src)).strip())
def f(y):
    e = y[0]
    _list1 = []
    _seq1 = list(y)
    _t1 = len(_seq1)
    _range1 = range(_t1)
    for _k1 in _range1:
        _e1 = _seq1[_k1]
        _t2 = _e1 * 3.0
        _list1.append(_t2)
    pieces = _list1
    return e
"""
import copy
import functools
import types

import gast
import numpy as np

from .. import astutil as A
from .. import runtime
from ..naming import BUILTIN
from .binding import bind_arguments, helper_call, updates_parameter
from .jumps import eliminate_jumps
from .callees import Callee, denoted, dotted, local_names, lookup_path, parameter_names, readable
from .method_calls import global_method, global_partial
from .resolve_calls import array_method
from .stored_methods import global_stored_method


class StaticFunction:
    """A function passed as an argument and known when compiling: ``callee`` and ``expr`` call
    it in the caller's scope (``lorenz``, ``np.tanh``, a helper of the function); ``args`` and
    ``keywords`` are atoms a ``functools.partial`` fixes in front of the call's own."""

    __slots__ = ("expr", "callee", "args", "keywords")

    def __init__(self, expr, callee, args=(), keywords=()):
        self.expr, self.callee, self.args, self.keywords = expr, callee, list(args), list(keywords)

    def call(self, args, keywords, node):
        """The call of this function with ``args`` and ``keywords`` (``node``: where)."""
        fixed = A.deepcopy(self.keywords)  # a **mapping goes last
        call = gast.Call(func=A.deepcopy(self.expr), args=A.deepcopy(self.args) + list(args),
                         keywords=[k for k in fixed if k.arg is not None] + list(keywords)
                         + [k for k in fixed if k.arg is None])
        for key in ("for_effect", "consumed"):
            if A.anno(node, key):
                A.set_anno(call, key, A.anno(node, key))
        return A.set_anno(gast.copy_location(call, node), "callee", self.callee)


def static_function(norm, arg, out):
    """The ``StaticFunction`` the argument expression ``arg`` denotes, or None: a global or
    closure function (``lorenz``, ``np.tanh``, ``cfg.act``: a name the user wrote, resolved and
    guarded like a called name), a lambda or a ``def`` of the function, a parameter that holds
    one (a helper passing its function on), or ``functools.partial`` of one of these (its
    arguments evaluated here, once, as Python evaluates them). A local variable is never one."""
    if isinstance(arg, gast.Lambda):
        name = norm.namer.fresh("_lambda")
        norm.stmt_FunctionDef(gast.copy_location(lambda_def(name, arg), arg), out)
        return StaticFunction(A.load(name), Callee("local", name=name))
    if isinstance(arg, gast.Name) and arg.id in norm.static_functions:
        return norm.static_functions[arg.id]
    if isinstance(arg, gast.Name) and arg.id in norm.local_functions:
        return StaticFunction(A.load(arg.id), Callee("local", name=arg.id))
    if isinstance(arg, gast.Call):
        callee = A.anno(arg, "callee")
        if (callee is None or callee.kind != "object" or callee.obj is not functools.partial or not arg.args
                or any(isinstance(a, gast.Starred) for a in arg.args) or any(k.arg is None for k in arg.keywords)):
            return None
        inner = static_function(norm, arg.args[0], out)
        if inner is None:
            return None
        fixed = [norm.atom(a, out) for a in arg.args[1:]]
        keywords = [gast.keyword(arg=k.arg, value=norm.atom(k.value, out)) for k in arg.keywords]
        return StaticFunction(inner.expr, inner.callee, inner.args + fixed, inner.keywords + keywords)
    obj = _global_function(norm, arg)
    if obj is None:
        return None
    parts = dotted(arg)
    found = global_partial(parts, norm.source)
    if found is not None:  # a global functools.partial: its function, arguments and keywords
        function, func, fixed, keywords = found
        return StaticFunction(func, Callee("object", obj=function, name=".".join(parts)), fixed,
                              [gast.keyword(arg=None, value=keywords)])
    found = global_method(parts, norm.source)
    if found is not None:  # model.rhs: its function, with model first
        function, func, receiver = found
        return StaticFunction(func, Callee("object", obj=function, name=".".join(parts)), [receiver])
    found = global_stored_method(parts, norm.source)
    if found is not None:  # APPLY = model.rhs: its function, with its object first
        function, func, receiver, _ = found
        return StaticFunction(func, Callee("object", obj=function, name=".".join(parts)), [receiver])
    lookup_path(parts, norm.source)  # guarded from now on, as a called name is
    return StaticFunction(A.deepcopy(arg), Callee("object", obj=readable(obj), name=".".join(parts)))


def passes_function(norm, call):
    """Does ``call`` pass a ``StaticFunction`` (see ``static_function``)? Emits nothing."""
    def denotes(arg):
        if isinstance(arg, gast.Lambda) or isinstance(arg, gast.Name) and (
                arg.id in norm.static_functions or arg.id in norm.local_functions):
            return True
        if isinstance(arg, gast.Call):
            callee = A.anno(arg, "callee")
            return (callee is not None and callee.kind == "object" and callee.obj is functools.partial
                    and bool(arg.args) and denotes(arg.args[0]))
        return _global_function(norm, arg) is not None

    return any(denotes(a) for a in call.args if not isinstance(a, gast.Starred)) or any(
        denotes(k.value) for k in call.keywords if k.arg is not None)


def _global_function(norm, arg):
    """The function (not a class or a callable object) a global or closure dotted name the user
    wrote denotes, or None."""
    parts = dotted(arg)
    # a name srcad made (an inlined helper's local) is never looked up as a global
    if parts is None or parts[0] in norm.source_locals or parts[0] not in norm.user_names:
        return None
    try:
        obj = denoted(parts, norm.source)
    except (KeyError, AttributeError):
        return None
    if not isinstance(obj, _FUNCTIONS) and type(obj).__name__ != "_ArrayFunctionDispatcher" or array_method(obj):
        return None  # (a callable object, a class: a value the helper may only read)
    return obj


#: what a function passed as an argument may be (NumPy's functions are ``_ArrayFunctionDispatcher``s)
_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, np.ufunc, functools.partial)


def _mark_functions(norm, call, out):
    """``call`` with each argument that is a ``StaticFunction`` replaced by a fresh marker name,
    and ``{marker: StaticFunction}``."""
    found = {}

    def mark(arg):
        static = None if isinstance(arg, gast.Starred) else static_function(norm, arg, out)
        if static is None:
            return arg
        marker = norm.namer.fresh("_function")
        found[marker] = static
        return A.load(marker)

    marked = copy.copy(call)  # the same annotations (its callee)
    marked.args = [mark(a) for a in call.args]
    marked.keywords = [k if k.arg is None else gast.keyword(arg=k.arg, value=mark(k.value)) for k in call.keywords]
    return marked, found


class _CallsOfParameters(gast.NodeTransformer):
    """Calls of a parameter that holds a ``StaticFunction`` become calls of that function."""

    def __init__(self, statics):
        self.statics = statics

    def visit_Call(self, node):
        self.generic_visit(node)
        static = self.statics.get(node.func.id) if isinstance(node.func, gast.Name) else None
        return node if static is None else static.call(node.args, node.keywords, node)

    def visit_FunctionDef(self, node):
        return self._scope(node, local_names(node))

    def visit_Lambda(self, node):
        return self._scope(node, parameter_names(node))

    def _scope(self, node, bound):
        shadowed = bound & set(self.statics)
        if not shadowed:
            return self.generic_visit(node)
        inner = _CallsOfParameters({k: v for k, v in self.statics.items() if k not in shadowed})
        return inner.generic_visit(node)


def lambda_def(name, lam):
    """``name = lambda args: body`` as the helper ``def name(args): return body``."""
    ret = gast.copy_location(gast.Return(value=lam.body), lam.body)
    fdef = gast.FunctionDef(name=name, args=lam.args, body=[ret], decorator_list=[], returns=None,
                            type_comment=None, type_params=[])
    return gast.copy_location(fdef, lam)


def inline_comprehension(norm, e, out):
    """A list or dict comprehension (or a generator expression, materialised as a list) as a
    loop filling a fresh ``_listN`` or ``_dictN``."""
    for gen in e.generators:
        if gen.is_async:
            raise norm.error("srcad does not support async comprehensions", e)
    scope = sorted({n.id for gen in e.generators for n in gast.walk(gen.target)
                    if isinstance(n, gast.Name)})
    renames = {name: norm.namer.fresh(f"_{name}") for name in scope}
    _note_user_names(norm, renames)
    first_iter = e.generators[0].iter
    e = A.replace_names(A.deepcopy(e), renames)
    e.generators[0].iter = first_iter  # evaluated in the enclosing scope
    if isinstance(e, gast.DictComp):  # {k: v for ...}: d[k] = v in the loop
        result = norm.namer.fresh("_dict")
        out.append(A.assign(result, gast.Dict(keys=[], values=[])))
        store = gast.Subscript(value=A.load(result), slice=e.key, ctx=gast.Store())
        inner = [A.assign(store, e.value)]
    else:
        result = norm.namer.fresh("_list")
        out.append(A.assign(result, gast.List(elts=[], ctx=gast.Load())))
        append = gast.Call(func=gast.Attribute(value=A.load(result), attr="append", ctx=gast.Load()),
                           args=[e.elt], keywords=[])
        A.set_anno(append, "callee", Callee("method", name="append"))
        inner = [gast.Expr(value=append)]
    for gen in reversed(e.generators):
        for cond in reversed(gen.ifs):
            inner = [gast.If(test=cond, body=inner, orelse=[])]
        inner = [gast.For(target=gen.target, iter=gen.iter, body=inner, orelse=[], type_comment=None)]
        if A.anno(e, "read_in_part"):  # any(...)/all(...) of it: Python may stop reading early
            A.set_anno(inner[0], "read_in_part", True)
    for stmt in inner:
        for node in gast.walk(stmt):  # the loop and what it runs are at the comprehension's line
            if isinstance(node, gast.stmt):
                gast.copy_location(node, e)
        norm.stmt(stmt, out)
    return A.load(result)


def inline_call(norm, call, name, out, fdef=None):
    """Inline a call of the helper ``name`` (a function defined in the caller, or ``fdef``:
    one of its module, see ``binding.module_helper``); returns the atom holding its result."""
    fdef = fdef or norm.local_functions.get(name)
    if fdef is None:
        raise norm.error(f"'{name}' is called before it is defined", call)
    if name in [inlined for inlined, _ in norm.inlining]:
        raise norm.error(
            f"'{name}' calls itself; srcad does not differentiate recursion inside a function. "
            "Write it as a loop, or define it at module level with a custom_vjp", call)
    renames = {p: norm.namer.unique(f"{name}_{p}") for p in sorted(local_names(fdef))}
    _note_user_names(norm, renames)
    call, functions = _mark_functions(norm, call, out)
    bound = bind_arguments(norm, call, name, fdef, out)  # in the caller's order, before the helper runs
    args = fdef.args
    order = args.posonlyargs + args.args + [args.vararg] + args.kwonlyargs + [args.kwarg]
    rebound = A.names_stored(gast.Module(body=fdef.body, type_ignores=[]))
    in_place = updated_in_place(fdef) if A.anno(call, "for_effect") else {}
    statics = {}  # the helper specialised on the functions it is passed: f(y) calls lorenz(y)
    for param in [a.id for a in order if a is not None]:
        value = bound[param]
        static = functions.get(value.id) if isinstance(value, gast.Name) else None
        if static is None and isinstance(value, (gast.Name, gast.Attribute)):  # a default naming a function
            static = static_function(norm, value, out)
        if static is not None:
            if param in rebound:
                raise norm.error(
                    f"srcad specialises '{name}' on the function passed as '{param}', which '{name}' assigns "
                    "again; give the new value another name", call)
            statics[renames[param]] = static
            if static.callee.kind == "object" and not static.args and not static.keywords:
                out.append(gast.copy_location(A.assign(renames[param], A.deepcopy(static.expr)), call))
            continue
        if A.anno(call, "for_effect") and isinstance(value, gast.Name) and (
                param not in rebound or param in in_place):
            # called for its effect: the parameter is the caller's array itself, so an update
            # through it is the caller's own (and checked as such), not one through an alias
            renames[param] = value.id
            continue
        if isinstance(value, gast.Name) and not {param, value.id} & rebound and not updates_parameter(fdef):
            renames[param] = value.id  # only read: the caller's value itself, not a copy bound (and saved) per call
            continue
        out.append(gast.copy_location(A.assign(renames[param], value), call))
        if isinstance(value, gast.Name) and value.id in norm.record_classes and param not in rebound:
            norm.record_classes[renames[param]] = norm.record_classes[value.id]  # the caller's record
    # the records a module helper builds (resolve_calls on it), under their names here
    norm.record_classes.update((renames[p], c) for p, c in (A.anno(fdef, "object_classes") or {}).items()
                               if p in renames)
    callers = {p for p in in_place if isinstance(bound[p], gast.Name)}  # the caller's arrays themselves
    body = _element_updates(A.deepcopy(gast.Module(body=fdef.body, type_ignores=[])), callers)
    where = f"{norm.source.filename}:{getattr(call, 'lineno', None) or '?'}: "
    for param in sorted(callers):
        update = A.to_source(gast.AugAssign(target=A.store(param), op=in_place[param],
                                            value=A.const(Ellipsis))).strip()  # 'v += ...'
        out.append(gast.copy_location(gast.Expr(value=helper_call(
            "check_updated_array", runtime.check_updated_array, A.load(renames[param]), A.const(update),
            A.const(name), A.const(where))), call))
    body = _rename_own_functions(A.replace_names(body, renames), renames)
    body = _CallsOfParameters(statics).visit(body).body
    norm.static_functions.update(statics)  # passed on from here, the function is still known
    result = norm.namer.fresh(f"{name}_result")
    body = eliminate_jumps(body, norm.namer, norm.source, top_level=False, result=result,
                           params=[renames[p] for p in bound])
    norm.inlining.append((name, norm.loop_depth))
    saved_functions = dict(norm.local_functions)
    try:
        for stmt in body:
            norm.stmt(stmt, out)
    finally:
        norm.inlining.pop()
        norm.local_functions = saved_functions
    return A.load(result)


def updated_in_place(fdef):
    """The parameters of ``fdef`` that it binds only as ``p op= e`` (NumPy updates an array so
    in place: a caller calling for the effect sees it), in a helper defining no function of its
    own (whose locals could share the name), each with the operator of its first update."""
    params = {a.id for a in fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs}
    nodes = list(gast.walk(gast.Module(body=fdef.body, type_ignores=[])))
    if any(isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)) for n in nodes):
        return set()
    updates = [n for n in nodes if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)]
    targets = {id(n.target) for n in updates}
    bound = {n.id for n in nodes if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)
             and id(n) not in targets}
    operators = {}
    for n in updates:
        if n.target.id in params and n.target.id not in bound:
            operators.setdefault(n.target.id, n.op)
    return operators


def _element_updates(body, params):
    """``body`` with each ``p op= e`` of the ``params`` written ``p[...] op= e``: the same update of
    an array in place, now of the caller's array, and an error on a number (which ``p op= e``
    would rebind in the helper only)."""
    for n in A.walk(body):
        if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name) and n.target.id in params:
            n.target = gast.copy_location(gast.Subscript(value=A.load(n.target.id), slice=A.const(Ellipsis),
                                                         ctx=gast.Store()), n.target)
    return body


def _rename_own_functions(body, renames):
    """``body`` of an inlined helper with the functions it defines under their new names too:
    each ``def``, and each call of one, whose ``Callee`` names the function it inlines (a
    function of the caller's passed in, or one the caller defines under the same name, is
    then never taken for the helper's own)."""
    for n in A.walk(body):
        if isinstance(n, gast.FunctionDef) and n.name in renames:
            n.name = renames[n.name]
        elif isinstance(n, gast.Call) and isinstance(n.func, gast.Name):
            callee = A.anno(n, "callee")
            if callee is not None and callee.kind == "local" and callee.name != n.func.id:
                A.set_anno(n, "callee", Callee("local", name=n.func.id))
    return body


def unknown_function(norm, call, name):
    """The error for a call of the parameter ``name`` whose function is not known when compiling."""
    fn = norm.source.node
    if class_parameter(norm.source) == name:
        error = norm.error(
            f"{name}(...) in the class method {fn.name} makes an object of the class the method is called "
            "through; srcad follows that only where the differentiated function names the class in a statement "
            f"m = ClassName.method(...) of a class method ending in return {name}(...) (or return {name}.other(...) "
            "of another such class method): call it so, through the class you mean, not through an object of it "
            "(obj.method(...)) nor inside an expression", call)
        error.made_through_object = True  # the caller's obj.method(...) is the line to change (compile._at_the_call)
        return error
    if name in parameter_names(fn) and not norm.inlining:
        return norm.error(
            f"'{name}' is a parameter of {fn.name} that it calls; srcad knows which function it holds only where "
            f"a call passes one by name (a global or closure function, np.tanh, a lambda, a def of the caller, "
            f"functools.partial of one), not a value known only when it runs such as a local variable. Pass one so "
            f"where {fn.name} is called, from a function of the same module ({fn.name} is specialised on it there); "
            f"to differentiate {fn.name} itself, differentiate a function that calls it so: "
            f"def loss(x): return {fn.name}(x, my_function)", call)
    return norm.error(
        f"srcad cannot tell which function the parameter '{name}' holds here: the caller passes a value known "
        "only when it runs; pass a function by its name (a global or closure function, np.tanh, a def of the "
        "function), a lambda, or functools.partial of one", call)


def class_parameter(source):
    """The first parameter's name of the function ``source`` reads where it is a class method
    of a class its module reaches by its qualified name (``Model.from_params``); else None."""
    import inspect

    *owner, name = getattr(source.fn, "__qualname__", "").split(".")
    found = source.globals.get(owner[0]) if owner and "<locals>" not in owner else None
    for attr in owner[1:]:
        found = inspect.getattr_static(found, attr, None)
    method = inspect.getattr_static(found, name, None) if isinstance(found, type) else None
    first = (source.node.args.posonlyargs + source.node.args.args)[:1]
    return first[0].id if isinstance(method, classmethod) and method.__func__ is source.fn and first else None


def check_no_function_values(node, local_functions, source):
    """A ``def`` inside the function is inlined where it is called and leaves no function
    behind: one still named as a value (stored in a list, passed on) is refused."""
    if not local_functions:
        return
    stored = A.names_stored(node)
    for n in A.walk(node):
        if (isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in local_functions
                and n.id not in stored and A.anno(n, BUILTIN) is None):  # (srcad's helper of that name: not yours)
            raise source.syntax_error(
                f"srcad inlines the function {n.id} defined in this function where it is called, and cannot use it "
                "as a value (stored in a list, passed to another function); define it at the top level of the "
                "module, or call it directly (a library routine that calls it, such as an ODE solver or a "
                "quadrature, takes the values it needs through its args=)", A.anno(n, "origin") or n)


def check_named_exprs(node, source):
    """``:=`` inside a comprehension or lambda binds a name of the enclosing function, which
    inlining the comprehension with fresh names would not: refused there."""
    for scope in A.walk(node):
        if isinstance(scope, (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp, gast.Lambda)):
            for inner in A.walk(scope):
                if isinstance(inner, gast.NamedExpr):
                    raise source.syntax_error("srcad does not support assignment expressions (:=) inside a "
                                              "comprehension or lambda; assign the name in a statement before it",
                                              inner)


def _note_user_names(norm, renames):
    """Record the user's name behind each name ``renames`` gives (a comprehension's variable, an
    inlined helper's local), for messages (``passes.user_text``)."""
    known = A.anno(norm.source.node, "renamed_from") or {}
    A.set_anno(norm.source.node, "renamed_from", {**known, **{new: old for old, new in renames.items()}})
