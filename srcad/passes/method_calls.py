"""Methods resolved through their class: ``self.step(x)`` in a method of ``C`` is
``C.step(self, x)``; ``model.predict(x)`` and ``model(x)`` on a parameter whose argument's
class the code is compiled for, and ``s.energy()`` on a name holding a record of one class
(``record_classes.record_locals``), likewise; ``model.loss(x)`` on a global object and a global ``functools.partial`` are the
functions they are bound to. Each resolved function is guarded on its name path, and a method
called through an object is checked when the code runs (``method_check``)."""
import functools
import inspect
import types
from typing import NamedTuple

import gast

from ..astutil import anno, deepcopy, names_stored, replace_names, set_anno, walk
from ..code_reading import attribute_now
from .callees import Callee, denoted, dotted, lookup_path, path_expr, readable


def method_owner(source, node):
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


def through_self(call, parts, owner, source):
    """``self.step(x)`` in a method of ``C`` as ``C.step(self, x)`` when ``C.step`` is a plain
    function, annotated ``through_self`` (what ``method_check`` checks when it runs); else
    False."""
    self_name, class_path = owner
    return _through_class(call, [self_name], parts[1], class_path, source)


def through_super(call, owner, source, self_class=None):
    """``super().step(x)`` (or ``super(C, self).step(x)``) in a method of ``C`` as
    ``B.step(self, x)``, ``B`` the first class after ``C`` in the method resolution order of
    ``self_class`` (the class of ``self`` the code is compiled for, where known; else ``C``'s)
    whose own attribute ``step`` is a plain function (or a static method's), when the module
    reaches ``B`` by name (a mixin's ``super()`` reaches the class beside it); annotated
    ``through_self`` with ``after`` set, so that when the code runs ``method_check`` checks
    that ``super(C, self).step`` is that function (another subclass of ``C`` may put another
    class between them). Else False: a class method (it would bind ``type(self)``, not ``B``),
    a ``super`` rebound, anything else."""
    func = call.func
    if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Call)
            and isinstance(func.value.func, gast.Name) and func.value.func.id == "super"
            and not func.value.keywords):
        return False
    self_name, class_path = owner
    try:
        cls = lookup_path(class_path, source)
        if denoted(["super"], source) is not super:
            return False
    except (KeyError, AttributeError):
        return False
    given = func.value.args
    if given:  # super(C, self): the owner class and the method's own first parameter only
        if len(given) != 2 or dotted(given[0]) != class_path or dotted(given[1]) != [self_name]:
            return False
    elif getattr(source.closure.get("__class__"), "cell_contents", None) is not cls:
        return False  # zero-argument super() reads the __class__ cell Python makes for it
    order = self_class.__mro__ if isinstance(self_class, type) and cls in self_class.__mro__ else cls.__mro__
    for base in order[order.index(cls) + 1:]:
        if func.attr in vars(base):
            break
    else:
        return False
    if _binding(vars(base)[func.attr]) not in ("method", "static") or library_code(_function_of(vars(base)[func.attr])):
        return False
    base_path = class_path_of(base, source)
    if base_path is None or not _through_class(call, [self_name], func.attr, base_path, source):
        return False
    set_anno(call, "through_self", anno(call, "through_self")._replace(after=path_expr(class_path)))
    return True


def through_parameter(call, parts, classes, source):
    """``model.predict(x)`` (or ``model(x)``) on a parameter whose argument's class ``C`` the
    code is compiled for, as ``C.predict(model, x)`` (``C.__call__(model, x)``), when that is
    a plain function of the user's code and the module reaches ``C`` by name; checked when
    the code runs as ``self.step`` is; else False. So too for an object the argument holds in
    an attribute: ``self.l2.forward(h)`` as ``Dense.forward(self.l2, h)``, and ``self.l2(h)``.
    ``classes``: ``{"model": C, "model.l2": D}``, the classes the code is compiled for."""
    if ".".join(parts) in classes:  # the object itself is called (an attribute holding it comes first)
        receiver, method = parts, "__call__"
    elif len(parts) >= 2 and ".".join(parts[:-1]) in classes:
        receiver, method = parts[:-1], parts[-1]
    else:
        return False
    cls = classes[".".join(receiver)]
    attr = inspect.getattr_static(cls, method, None)
    if _binding(attr) is None or isinstance(_function_of(attr), types.FunctionType) and library_code(_function_of(attr)):
        return False
    class_path = class_path_of(cls, source)
    return class_path is not None and _through_class(call, receiver, method, class_path, source)


