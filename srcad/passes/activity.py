"""Activity analysis: which variables need adjoints.

A variable is *varied* if its value can depend differentiably on a ``wrt`` parameter
and *useful* if the returned value can depend differentiably on it. Active variables
are both; only they get adjoints. The analysis is by name and ignores statement order
(a sound over-approximation: an extra adjoint costs time, a missing one would be wrong).

Afterwards the function carries the annotation ``"active"`` (a set of names),
``"containers"`` (names that hold lists, tuples or dicts), ``"derivative_free"``: the
names it assigns whose values depend on no parameter at all (a shape, an axis read off a
global, a literal trip count), which stay constants where the code is differentiated again,
and ``"string_keyed"``: the parameters that hold a dict whose keys are strings throughout (its
keys, ``sorted(d)``, carry no derivative; a function of yours given it is told so).

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
import copy

import gast
import numpy as np

from .. import astutil as A
from .. import registry
from .. import runtime
from .callees import parameter_names
from .fresh import KEY_LISTS
from .random_draws import refuse_varied_parameters

_NONDIFF_OPS = (gast.FloorDiv, gast.BitAnd, gast.BitOr, gast.BitXor, gast.LShift, gast.RShift)
_BITWISE = {gast.BitOr: "|", gast.BitAnd: "&", gast.BitXor: "^", gast.LShift: "<<", gast.RShift: ">>"}
_CONTAINER_CALLS = {builtins.list, builtins.tuple, builtins.dict, builtins.zip, builtins.enumerate, builtins.sorted}


def derivative_sources(rhs):
    """Names whose derivative can flow into the value of ``rhs`` (a call must carry its
    ``"callee"`` annotation: what it calls decides whether anything flows)."""
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


def _edges(stmts, edges, containers, items, reads, keyed=frozenset()):
    """(target, sources) pairs: derivative can flow from each source into target. An item read
    by a constant key off a name whose items are known (``items``: ``_item_structures``) flows
    from that item's sources only; it reads the whole (``reads``: the useful ones' pairs). The
    keys of a dict whose keys are strings (``keyed``: ``_string_keyed``) carry no derivative."""
    for s in stmts:
        if isinstance(s, gast.Assign):
            target = s.targets[0]
            item = _item_read(s.value, items)
            if isinstance(target, gast.Name) and _keys_of(s.value, keyed):
                edges.append((target.id, set()))
            elif isinstance(target, gast.Name) and item is not None:
                edges.append((target.id, set(item[0])))
                reads.append((target.id, {s.value.value.id}))
            elif isinstance(target, gast.Name) and id(s.value) in items.free_calls:
                edges.append((target.id, set()))  # a function of yours whose result depends on none of its parameters
                reads.append((target.id, derivative_sources(s.value)))
            elif isinstance(target, gast.Name):
                edges.append((target.id, derivative_sources(s.value)))
                if _is_container(s.value, containers):
                    containers.add(target.id)
            elif isinstance(target, gast.Subscript):
                base = target.value.id
                edges.append((base, derivative_sources(s.value) | {base}))
        elif isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
            callee = A.anno(s.value, "callee")
            added = scatter_add_args(s)
            if added is not None:  # np.add.at(buffer, index, values) adds values into buffer
                buffer, _, values = added
                edges.append((buffer.id, derivative_sources(values) | {buffer.id}))
            elif callee is not None and callee.kind == "method" and callee.name == "append":
                receiver = s.value.func.value
                if isinstance(receiver, gast.Name):
                    edges.append((receiver.id, derivative_sources(s.value.args[0]) | {receiver.id}))
                    containers.add(receiver.id)
        elif isinstance(s, (gast.If, gast.For, gast.While)):
            _edges(s.body, edges, containers, items, reads, keyed)
            _edges(s.orelse, edges, containers, items, reads, keyed)


def _string_keyed(node, keyed_params):
    """The names that hold a dict whose keys are strings wherever they are read: the parameters
    given one (``keyed_params``, from the argument specs), and names bound only to such a name or
    to ``as_real`` of one (a derivative srcad made: ``_t4 = as_real(p); p = _t4``, a dict of the
    same keys); none of them changed in place."""
    if not keyed_params:
        return frozenset()
    copying = {id(s.targets[0]): _same_keys_as(s.value) for s in A.walk(node)
               if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)}
    copies = {}  # name -> the names its bindings copy; None where one binds anything else
    for n in A.walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            copied = copying.get(id(n))
            found = copies.get(n.id, set())
            copies[n.id] = None if copied is None or found is None else found | {copied}
    keyed = (set(keyed_params) | set(copies)) - {n for n, c in copies.items() if c is None}
    keyed -= _aliases(_changed_in_place(node), copies)  # a dict one of them changes, all of them hold
    changed = True
    while changed:  # a name copying one that is not keyed is not keyed either
        changed = False
        for name in list(keyed):
            if not copies.get(name, set()) <= keyed:
                keyed.discard(name)
                changed = True
    return frozenset(keyed)


def _aliases(names, copies):
    """``names`` and the names that may hold the same object as one of them, along ``copies``."""
    linked = {}
    for name, copied in copies.items():
        for other in copied or ():
            linked.setdefault(name, set()).add(other)
            linked.setdefault(other, set()).add(name)
    found, todo = set(names), list(names)
    while todo:
        for other in linked.get(todo.pop(), ()):
            if other not in found:
                found.add(other)
                todo.append(other)
    return found


def _same_keys_as(rhs):
    """The name whose dict ``rhs`` is, or has the keys of (``p``, ``as_real(p)``), else None."""
    if isinstance(rhs, gast.Name):
        return rhs.id
    if not (isinstance(rhs, gast.Call) and len(rhs.args) == 1 and not rhs.keywords
            and isinstance(rhs.args[0], gast.Name)):
        return None
    callee = A.anno(rhs, "callee")
    return rhs.args[0].id if callee is not None and callee.kind == "object" and callee.obj is runtime.as_real else None


def _keys_of(rhs, keyed):
    """Is ``rhs`` the keys of a ``keyed`` dict (``sorted(d)``, ``list(d)``, ``d.keys()``): strings?"""
    if not (keyed and isinstance(rhs, gast.Call)) or rhs.keywords:
        return False
    callee = A.anno(rhs, "callee")
    if callee is None:
        return False
    if callee.kind == "method":
        receiver = rhs.func.value
        return callee.name == "keys" and not rhs.args and isinstance(receiver, gast.Name) and receiver.id in keyed
    return (callee.kind == "object" and any(callee.obj is b for b in KEY_LISTS) and len(rhs.args) == 1
            and isinstance(rhs.args[0], gast.Name) and rhs.args[0].id in keyed)


def _constant_key(index):
    """The int or str of a constant index (``t[1]``, ``t[-1]``, ``d["w"]``), else None."""
    if isinstance(index, gast.UnaryOp) and isinstance(index.op, gast.USub):
        key = _constant_key(index.operand)
        return -key if type(key) is int else None
    if isinstance(index, gast.Constant) and type(index.value) in (int, str):
        return index.value
    return None


def _item_read(rhs, items):
    """``(sources, items)`` of the item ``rhs`` reads (``t[k]`` of a ``t`` in ``items``), or None."""
    if not (isinstance(rhs, gast.Subscript) and isinstance(rhs.value, gast.Name) and rhs.value.id in items):
        return None
    return items[rhs.value.id].get(_constant_key(rhs.slice))


def _item_structures(node, returned_items):
    """What the items of a tuple, list or dict are made of, known by name where the name is bound
    once, to a display (a list or dict only if it is read by constant keys alone, so never
    changed), to a known item of one, or to a call of a function of yours whose returned items
    ``returned_items(fn)`` says (``{key: (free, items)}``: ``free`` if it depends on none of the
    function's parameters; asked only where an item is read by a constant key, or the result
    is passed by keyword or is an exponent). Returns ``{name: {key: (sources, items)}}``, whose
    ``free_calls`` holds the ids of the calls whose whole result depends on none of the
    callee's parameters."""
    bindings, loads, keyed_loads, settings, assignments, bitwise = {}, {}, {}, set(), [], []
    for name in parameter_names(node):  # a parameter is bound by the call (`if b is None: b = (0, 1)`)
        bindings[name] = 1
    for n in A.walk(node):  # one walk: passes walk trees often enough
        cls = n.__class__
        if cls is gast.Name:
            kind = bindings if n.ctx.__class__ is gast.Store else loads
            kind[n.id] = kind.get(n.id, 0) + 1
        elif cls is gast.Subscript:
            if n.value.__class__ is gast.Name and n.ctx.__class__ is gast.Load and _constant_key(n.slice) is not None:
                keyed_loads[n.value.id] = keyed_loads.get(n.value.id, 0) + 1
        elif cls is gast.Assign:
            if n.targets[0].__class__ is gast.Name:
                assignments.append(n)
            if n.value.__class__ is gast.BinOp and n.value.op.__class__ in _BITWISE:
                bitwise.append(n)
        elif cls is gast.Call:  # a value passed by keyword: an axis, a shape, an order
            settings.update(k.value.id for k in n.keywords if k.value.__class__ is gast.Name)
        elif cls is gast.BinOp and n.op.__class__ is gast.Pow and n.right.__class__ is gast.Name:
            settings.add(n.right.id)  # an exponent
    only_keyed = {name for name, count in loads.items() if keyed_loads.get(name) == count}
    items = _Items(bitwise)
    for _ in range(2):  # an item of an item: its structure is known once the outer one is
        for s in assignments:
            if bindings.get(s.targets[0].id) != 1:
                continue
            name, value = s.targets[0].id, s.value
            known = None
            if isinstance(value, gast.Tuple) or (isinstance(value, gast.List) and name in only_keyed):
                if all(A.is_atom(e) for e in value.elts):
                    n = len(value.elts)
                    known = {k: (derivative_sources(e), items.get(getattr(e, "id", None)))
                             for i, e in enumerate(value.elts) for k in (i, i - n)}
            elif isinstance(value, gast.Dict) and name in only_keyed:
                keys = [_constant_key(k) if k is not None else None for k in value.keys]
                if None not in keys and all(A.is_atom(v) for v in value.values):
                    known = {k: (derivative_sources(v), items.get(getattr(v, "id", None)))
                             for k, v in zip(keys, value.values)}
            elif _item_read(value, items) is not None:
                known = _item_read(value, items)[1]
            elif isinstance(value, gast.Call) and returned_items is not None and (name in keyed_loads
                                                                                 or name in settings):
                callee = A.anno(value, "callee")  # (its front end is read only where an item or setting is)
                returned = returned_items(callee.obj) if callee is not None and callee.kind == "object" else None
                if returned is not None:
                    if returned[0]:
                        items.free_calls.add(id(value))
                    if returned[1] is not None:
                        known = _call_items(returned[1], derivative_sources(value))
            if known is not None:
                items[name] = known
    return items


