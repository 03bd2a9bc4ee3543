"""Structures of arrays, as arguments and results (JAX's pytrees): lists, tuples, named
tuples, dicts and dataclass instances nest; anything else is a leaf.

``leaves(x)`` lists the leaves in a fixed order (a dict's keys sorted, when they sort; a
dataclass's fields in declaration order) and ``rebuild(x, values)`` puts new leaves into
the structure of ``x``. Generated code reads a field of a named tuple or dataclass with
``field_grad`` and ``field_tangent`` (rules in ``srcad.rules.records``):

>>> import collections
>>> P = collections.namedtuple("P", "w b")
>>> tree = {"layer": P(1.0, [2.0, 3.0]), "scale": 4.0}
>>> leaves(tree)
[1.0, 2.0, 3.0, 4.0]
>>> rebuild(tree, [v * 10 for v in leaves(tree)])
{'layer': P(w=10.0, b=[20.0, 30.0]), 'scale': 40.0}
"""
import copy
import dataclasses
import functools

from .errors import NoRuleError, no_attribute_rule


def is_dataclass_instance(x):
    return dataclasses.is_dataclass(x) and not isinstance(x, type)


def field_names(x):
    return tuple(f.name for f in dataclasses.fields(x))


def by_field(x):
    """Dataclass ``x`` as the dict by field srcad keeps its adjoints and tangents in."""
    return {k: getattr(x, k) for k in field_names(x)}


def rebuilt(x, values):
    """A copy of dataclass ``x`` with fields set to ``values``, without running its
    ``__init__``/``__post_init__`` (a frozen dataclass too)."""
    out = copy.copy(x)
    for name, value in values.items():
        object.__setattr__(out, name, value)
    return out


def remade(x, items):
    """A named tuple of ``x``'s class holding ``items``, without running a ``__new__`` of
    yours (one that scales or checks its arguments would change them again), with ``x``'s
    other attributes."""
    out = tuple.__new__(type(x), items)
    if getattr(x, "__dict__", None):
        out.__dict__.update(x.__dict__)
    return out


def _field_position(obj, name):
    """Where ``obj.name`` lives in ``obj``'s adjoint: an index for a named tuple (whose
    adjoint is a list like its items), a key for a dataclass (a dict by field)."""
    fields = getattr(type(obj), "_fields", None)
    if isinstance(obj, tuple) and fields is not None and name in fields:
        return fields.index(name)
    if is_dataclass_instance(obj) and name in field_names(obj):
        return name
    if fields is not None and isinstance(obj, tuple) or is_dataclass_instance(obj):
        cls = type(obj).__qualname__
        found = getattr(type(obj), name, None)
        if isinstance(found, property):
            raise NoRuleError(f"reads the property .{name} of a {cls} it differentiates where srcad cannot tell the "
                              f"object's class when compiling (it reads self.{name}, model.{name} of an argument and "
                              f"model.layer.{name} as the call {cls}.{name}.fget(...) of a getter written in Python); "
                              f"pass the object as an argument, or write what .{name} computes from the fields")
        if isinstance(found, functools.cached_property):
            raise NoRuleError(f"reads the cached_property .{name} of a {cls} it differentiates: its value is stored "
                              f"in the object the first time and then read back, with no derivative; make it a "
                              f"@property, or write what .{name} computes from the fields in the function")
        raise NoRuleError(f"reads .{name} of a {cls} it differentiates, which is not one of its fields: srcad "
                          f"differentiates the fields of a dataclass or named tuple; read it from the class "
                          f"({cls}.{name}) or pass it as an argument")
    raise NoRuleError(no_attribute_rule(name, obj))


def field_grad(g, obj, name):
    """The adjoint of ``obj.name`` laid out like ``obj``'s adjoint: ``g`` at that field."""
    position = _field_position(obj, name)
    if isinstance(position, str):
        return {position: g}
    out = [None] * len(obj)
    out[position] = g
    return out


def field_tangent(t, obj, name):
    """The tangent of ``obj.name`` from ``obj``'s tangent (a record like it, or its list or dict)."""
    position = _field_position(obj, name)
    if t is None:
        return None
    if isinstance(position, str) and not isinstance(t, dict):
        return getattr(t, position)
    return t[position]


def is_node(x):
    """Does ``x`` hold other values (a list, tuple, dict or dataclass instance)?"""
    return isinstance(x, (list, tuple, dict)) or is_dataclass_instance(x)


def _keys(d):
    try:
        return sorted(d)
    except TypeError:  # keys of kinds that do not compare: the dict's own order
        return list(d)


def leaves(x):
    """The leaves of ``x`` in order (``[x]`` for a leaf)."""
    if isinstance(x, dict):
        return [leaf for k in _keys(x) for leaf in leaves(x[k])]
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in leaves(item)]
    if is_dataclass_instance(x):
        return [leaf for name in field_names(x) for leaf in leaves(getattr(x, name))]
    return [x]


def rebuild(template, values):
    """``template``'s structure with ``values`` (in the order of ``leaves``) as its leaves."""
    it = iter(values)
    out = _rebuild(template, it)
    if next(it, it) is not it:
        raise ValueError("more values than the structure has leaves")
    return out


def _rebuild(template, it):
    if isinstance(template, dict):
        made = {k: _rebuild(template[k], it) for k in _keys(template)}
        return {k: made[k] for k in template}  # the template's own key order
    if isinstance(template, (list, tuple)):
        items = [_rebuild(t, it) for t in template]
        if hasattr(type(template), "_fields"):
            return remade(template, items)
        return type(template)(items) if isinstance(template, tuple) else items
    if is_dataclass_instance(template):
        return rebuilt(template, {name: _rebuild(getattr(template, name), it) for name in field_names(template)})
    return next(it)