class ClassItself(NamedTuple):
    """The class a parameter holds itself (``cls`` of a class method called as ``Loss.total(x)``),
    not the class of an object it holds: a ``param_classes`` entry of ``resolve_calls``."""
    cls: type


def through_class_itself(call, parts, class_objects, source):
    """``cls.huber(r)`` on a parameter holding the class ``C`` itself (``class_objects``:
    ``{"cls": C}``) as Python calls it: ``C.huber(r)`` for a static method or a plain function
    (read through a class, it binds nothing), ``C.m.__func__(C, r)`` for a class method;
    checked when the code runs as ``self.step`` is (``cls.huber`` is that function: a subclass
    passed as ``cls`` may override it). False for anything else (a class with a metaclass of
    its own, whose attributes it may change)."""
    if len(parts) != 2 or parts[0] not in class_objects:
        return False
    cls = class_objects[parts[0]]
    attr = inspect.getattr_static(cls, parts[1], None)
    binding = _binding(attr)
    if type(cls) is not type or binding is None or library_code(_function_of(attr)):
        return False
    class_path = class_path_of(cls, source)
    return class_path is not None and _through_class(call, parts[:1], parts[1], class_path, source, plain="static")


def local_names(fn_node):
    """The names a function binds: its parameters and every name it stores."""
    return names_stored(fn_node) | {arg.id for arg in fn_node.args.args}


def argument_classes(fn_node, bound, source, local):
    """``((parameter, class), ...)`` of a call's arguments (``bound``: parameter -> atom) that
    are names of objects whose class the calling function's code is compiled for, with the
    objects they hold (``("self.l2", D)`` for an argument ``model`` known with ``model.l2``),
    or names of a global or closure object (``loss(model, x)`` with a module's ``model``: its
    class and those it holds, the name guarded like a called one; a global class of yours,
    ``ClassItself``: ``cls`` of ``Loss.total.__func__(Loss, x)``). ``local``: the calling
    function's ``local_names``, read once per pass (a call site each would walk it again)."""
    from ..held_objects import object_classes, user_object

    known = {**(anno(fn_node, "object_classes") or {}), **(anno(fn_node, "held_functions") or {})}
    paths = _attribute_temporaries(fn_node) if known else {}
    found = []
    for p, a in bound.items():
        if not isinstance(a, gast.Name):
            continue
        name = paths.get(a.id, a.id)  # _t1 = self.body: the object at that path
        held = [(p + path[len(name):], cls) for path, cls in known.items()
                if path == name or path.startswith(name + ".")]
        if len(held) < 2 and a.id not in local:  # a global object the caller knows only the class of: what it holds too
            try:
                obj = source.lookup(a.id) if a.id not in local else None
            except KeyError:
                obj = None
            if obj is not None and user_object(obj):
                held = list(object_classes((p,), (obj,))) or held
                for path, _ in held:  # the code is made for these objects: guarded by identity
                    lookup_path([a.id] + path.split("[]")[0].split(".")[1:], source)  # (a list: the list)
            elif type(obj) is type and obj.__module__ not in ("builtins", "numpy"):
                held = [(p, ClassItself(lookup_path([a.id], source)))]  # Loss.total.__func__(Loss, x): cls is Loss
        found.extend(held)
    return tuple(found)


def _attribute_temporaries(fn_node):
    """``{name: "a.b"}`` for names bound once, to a dotted attribute path (normal form's
    ``_t1 = self.body``, or the user's ``body = self.body``)."""
    count, found = {}, {}
    nodes = list(walk(fn_node))
    for n in nodes:
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            count[n.id] = count.get(n.id, 0) + 1
    for s in nodes:
        if (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
                and isinstance(s.value, gast.Attribute) and count.get(s.targets[0].id) == 1):
            parts = dotted(s.value)
            if parts is not None and parts[0] not in count:  # a path from a name never rebound (a parameter)
                found[s.targets[0].id] = ".".join(parts)
    return found


def library_code(function):
    from .. import registry
    from ..code_reading import installed_file

    return (registry.lookup(registry.VJP, function) is not None or registry.is_nondifferentiable(function)
            or not isinstance(function, types.FunctionType) or installed_file(function.__code__.co_filename))


def class_path_of(cls, source):
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