class _Items(dict):
    __slots__ = ("free_calls", "bitwise")

    def __init__(self, bitwise):
        super().__init__()
        self.free_calls = set()
        self.bitwise = bitwise  # the assignments of a | b, a & b, ...: found on the same walk


def _call_items(returned, sources):
    """``returned`` (``returned_items``) of a call whose arguments are ``sources``, as items."""
    return {k: (set() if free else sources, _call_items(inner, sources) if inner is not None else None)
            for k, (free, inner) in returned.items()}


def returned_items(node):
    """``(free, items)`` of what every ``return`` of the function ``node`` (after ``activity``)
    returns: ``free`` if it depends on none of its parameters; ``items``, for a tuple, list or
    dict display, ``{key: (free, items)}`` of its items (else None). None if not known."""
    items = A.anno(node, "item_structures") or {}
    free, params = A.anno(node, "derivative_free") or frozenset(), parameter_names(node)
    stored = A.names_stored(node)
    if any(name not in stored and name not in params for name in _changed_in_place(node)):
        return None  # it changes a global or closure value in place (HIST.append(x)): not known

    def as_returned(known):
        return {k: (all(is_free(n) for n in sources), as_returned(inner) if inner is not None else None)
                for k, (sources, inner) in known.items()}

    def is_free(name):  # a global or closure value is: the function does not change it
        return name in free or (name not in stored and name not in params)

    found = None
    for r in (s for s in A.walk(node) if isinstance(s, gast.Return)):
        value = r.value
        if isinstance(value, gast.Constant) or value is None:
            mine = (True, None)
        elif isinstance(value, (gast.Tuple, gast.List)) and all(A.is_atom(e) for e in value.elts):
            known = {k: (derivative_sources(e), items.get(getattr(e, "id", None)))
                     for i, e in enumerate(value.elts) for k in (i, i - len(value.elts))}
            mine = (all(is_free(n) for n in derivative_sources(value)), as_returned(known))
        elif isinstance(value, gast.Name):
            mine = (is_free(value.id), as_returned(items[value.id]) if value.id in items else None)
        else:
            return None
        found = mine if found is None else _both(found, mine)
    return found


