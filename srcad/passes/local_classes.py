"""Which local objects ``passes.local_objects`` lowers, and how they are made: the class an
assignment calls (a plain class of the function's module; a record class is
``passes.records``'), a dataclass's generated ``__init__`` with its ``__post_init__`` as the
function it runs, an object made only to call its method (``Model(w).loss(x)``) named
first, as any other local object, and which ``super()`` calls a method makes (only
``super().m(...)`` and ``super(C, self).m(...)`` in the method itself, not in a nested
function or comprehension: ``super_calls``) and which ``Base.m(self, ...)`` (``base_call``)."""
import dataclasses
import inspect
import math
import sys
import types

import gast

from .. import astutil as A, facts
from .callees import dotted, local_names, lookup_path
from .local_functions import SCOPES


class Refused(Exception):
    """Why a local object cannot be lowered."""


def attribute_store_advice():
    """What to write instead of ``self.last = h`` in a differentiated function (a loss method
    caching a value): srcad's code keeps no object's state from one call to the next."""
    return ("return the value instead (with grad(..., has_aux=True): return loss, aux) and store it where you "
            "call srcad, or compute it outside the differentiated function (in a method you call after the gradient)")


def made_class(assign, locals_, source):
    """``(class, None)`` for the class ``o = C(...)`` calls, where it is a plain class of the
    function's module and no record class (``passes.records`` builds those); ``(class, why
    not)`` for a plain class of another module; else None."""
    from .records import record_fields

    if not (len(assign.targets) == 1 and isinstance(assign.targets[0], gast.Name)
            and isinstance(assign.value, gast.Call)):
        return None
    cls = called_class(assign.value, locals_, source)
    if not isinstance(cls, type) or type(cls) is not type or record_fields(cls) is not None:
        return None
    init = inspect.getattr_static(cls, "__init__")
    if not isinstance(init, types.FunctionType) and not (init is object.__init__ and cls.__module__ == source.globals.get(
            "__name__")):
        return None  # a library's class: as before (a class of this module without __init__: object's, made empty)
    if getattr(init, "__globals__", source.globals) is not source.globals:
        here = source.globals.get("__name__", "?")
        return cls, (f"its class is defined in module {cls.__module__}, not in this function's module {here} (its "
                     f"methods read that module's names): define this function in module {cls.__module__}; or, where "
                     f"its methods set no attribute, make {cls.__qualname__} a dataclass (srcad differentiates its "
                     "fields, made here or passed as an argument) or make the object outside and pass it as an "
                     "argument (a plain object's attributes are then constants)")
    return cls, None


def called_class(call, locals_, source):
    """What the dotted name ``call`` calls denotes (a global, a closure variable's attribute;
    not a local name), or None."""
    parts = dotted(call.func)
    if parts is None or parts[0] in locals_:
        return None
    try:
        return lookup_path(parts, source)  # guarded: the class rebound means new code
    except (KeyError, AttributeError):
        return None


def guard_method(call, key, source):
    """Guard the code on the method ``key`` (``(class, name)``, the class whose own attribute
    it is) that the object the construction ``call`` makes (``made_class``) runs: pasted into
    the code, it rebound on the class (or its defaults set) since means new code, as rebinding
    the class does. One Python finds on the object is guarded as ``C.name`` (``C`` as your code
    names it), one a ``super()`` call reaches past it as its class's own, named in its module."""
    owner, name = key
    parts = dotted(call.func)
    try:
        if getattr(lookup_path(parts, source), name) is getattr(owner, name):
            lookup_path(parts + [name], source)
            return
    except (KeyError, AttributeError, TypeError):
        pass
    path = owner.__qualname__.split(".")
    scope = vars(sys.modules[owner.__module__]) if owner.__module__ in sys.modules else {}
    found = scope.get(path[0])
    for attr in path[1:]:
        found = getattr(found, attr, None)
    if found is not owner:
        raise Refused(f"srcad cannot name {owner.__qualname__} in its module to check its {name} when the code "
                      f"runs: define the class at the top level of module {owner.__module__}")
    function = vars(owner)[name]
    facts.record(scope, path + [name], function)
    if isinstance(function, types.FunctionType):
        facts.record(function, ("__defaults__",), function.__defaults__)


