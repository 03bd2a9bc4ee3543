"""Call resolution: bind every call in a function to the Python object it calls."""
import functools
import inspect
import types

import gast
import numpy as np

from .. import astutil as A
from ..astutil import anno, names_stored, set_anno


class Callee:
    """What a call site calls: a known object, a method of a local value, or a local function."""

    __slots__ = ("kind", "obj", "name")

    def __init__(self, kind, obj=None, name=None):
        self.kind, self.obj, self.name = kind, obj, name

    def __repr__(self):
        return f"Callee({self.kind}, {self.name or self.obj!r})"


def method_call(node, name):
    """Is ``node`` a call of the method ``name`` on a named local value (``L.append(...)``)?"""
    callee = anno(node, "callee") if isinstance(node, gast.Call) else None
    return (callee is not None and callee.kind == "method" and callee.name == name
            and isinstance(node.func.value, gast.Name))


def local_names(fn_node):
    """Names bound inside ``fn_node``'s own scope: parameters, assignments, loop targets, defs."""
    names = {a.id for a in fn_node.args.args + fn_node.args.kwonlyargs + fn_node.args.posonlyargs}
    for extra in (fn_node.args.vararg, fn_node.args.kwarg):
        if extra is not None:
            names.add(extra.id)
    stack = list(fn_node.body)
    pop, push, extend, AST = stack.pop, stack.append, stack.extend, gast.AST
    while stack:
        node = pop()
        cls = node.__class__
        if cls is gast.Name:
            if node.ctx.__class__ is gast.Store:
                names.add(node.id)
            continue
        if cls is gast.FunctionDef:
            names.add(node.name)
            continue  # its body is its own scope
        if cls is gast.Lambda:
            continue
        for field in node._fields:  # gast.iter_child_nodes, without a generator per node
            value = getattr(node, field, None)
            if isinstance(value, list):
                extend([v for v in value if isinstance(v, AST)])
            elif isinstance(value, AST):
                push(value)
    return names


def parameter_names(fn_node):
    """The names of the parameters of a ``FunctionDef`` or ``Lambda``."""
    args = fn_node.args
    return {a.id for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg] if a is not None}


def _calls_in_scopes(node, locals_):
    """Each call in ``node`` with the local names where it runs, which of them are parameters
    of a function around it, and which a nested ``def`` or ``lambda`` around it binds (it adds
    its parameters and assignments to its enclosing scope's)."""
    params = parameter_names(node) if isinstance(node, (gast.FunctionDef, gast.Lambda)) else set()
    stack = [(child, locals_, params, frozenset()) for child in gast.iter_child_nodes(node)]
    while stack:
        n, scope, scope_params, nested = stack.pop()
        if isinstance(n, gast.FunctionDef):
            inner = local_names(n)
            scope, scope_params, nested = scope | inner, (scope_params - inner) | parameter_names(n), nested | inner
        elif isinstance(n, gast.Lambda):
            inner = parameter_names(n)
            scope, scope_params, nested = scope | inner, scope_params | inner, nested | inner
        if isinstance(n, gast.Call):
            yield n, scope, scope_params, nested
        stack.extend((child, scope, scope_params, nested) for child in gast.iter_child_nodes(n))


def _method_owner(source, node):
    """``(self name, class path)`` when ``node`` is the function ``source`` reads, a plain method
    (not a static or class method) of a class the module reaches by its qualified name, whose
    first parameter is never assigned; else None."""
    fn = source.fn
    parts = getattr(fn, "__qualname__", "").split(".")
    args = node.args.posonlyargs + node.args.args if isinstance(node, gast.FunctionDef) else []
    if node is not source.node or len(parts) < 2 or "<locals>" in parts or not args:
        return None
    try:
        cls = source.globals[parts[0]]
        for attr in parts[1:-1]:
            cls = getattr(cls, attr)
    except (KeyError, AttributeError):
        return None
    attr = inspect.getattr_static(cls, parts[-1], None) if isinstance(cls, type) else None
    attr = getattr(attr, "__srcad_function__", attr)  # @srcad.differentiable on the method
    self_name = args[0].id
    if getattr(attr, "__code__", None) is not fn.__code__ or self_name in names_stored(node):
        return None
    return self_name, parts[:-1]


