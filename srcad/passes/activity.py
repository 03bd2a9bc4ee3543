"""Activity analysis: which variables need adjoints.

A variable is *varied* if its value can depend differentiably on a ``wrt`` parameter
and *useful* if the returned value can depend differentiably on it. Active variables
are both; only they get adjoints. The analysis is by name and ignores statement order
(a sound over-approximation: an extra adjoint costs time, a missing one would be wrong).

Afterwards the function carries the annotation ``"active"`` (a set of names) and
``"containers"`` (names that hold lists, tuples or dicts).

>>> import gast, numpy as np
>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> from srcad.passes.normalize import normalize
>>> from srcad.astutil import anno
>>> def f(x, w):
...     n = x.shape[0]
...     y = np.sin(x) * w
...     z = np.argmax(y)
...     return y.sum() / n
>>> src = capture(f)
>>> node = activity(normalize(resolve_calls(src.node, src), src), src, wrt=("x",))
>>> sorted(anno(node, "active"))
['_t2', '_t3', '_t4', 'x', 'y']
"""
import builtins

import gast
import numpy as np

from .. import astutil as A
from .. import registry
from .. import runtime

_NONDIFF_OPS = (gast.FloorDiv, gast.BitAnd, gast.BitOr, gast.BitXor, gast.LShift, gast.RShift)
_CONTAINER_CALLS = {builtins.list, builtins.tuple, builtins.dict, builtins.zip, builtins.enumerate, builtins.sorted}


def _flows(rhs):
    """Names whose derivative can flow into the value of ``rhs``."""
    if isinstance(rhs, gast.Name):
        return {rhs.id}
    if isinstance(rhs, (gast.Constant, gast.Compare, gast.JoinedStr)):
        return set()
    if isinstance(rhs, gast.BinOp):
        if isinstance(rhs.op, _NONDIFF_OPS):
            return set()
        return A.names_read(rhs)
    if isinstance(rhs, gast.UnaryOp):
        return set() if isinstance(rhs.op, (gast.Not, gast.Invert)) else A.names_read(rhs)
    if isinstance(rhs, gast.Attribute):
        if rhs.attr in registry.NONDIFF_ATTRIBUTES:
            return set()
        return A.names_read(rhs.value)
    if isinstance(rhs, gast.Subscript):
        return A.names_read(rhs.value)
    if isinstance(rhs, (gast.Tuple, gast.List)):
        return A.names_read(rhs)
    if isinstance(rhs, gast.Dict):
        return A.names_read(gast.List(elts=rhs.values, ctx=gast.Load()))
    if isinstance(rhs, gast.Call):
        callee = A.anno(rhs, "callee")
        if callee.kind == "object" and registry.is_nondifferentiable(callee.obj):
            return set()
        if callee.kind == "method" and (callee.name in registry.NONDIFF_METHODS or registry.is_nondifferentiable(
                registry.METHODS.get(callee.name))):
            return set()
        names = set()
        for arg in rhs.args + [k.value for k in rhs.keywords]:
            names |= A.names_read(arg)
        if callee.kind == "method":
            names |= A.names_read(rhs.func.value)
        return names
    return A.names_read(rhs)


def _edges(stmts, edges, containers):
    """(target, sources) pairs: derivative can flow from each source into target."""
    for s in stmts:
        if isinstance(s, gast.Assign):
            target = s.targets[0]
            if isinstance(target, gast.Name):
                edges.append((target.id, _flows(s.value)))
                if _is_container(s.value, containers):
                    containers.add(target.id)
            elif isinstance(target, gast.Subscript):
                base = target.value.id
                edges.append((base, _flows(s.value) | {base}))
        elif isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
            callee = A.anno(s.value, "callee")
            added = scatter_add_args(s)
            if added is not None:  # np.add.at(buffer, index, values) adds values into buffer
                buffer, _, values = added
                edges.append((buffer.id, _flows(values) | {buffer.id}))
            elif callee is not None and callee.kind == "method" and callee.name == "append":
                receiver = s.value.func.value
                if isinstance(receiver, gast.Name):
                    edges.append((receiver.id, _flows(s.value.args[0]) | {receiver.id}))
                    containers.add(receiver.id)
        elif isinstance(s, (gast.If, gast.For, gast.While)):
            _edges(s.body, edges, containers)
            _edges(s.orelse, edges, containers)


