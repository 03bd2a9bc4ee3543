"""What the objects given to differentiated code hold, as the code is made for them: the
classes of argument objects and of the objects they hold (in attributes, three levels deep,
and in lists, tuples and dicts), and the functions they hold in attributes (``self.act =
np.tanh``, a function of yours, a ``functools.partial`` of one). Dispatch keys compiled code
on these (``dispatch``, ``derivatives``), so an object of another class, or holding another
function, gets code made for it; ``check_held_function`` is what that code checks when it
runs, where it calls a held function (``passes.held_calls``)."""
import functools
import types

import numpy as np

from .errors import UnsupportedCaseError

CONTAINERS = (list, tuple, dict)


def object_classes(params, args):
    """``((parameter, class), ...)`` for each argument whose class is defined in Python outside
    NumPy and the builtins, and ``("parameter.attribute", class)`` for each such object it
    holds in an attribute (``model.l2``, three levels deep): srcad resolves ``model.predict(x)``
    and ``self.l2.forward(h)`` through those classes (``passes.method_calls``), so the compiled
    code is made for them; a list, tuple or dict given or held so adds ``("p.layers[]k", class)``,
    its objects' k-th class (``passes.item_methods``: see ``_add_item_classes``); a function
    such an object holds in an attribute adds ``("model.act", HeldFunction)`` (``held_function``)."""
    found = []
    for p, a in zip(params, args):
        if a.__class__ in CONTAINERS:
            _add_item_classes(p, a, found)
        else:
            _add_object_classes(p, a, found, 0, set())
    return tuple(found)


SAMPLED_ITEMS = 64  # a longer container is scanned whole only if objects of yours are among its first items


def _add_item_classes(path, items, found):
    """The classes of the objects of yours in ``items``, every item's (a list of layers of any
    length), and the functions all of one class hold alike in an attribute (``_shared_functions``); a long container none of whose first ``SAMPLED_ITEMS`` items is such an object (a
    list of numbers or arrays) is taken to hold none, so that each call is not slowed by a scan
    of it: a method called on its items is then refused, never resolved through a class."""
    values = list(items.values()) if items.__class__ is dict else items
    if len(values) > SAMPLED_ITEMS and not any(map(user_object, values[:SAMPLED_ITEMS])):
        return
    classes = [cls for cls in dict.fromkeys(map(type, values)) if _user_class(cls)]
    for k, cls in enumerate(classes):
        found.append((f"{path}[]{k}", cls))
        if cls.__getattribute__ is object.__getattribute__ and not hasattr(cls, "__getattr__"):  # (not a proxy)
            found.extend((f"{path}[]{k}.{name}", held) for name, held in _shared_functions(
                [v for v in values if type(v) is cls]))


def _shared_functions(objects):
    """``(attribute, HeldFunction)`` for each attribute in which every one of ``objects`` holds
    the same function (``self.act = np.tanh`` in each layer of a list): their class's methods
    are compiled for it. An attribute whose function differs between them is left out: a call
    of it is refused."""
    shared = None
    for a in objects:
        held = {name: h for name, value in _attributes(a) if isinstance(name, str) and name.isidentifier()
                for h in [held_function(value)] if h is not None}
        shared = held if shared is None else {n: h for n, h in shared.items() if held.get(n) == h}
        if not shared:
            return ()
    return tuple(shared.items())


def user_object(a):
    """Is ``a`` an object of a class defined in Python outside NumPy and the builtins?"""
    return a.__class__.__module__ not in ("builtins", "numpy") and not isinstance(a, (np.ndarray, np.generic))


def _user_class(cls):
    return cls.__module__ not in ("builtins", "numpy") and not issubclass(cls, (np.ndarray, np.generic))