def _through_self(call, parts, owner, source):
    """``self.step(x)`` in a method of ``C`` as ``C.step(self, x)`` when ``C.step`` is a plain
    function, annotated ``through_self`` (what ``method_check`` checks when it runs); else
    False."""
    self_name, class_path = owner
    return _through_class(call, self_name, parts[1], class_path, source)


def _through_parameter(call, parts, cls, source):
    """``model.predict(x)`` (or ``model(x)``) on a parameter whose argument's class ``C`` the
    code is compiled for, as ``C.predict(model, x)`` (``C.__call__(model, x)``), when that is
    a plain function of the user's code and the module reaches ``C`` by name; checked when
    the code runs as ``self.step`` is; else False."""
    method = parts[1] if len(parts) == 2 else "__call__"
    function = inspect.getattr_static(cls, method, None)
    if not isinstance(function, types.FunctionType) or _library_code(function):
        return False
    class_path = _class_path(cls, source)
    return class_path is not None and _through_class(call, parts[0], method, class_path, source)


def _records_built_once(nodes, locals_, source):
    """``{name: class}`` for each local bound once, to a record its class builds
    (``s = State(x, v)``, ``passes.records``): ``s.energy()`` is a method of that class.
    ``nodes``: the function's nodes; ``locals_``: its local names."""
    from .records import record_fields

    stores = {}
    for n in nodes:
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            stores[n.id] = stores.get(n.id, 0) + 1
    found = {}
    for s in nodes:
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
                and stores.get(s.targets[0].id) == 1 and isinstance(s.value, gast.Call)):
            continue
        parts = dotted(s.value.func)
        if parts is None or parts[0] in locals_:
            continue
        try:
            cls = source.lookup(parts[0])
            for attr in parts[1:]:
                cls = getattr(cls, attr)
        except (KeyError, AttributeError):
            continue
        if record_fields(cls) is not None:
            found[s.targets[0].id] = lookup_path(parts, source)  # guarded as the call's own path
    return found


def argument_classes(fn_node, bound):
    """``((parameter, class), ...)`` of a call's arguments (``bound``: parameter -> atom) that
    are names of objects whose class the calling function's code is compiled for."""
    known = anno(fn_node, "object_classes") or {}
    return tuple((p, known[a.id]) for p, a in bound.items() if isinstance(a, gast.Name) and a.id in known)


def _library_code(function):
    from .. import registry
    from ..compile import _installed

    return (registry.lookup(registry.VJP, function) is not None or registry.is_nondifferentiable(function)
            or _installed(function.__code__.co_filename))


def _class_path(cls, source):
    """A dotted name of ``cls`` in the function's scope: a name bound to it, or its
    qualified name in a module bound to a name; None if there is none."""
    qualname = getattr(cls, "__qualname__", "")
    if "<locals>" in qualname:
        return None
    scope = dict(source.globals)
    for name, cell in source.closure.items():
        try:
            scope[name] = cell.cell_contents
        except ValueError:
            pass
    for name, value in scope.items():
        if value is cls:
            return [name]
    for name, value in scope.items():
        if isinstance(value, types.ModuleType) and value.__name__ == cls.__module__:
            found = value
            for attr in qualname.split("."):
                found = getattr(found, attr, None)
            if found is cls:
                return [name] + qualname.split(".")
    return None


