"""Which names hold a record of one class (``passes.records``), for ``resolve_calls``: a name
bound to ``State(...)``, then only to ``dataclasses.replace`` of it, its ``_replace(...)``, or
the result of a function given it whose every ``return`` gives back such a record
(``s = step(s, dt)`` in a loop); ``dataclasses.replace(s, ...)`` and ``s.energy()`` on it are
then the construction and the method of that class."""
import dataclasses
import types

import gast

from ..astutil import names_stored, set_anno, walk
from .callees import denoted, dotted, lookup_path
from .method_calls import library_code


def record_locals(nodes, locals_, source, given):
    """``{name: class}`` for each name every binding of which holds a record of one class ``C``
    (``passes.records``): ``s = State(x, v)``, ``s = dataclasses.replace(t, ...)`` or
    ``s = t._replace(...)`` or ``s = t`` of a name ``t`` holding a ``C``, and ``s = step(s, dt)``,
    a function's result given ``s`` itself, taken to be a ``C`` too and annotated
    ``"record_check"`` (checked when the code runs: ``records.record_check``). At least one
    binding makes the record, or the name is a parameter ``given`` (``{name: class}``) a ``C``.
    ``nodes``: the function's nodes; ``locals_``: its local names."""
    from .records import namedtuple_methods, record_fields

    stores, bindings = {}, {}
    for n in nodes:
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            stores[n.id] = stores.get(n.id, 0) + 1
        elif isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], gast.Name):
            bindings.setdefault(n.targets[0].id, []).append(n)
    if not given and not any(_constructs_a_record(a.value, locals_, source, record_fields)
                             for assigns in bindings.values() for a in assigns):
        return {}  # (most functions: nothing below is worked out, no callee is read)
    defs = [n for n in nodes[1:] if isinstance(n, gast.FunctionDef)]
    local_defs = {d.name: d for d in defs if sum(e.name == d.name for e in defs) == 1 and d.name not in stores}
    kinds, made = {}, {}
    for name, assigns in bindings.items():
        if stores.get(name) != len(assigns) or name not in locals_:
            continue  # bound otherwise too (a loop variable, an unpacking, a nested function's parameter)
        kinds[name] = [_record_binding(a.value, name, locals_, source, record_fields, local_defs) for a in assigns]
        if None not in kinds[name]:
            made[name] = {kind[1] for kind in kinds[name] if kind[0] == "made"} | (
                {given[name]} if name in given else set())
    classes = {name: next(iter(found)) for name, found in made.items()
               if len(found) == 1 and record_fields(next(iter(found))) is not None}
    fixed = {p: c for p, c in given.items() if p not in stores}  # parameters never bound again
    changed = True
    while changed:  # a name bound only as others are (t = dataclasses.replace(s, ...)) has their class
        changed = False
        for name in made.keys() - classes.keys():
            sources = {classes.get(kind[1], fixed.get(kind[1])) for kind in kinds[name] if kind[0] == "same"}
            if not made[name] and len(sources) == 1 and None not in sources:
                classes[name] = sources.pop()
                changed = True
    changed = True
    while changed:  # the largest set whose bindings agree (s = step(s) in a loop reads itself)
        changed = False
        for name in list(classes):
            if any(kind[0] == "same" and (classes.get(kind[1], fixed.get(kind[1])) is not classes[name] or kind[2]
                                          and not namedtuple_methods(classes[name]))
                   or kind[0] == "trusted" and (kind[1] - {classes[name]} or kind[2]
                                                and not namedtuple_methods(classes[name])) for kind in kinds[name]):
                del classes[name]
                changed = True
    for name, cls in classes.items():
        for assign, kind in zip(bindings[name], kinds[name]):
            if kind[0] == "made":
                lookup_path(kind[2], source)  # guarded as the call's own path
            elif kind[0] == "trusted":
                set_anno(assign, "record_check", cls)
    return classes


def _constructs_a_record(value, locals_, source, record_fields):
    """Is ``value`` the construction of a record class (``State(x, v)``)?"""
    parts = dotted(value.func) if isinstance(value, gast.Call) else None
    if parts is None or parts[0] in locals_:
        return False
    try:
        obj = denoted(parts, source)
    except (KeyError, AttributeError):
        return False
    return isinstance(obj, type) and record_fields(obj) is not None