def _through_class(call, receiver, method, class_path, source, plain="method"):
    """The call as ``C.method(receiver, ...)`` (``C`` at ``class_path``, ``receiver`` a dotted
    name's parts), annotated ``through_self``; a static method's as ``C.method(...)``, a class
    method's as ``C.method.__func__(C, ...)``, its first parameter then the class itself
    (``ClassItself``, for the helper's own calls) (a ``custom_vjp`` keeps its rule: it is the
    callee). ``plain``: how a plain function binds ("static" where the receiver is a class).
    False if ``C.method`` is none of these (``_binding``)."""
    try:
        cls = lookup_path(class_path, source)  # guarded: a class redefined means new code
    except (KeyError, AttributeError):
        return False
    binding = _binding(inspect.getattr_static(cls, method, None))
    if binding is None:
        return False
    binding = plain if binding == "method" else binding
    if binding == "class":
        set_anno(call, "receiver_class", ClassItself(cls))
    path = class_path + [method] + (["__func__"] if binding == "class" else [])
    function = lookup_path(path, source)
    call.func = gast.copy_location(path_expr(path), call.func)
    call.args = {"method": [path_expr(receiver)], "static": [], "class": [path_expr(class_path)]}[binding] + call.args
    set_anno(call, "callee", Callee("object", obj=readable(function), name=".".join(path)))
    set_anno(call, "through_self", ThroughSelf(path_expr(receiver), ".".join(receiver), method, binding))
    return True


def _binding(attr):
    """How the class attribute ``attr`` binds, if srcad calls it through its class: "method" for
    a plain function (or a ``custom_vjp`` of one), "class" for a class method of a plain
    function, "static" for a static method of a plain function or of one with a rule
    (``staticmethod(np.tanh)``), and for a function with a rule stored on the class that binds
    nothing when read through an object (``act = np.tanh``: a ufunc, a builtin); None for
    anything else (``act = np.sum`` binds its object, as a plain function does)."""
    if isinstance(attr, (staticmethod, classmethod)):
        if isinstance(attr, classmethod):
            return "class" if isinstance(attr.__func__, types.FunctionType) else None
        return "static" if isinstance(attr.__func__, types.FunctionType) or has_rule(attr.__func__) else None
    if not hasattr(type(attr), "__get__") and has_rule(attr):
        return "static"
    return "method" if isinstance(_function_of(attr), types.FunctionType) else None


def _function_of(attr):
    """The plain function a class attribute (a function, a static or class method, a
    ``custom_vjp``) calls."""
    from ..extend import custom_vjp

    if isinstance(attr, (staticmethod, classmethod)):
        return attr.__func__
    return attr.fn if isinstance(attr, custom_vjp) else attr


class ThroughSelf(NamedTuple):
    """A method call resolved through the class, as ``method_check`` checks it when the code
    runs: the receiver (an expression, renamed with the tree it annotates when a helper is
    inlined: ``A.replace_names``), its text in the user's code, the method's name and how it
    binds (``_binding``); for ``super().method``, the class after which it is looked up (an
    expression, ``through_super``); for a method of an object in a list, the names of the
    classes the code was made for (``item_methods``)."""
    receiver: gast.expr
    text: str
    method: str
    binding: str
    after: object = None
    among: str = None

    def renamed(self, mapping):
        after = None if self.after is None else replace_names(deepcopy(self.after), mapping)
        return self._replace(receiver=replace_names(deepcopy(self.receiver), mapping), after=after)


def global_method(parts, source):
    """For ``model.loss`` (the dotted name ``parts``), a global (or closure) object's Python
    method bound to it: ``(function, model.loss.__func__, model)`` as expressions, so that
    ``model.loss(x)`` is ``model.loss.__func__(model, x)``, a call of the function srcad reads,
    guarded on ``model.loss.__func__`` (a bound method is a new object at each read); a class
    method of the object's class, bound to that class, is ``model.gain.__func__(model.gain.__self__, x)``
    (as Python calls it, the class read when the code runs); None for
    anything else (a library object's method keeps its rule: ``scipy.stats.norm.logpdf``)."""
    if len(parts) < 2:
        return None
    try:
        owner = denoted(parts[:-1], source)
        obj = attribute_now(owner, parts[-1])
    except (KeyError, AttributeError):
        return None
    if not (isinstance(obj, types.MethodType) and _binding(obj.__func__) == "method"):
        return None
    if obj.__self__ is owner:
        receiver = path_expr(parts[:-1])
    elif obj.__self__ is type(owner) and isinstance(inspect.getattr_static(type(owner), parts[-1], None), classmethod):
        receiver = path_expr(parts + ["__self__"])  # a class method through an object: bound to its class
    else:
        return None
    from ..code_reading import installed_file

    if has_rule(obj) or installed_file(_function_of(obj.__func__).__code__.co_filename):
        return None
    function = lookup_path(parts + ["__func__"], source)
    return function, path_expr(parts + ["__func__"]), receiver