def _through_class(call, receiver, method, class_path, source):
    """The call as ``C.method(receiver, ...)`` (``C`` at ``class_path``), annotated
    ``through_self``; False if ``C.method`` is no plain function."""
    try:
        cls = lookup_path(class_path, source)  # guarded: a class redefined means new code
    except (KeyError, AttributeError):
        return False
    if not isinstance(inspect.getattr_static(cls, method, None), types.FunctionType):
        return False
    path = class_path + [method]
    function = lookup_path(path, source)
    call.func = gast.copy_location(_path_expr(path), call.func)
    call.args = [_path_expr([receiver])] + call.args
    set_anno(call, "callee", Callee("object", obj=readable(function), name=".".join(path)))
    set_anno(call, "through_self", (receiver, method, function))
    return True


def _path_expr(path):
    node = gast.Name(id=path[0], ctx=gast.Load(), annotation=None, type_comment=None)
    for attr in path[1:]:
        node = gast.Attribute(value=node, attr=attr, ctx=gast.Load())
    return node


def global_method(parts, source):
    """For ``model.loss`` (the dotted name ``parts``), a global (or closure) object's Python
    method bound to it: ``(function, model.loss.__func__, model)`` as expressions, so that
    ``model.loss(x)`` is ``model.loss.__func__(model, x)``, a call of the function srcad reads,
    guarded on ``model.loss.__func__`` (a bound method is a new object at each read); None for
    anything else (a library object's method keeps its rule: ``scipy.stats.norm.logpdf``)."""
    try:
        owner = source.lookup(parts[0])
        for attr in parts[1:-1]:
            owner = getattr(owner, attr)
        obj = getattr(owner, parts[-1])
    except (KeyError, AttributeError):
        return None
    if not (len(parts) > 1 and isinstance(obj, types.MethodType) and isinstance(obj.__func__, types.FunctionType)
            and obj.__self__ is owner):
        return None
    from .. import registry
    from ..compile import _installed

    if (registry.lookup(registry.VJP, obj) is not None or registry.is_nondifferentiable(obj)
            or _installed(obj.__func__.__code__.co_filename)):
        return None
    function = lookup_path(parts + ["__func__"], source)
    return function, _path_expr(parts + ["__func__"]), _path_expr(parts[:-1])


def _bound_method_call(call, parts, source):
    """A call of a ``global_method`` rewritten as the call of its function; else False."""
    found = global_method(parts, source)
    if found is None:
        return False
    function, func, receiver = found
    call.func = gast.copy_location(func, call.func)
    call.args = [receiver] + call.args
    set_anno(call, "callee", Callee("object", obj=function, name=".".join(parts)))
    return True


def global_partial(parts, source):
    """For a global ``rhs = functools.partial(g, a, k=v)`` of a Python function ``g`` (the
    dotted name ``parts``): ``(g, rhs.func, [rhs.args[0]], rhs.keywords)`` as expressions, so
    that ``rhs(y)`` is ``rhs.func(rhs.args[0], y, **rhs.keywords)``, a call of ``g`` srcad
    reads (inlined, its keywords bound when the code runs), guarded on ``rhs.func`` and on the
    tuple ``rhs.args``; None for anything else."""
    try:
        obj = source.lookup(parts[0])
        for attr in parts[1:]:
            obj = getattr(obj, attr)
    except (KeyError, AttributeError):
        return None
    if type(obj) is not functools.partial or not isinstance(obj.func, types.FunctionType) or made_by_srcad(obj):
        return None
    function = lookup_path(parts + ["func"], source)
    lookup_path(parts + ["args"], source)  # a tuple: the same object means the same arguments
    fixed = [gast.Subscript(value=_path_expr(parts + ["args"]), slice=gast.Constant(value=i, kind=None),
                            ctx=gast.Load()) for i in range(len(obj.args))]
    return function, _path_expr(parts + ["func"]), fixed, _path_expr(parts + ["keywords"])