def name_temporary_objects(node, source, locals_):
    """``return Model(w).loss(x)`` (``y = Layer(w)(x)``, the call a statement's whole value) as
    ``model = Model(w)`` then ``return model.loss(x)``: Python runs the same steps in the same
    order, and the object, named, is lowered like any other. Returns the calls of a method of
    such an object made inside a larger expression, which are left as they are (named first,
    the object would be made before what Python evaluates ahead of it)."""
    taken = A.all_names(node)
    named = set()
    for block in list(A.blocks(node.body)):
        for k in range(len(block) - 1, -1, -1):
            s = block[k]
            value = s.value if isinstance(s, (gast.Assign, gast.Return, gast.Expr)) else None
            receiver = _lowered_receiver(value, locals_, source)
            if receiver is None:
                continue
            name = fresh_in(_snake(dotted(receiver.func)[-1]), taken | set(source.globals))
            taken.add(name)
            named.add(id(value))
            known = A.anno(source.node, "renamed_from") or {}  # (messages speak of Model(w), not of model)
            A.set_anno(source.node, "renamed_from", {**known, name: A.to_source(receiver).strip()})
            if isinstance(value.func, gast.Attribute):
                value.func.value = A.load(name)
            else:
                value.func = A.load(name)
            block.insert(k, gast.copy_location(gast.Assign(targets=[A.store(name)], value=receiver,
                                                           type_comment=None), s))
    return [n for n in A.walk(node) if id(n) not in named and _lowered_receiver(n, locals_, source) is not None]


def _lowered_receiver(call, locals_, source):
    """The call ``C(...)`` where ``call`` is ``C(...).method(...)`` or ``C(...)(...)`` and srcad
    lowers ``C``'s objects (a plain class of the module, a record class); else None."""
    if not isinstance(call, gast.Call):
        return None
    receiver = call.func.value if isinstance(call.func, gast.Attribute) else call.func
    if not isinstance(receiver, gast.Call):
        return None
    from .records import record_fields

    lowered = made_class(gast.Assign(targets=[A.store("_")], value=receiver, type_comment=None), locals_, source)
    if (lowered is None or lowered[1] is not None) and record_fields(called_class(receiver, locals_, source)) is None:
        return None  # (an object srcad does not lower: left as it was)
    return receiver


def _snake(class_name):
    """``LinearModel`` -> ``linear_model``, ``MLP`` -> ``mlp``: the name a temporary object of the class gets."""
    return "".join(f"_{c.lower()}" if c.isupper() and k and class_name[k - 1].islower() else c.lower()
                   for k, c in enumerate(class_name))


def dataclass_init(cls, method):
    """The ``__init__`` the dataclass ``cls`` with a ``__post_init__`` runs, as a function: ``self.f = f``
    for each field, then the body of ``__post_init__`` (a dataclass without one is a record:
    ``passes.records``). None for another class; refused where it would not be that function:
    a field without a plain parameter (``init=False``, keyword-only, an ``InitVar``), a default
    not a literal (a ``default_factory``), a ``__post_init__`` that returns or uses a field's
    name, which the parameters would capture. ``method(name)``: the ``FunctionDef`` of a
    method of ``cls``, refused where it is no plain function of the module."""
    fields = init_fields(cls)
    if fields is None:
        return None
    post = method("__post_init__")
    me = post.args.args[0].id
    where = f"{cls.__qualname__}.__post_init__"
    params = list(inspect.signature(cls).parameters.values())
    if len(post.args.args) != 1 or [p.name for p in params] != list(fields) or any(
            p.kind is not p.POSITIONAL_OR_KEYWORD for p in params):
        raise Refused(f"its fields are not the plain parameters of its __init__ ({where} takes an InitVar, "
                       "or a field is keyword-only or init=False): make each field a plain parameter")
    if any(isinstance(n, gast.Return) for n in A.walk(post)):
        raise Refused(f"{where} has a return statement: remove it")
    clash = sorted(A.all_names(post) & set(fields))
    if clash or me in fields:
        raise Refused(f"{where} uses the name '{(clash or [me])[0]}', which is also a field's: rename it")
    defaults = []
    for p in params:
        if p.default is not p.empty and not _literal(p.default):
            raise Refused(f"the default of its field '{p.name}' is not a literal (a default_factory?): make it "
                           "one (a number, None) or pass the value")
        defaults.extend([] if p.default is p.empty else [A.const(p.default)])
    init = A.deepcopy(post)
    init.name = "__init__"
    init.args.args += [gast.Name(id=f, ctx=gast.Param(), annotation=None, type_comment=None) for f in fields]
    init.args.defaults = defaults
    stores = [gast.copy_location(gast.Assign(targets=[gast.Attribute(value=A.load(me), attr=f, ctx=gast.Store())],
                                             value=A.load(f), type_comment=None), post) for f in fields]
    init.body = stores + [s for s in init.body if not _docstring(s)]
    return init


def init_fields(cls):
    """The fields of a dataclass whose ``__init__`` is the generated one and which has a
    ``__post_init__``, in order; else None."""
    init = inspect.getattr_static(cls, "__init__", None)
    code = getattr(init, "__code__", None)
    if not (dataclasses.is_dataclass(cls) and hasattr(cls, "__post_init__") and code is not None
            and code.co_filename.startswith("<")):
        return None
    return [f.name for f in dataclasses.fields(cls)]


def _literal(value):
    return value is None or type(value) in (bool, int, str) or type(value) is float and math.isfinite(value)


def _docstring(s):
    return isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant) and isinstance(s.value.value, str)