def has_rule(obj):
    """Is there a rule for ``obj`` itself (either mode), or is it declared without derivative?"""
    from .. import registry

    return (registry.lookup(registry.VJP, obj) is not None or registry.lookup(registry.JVP, obj) is not None
            or registry.is_nondifferentiable(obj))


def bound_method_call(call, parts, source):
    """A call of a ``global_method`` rewritten as the call of its function; else False."""
    found = global_method(parts, source)
    if found is None:
        return False
    function, func, receiver = found
    call.func = gast.copy_location(func, call.func)
    call.args = [receiver] + call.args
    set_anno(call, "callee", Callee("object", obj=function, name=".".join(parts)))
    if dotted(receiver) == parts[:-1]:  # the object itself (not a class method's class): inlined, it is made for its class
        owner = denoted(parts[:-1], source)  # (a class's class method: made for the class itself)
        set_anno(call, "receiver_class", ClassItself(owner) if isinstance(owner, type) else type(owner))
    return True


def called_object_call(call, parts, source):
    """``act(x)`` of a global (or closure) object whose class defines ``__call__`` in Python:
    rewritten as ``act.__call__(x)``, the ``bound_method_call`` of that method (a layer object
    called like a function). Returns the object, or None for any other call."""
    try:
        obj = denoted(parts, source)
    except (KeyError, AttributeError):
        return None
    if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType,
                        functools.partial)) or not isinstance(getattr(type(obj), "__call__", None), types.FunctionType):
        return None
    if has_rule(obj):
        return None  # a rule for the object itself (a custom_vjp) keeps it
    if global_method(parts + ["__call__"], source) is None:
        return None
    call.func = gast.copy_location(gast.Attribute(value=call.func, attr="__call__", ctx=gast.Load()), call.func)
    bound_method_call(call, parts + ["__call__"], source)
    return obj


def global_partial(parts, source):
    """For a global ``rhs = functools.partial(g, a, k=v)`` of a Python function ``g`` (the
    dotted name ``parts``): ``(g, rhs.func, [rhs.args[0]], rhs.keywords)`` as expressions, so
    that ``rhs(y)`` is ``rhs.func(rhs.args[0], y, **rhs.keywords)``, a call of ``g`` srcad
    reads (inlined, its keywords bound when the code runs), guarded on ``rhs.func`` and on the
    tuple ``rhs.args``; None for anything else."""
    try:
        obj = denoted(parts, source)
    except (KeyError, AttributeError):
        return None
    if type(obj) is not functools.partial or not isinstance(obj.func, types.FunctionType):
        return None
    function = lookup_path(parts + ["func"], source)
    lookup_path(parts + ["args"], source)  # a tuple: the same object means the same arguments
    return (function,) + partial_reads(parts, len(obj.args))


def partial_reads(parts, count):
    """``(p.func, [p.args[0], ...], p.keywords)``, the expressions a call of the partial at the
    dotted name ``parts`` (fixing ``count`` positional arguments) reads when the code runs."""
    fixed = [gast.Subscript(value=path_expr(parts + ["args"]), slice=gast.Constant(value=i, kind=None),
                            ctx=gast.Load()) for i in range(count)]
    return path_expr(parts + ["func"]), fixed, path_expr(parts + ["keywords"])


def partial_call(call, parts, source):
    """A call of a ``global_partial`` rewritten as the call of its function; else False. A call
    passing by name a keyword the partial fixes overrides it, as in Python: the partial's other
    keywords are then passed one by one (their names guarded), not as ``**``."""
    found = global_partial(parts, source)
    if found is None:
        return False
    keywords = denoted(parts, source).keywords
    own = {k.arg for k in call.keywords}
    if None not in own and own & set(keywords):
        lookup_path(parts + ["keywords"], source)
        spread_rule_partial(call, parts, found[0], len(found[2]), keywords)
    else:
        spread_partial(call, parts, found[0], len(found[2]))
    return True


