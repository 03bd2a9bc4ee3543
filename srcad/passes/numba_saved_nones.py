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
"""
import gast

from .. import astutil as A

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
