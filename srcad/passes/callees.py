"""What a call site calls (``Callee``), and the name lookups call resolution shares
(``passes.resolve_calls``, ``passes.method_calls``, inlining): dotted names, the objects they
denote (recorded, so generated code is guarded on them), a function's local names."""
import types

import gast

from ..astutil import anno, child_fields, set_anno
from ..code_reading import attribute_now


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
    todo = list(fn_node.body)  # (a set is made: the order nodes are read in does not matter)
    append, extend, add = todo.append, todo.extend, names.add
    for node in todo:
        cls = node.__class__
        if cls is gast.Name:
            if node.ctx.__class__ is gast.Store:
                add(node.id)
            continue
        if cls is gast.FunctionDef:
            add(node.name)
            continue  # its body is its own scope
        if cls is gast.Lambda or not isinstance(node, gast.AST):  # (None, or a string, in a list)
            continue
        if cls is gast.MatchAs or cls is gast.MatchStar:  # a match statement's capture (before it is lowered)
            if node.name is not None:
                add(node.name)
        held = node.__dict__  # (read directly, as ``walk`` does: called by many passes on one function)
        for field in child_fields(node):
            value = held.get(field)
            if value.__class__ is list:
                extend(value)
            elif value is not None:
                append(value)
    return names


def parameter_names(fn_node):
    """The names of the parameters of a ``FunctionDef`` or ``Lambda``."""
    args = fn_node.args
    return {a.id for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg] if a is not None}


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


def denoted(parts, source):
    """The object the dotted name ``parts`` denotes now in the function's scope (not recorded:
    see ``lookup_path``); raises ``KeyError`` or ``AttributeError`` if none."""
    obj = source.lookup(parts[0])
    for attr in parts[1:]:
        obj = attribute_now(obj, attr)
    return obj


def lookup_path(parts, source):
    """The object the dotted name ``parts`` denotes now; recorded on the function's node
    (``"resolved"``: ``(path, object)`` pairs), so the compiled code can be guarded on it."""
    obj = denoted(parts, source)
    resolved = anno(source.node, "resolved")
    if resolved is None:
        resolved = []
        set_anno(source.node, "resolved", resolved)
    resolved.append((tuple(parts), obj))
    return obj


def readable(obj):
    """What srcad reads for a call of ``obj``: a gradient made by ``srcad.grad`` reads as its
    generated adjoint (``__srcad_source__``), whose source is registered with linecache; a
    decorator's wrapper that only passes the call on, as the function it wraps (``pass_through``)."""
    from .pass_through import passed_through

    # a function's own attribute only (srcad.grad sets it; functools.wraps copies it): any other
    # object may answer any name (a class whose metaclass defines __getattr__)
    make = vars(obj).get("__srcad_source__") if type(obj) is types.FunctionType else None
    return make() if make is not None else passed_through(obj)


def path_expr(path):
    node = gast.Name(id=path[0], ctx=gast.Load(), annotation=None, type_comment=None)
    for attr in path[1:]:
        node = gast.Attribute(value=node, attr=attr, ctx=gast.Load())
    return node