def spread_partial(call, parts, function, count):
    """``call`` of the partial at the dotted name ``parts`` of the Python function ``function``
    (fixing ``count`` positional arguments) as ``function``'s call, the partial's arguments in
    front and its keywords as ``**``, read off the partial when the code runs."""
    func, fixed, keywords = partial_reads(parts, count)
    call.func = gast.copy_location(func, call.func)
    call.args = fixed + call.args
    call.keywords = call.keywords + [gast.keyword(arg=None, value=keywords)]
    set_anno(call, "callee", Callee("object", obj=function, name=".".join(parts)))


def rule_partial_call(call, parts, source):
    """A call of a global ``functools.partial`` of a function srcad has a rule for (``CLIP =
    functools.partial(np.clip, a_min=-0.5)``, then ``CLIP(x)``) rewritten as that function's
    call: the partial's arguments in front of the call's, then its keywords, read from it when the
    code runs, less those the call passes itself (they override, as in Python). The rule binds
    keywords by name, so their names are fixed when the code is compiled (guarded, as the
    function and the arguments, on the partial's objects). False for any other call, and for a
    call passing ``**`` keywords, whose names are not known."""
    try:
        obj = denoted(parts, source)
    except (KeyError, AttributeError):
        return False
    own = {k.arg for k in call.keywords}
    if type(obj) is not functools.partial or not has_rule(obj.func) or has_rule(obj) or None in own:
        return False
    function = lookup_path(parts + ["func"], source)
    lookup_path(parts + ["args"], source)
    lookup_path(parts + ["keywords"], source)
    spread_rule_partial(call, parts, function, len(obj.args), obj.keywords)
    return True


def spread_rule_partial(call, parts, function, count, keywords):
    """``call`` of the partial at the dotted name ``parts`` of ``function`` (fixing ``count``
    positional arguments and the keywords named ``keywords``) as ``function``'s call: the
    partial's arguments in front, its keywords the call does not pass itself by name
    (``rule_partial_call``, ``partial_call``), read off the partial when the code runs."""
    own = {k.arg for k in call.keywords}
    func, fixed, mapping = partial_reads(parts, count)
    spread = [gast.keyword(arg=name, value=gast.Subscript(value=deepcopy(mapping), slice=gast.Constant(
        value=name, kind=None), ctx=gast.Load())) for name in keywords if name not in own]
    call.func = gast.copy_location(func, call.func)
    call.args = fixed + call.args
    call.keywords = spread + call.keywords
    set_anno(call, "callee", Callee("object", obj=function, name=".".join(parts)))


def method_check(norm, call):
    """The statement checking, when the code runs, that ``self.step`` resolved through the
    class (``through_self``) is what Python calls: ``check_method(self, 'step', C.step, where)``
    (``errors.check_method``), or ``check_property(self, 'W', C.W.fget, where)`` for a property
    read as its getter's call; None for any other call."""
    found = anno(call, "through_self")
    if found is None:
        return None
    from ..errors import check_method, check_property
    from ..naming import BUILTIN

    check_method = check_property if found.binding == "property" else check_method  # self.W: C.W.fget(self)
    checker = set_anno(gast.Name(id=norm.namer.unique(check_method.__name__), ctx=gast.Load(), annotation=None,
                                 type_comment=None), BUILTIN, (check_method.__name__, check_method))
    where = f"{norm.source.filename}:{getattr(call, 'lineno', '?')}: "
    args = [deepcopy(found.receiver), gast.Constant(value=found.method, kind=None), call.func,
            gast.Constant(value=where, kind=None)]
    if found.text != "self":  # a parameter resolved through its argument's class
        args.append(gast.Constant(value=found.text, kind=None))
    keywords = [] if found.after is None else [gast.keyword(arg="after", value=deepcopy(found.after))]
    if found.among is not None:
        keywords.append(gast.keyword(arg="among", value=gast.Constant(value=found.among, kind=None)))
    if found.binding in ("static", "class"):  # a static method binds nothing, a class method its class
        binds = deepcopy(call.args[0]) if found.binding == "class" else gast.Constant(value=None, kind=None)
        keywords.append(gast.keyword(arg="binds", value=binds))
    check = gast.Call(func=checker, args=args, keywords=keywords)
    set_anno(check, "callee", Callee("object", obj=check_method, name=check_method.__name__))
    return gast.copy_location(gast.Expr(value=check), call)
