"""Methods of objects held in lists, for ``resolve_calls``: ``layer(h)`` and ``layer.forward(h)``
on a local name (``for layer in self.layers``, ``zip(self.layers, ...)``), and
``self.layers[i](h)``, where the arguments hold lists, tuples or dicts of objects of classes the
code is compiled for (``held_objects.object_classes``' ``"model.layers[]0"`` entries; the objects
they hold in attributes too), or the globals the function reads hold such containers (the code
guarded on the classes they hold: another class there compiles again).

Guarantee: such a call is one branch per class that has the method as a plain function of the
user's code, ``Dense.__call__(layer, h) if type(layer) is Dense else Relu.__call__(layer, h)``,
each differentiated as a method called through its class (``method_calls``) and checked when
it runs as those are (``errors.check_method``): an object of a class the code was not made for,
or one whose own attribute hides the method, is refused where the code runs, never given the
derivative of another class's method. A method named as an array's is (``layer.copy()``,
``h.sum()``: the receiver may be an array) is the class's only where the receiver is exactly of
that class, and the array's otherwise: never an array's derivative for an object's method.
The receiver is read more than once only where it is a name or an item of a dotted name at a
name or literal index, which reading cannot change. A function every object of a class there
holds alike in an attribute (``self.act = np.tanh``) is what that class's method is compiled
for (``item_functions``), checked when it runs as any held function is
(``held_objects.check_held_function``)."""
import inspect

import gast

from .. import astutil as A
from ..astutil import anno, set_anno
from ..naming import BUILTIN
from .callees import Callee, denoted, dotted, lookup_path, path_expr, readable
from .method_calls import ThroughSelf, _binding, _function_of, class_path_of, library_code


def held_classes(given, nodes, locals_, source):
    """The classes of the objects in the containers the arguments hold (``given``: path ->
    class, ``object_classes``), then of the objects the arguments hold in attributes, then of
    those in lists, tuples and dicts the function reads from globals (``nodes``: its nodes)."""
    from ..held_objects import CONTAINERS, object_classes

    found = [cls for path, cls in given.items() if "[]" in path]
    found += [cls for path, cls in given.items() if "." in path and "[]" not in path]
    for n in nodes:
        parts = dotted(n) if isinstance(n, (gast.Name, gast.Attribute)) and isinstance(n.ctx, gast.Load) else None
        if parts is None or parts[0] in locals_:
            continue
        try:
            value = denoted(parts, source)
        except (KeyError, AttributeError):
            continue
        held = object_classes((".".join(parts),), (value,)) if value.__class__ in CONTAINERS else ()
        if held:
            lookup_path(parts, source)  # guarded: the list, and the classes it holds (guards.resolved_item_classes)
            found += [cls for _, cls in held]
    return list(dict.fromkeys(found))


def object_items(nodes, locals_, source):
    """The names every binding of which (in ``nodes``) is the target of a ``for`` over a list or
    tuple of the module holding only objects of yours (``for layer in LAYERS``): never an array.
    (The list is guarded on the classes it holds; an object of another class, or an array, put
    there later is refused where the code runs, ``errors.check_method``.)"""
    loops, bindings = {}, {}
    for n in nodes:
        if isinstance(n, gast.For) and isinstance(n.target, gast.Name) and _holds_only_objects(n.iter, locals_, source):
            loops[n.target.id] = loops.get(n.target.id, 0) + 1
        elif isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            bindings[n.id] = bindings.get(n.id, 0) + 1
    return frozenset(name for name, count in loops.items() if bindings[name] == count)


def _holds_only_objects(node, locals_, source):
    """Is ``node`` a dotted name of the module denoting a list or tuple of objects of yours only?"""
    from ..held_objects import user_object

    parts = dotted(node)
    if parts is None or parts[0] in locals_:
        return False
    try:
        value = denoted(parts, source)
    except (KeyError, AttributeError):
        return False
    return value.__class__ in (list, tuple) and len(value) > 0 and all(map(user_object, value))


_DISPLAYS = (gast.List, gast.ListComp, gast.Tuple, gast.Dict, gast.DictComp, gast.Set, gast.SetComp)


def container_locals(nodes):
    """The names every binding of which (in ``nodes``, nested scopes too) is ``name = [...]``,
    ``(...)``, ``{...}`` or a comprehension of those: ``out.append(y)`` on one is the
    container's method, never a method of the classes of objects in lists (``out = [h]``
    beside ``for layer in LAYERS``, whose class may define ``append`` too)."""
    displayed, bindings = {}, {}
    for n in nodes:
        if isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], gast.Name) \
                and isinstance(n.value, _DISPLAYS):
            displayed[n.targets[0].id] = displayed.get(n.targets[0].id, 0) + 1
        elif isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            bindings[n.id] = bindings.get(n.id, 0) + 1  # a parameter, a loop target, an unpacking, del, ...
    return frozenset(name for name, count in displayed.items() if bindings[name] == count)