def scatter_add_args(s):
    """(buffer, index, values) of ``np.add.at(buffer, index, values)`` or srcad's ``scatter_add``."""
    call = s.value
    callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
    if callee is None or callee.kind != "object" or len(call.args) != 3 or call.keywords:
        return None
    if not (callee.obj is runtime.scatter_add or _is_add_at(callee.obj)):
        return None
    buffer, index, values = call.args
    return (buffer, index, values) if isinstance(buffer, gast.Name) else None


def _is_add_at(obj):
    try:
        return obj == np.add.at
    except Exception:  # objects whose == does not answer a bool
        return False


def _is_container(rhs, containers):
    if isinstance(rhs, (gast.List, gast.Tuple, gast.Dict)) and not A.is_atom(rhs):
        return True
    if isinstance(rhs, gast.Tuple) and not rhs.elts:
        return True
    if isinstance(rhs, gast.Name):
        return rhs.id in containers
    if isinstance(rhs, gast.Call):
        callee = A.anno(rhs, "callee")
        if callee.kind == "object":
            try:
                return callee.obj in _CONTAINER_CALLS
            except TypeError:
                return False
        if callee.kind == "method" and callee.name == "copy":
            return isinstance(rhs.func.value, gast.Name) and rhs.func.value.id in containers
    if isinstance(rhs, gast.Subscript) and isinstance(rhs.value, gast.Name):
        # an item of a list of lists, or a slice of a list
        return rhs.value.id in containers and isinstance(rhs.slice, gast.Slice)
    return False


def activity(node, source, wrt, container_params=()):
    """Annotate ``node`` (in A-normal form) with its active variables; see the module doc."""
    edges = []
    containers = set(container_params)
    _edges(node.body, edges, containers)
    # fixpoint: containers propagate through aliases
    changed = True
    while changed:
        changed = False
        for s in A.walk(node):
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                if s.targets[0].id not in containers and _is_container(s.value, containers):
                    containers.add(s.targets[0].id)
                    changed = True
    varied = set(wrt)
    changed = True
    while changed:
        changed = False
        for target, sources in edges:
            if target not in varied and sources & varied:
                varied.add(target)
                changed = True
    returns = [s for s in A.walk(node) if isinstance(s, gast.Return)]
    useful = set()
    for r in returns:
        useful |= _flows(r.value)
    changed = True
    while changed:
        changed = False
        for target, sources in edges:
            if target in useful and not sources <= useful:
                useful |= sources
                changed = True
    _refuse_indexed_pops(node, source, varied)
    A.set_anno(node, "active", varied & useful)
    A.set_anno(node, "varied", varied)
    A.set_anno(node, "containers", containers)
    return node


def _refuse_indexed_pops(node, source, varied):
    """``L.pop()`` takes the last item in both modes; ``L.pop(i)``, ``d.pop(key)`` and a default
    of a container that carries derivatives are refused (forward mode gave wrong tangents)."""
    for s in A.walk(node):
        call = s.value if isinstance(s, (gast.Assign, gast.Expr)) else None
        if (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and call.func.attr == "pop"
                and isinstance(call.func.value, gast.Name) and call.func.value.id in varied
                and (call.args or call.keywords)):
            name = call.func.value.id
            raise source.syntax_error(
                f"{name}.pop(...) with an index, a key or a default is not supported: srcad differentiates "
                f"only {name}.pop() (the last item of a list); read the item ({name}[key]) and build the "
                "list or dict without it", A.anno(s, "origin") or s)
