"""Properties read through the class: ``self.W`` in a method of ``C``, ``model.W`` (or
``model.l2.W``) on a parameter whose argument's class the code is compiled for, where ``C``
is a dataclass or named tuple (srcad differentiates its objects through their fields) and
``C.W`` is a ``property`` whose getter is a plain function of yours, read as the call
``C.W.fget(self)``. srcad differentiates it as it does a method resolved through the class
(a dataclass's fields flow through the getter), and checks when the code runs that the
object's class still has that property (``errors.check_property``). A property of a library
class, one with a getter in C, a ``functools.cached_property`` (it stores its value in the
object) and a property of an object whose class srcad does not know stay attribute reads."""
import dataclasses
import inspect
import types

import gast

from ..astutil import set_anno
from .callees import Callee, denoted, dotted, lookup_path, path_expr, readable
from .method_calls import ThroughSelf, class_path_of, library_code


def property_read(node, classes, owner, source):
    """The attribute read ``node`` as ``C.name.fget(receiver)``, annotated ``through_self``
    (binding "property"), when its receiver is an object of a known class ``C`` (``classes``:
    ``{"model": C, "model.l2": D}``; ``owner``: a method's ``(self name, class path)``), a
    dataclass or named tuple, whose ``name`` is a property of the user's; else None."""
    parts = dotted(node)
    if parts is None or len(parts) < 2:
        return None
    receiver, name = parts[:-1], parts[-1]
    try:
        if ".".join(receiver) in classes:
            cls = classes[".".join(receiver)]
            class_path = class_path_of(cls, source)
        elif owner is not None and receiver == [owner[0]]:
            class_path = owner[1]
            cls = denoted(class_path, source)
        else:
            return None
    except (KeyError, AttributeError):
        return None
    found = inspect.getattr_static(cls, name, None) if _record_class(cls) else None
    if (class_path is None or type(found) is not property or not isinstance(found.fget, types.FunctionType)
            or library_code(found.fget)):
        return None
    path = class_path + [name, "fget"]
    getter = lookup_path(path, source)  # guarded: a class or property redefined means new code
    call = gast.Call(func=path_expr(path), args=[path_expr(receiver)], keywords=[])
    set_anno(call, "callee", Callee("object", obj=readable(getter), name=".".join(path)))
    set_anno(call, "through_self", ThroughSelf(path_expr(receiver), ".".join(receiver), name, "property"))
    return gast.copy_location(call, node)


def _record_class(cls):
    """Is ``cls`` a dataclass or named tuple, whose objects srcad differentiates through their
    fields? (Reading a property of any other object runs its getter as it is, inactive: a
    getter that caches its value in the object keeps working.)"""
    return isinstance(cls, type) and (dataclasses.is_dataclass(cls) or issubclass(cls, tuple)
                                      and hasattr(cls, "_fields"))


class PropertyReads(gast.NodeTransformer):
    """Puts the calls ``property_read`` made (``{id(attribute): call}``) in place of the reads."""

    def __init__(self, calls):
        self.calls = calls

    def visit_Attribute(self, node):
        found = self.calls.get(id(node))
        return found if found is not None else self.generic_visit(node)
