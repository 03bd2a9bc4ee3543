"""Attributes of a local object (``passes.local_objects``) that it does not hold itself, read
through its class as Python reads them: ``s.k`` of a class attribute is ``Spring.k`` (the
class the object was made of: the object holds no attribute of that name, as it holds only
those its ``__init__`` sets), a static or class method likewise (``Spring.huber``: a class
method bound to the object's class), and a ``property`` is its getter's call. Guarantee: a
read is replaced only where it is exactly that; a set or delete of such an attribute (Python
would make an instance attribute hiding the class's, or run a property's setter) and a call of
a property's value are refused, saying what to do; a function read uncalled and any other
descriptor are left to ``local_objects``' refusals."""
import gast

from .callees import dotted, path_expr
from .local_classes import Refused


def class_attribute(cls, name):
    """How ``o.name`` reads on an object of ``cls`` holding no attribute ``name`` itself: "class"
    where it is what ``C.name`` reads (a value that is no descriptor: a number, an array, a
    ufunc; a static or class method, bound to ``C``, the object's class), "property" for a
    ``property`` (its getter runs), None for anything else (a function, read uncalled; another
    descriptor, as a ``functools.cached_property``; no such attribute)."""
    found = next((vars(c)[name] for c in cls.__mro__ if name in vars(c)), None)
    if isinstance(found, property):
        return "property"
    if isinstance(found, (staticmethod, classmethod)) or found is not None and not hasattr(type(found), "__get__"):
        return "class"
    return None


def read_through_class(cls, node, parent, shown):
    """How the attribute ``node`` (in ``parent``; ``shown.k`` of an object of ``cls``, no
    attribute the object holds) reads through the class (``class_attribute``): "class",
    "property" or None; refused where Python would not just read it: a set (an instance
    attribute would hide the class's, or a property's setter run), a property's value called."""
    kind = class_attribute(cls, node.attr)
    text, line = f"{shown}.{node.attr}", getattr(node, "lineno", "?")
    if kind is not None and not isinstance(node.ctx, gast.Load):
        what = ("runs the setter or deleter of its property, which srcad does not follow" if kind == "property"
                else "makes an instance attribute hiding the class attribute, which srcad does not follow")
        raise Refused(f"setting or deleting '{text}' (line {line}) {what}: keep the value in an attribute __init__ "
                      f"sets (self.{node.attr}_ = ..., a name no class attribute has) and set that one")
    if kind == "property" and isinstance(parent, gast.Call) and parent.func is node:
        raise Refused(f"'{text}' is a property, and line {line} calls the value its getter returns: read it as "
                      f"{text}, without a call")
    return kind


def class_read(assign, node, bound):
    """``Spring.k`` for ``o.k`` (``node``) of a class attribute, ``o`` made by ``assign``: the
    class it called, by the name the call reads (refused where it is one of ``bound``, the
    names a method binds, which would hide it there)."""
    path = dotted(assign.value.func)
    if path[0] in bound:
        raise Refused(f"a method of its class binds the name '{path[0]}', and reads the class attribute "
                      f"'{node.attr}' (line {getattr(node, 'lineno', '?')}): rename the local name")
    return gast.copy_location(gast.Attribute(value=path_expr(path), attr=node.attr, ctx=gast.Load()), node)
