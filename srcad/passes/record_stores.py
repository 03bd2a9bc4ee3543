"""Fields set on a record built in the function, for ``resolve_calls``: ``p = Params(w, b)``,
then ``p.w = x * 2.0``.

Guarantee: such a store is the record built again with that field new,
``p = Params(w=x * 2.0, b=p.b)`` (the new value first, then the other fields read off ``p``, as
Python evaluates the value before the object), which ``passes.records`` builds and
differentiates like any construction. That is Python's computation wherever no other name
can see the object change, so it is done only where: the class is a dataclass whose
constructor only stores its fields (``records.record_fields``), not frozen; the name is bound
once in the function, by ``p = Params(...)``; it is read only as ``p.field`` of a field
(methods excepted: one may give back or keep its ``self``) and inside a ``return``, after which
nothing reads it (not one inside a ``try`` with a ``finally``, which runs after the return); it
is used in no nested function, lambda or comprehension; and each store is a statement
``p.field = value`` of a field. Any other store on such a name is refused
where ``normalize`` meets it, saying which condition failed (``local_objects.unlowered_object``).

>>> import dataclasses
>>> from srcad.source import capture
>>> from srcad.astutil import to_source
>>> @dataclasses.dataclass
... class Params:
...     w: float
...     b: float = 0.0
>>> def f(x):
...     p = Params(x, 1.0)
...     p.w = x * 2.0
...     return p.w + p.b
>>> src = capture(f)
>>> rebuild_stored_records(src.node, src)
>>> print(to_source(src.node).strip())
def f(x):
    p = Params(x, 1.0)
    p = Params(w=x * 2.0, b=p.b)
    return p.w + p.b
"""
import dataclasses

import gast

from .. import astutil as A
from .callees import denoted, dotted
from .local_functions import SCOPES
from .local_objects import mark_unlowered
from .records import record_fields


def rebuild_stored_records(node, source):
    """Rewrite in place each field store of ``node`` (the function ``source`` reads) on a
    record built in it, as the module docstring says."""
    stores = {}  # name -> (the assignment `name.attr = value`, or None for another store; its target)
    assigned = {id(t): s for s in A.walk(node) if isinstance(s, gast.Assign) for t in s.targets}
    for t in A.walk(node):
        if isinstance(t, gast.Attribute) and not isinstance(t.ctx, gast.Load) and isinstance(t.value, gast.Name):
            stores.setdefault(t.value.id, []).append((assigned.get(id(t)), t))
    for name, found in stores.items():
        made = _made_record(node, name, source)
        if made is None:
            continue
        cls, func = made
        why = _why_not(node, name, cls, found)
        if why is not None:
            for _, target in found:
                mark_unlowered(target, f"'{name}' is a record of your dataclass {cls.__qualname__} built in this "
                                       f"function, whose fields srcad sets by building it again only where no other "
                                       f"name can see it change: here {why}")
            continue
        fields = [n for n, _ in record_fields(cls)]
        for statement, target in found:
            values = [gast.keyword(arg=target.attr, value=statement.value)] + [
                gast.keyword(arg=f, value=gast.Attribute(value=A.load(name), attr=f, ctx=gast.Load()))
                for f in fields if f != target.attr]
            statement.targets = [gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)]
            statement.value = gast.copy_location(gast.Call(func=A.deepcopy(func), args=[], keywords=values),
                                                 statement.value)
            for n in A.walk(statement):
                gast.copy_location(n, statement)


def _made_record(node, name, source):
    """``(class, its dotted name)`` where ``name`` is bound by a construction ``name = C(...)``
    of a dataclass record class (one binding so made among others too), else None."""
    for s in A.walk(node):
        if (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
                and s.targets[0].id == name and isinstance(s.value, gast.Call)):
            parts = dotted(s.value.func)
            try:
                cls = denoted(parts, source) if parts is not None else None
            except (KeyError, AttributeError):
                continue
            if isinstance(cls, type) and dataclasses.is_dataclass(cls) and record_fields(cls) is not None:
                return cls, s.value.func
    return None


def _why_not(node, name, cls, stores):
    """Why the stores ``stores`` on ``name``, a record of ``cls``, may not be read as
    constructions (module docstring), or None."""
    if cls.__dataclass_params__.frozen:
        return f"{cls.__qualname__} is frozen (Python raises FrozenInstanceError): use dataclasses.replace({name}, ...)"
    fields = [n for n, _ in record_fields(cls)]
    stored = {id(t) for _, t in stores}  # (all plain assignments, below)
    for s, t in stores:
        line = getattr(t, "lineno", "?")
        if s is None:
            return (f"line {line} sets or deletes {name}.{t.attr} other than by a statement {name}.{t.attr} = value "
                    f"(an augmented assignment, a loop target, del): write {name}.{t.attr} = {name}.{t.attr} + ... "
                    "instead")
        if len(s.targets) != 1:
            return f"line {line} sets it in an assignment of several targets: set it alone"
        if t.attr not in fields:
            return f"'{t.attr}' is no field of {cls.__qualname__} (its fields: {', '.join(fields)}): declare it one"
    nested = {id(n) for s in A.walk(node) if isinstance(s, SCOPES) and s is not node for n in A.walk(s)}
    # a return inside a try with a finally is not the last thing done: the finally may still set a field
    finished_later = {id(n) for s in A.walk(node) if isinstance(s, gast.Try) and s.finalbody
                      for part in (s.body, s.handlers, s.orelse) for b in part for n in A.walk(b)}
    returns = [s for s in A.walk(node) if isinstance(s, gast.Return) and id(s) not in nested]
    returned = {id(n) for s in returns if id(s) not in finished_later for n in A.walk(s)}
    returned_early = {id(n) for s in returns if id(s) in finished_later for n in A.walk(s)}
    parents = {id(c): p for p in A.walk(node) for c in gast.iter_child_nodes(p)}
    bindings = 0
    for n in A.walk(node):
        if not (isinstance(n, gast.Name) and n.id == name):
            continue
        line = getattr(n, "lineno", "?")
        parent = parents.get(id(n))
        if id(n) in nested:
            return f"it is used in a nested function, lambda or comprehension (line {line}): read its fields before it"
        if not isinstance(n.ctx, gast.Load):
            bindings += 1
            continue
        if isinstance(parent, gast.Attribute) and (id(parent) in stored or (
                parent.attr in fields and isinstance(parent.ctx, gast.Load))):
            continue
        if id(n) in returned_early:
            return (f"line {line} returns it inside a try whose finally runs after the return and may set its "
                    f"fields: return {name} after the try, or build the new record with "
                    f"{name} = dataclasses.replace({name}, field=value)")
        if id(n) not in returned:
            return (f"it is used otherwise than by reading its fields (line {line}: passed on, bound to another "
                    f"name or a method called), so another name may see it change: build the new record instead, "
                    f"{name} = dataclasses.replace({name}, field=value)")
    if bindings != 1:
        return (f"the name is bound more than once: bind it once, or build the new record with "
                f"dataclasses.replace({name}, field=value)")
    return None