def fresh_in(base, taken):
    while base in taken:
        base += "_"
    return base


def super_calls(fdef, owner, has_cell, source):
    """``(call, method)`` for each ``super().method(...)`` or ``super(Owner, self).method(...)``
    in ``fdef``, a method of the class ``owner`` (None: a function no class body defines, as a
    dataclass's generated ``__init__``), and the ids of the ``self`` names those ``super(...)``
    take. ``has_cell``: the function has the ``__class__`` cell holding ``owner`` that Python
    gives a method of a class body using ``super()``. Refused: any other use of ``super`` or
    ``__class__``, one in a nested function or comprehension (there it is not the method's),
    ``super`` rebound."""
    me = fdef.args.args[0].id
    where = f"{owner.__qualname__}.{fdef.name}" if owner is not None else fdef.name
    parents = {id(c): p for p in A.walk(fdef) for c in gast.iter_child_nodes(p)}
    nested = {id(n) for s in A.walk(fdef) if isinstance(s, SCOPES) and s is not fdef for n in A.walk(s)}
    found, self_names = [], set()
    for n in A.walk(fdef):
        if not (isinstance(n, gast.Name) and n.id in ("super", "__class__")):
            continue
        line = getattr(n, "lineno", "?")
        if id(n) in nested:
            raise Refused(f"{where} uses {n.id} in a nested function or comprehension (line {line}), where it is not "
                          "the method's: call super().method(...) in the method itself and pass the value in")
        sup, attr = parents.get(id(n)), None
        attr = parents.get(id(sup)) if isinstance(sup, gast.Call) and sup.func is n and not sup.keywords else None
        call = parents.get(id(attr)) if isinstance(attr, gast.Attribute) and attr.value is sup else None
        if (n.id != "super" or not isinstance(call, gast.Call) or call.func is not attr or owner is None
                or "super" in local_names(fdef) or source.globals.get("super", super) is not super):
            raise Refused(f"{where} uses {n.id} otherwise than to call a method, as super().method(...) in a method "
                          f"of a class (line {line}): write that, or call the base class's method by name")
        if sup.args:  # super(Owner, self): the method's own class and first parameter only
            parts = dotted(sup.args[0]) if len(sup.args) == 2 else None
            try:
                named = lookup_path(parts, source) if parts else None
            except (KeyError, AttributeError):
                named = None
            if named is not owner or not (isinstance(sup.args[1], gast.Name) and sup.args[1].id == me):
                raise Refused(f"{where} calls super with arguments other than its own class and '{me}' (line "
                              f"{line}): srcad follows super() and super({owner.__qualname__}, {me}) only")
            self_names.add(id(sup.args[1]))
        elif not has_cell:
            raise Refused(f"{where} calls super() but was not defined in the body of {owner.__qualname__} (line "
                          f"{line}), so Python has no class for it: define it there")
        found.append((call, attr.attr))
    return found, self_names


def base_call(n, parent, bound, cls, source):
    """``(key, call)`` where ``parent`` is ``Base.method(n, ...)``, ``n`` (the object, of class
    ``cls``) its first argument only and ``Base`` (no name in ``bound``, the method's own) a
    module's class of the object's method resolution order: the method Python finds on
    ``Base``, keyed as ``passes.local_objects`` keys methods, and the call without ``n`` (as
    ``self.method(...)`` is written); else None."""
    if not (isinstance(parent, gast.Call) and parent.args and parent.args[0] is n
            and isinstance(parent.func, gast.Attribute)):
        return None
    parts = dotted(parent.func.value)
    if parts is None or parts[0] in bound:
        return None
    try:
        base = lookup_path(parts, source)
    except (KeyError, AttributeError):
        return None
    if not (isinstance(base, type) and base in cls.__mro__):
        return None
    name = parent.func.attr
    key = next(((c, name) for c in base.__mro__ if name in vars(c)), (None, name))
    call = gast.copy_location(gast.Call(func=parent.func, args=parent.args[1:], keywords=parent.keywords), parent)
    return key, call


def called_method(n, parent, parents):
    """``(method, call)`` where the name ``n`` is the object of a call of one of its methods
    (``self.step(q)``, ``self(x)``: ``__call__``); else None."""
    if isinstance(parent, gast.Call) and parent.func is n:
        return "__call__", parent
    grand = parents.get(id(parent))
    if isinstance(parent, gast.Attribute) and parent.value is n and isinstance(grand, gast.Call) and grand.func is parent:
        return parent.attr, grand
    return None


def attributes_set(s, me):
    """The attributes of ``me`` the statement ``s`` itself assigns, in order."""
    targets = s.targets if isinstance(s, gast.Assign) else [s.target] if isinstance(s, gast.AnnAssign) else []
    return [n.attr for t in targets for n in (t.elts if isinstance(t, gast.Tuple) else [t])
            if isinstance(n, gast.Attribute) and isinstance(n.value, gast.Name) and n.value.id == me]
