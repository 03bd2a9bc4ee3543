"""Saved values that are None on some paths, across a split pair, for the numba backend.

A forward sweep saves ``t`` that is bound in one branch only (``t = None`` first, a value
under ``if c:``): Python hands its backward sweep ``None`` where the branch did not run, and
numba cannot return a value that is None on some paths. So the forward sweep saves ``t`` in a
box, a stack holding ``t`` or nothing (``_t_saved_stack = []``, then ``if t is not None:
_t_saved_stack.append(t)``, a typed list either way: ``numba_lowering``'s value stacks), and the backward sweep binds ``t = None``, then
``t`` from the box where it holds one. Guarantee: the backward sweep's ``t`` is not None
exactly where Python's is, and each read of it is proven or refused by ``numba_none_flags``
as for any name that is None on some paths.

What the forward sweep's flow knows at its return carries over: if ``t`` holds a value
wherever the condition name ``c`` is true, and both are saved, the backward sweep reads the
box under ``if c:`` (``c`` as it unpacks it), so its reads of ``t`` under ``if c:`` are
proven; were the box empty there after all, numba's bounds check raises (an IndexError),
it never reads past it.

The backward sweep reads its saved condition names one by one (``a, b = stop_gradient((a_saved,
b_saved))`` as two assignments), and one boxed as may be None is None where its box is
(``c = stop_gradient(d)`` under ``if d is not None:``), with what tells ``d`` holds a value.
"""
import gast

from .. import astutil as A
from ..extend import stop_gradient

ANNOTATION = "saved_boxes"


def _pack(fn):
    """The saved tuple of a forward sweep's ``return y, (saved...)``, or None."""
    last = fn.body[-1] if fn.body else None
    if (isinstance(last, gast.Return) and isinstance(last.value, gast.Tuple) and len(last.value.elts) == 2
            and isinstance(last.value.elts[1], gast.Tuple)):
        return last.value.elts[1]
    return None


def _unpack(fn):
    """The targets of a backward sweep's first statement ``(saved...) = _saved``, or None."""
    first = fn.body[0] if fn.body else None
    params = [a.id for a in fn.args.args]
    if (params and isinstance(first, gast.Assign) and len(first.targets) == 1
            and isinstance(first.targets[0], gast.Tuple) and isinstance(first.value, gast.Name)
            and first.value.id == params[0]):
        return first.targets[0]
    return None


def _fresh(name, taken):
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def box_saved(fn, names):
    """In the forward sweep ``fn``, each saved name of ``names`` (maybe None) saved in a box, as the
    module docstring says; ``{position in the saved tuple: name}`` of those boxed."""
    pack = _pack(fn)
    if pack is None:
        return {}
    boxed = {k: e.id for k, e in enumerate(pack.elts) if isinstance(e, gast.Name) and e.id in names}
    taken = A.all_names(fn)
    filling = []
    for k, name in sorted(boxed.items()):
        box = _fresh(f"_{name}_saved_stack", taken)
        test = gast.Compare(left=A.load(name), ops=[gast.IsNot()], comparators=[A.const(None)])
        push = gast.Expr(value=gast.Call(func=gast.Attribute(value=A.load(box), attr="append", ctx=gast.Load()),
                                         args=[A.load(name)], keywords=[]))
        filling += [A.assign(box, gast.List(elts=[], ctx=gast.Load())), gast.If(test=test, body=[push], orelse=[])]
        pack.elts[k] = A.load(box)
    fn.body[-1:-1] = filling
    return boxed


def carry(fn, boxed, facts):
    """Note on the forward sweep ``fn`` what its backward sweep needs (``saved_boxes``): the
    positions ``boxed``, each with the ``(position, outcome)`` of the saved condition names that,
    by ``facts`` (the flow's at the return: ``(c, outcome, name)``), tell its name holds a value."""
    pack = _pack(fn)
    positions = {e.id: k for k, e in enumerate(pack.elts) if isinstance(e, gast.Name)} if pack is not None else {}
    A.set_anno(fn, ANNOTATION, {k: sorted((positions[c], told) for c, told, n in facts
                                          if n == name and c in positions) for k, name in boxed.items()})


def saved_boxes(fn):
    """What ``carry`` noted on a lowered forward sweep ``fn``."""
    return A.anno(fn, ANNOTATION)