def _changed_in_place(node):
    """Names a function may change in place: receivers of its in-place methods, bases of its
    item stores and augmented assignments, arguments of the other calls it makes for their
    effect."""
    from .fresh import NO_EFFECT, effect_call, is_in, known_pure

    changed = set()
    for n in A.walk(node):
        callee = A.anno(n, "callee") if isinstance(n, gast.Call) else None
        if callee is not None and effect_call(callee) and isinstance(n.func, gast.Attribute):
            changed |= A.names_read(n.func.value)  # L.append(v), a global's bound HIST.append
        if isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store) and isinstance(n.value, gast.Name):
            changed.add(n.value.id)
        elif isinstance(n, gast.AugAssign):
            changed |= A.all_names(n.target)
        elif isinstance(n, gast.Expr) and isinstance(n.value, gast.Call):
            called = A.anno(n.value, "callee")
            if not (called is not None and called.kind == "object"
                    and (is_in(called.obj, NO_EFFECT) or known_pure(called.obj))):
                changed |= A.names_read(n.value)
    return changed


def _both(a, b):
    """What two ``(free, items)`` have in common."""
    common = None
    if a[1] is not None and b[1] is not None and a[1].keys() == b[1].keys():
        common = {k: _both(a[1][k], b[1][k]) for k in a[1]}
    return a[0] and b[0], common


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
        if callee.kind == "object" and callee.obj is copy.copy:  # as L.copy(): a container's is one
            return len(rhs.args) == 1 and isinstance(rhs.args[0], gast.Name) and rhs.args[0].id in containers
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