def _record_binding(value, name, locals_, source, record_fields, local_defs):
    """How ``name = value`` binds a record: ``("made", class, path)`` by its class;
    ``("same", t, method)`` as the record in ``t`` is (``t``, ``dataclasses.replace(t, ...)``,
    ``t._replace(...)``: ``method``, which only a named tuple's own is); ``("trusted", classes,
    method)`` for the result of a function of yours (or one ``local_defs`` defines in the
    function, name -> def) given ``name`` itself that returns it, a replacement of it or a
    record (``_returned_record``); None for anything else."""
    if isinstance(value, gast.Name):
        return "same", value.id, False
    if not isinstance(value, gast.Call):
        return None
    func = value.func
    if isinstance(func, gast.Attribute) and func.attr == "_replace" and isinstance(func.value, gast.Name):
        return "same", func.value.id, True
    parts = dotted(func)
    local = parts is not None and parts[0] in locals_  # a function defined in the function
    try:
        obj = denoted(parts, source) if parts is not None and not local else None
    except (KeyError, AttributeError):
        return None
    if isinstance(obj, type):
        return ("made", obj, parts) if record_fields(obj) is not None else None
    if obj is dataclasses.replace and value.args and isinstance(value.args[0], gast.Name):
        return "same", value.args[0].id, False
    if not any(isinstance(a, gast.Name) and a.id == name for a in value.args + [k.value for k in value.keywords]):
        return None
    if local and len(parts) == 1 and parts[0] in local_defs:
        return _returned_record(local_defs[parts[0]], value, name, source, record_fields)
    if isinstance(obj, types.FunctionType) and not library_code(obj):
        from ..source import capture

        try:
            callee = capture(obj)
        except Exception:  # (no source: its own compilation says so)
            return None
        return _returned_record(callee.node, value, name, callee, record_fields)
    return None


def _returned_record(fdef, call, name, scope, record_fields):
    """``("trusted", classes, method)`` when ``call`` of the function ``fdef`` is given ``name``
    for one of its parameters, never bound again, and every path through it returns that
    parameter, ``dataclasses.replace`` of it, its ``_replace(...)`` (``method``) or a record's
    construction (of ``classes``): the result is a record of the class ``name`` holds, checked
    when the code runs all the same (the function may change). None where it may return
    anything else (``p = to_array(p)`` leaves ``p`` no record srcad knows)."""
    params = [a.id for a in fdef.args.posonlyargs + fdef.args.args]
    given = [params[i] for i, a in enumerate(call.args) if i < len(params) and isinstance(a, gast.Name)
             and a.id == name] + [k.arg for k in call.keywords if isinstance(k.value, gast.Name) and k.value.id == name]
    if (len(given) != 1 or given[0] is None or given[0] in names_stored(fdef)
            or any(isinstance(a, gast.Starred) for a in call.args) or not fdef.body
            or not isinstance(fdef.body[-1], gast.Return)):
        return None
    param, classes, method = given[0], set(), False
    stores, assigned = {}, {}  # a returned name bound only by assignments: what they bind
    for n in walk(fdef):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            stores[n.id] = stores.get(n.id, 0) + 1
        elif isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], gast.Name):
            assigned.setdefault(n.targets[0].id, []).append(n.value)
    bound = {name: values for name, values in assigned.items() if stores.get(name) == len(values)}
    todo = list(fdef.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (gast.Yield, gast.YieldFrom, gast.Await)):
            return None
        if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)):
            continue  # (their returns are theirs)
        if isinstance(n, gast.Return):
            kinds = _record_returned(n.value, param, scope, record_fields, bound, set())
            if kinds is None:
                return None
            classes |= {kind for kind in kinds if isinstance(kind, type)}
            method = method or "_replace" in kinds
        todo.extend(gast.iter_child_nodes(n))
    return "trusted", frozenset(classes), method


def _record_returned(value, param, scope, record_fields, bound, seen):
    """What ``value`` returned gives back of the parameter ``param``, as a set of: "same"
    (``param``, ``dataclasses.replace(param, ...)``), "_replace" (``param._replace(...)``), a
    record class (its construction), or those of what a local name ``bound`` (name -> the
    values its assignments bind) holds; None for anything else."""
    if isinstance(value, gast.Name):
        if value.id == param:
            return {"same"}
        if value.id not in bound or value.id in seen:
            return None
        found = [_record_returned(v, param, scope, record_fields, bound, seen | {value.id})
                 for v in bound[value.id]]
        return None if None in found else set().union(*found)
    if not isinstance(value, gast.Call):
        return None
    func = value.func
    if isinstance(func, gast.Attribute) and func.attr == "_replace" and isinstance(func.value, gast.Name):
        return {"_replace"} if func.value.id == param else None
    parts = dotted(func)
    try:
        obj = denoted(parts, scope) if parts is not None else None
    except (KeyError, AttributeError):
        return None
    if obj is dataclasses.replace and value.args and isinstance(value.args[0], gast.Name):
        return {"same"} if value.args[0].id == param else None
    return {obj} if isinstance(obj, type) and record_fields(obj) is not None else None