def unbox_saved(fn, boxes):
    """In the backward sweep ``fn``, each value its forward sweep boxed (``boxes``, its
    ``saved_boxes``) read back: ``t = None``, then ``t`` from the box under each saved condition
    that tells it holds a value, else where the box holds one. ``(names unboxed, the unpacked
    condition names read)``: the former are None on some paths, the latter true where their
    forward sweep's were (``numba_none_flags.lower_maybe_none``'s ``trusted``)."""
    unpack = _unpack(fn)
    if not boxes or unpack is None:
        return set(), set()
    taken = A.all_names(fn)
    unboxed, conditions, reads = set(), set(), []
    for k, told in sorted(boxes.items()):
        name = unpack.elts[k].id
        box = _fresh(f"_{name}_saved_stack", taken)
        unpack.elts[k] = gast.Name(id=box, ctx=gast.Store(), annotation=None, type_comment=None)
        top = gast.Subscript(value=A.load(box), slice=A.const(0), ctx=gast.Load())
        length = gast.Call(func=A.load("len"), args=[A.load(box)], keywords=[])
        chain = [gast.If(test=gast.Compare(left=length, ops=[gast.Gt()], comparators=[A.const(0)]),
                         body=[A.assign(name, top)], orelse=[])]
        for position, outcome in reversed(told):
            cond = unpack.elts[position].id
            conditions.add(cond)
            test = A.load(cond) if outcome else gast.UnaryOp(op=gast.Not(), operand=A.load(cond))
            chain = [gast.If(test=test, body=[A.assign(name, A.deepcopy(top))], orelse=chain)]
        reads += [A.assign(name, A.const(None))] + chain
        unboxed.add(name)
    fn.body[1:1] = reads
    return unboxed, conditions


def split_stopped_tuples(fn, resolve):
    """A backward sweep's ``a, b = stop_gradient((a_saved, b_saved))`` as ``a = stop_gradient(a_saved)``
    then ``b = stop_gradient(b_saved)``: the same values (no target is a source), and the flow
    of ``numba_none_flags`` follows a saved condition name through a copy of one name only."""
    for block in A.blocks(fn.body):
        block[:] = [new for s in block for new in (_stopped_parts(s, resolve) or [s])]


def _stopped_parts(s, resolve):
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Tuple)
            and isinstance(_stopped(s.value, resolve), gast.Tuple)):
        return None
    targets, sources = s.targets[0].elts, s.value.args[0].elts
    names = [n.id for n in targets + sources if isinstance(n, gast.Name)]
    if len(targets) != len(sources) or len(names) != len(set(names)) or len(names) != 2 * len(targets):
        return None
    return [gast.copy_location(A.assign(t.id, gast.Call(func=A.load(s.value.func.id), args=[A.load(v.id)],
                                                         keywords=[])), s) for t, v in zip(targets, sources)]


def _stopped(value, resolve):
    """``a`` if ``value`` is srcad's ``stop_gradient(a)`` (``resolve`` tells), else None."""
    if (resolve is not None and isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
            and len(value.args) == 1 and not value.keywords and resolve(value.func.id) is stop_gradient):
        return value.args[0]
    return None


def stop_only_if_saved(fn, unboxed, resolve):
    """``c = stop_gradient(d)`` of a saved ``d`` that may be None (``unboxed``) as ``if d is None:
    c = None`` ``else:`` the statement: ``c`` is None where ``d`` is, as in Python, and the read
    of ``d`` is proven (``numba_none_flags`` carries what told ``d`` holds a value over to ``c``)."""
    for block in list(A.blocks(fn.body)):  # (not the statements made here)
        block[:] = [_none_or(s, unboxed, resolve) for s in block]


def _none_or(s, unboxed, resolve):
    source = _stopped(s.value, resolve) if isinstance(s, gast.Assign) else None
    if not (isinstance(source, gast.Name) and source.id in unboxed and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)):
        return s
    test = gast.Compare(left=A.load(source.id), ops=[gast.Is()], comparators=[A.const(None)])
    none = gast.copy_location(A.assign(s.targets[0].id, A.const(None)), s)
    return gast.copy_location(gast.If(test=test, body=[none], orelse=[s]), s)