def activity(node, source, wrt, container_params=(), constant_params=(), returned=None, keyed_params=()):
    """Annotate ``node`` (in A-normal form) with its active variables; see the module doc.
    ``returned(fn)``: ``returned_items`` of a function of yours it calls, or None;
    ``keyed_params``: the parameters given dicts whose keys are strings."""
    edges, reads = [], []
    containers = set(container_params)
    items = _item_structures(node, returned)
    keyed = _string_keyed(node, keyed_params)
    _edges(node.body, edges, containers, items, reads, keyed)
    assigns, returns, simple = [], [], []  # in one walk: the fixpoint below asks each round
    for s in A.walk(node):
        cls = s.__class__
        if cls is gast.Assign or cls is gast.Expr:
            simple.append(s)
            if cls is gast.Assign and s.targets[0].__class__ is gast.Name:
                assigns.append(s)
        elif cls is gast.Return:
            returns.append(s)
    # fixpoint: containers propagate through aliases
    changed = True
    while changed:
        changed = False
        for s in assigns:
            if s.targets[0].id not in containers and _is_container(s.value, containers):
                containers.add(s.targets[0].id)
                changed = True
    varied = _reached(edges, set(wrt))
    useful = set()
    for r in returns:
        useful |= derivative_sources(r.value)
    changed = True
    while changed:
        changed = False
        for target, sources in edges + reads:
            if target in useful and not sources <= useful:
                useful |= sources
                changed = True
    _refuse_indexed_pops(simple, source, varied)
    _refuse_bitwise(items.bitwise, source, varied)
    refuse_varied_parameters(node, source, varied)
    A.set_anno(node, "active", varied & useful)
    A.set_anno(node, "varied", varied)
    # by every parameter (but those each call gives a constant): code differentiated again may
    # be differentiated by another one (the gradient in x, differentiated in n)
    params = parameter_names(node) - set(constant_params)
    A.set_anno(node, "derivative_free", frozenset((A.names_stored(node) | set(constant_params))
                                                  - _reached(edges, params) - params))
    A.set_anno(node, "containers", containers)
    A.set_anno(node, "string_keyed", keyed)  # what the functions of yours it calls are told (``keyed``)
    A.set_anno(node, "item_structures", items)
    return node


def _reached(edges, seeds):
    """The names a derivative of ``seeds`` flows into along ``edges`` (with ``seeds``)."""
    reached = set(seeds)
    changed = True
    while changed:
        changed = False
        for target, sources in edges:
            if target not in reached and sources & reached:
                reached.add(target)
                changed = True
    return reached


def _refuse_bitwise(assignments, source, varied):
    """``|``, ``&``, ``^``, ``<<`` and ``>>`` pass no derivative (on integers and masks there is
    none); one of a value that carries derivatives (a dict merge ``d | {...}``) is refused."""
    for s in assignments:
        if A.names_read(s.value) & varied:
            raise source.syntax_error(
                f"srcad does not differentiate '{_BITWISE[type(s.value.op)]}' of a value that carries a derivative "
                "(a dict merged with |?); build the result with a display or assign its items one by one "
                "(d2 = dict(d); d2[k] = v)", A.anno(s, "origin") or s)


def _refuse_indexed_pops(statements, source, varied):
    """``L.pop()`` takes the last item in both modes; ``L.pop(i)``, ``d.pop(key)`` and a default
    of a container that carries derivatives are refused (forward mode gave wrong tangents).
    ``statements``: the function's assignments and expression statements, at any depth."""
    for s in statements:
        call = s.value
        if (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and call.func.attr == "pop"
                and isinstance(call.func.value, gast.Name) and call.func.value.id in varied
                and (call.args or call.keywords)):
            name = call.func.value.id
            raise source.syntax_error(
                f"{name}.pop(...) with an index, a key or a default is not supported: srcad differentiates "
                f"only {name}.pop() (the last item of a list); read the item ({name}[key]) and build the "
                "list or dict without it", A.anno(s, "origin") or s)