def made_by_srcad(obj):
    """Is ``obj`` a derivative srcad made: ``srcad.adjoint(f)`` (a method of srcad's
    ``Differentiable`` bound by a partial)?"""
    return type(obj) is functools.partial and getattr(obj.func, "__module__", None) == "srcad.wrapper"


def _partial_call(call, parts, source):
    """A call of a ``global_partial`` rewritten as the call of its function; else False."""
    found = global_partial(parts, source)
    if found is None:
        return False
    function, func, fixed, keywords = found
    call.func = gast.copy_location(func, call.func)
    call.args = fixed + call.args
    call.keywords = call.keywords + [gast.keyword(arg=None, value=keywords)]
    set_anno(call, "callee", Callee("object", obj=function, name=".".join(parts)))
    return True


def method_check(norm, call):
    """The statement checking, when the code runs, that ``self.step`` resolved through the
    class (``through_self``) is what Python calls: ``check_method(self, 'step', C.step, where)``
    (``errors.check_method``); None for any other call."""
    found = anno(call, "through_self")
    if found is None:
        return None
    from ..errors import check_method
    from ..naming import BUILTIN

    self_name, name, _ = found
    checker = set_anno(gast.Name(id=norm.namer.unique("check_method"), ctx=gast.Load(), annotation=None,
                                 type_comment=None), BUILTIN, ("check_method", check_method))
    where = f"{norm.source.filename}:{getattr(call, 'lineno', '?')}: "
    args = [_path_expr([self_name]), gast.Constant(value=name, kind=None), call.func,
            gast.Constant(value=where, kind=None)]
    if self_name != "self":  # a parameter resolved through its argument's class
        args.append(gast.Constant(value=self_name, kind=None))
    check = gast.Call(func=checker, args=args, keywords=[])
    set_anno(check, "callee", Callee("object", obj=check_method, name="check_method"))
    return gast.copy_location(gast.Expr(value=check), call)