def item_method_call(call, locals_, classes, source, objects=frozenset()):
    """Annotate ``call`` ``"item_method"`` (the receiver, the method's name and the ``(class,
    path)`` of each class of ``classes`` the module reaches by name with that method as a plain
    function) when it calls a method of a local name or of an item of a dotted name (see the
    module doc), for ``ItemMethodCalls``; False for any other call, or where no class has it."""
    from .. import registry

    receiver, method = _receiver(call.func, locals_)
    if receiver is None:
        return False
    found = []
    for cls in classes:
        attr = inspect.getattr_static(cls, method, None)
        if _binding(attr) != "method" or library_code(_function_of(attr)):
            continue
        path = class_path_of(cls, source)
        if path is not None:
            found.append((cls, path))
    # a name arrays have too (layer.copy(), h.sum()): the class's method for its objects, else the array's
    also_arrays = method != "__call__" and method in registry.METHODS and not (
        isinstance(receiver, gast.Name) and receiver.id in objects
        or isinstance(receiver, gast.Subscript) and _holds_only_objects(receiver.value, locals_, source))
    if also_arrays:  # a class whose method these arguments do not fit is not what h.copy() calls
        found = [(cls, path) for cls, path in found if _fits(inspect.getattr_static(cls, method), call)]
    if not found:
        return False  # x.sum() of an array stays an array method
    set_anno(call, "item_method", (receiver, method, found, also_arrays))
    return True


def _fits(method, call):
    """Could ``call`` of an object's ``method`` bind its arguments (Python raises otherwise)?"""
    if any(isinstance(a, gast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return True
    try:
        inspect.signature(_function_of(method)).bind(None, *call.args, **{k.arg: k.value for k in call.keywords})
    except TypeError:
        return False
    except ValueError:
        return True
    return True


def _receiver(func, locals_):
    """``(receiver, method)`` of a call's function: ``layer`` -> ``(layer, "__call__")``,
    ``layer.forward`` -> ``(layer, "forward")``, ``self.layers[i]`` likewise; ``(None, None)``
    for anything else."""
    if isinstance(func, gast.Name):
        return (func, "__call__") if func.id in locals_ else (None, None)
    if _plain_item(func):
        return func, "__call__"
    if isinstance(func, gast.Attribute) and (
            isinstance(func.value, gast.Name) and func.value.id in locals_ or _plain_item(func.value)):
        return func.value, func.attr
    return None, None


def _plain_item(node):
    """Is ``node`` ``a.b[i]``, ``a[0]`` or ``a[-1]``: an item of a dotted name at a name or a
    literal index?"""
    index = node.slice if isinstance(node, gast.Subscript) else None
    if isinstance(index, gast.UnaryOp) and isinstance(index.op, gast.USub):
        index = index.operand
    return index is not None and dotted(node.value) is not None and isinstance(index, (gast.Name, gast.Constant))


def item_functions(given, held):
    """``{class: ((attribute, HeldFunction), ...)}``: the functions every object of that class in
    the containers the code is compiled for holds in an attribute (``given``: path -> class;
    ``held``: path -> ``HeldFunction``, ``"model.layers[]0.act"``), where all such containers
    agree (an attribute holding another function in one is left out)."""
    found = {}
    for path, cls in given.items():
        if "[]" not in path or not isinstance(cls, type):
            continue
        here = {p[len(path) + 1:]: h for p, h in held.items()
                if p.startswith(path + ".") and "." not in p[len(path) + 1:]}
        found[cls] = here if cls not in found else {a: h for a, h in found[cls].items() if here.get(a) == h}
    return {cls: tuple(functions.items()) for cls, functions in found.items() if functions}


class ItemMethodCalls(gast.NodeTransformer):
    """Each call annotated ``"item_method"`` as its branches (module doc); a branch's call is
    annotated ``"item_functions"`` with the functions ``item_functions`` says the objects of its
    class hold, for which the method is compiled (``call_binding.call_classes``)."""

    def __init__(self, source, functions):
        self.source, self.functions = source, functions

    def visit_Call(self, node):
        self.generic_visit(node)
        found = anno(node, "item_method")
        if found is None:
            return node
        receiver, method, classes, also_arrays = found
        among = ", ".join(cls.__qualname__ for cls, _ in classes)
        if also_arrays:
            result = gast.copy_location(gast.Call(func=A.deepcopy(node.func), args=A.deepcopy(node.args),
                                                  keywords=A.deepcopy(node.keywords)), node)
            set_anno(result, "callee", Callee("method", name=method))
        else:
            result = self.branch(node, receiver, method, classes[-1][1], among)
        for cls, path in reversed(classes if also_arrays else classes[:-1]):
            kind = set_anno(A.load("type"), BUILTIN, ("type", type))
            of = gast.Call(func=kind, args=[A.deepcopy(receiver)], keywords=[])
            set_anno(of, "callee", Callee("object", obj=type, name="type"))
            test = gast.Compare(left=of, ops=[gast.Is()], comparators=[path_expr(path)])
            result = gast.IfExp(test=test, body=self.branch(node, receiver, method, path, among), orelse=result)
        for n in gast.walk(result):
            if "lineno" in n._attributes and not hasattr(n, "lineno"):
                gast.copy_location(n, node)
        return result

    def branch(self, node, receiver, method, path, among):
        """``C.method(receiver, *args)``, checked when it runs to be what Python calls."""
        function = lookup_path(path + [method], self.source)  # guarded: a class redefined means new code
        call = gast.Call(func=path_expr(path + [method]), args=[A.deepcopy(receiver)] + A.deepcopy(node.args),
                         keywords=A.deepcopy(node.keywords))
        set_anno(call, "callee", Callee("object", obj=readable(function), name=".".join(path + [method])))
        text = A.to_source(receiver).strip()
        set_anno(call, "through_self", ThroughSelf(A.deepcopy(receiver), text, method, "method", among=among))
        cls = lookup_path(path, self.source)
        set_anno(call, "receiver_class", cls)  # inlined (f(*args)): made for it
        if self.functions.get(cls):
            set_anno(call, "item_functions", self.functions[cls])
        return gast.copy_location(call, node)