def _add_object_classes(path, a, found, depth, seen):
    if not user_object(a) or id(a) in seen:
        return
    found.append((path, a.__class__))
    if depth == 2:
        return
    seen = seen | {id(a)}
    for name, value in _attributes(a):
        if isinstance(name, str) and name.isidentifier():
            held = held_function(value)
            if held is not None:
                found.append((f"{path}.{name}", held))
            elif value.__class__ in CONTAINERS:
                _add_item_classes(f"{path}.{name}", value, found)
            else:
                _add_object_classes(f"{path}.{name}", value, found, depth + 1, seen)


def _attributes(a):
    """``(name, value)`` of ``a``'s instance attributes: its ``__dict__`` and its ``__slots__``."""
    attributes = getattr(a, "__dict__", None)
    found = list(attributes.items()) if isinstance(attributes, dict) else []
    for cls in type(a).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if isinstance(name, str) and name not in ("__dict__", "__weakref__"):
                value = getattr(a, name, _UNSET)
                if value is not _UNSET:
                    found.append((name, value))
    return found


_UNSET = object()


class HeldFunction:
    """A function an object holds in an attribute, as code is made for it: the function called
    (a partial's ``func``) and, for a ``functools.partial``, how many positional arguments it
    fixes and the names of its keywords (their values are read when the code runs). Equal only
    for the same function object."""

    __slots__ = ("function", "fixed", "keywords")

    def __init__(self, function, fixed=None, keywords=()):
        self.function, self.fixed, self.keywords = function, fixed, keywords

    def __eq__(self, other):
        return (isinstance(other, HeldFunction) and self.function is other.function and self.fixed == other.fixed
                and self.keywords == other.keywords)

    def __hash__(self):
        return hash((id(self.function), self.fixed, self.keywords))

    def __repr__(self):
        name = _name(self.function)
        if self.fixed is None:
            return name
        keywords = "".join(f", {k}=..." for k in self.keywords)
        return f"functools.partial({name}{', ...' * self.fixed}{keywords})"


def held_function(value):
    """The ``HeldFunction`` of ``value`` if srcad calls it as a function an object holds: a Python
    function (a lambda too), a ufunc, a module's builtin function (``math.sin``), a callable srcad
    has a rule for (``np.sum``), or a ``functools.partial`` of one; else None (a bound method, a
    class, an object with ``__call__``: objects are resolved through their class)."""
    if not callable(value) or getattr(value, "__srcad_function__", None) is not None:
        return None
    if type(value) is functools.partial:
        inner = value.func
        return HeldFunction(inner, len(value.args), tuple(sorted(value.keywords))) if _plain_function(inner) else None
    return HeldFunction(value) if _plain_function(value) else None


def _plain_function(f):
    if isinstance(f, (types.FunctionType, np.ufunc)):
        return True
    if isinstance(f, types.BuiltinFunctionType):
        return f.__self__ is None or isinstance(f.__self__, types.ModuleType)  # (a bound builtin method is not)
    if isinstance(f, (type, types.MethodType)):
        return False
    from . import registry

    return (registry.lookup(registry.VJP, f) is not None or registry.lookup(registry.JVP, f) is not None
            or registry.is_nondifferentiable(f))


def _name(f):
    module = getattr(f, "__module__", None)
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or type(f).__name__
    return f"{module}.{name}" if module not in (None, "builtins", "__main__") else name


def check_held_function(obj, name, expected, where, receiver):
    """Raise unless ``obj.name`` is still the function ``expected`` (a ``HeldFunction``) the
    code was made for: srcad differentiated ``receiver.name(...)`` as a call of that function.
    Generated code calls this; ``where`` is the user's file and line."""
    value = getattr(obj, name, None)
    if held_function(value) == expected:
        return
    now = held_function(value)
    calls = repr(now) if now is not None else f"a {type(value).__qualname__}"
    raise UnsupportedCaseError(
        f"{where}{receiver}.{name}(...) on this {type(obj).__qualname__} object calls {calls}, and srcad made this "
        f"code for {expected!r}, which the object held in its attribute '{name}' when srcad compiled it; pass the "
        "object (or the object holding it) to the function you differentiate as an argument, so that srcad "
        "compiles for the function it holds when it is called")