def dotted(node):
    """``a.b.c`` as ['a', 'b', 'c'], or None for anything that is not a plain dotted name."""
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, gast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def resolve_calls(node, source, local_functions=(), param_classes=()):
    """Annotate each ``gast.Call`` in ``node`` with a ``Callee`` under the key ``"callee"``.

    Every name path resolved this way is recorded with its object under ``"resolved"`` on
    ``source.node``: the code generated from it is only valid while they are the same.

    Afterwards every call is one of: ``Callee("object", obj)`` for a name or dotted name
    that resolves through the function's closure, globals and builtins (``np.sin`` becomes
    the real ``numpy.sin``); ``Callee("method", name=...)`` for a method of a local value
    (``x.sum``); ``Callee("local", name=...)`` for a function defined inside the function;
    ``Callee("parameter", name=...)`` for a call of a parameter (``f(y)`` in ``def rk4(f, y)``),
    which inlining replaces by the function the caller passes when it is known
    (``inline.static_function``) and normalisation refuses otherwise. A name that resolves
    nowhere raises ``SrcadSyntaxError`` at its line.

    ``param_classes`` (``(parameter, class)`` pairs: the classes of the arguments the code
    is compiled for) resolves ``model.predict(x)`` and ``model(x)`` on such a parameter
    through the class, as ``self.step(x)`` in a method is.

    >>> import gast, numpy as np
    >>> from srcad.source import capture
    >>> def f(x):
    ...     return np.sin(x).sum()
    >>> src = capture(f)
    >>> tree = resolve_calls(src.node, src)
    >>> calls = [n for n in gast.walk(tree) if isinstance(n, gast.Call)]
    >>> sorted(str(anno(c, "callee")) for c in calls)
    ["Callee(method, 'sum')", "Callee(object, 'np.sin')"]
    """
    locals_ = local_names(node)
    nodes = list(A.walk(node))
    local_functions = set(local_functions) | {n.name for n in nodes if isinstance(n, gast.FunctionDef) and n is not node}
    local_functions |= {t.id for n in nodes if isinstance(n, gast.Assign) and isinstance(n.value, gast.Lambda)
                        for t in n.targets if isinstance(t, gast.Name)}
    owner = _method_owner(source, node)
    param_classes = {p: c for p, c in param_classes if p not in names_stored(node)} if param_classes else {}
    if isinstance(node, gast.FunctionDef):
        param_classes.update(_records_built_once(nodes, locals_, source))
        set_anno(node, "object_classes", param_classes)  # a helper called with these objects is compiled for them
    for call, locals_, params, nested in _calls_in_scopes(node, locals_):
        if anno(call, "callee") is not None:
            continue
        parts = dotted(call.func)
        if parts is None:
            if isinstance(call.func, gast.Attribute):
                set_anno(call, "callee", Callee("method", name=call.func.attr))
                continue
            made = _static_call(call.func, source, locals_)
            if made is not None:  # srcad.grad(h)(x): the function srcad.grad(h) makes
                set_anno(call, "callee", Callee("object", obj=readable(made), name=type(made).__name__))
                continue
            if _transform_of_a_local(call.func, source, locals_):
                raise source.syntax_error(
                    "srcad differentiates srcad.grad(h)(...) inside differentiated code only for a function h "
                    "defined at module level (srcad reads it when compiling); move h out of this function", call)
            raise source.syntax_error(
                "srcad cannot tell which function this call calls; call a named function", call
            )
        root = parts[0]
        if root in local_functions and len(parts) == 1:
            set_anno(call, "callee", Callee("local", name=root))
        elif (root in param_classes and len(parts) <= 2 and root not in nested
              and _through_parameter(call, parts, param_classes[root], source)):
            continue
        elif root in params and len(parts) == 1:
            set_anno(call, "callee", Callee("parameter", name=root))
        elif (owner is not None and root == owner[0] and len(parts) == 2 and root not in nested
              and _through_self(call, parts, owner, source)):
            continue
        elif root in locals_:
            if len(parts) == 1:
                raise source.syntax_error(
                    f"'{root}' is a local variable, so srcad cannot tell which function it holds; "
                    "call the function by its global name, or define it with def in this function",
                    call,
                )
            set_anno(call, "callee", Callee("method", name=parts[-1]))
        else:
            if _bound_method_call(call, parts, source) or _partial_call(call, parts, source):
                continue
            try:
                obj = lookup_path(parts, source)
            except (KeyError, AttributeError):
                raise source.syntax_error(f"name '{'.'.join(parts)}' is not defined", call) from None
            if array_method(obj):  # c.dot(x) of a global array c: differentiated like np.dot(c, x)
                set_anno(call, "callee", Callee("method", name=parts[-1]))
                continue
            set_anno(call, "callee", Callee("object", obj=readable(obj), name=".".join(parts)))
    return _ItemCalls(source, locals_).visit(node)


#: values whose ``[...]`` is indexing proper (its derivative flows to the indexed value)
_INDEXABLE = (np.ndarray, np.generic, list, tuple, dict, str, bytes, int, float, complex, type)


