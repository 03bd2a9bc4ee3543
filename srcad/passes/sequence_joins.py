"""Joins of sequences of known length, for ``normalize``: ``t + (y,)`` of a tuple bound to
``(a, b)`` is the display ``(t[0], t[1], y)``, whose items are differentiated as any display's
(srcad refuses ``+`` of lists or tuples that carry derivatives where it runs:
``runtime_adjoints.JOINED_SEQUENCES``). The display holds the very items the join would,
in the same order, so the lowering changes no value.

A name's length is known where it is read if it was bound, earlier in the same block, by a
display, by such a join, or by a copy of a name known there; a name a branch or a loop binds
is unknown after it (and in the loop). A tuple keeps its length; a list's may change in place
(``append``, ``+=``, a slice store, through another name bound to it), so a list's name counts
only if each read of it anywhere in the function leaves its length as it is
(``_lists_kept_whole``). Any other join (a length not known, a tuple and a list) is left as
written.
"""
import gast

from .. import astutil as A
from .. import runtime
from .fresh import leaves_arguments, new_array_call

_DISPLAYS = (gast.Tuple, gast.List)


def join_known_sequences(body, namer):
    """``body`` (A-normal form) with each join of known lengths written as a display."""
    whole = gast.Module(body=body, type_ignores=[])
    displayed = {s.targets[0].id for s in A.walk_statements(body) if isinstance(s, gast.Assign)
                 and isinstance(s.targets[0], gast.Name) and isinstance(s.value, _DISPLAYS)}
    if not any(isinstance(n, gast.BinOp) and isinstance(n.op, gast.Add) and any(
            isinstance(o, _DISPLAYS) or isinstance(o, gast.Name) and o.id in displayed for o in (n.left, n.right))
            for n in A.walk(whole)):
        return body  # (a join of known lengths starts from a display: none here)
    return _block(body, {}, _lists_kept_whole(body), namer)


def _block(stmts, known, kept, namer):
    """``known``: name -> (display type, length) of the names known where ``stmts`` start
    (updated to where they end); ``kept``: the list names ``_lists_kept_whole`` allows."""
    out = []
    for s in stmts:
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name):
            target = s.targets[0].id
            found = _length(s.value, known)
            if isinstance(s.value, gast.BinOp) and isinstance(s.value.op, gast.Add):
                found = _lowered(s, known, namer, out)
            known.pop(target, None)
            if found is not None and (found[0] is gast.Tuple or target in kept):
                known[target] = found
            out.append(s)
            continue
        if isinstance(s, gast.If):
            s.body = _block(s.body, dict(known), kept, namer)
            s.orelse = _block(s.orelse, dict(known), kept, namer)
        elif isinstance(s, (gast.For, gast.While)):
            _forget(known, A.names_stored(s))  # (bound in the loop: unknown at its next turn)
            s.body = _block(s.body, dict(known), kept, namer)
            s.orelse = _block(s.orelse, dict(known), kept, namer)
        _forget(known, A.names_stored(s))
        out.append(s)
    return out


def _forget(known, names):
    for name in names:
        known.pop(name, None)


def _length(value, known):
    """(display type, length) of ``value``, an operand or a right-hand side, if known."""
    if isinstance(value, _DISPLAYS) and not any(isinstance(e, gast.Starred) for e in value.elts):
        return type(value), len(value.elts)
    if isinstance(value, gast.Name):
        return known.get(value.id)
    callee = A.anno(value, "callee") if isinstance(value, gast.Call) else None
    if getattr(callee, "obj", None) is runtime.in_place_result and len(value.args) == 2 and not value.keywords:
        new, old = (_length(a, known) for a in value.args)  # t += ...: ``new`` where ``old`` is no array
        return new if new is not None and old is not None else None
    return None


def _lowered(s, known, namer, out):
    """Rewrite ``s``, ``z = a + b`` of two sequences of known lengths and one type, as ``z``
    bound to the display of their items (read into temporaries first, ``out``); their
    (type, length), or None if it is left as written."""
    operands = (s.value.left, s.value.right)
    lengths = [_length(o, known) for o in operands]
    if None in lengths or lengths[0][0] is not lengths[1][0]:
        return None
    items = []
    for operand, (_, length) in zip(operands, lengths):
        if isinstance(operand, _DISPLAYS):
            items.extend(operand.elts)
            continue
        for i in range(length):
            item = namer.fresh("_t")
            out.append(gast.copy_location(A.assign(item, gast.Subscript(
                value=A.load(operand.id), slice=A.const(i), ctx=gast.Load())), s))
            items.append(A.load(item))
    kind = lengths[0][0]
    s.value = gast.copy_location(kind(elts=items, ctx=gast.Load()), s.value)
    return kind, len(items)


def _lists_kept_whole(body):
    """The names each read of which anywhere in ``body`` leaves a list's length as it is: an
    item or slice read, an item store, an operand of ``+`` or ``*``, a returned value, an
    argument of a library function that answers a new array (``np.stack(L)``), or the value
    of a plain copy into another such name (and then the copy's reads count too)."""
    allowed, copies, reads = set(), [], []
    for n in A.walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and (
                isinstance(n.ctx, gast.Load) or not any(isinstance(i, gast.Slice) for i in A.walk(n.slice))):
            allowed.add(id(n.value))
        elif isinstance(n, gast.BinOp) and isinstance(n.op, (gast.Add, gast.Mult)):
            allowed.update((id(n.left), id(n.right)))
        elif isinstance(n, gast.Return):
            allowed.add(id(n.value))
        elif isinstance(n, gast.Call) and not n.keywords and getattr(A.anno(n, "callee"), "kind", None) == "object":
            obj = A.anno(n, "callee").obj
            if new_array_call(obj, n) and leaves_arguments(obj):
                allowed.update(id(a) for a in n.args)
        elif isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], gast.Name) and (
                isinstance(n.value, gast.Name)):
            allowed.add(id(n.value))
            copies.append((n.value.id, n.targets[0].id))
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            reads.append(n)
    changed = {n.id for n in reads if id(n) not in allowed}
    while True:  # a name bound to the same list as a changed one is changed too
        more = {b for a, b in copies if a in changed} | {a for a, b in copies if b in changed}
        if more <= changed:
            return A.names_stored(gast.Module(body=body, type_ignores=[])) - changed
        changed |= more