class _ItemCalls(gast.NodeTransformer):
    """``obj[key]`` for a module-level object that is not an array or container (``np.r_``,
    ``np.c_``, ``np.mgrid``) is a call of ``obj.__getitem__``, which needs a derivative rule
    like any call: its key holds the data (``np.r_[x, 2 * x]``), so it must not read as
    indexing a constant, whose derivative would be silently zero."""

    def __init__(self, source, locals_):
        self.source, self.locals_ = source, locals_

    def visit_Subscript(self, node):
        self.generic_visit(node)
        parts = dotted(node.value)
        if not isinstance(node.ctx, gast.Load) or parts is None or parts[0] in self.locals_:
            return node
        try:
            obj = lookup_path(parts, self.source)
        except (KeyError, AttributeError):
            return node
        if isinstance(obj, _INDEXABLE) or not hasattr(type(obj), "__getitem__"):
            return node
        func = gast.Attribute(value=node.value, attr="__getitem__", ctx=gast.Load())
        call = gast.Call(func=func, args=[self.key(node.slice)], keywords=[])
        set_anno(call, "callee", Callee("object", obj=obj.__getitem__, name=".".join(parts) + ".__getitem__"))
        return gast.copy_location(call, node)

    def key(self, index):
        """An index expression as a value: ``a:b:c`` becomes ``slice(a, b, c)``."""
        if isinstance(index, gast.Slice):
            bounds = [gast.Constant(value=None, kind=None) if b is None else b
                      for b in (index.lower, index.upper, index.step)]
            call = gast.Call(func=gast.Name(id="slice", ctx=gast.Load(), annotation=None, type_comment=None),
                             args=bounds, keywords=[])
            set_anno(call, "callee", Callee("object", obj=slice, name="slice"))
            return call
        if isinstance(index, gast.Tuple):
            return gast.Tuple(elts=[self.key(e) for e in index.elts], ctx=gast.Load())
        return index


def array_method(obj):
    """Is ``obj`` a method of an array that srcad differentiates as a function of the array
    (``registry.METHODS``)?"""
    from .. import registry

    return isinstance(getattr(obj, "__self__", None), np.ndarray) and getattr(obj, "__name__", None) in registry.METHODS


def lookup_path(parts, source):
    """The object the dotted name ``parts`` denotes now; recorded on the function's node
    (``"resolved"``: ``(path, object)`` pairs), so the compiled code can be guarded on it."""
    obj = source.lookup(parts[0])
    for attr in parts[1:]:
        obj = getattr(obj, attr)
    resolved = anno(source.node, "resolved")
    if resolved is None:
        resolved = []
        set_anno(source.node, "resolved", resolved)
    resolved.append((tuple(parts), obj))
    return obj


def readable(obj):
    """What srcad reads for a call of ``obj``: a gradient made by ``srcad.grad`` reads as its
    generated adjoint (``__srcad_source__``), whose source is registered with linecache."""
    make = getattr(obj, "__srcad_source__", None)
    return make() if make is not None else obj


def _transform_of_a_local(func, source, locals_):
    """Is ``func`` a call of a static transform (``srcad.grad``) on a local function?"""
    if not isinstance(func, gast.Call) or not func.args:
        return False
    parts = dotted(func.func)
    try:
        transform = lookup_path(parts, source) if parts is not None and parts[0] not in locals_ else None
    except (KeyError, AttributeError):
        return False
    arg = dotted(func.args[0])
    return getattr(transform, "__srcad_static__", False) and arg is not None and arg[0] in locals_


def _static_call(func, source, locals_):
    """``transform(h, ...)`` evaluated now, if ``transform`` is marked ``__srcad_static__`` (pure
    function transformations such as ``srcad.grad``) and its arguments are globals or literals."""
    if not isinstance(func, gast.Call):
        return None
    parts = dotted(func.func)
    if parts is None or parts[0] in locals_:
        return None
    try:
        transform = lookup_path(parts, source)
    except (KeyError, AttributeError):
        return None
    if not getattr(transform, "__srcad_static__", False):
        return None
    values = []
    for arg in list(func.args) + [k.value for k in func.keywords]:
        if isinstance(arg, gast.Constant) or (isinstance(arg, gast.Tuple) and all(
                isinstance(e, gast.Constant) for e in arg.elts)):
            values.append(gast.literal_eval(arg))
            continue
        arg_parts = dotted(arg)
        if arg_parts is None or arg_parts[0] in locals_:
            return None
        try:
            values.append(lookup_path(arg_parts, source))
        except (KeyError, AttributeError):
            return None
    positional = values[: len(func.args)]
    keywords = {k.arg: v for k, v in zip(func.keywords, values[len(func.args):])}
    return transform(*positional, **keywords)
