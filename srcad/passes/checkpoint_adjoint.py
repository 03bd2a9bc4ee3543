"""Checkpointed loops in the adjoint: √n snapshots and recomputed segments.

A loop marked by ``checkpoint_loops`` (``for t in srcad.checkpointed(range(n))``) is cut into
segments of ``k`` steps (``checkpointing.checkpoint_segments``: ``k = ceil(sqrt(n))`` unless
``segment=`` says otherwise). The reverse transform (``reverse_loops`` calls ``forward_loop``
and ``reverse_loop`` here) writes

* in the forward sweep: ``for seg in segments: <snapshot>; for t in seg: <body>`` where the
  snapshot saves the loop-carried values (names the body reads before it binds them, names
  code outside the loop reads or binds, and values the body updates in place) with ordinary
  save placeholders, and the body is the ordinary forward sweep of the loop body;
* in the reverse sweep: ``for seg in reversed(segments): <restore snapshot>; for t in seg:
  <body again>; for t in reversed(seg): <reverse body>``.

``record_values`` then decides, as for any value, which snapshot values the reverse sweep
reads (the recomputed body is there, so it sees every value the recomputation reads), and turns
placeholders into stack pushes and pops. ``finish_checkpoints`` (after it) makes the two copies
of the body what they must be: the recomputation gets the forward body with its pushes, and the
forward sweep's body loses every push, so the forward sweep keeps only the snapshots and the
reverse sweep holds one segment's values at a time. Values the body updates in place are copied
when restored, so the snapshot survives the recomputation (``vjp``'s pullback runs again).

Each recomputed segment must end where the first run did: ``finish_checkpoints`` also pushes a
copy of the snapshot's values as the forward loop ends, and the reverse sweep compares the
values each recomputation ends with (``check_recomputed``: exactly, NaN where NaN) with that,
then with the snapshot restored for the segment after it. A body that reads or changes state
no snapshot holds (``float(obj)`` where ``obj.__float__`` counts its calls, a generator drawn
from) is an error at the user's loop there, not a wrong gradient. Cost: one comparison of the
state per segment, one copy of the final state.

Memory: about ``n/k + k`` states instead of ``n``; time: the loop body runs twice.

>>> import numpy as np, srcad
>>> from srcad.pipeline import Options, transform
>>> from srcad.passes.shapes import arg_spec
>>> def f(u):
...     for t in srcad.checkpointed(range(9)):
...         u = np.sin(u)
...     return u
>>> print(transform(f, Options(specs={"u": arg_spec(np.ones(2))})).joint_source.strip())
def f_adjoint(u, v=None):
    _final_stack = []
    _u_stack = []
    _u_arg = u
    # line 2: for t in srcad.checkpointed(range(9)):
    _checkpoint1 = None
    _range1 = range(9)
    _segments1 = checkpoint_segments(_range1, _checkpoint1)
    for _segment1 in _segments1:
        _u_stack.append(u)
        for t in _segment1:
            # line 3: u = np.sin(u)
            _t1 = np.sin(u)
            u = _t1
    _final_stack.append((copy_value(u),))
    du = cotangent_like(v, (2,), 'float64')
    # line 2: for t in srcad.checkpointed(range(9)):
    _segments2 = checkpoint_segments(_range1, _checkpoint1)
    _expected = _final_stack.pop()
    for _segment2 in reversed(_segments2):
        u = _u_stack.pop()
        _started = u,
        for t in _segment2:
            # line 3: u = np.sin(u)
            _t1 = np.sin(u)
            _u_stack.append(u)
            u = _t1
        check_recomputed(_expected, (u,), ('u',),
            '<doctest srcad.passes.checkpoint_adjoint[3]>:2')
        _expected = _started
        for t in reversed(_segment2):
            # line 3: u = np.sin(u)
            u = _u_stack.pop()
            du = du * np.cos(u)
    return finish(du, _u_arg, True)
"""
import gast

from .. import astutil as A
from ..checkpointing import check_recomputed, checkpoint_segments
from ..errors import SrcadError
from .. import runtime
from ..naming import builtin
from .activity import scatter_add_args
from .checkpoint_state import check_replayable
from .reverse_state import placeholder
from .reverse_stores import mutated_names


def checkpointed_loop(node, loop):
    """The marker name of ``loop`` (a loop of the function ``node``) if it is checkpointed."""
    found = A.anno(node, "checkpointed_loops")
    if found is None:
        markers = A.anno(node, "checkpoints") or {}
        found = {}
        if markers:
            _find_loops(node.body, markers, found)
            present = A.names_stored(gast.Module(body=node.body, type_ignores=[]))  # dead code may be gone
        lost = sorted(markers[m][1] for m in set(markers) - set(found.values()) if markers[m][0] in present)
        if lost:
            raise SrcadError(f"srcad lost the checkpointed loop of line {lost[0]} on the way to the "
                             "adjoint (a bug): please report it, and drop srcad.checkpointed there meanwhile")
        A.set_anno(node, "checkpointed_loops", found)
    inside = found.get(id(loop))
    return None if inside is None else A.anno(node, "checkpoints")[inside][0]


def _find_loops(stmts, markers, found):
    """Each marked loop has ``_in_checkpointN = True`` in its body (``checkpoint_loops``):
    record the loop and drop the marker."""
    for s in stmts:
        if isinstance(s, (gast.If, gast.For, gast.While)):
            _find_loops(s.body, markers, found)
            _find_loops(s.orelse, markers, found)
        if isinstance(s, gast.For):
            for inner in s.body:
                if (isinstance(inner, gast.Assign) and isinstance(inner.targets[0], gast.Name)
                        and inner.targets[0].id in markers):
                    found[id(s)] = inner.targets[0].id
                    s.body = [b for b in s.body if b is not inner] or [gast.Pass()]
                    break


def _updated_in_place(stmts):
    names = set(mutated_names(stmts))
    for s in A.walk_statements(stmts):
        if isinstance(s, gast.Expr) and scatter_add_args(s) is not None:
            names.add(scatter_add_args(s)[0].id)
    return names


def _exposed(stmts, defined):
    """(names ``stmts`` may read before binding them, names bound on every path through them)."""
    exposed, defined = set(), set(defined)
    for s in stmts:
        if isinstance(s, gast.If):
            exposed |= A.names_read(s.test) - defined
            in_body, after_body = _exposed(s.body, defined)
            in_orelse, after_orelse = _exposed(s.orelse, defined)
            exposed |= in_body | in_orelse
            defined = after_body & after_orelse
        elif isinstance(s, gast.For):
            exposed |= A.names_read(s.iter) - defined
            exposed |= _exposed(s.body, defined | {s.target.id})[0]
        elif isinstance(s, gast.While):
            exposed |= A.names_read(s.test) - defined
            exposed |= _exposed(s.body, defined)[0]
        else:
            exposed |= A.names_read(s) - defined
            defined |= A.names_stored(s)
    return exposed, defined


def _carried(node, loop, assigned):
    """The names a segment's snapshot holds: those the body binds or updates in place whose
    value at a segment's start matters (read by the body before it binds them, or read or bound
    outside the loop: code before the loop reads them again in the reverse sweep). An update in
    place reads its name, so a value updated in place is one of them unless each step makes it
    afresh and nothing outside the loop sees it."""
    inside = {id(n) for n in A.walk(loop)}
    outside = {n.id for n in A.walk(node) if isinstance(n, gast.Name) and id(n) not in inside}
    exposed = _exposed(loop.body, {loop.target.id})[0]
    return sorted(v for v in assigned if v in exposed or v in outside)


def forward_loop(rv, loop, loops):
    """The forward sweep of a checkpointed loop (see the module doc), or None if nothing in it
    carries a derivative (then it is an ordinary loop)."""
    marker = checkpointed_loop(rv.node, loop)
    updated = _updated_in_place(loop.body)
    assigned = (A.names_stored(gast.Module(body=loop.body, type_ignores=[])) | updated) - {loop.target.id}
    if not assigned & rv.active:
        return None
    check_replayable(rv, loop, updated)
    origin = A.anno(loop, "origin")
    site = rv.site("name", loop.target.id, loops, origin=origin)
    A.set_anno(loop, "site", site)
    inner_loops = loops + (loop,)
    carried = _carried(rv.node, loop, assigned)
    sites = [rv.site("name", v, inner_loops, origin=origin) for v in carried]
    body = rv.forward(loop.body, inner_loops)
    segments, segment = rv.namer.fresh("_segments"), rv.namer.fresh("_segment")
    steps = gast.For(target=A.store(loop.target.id), iter=A.load(segment), body=body or [gast.Pass()], orelse=[],
                     type_comment=None)
    A.set_anno(steps, "checkpoint_forward", segment)
    snapshot = [placeholder("save", s) for s in sites]
    A.set_anno(loop, "checkpoint", (segment, sites, body, marker))
    return [placeholder("save", site), _cut(rv, segments, loop, marker),
            gast.For(target=A.store(segment), iter=A.load(segments), body=snapshot + [steps], orelse=[],
                     type_comment=None)]


def _cut(rv, name, loop, marker):
    """``name = checkpoint_segments(range, segment)``."""
    cut = rv.call("checkpoint_segments", checkpoint_segments, A.load(loop.iter.id), A.load(marker))
    return A.set_anno(A.assign(name, cut), "origin", A.anno(loop, "origin"))


def reverse_loop(rv, loop, backward):
    """The reverse sweep of a checkpointed loop, around ``backward`` (the ordinary reverse
    loop ``for t in reversed(range): ...``, whose range becomes the segment's)."""
    segment, sites, body, marker = A.anno(loop, "checkpoint")
    segments_again, segment_again = rv.namer.fresh("_segments"), rv.namer.fresh("_segment")
    backward.iter = gast.Call(func=builtin("reversed"), args=[A.load(segment_again)], keywords=[])
    recompute = gast.For(target=A.store(loop.target.id), iter=A.load(segment_again),
                         body=A.deepcopy(body) or [gast.Pass()], orelse=[], type_comment=None)
    origin = A.anno(loop, "origin") or loop
    A.set_anno(recompute, "checkpoint_rerun", (segment, f"{rv.source.filename}:{origin.lineno}"))
    restore = [placeholder("restore", s) for s in reversed(sites)]
    each = gast.For(target=A.store(segment_again), iter=gast.Call(func=builtin("reversed"),
                                                                  args=[A.load(segments_again)], keywords=[]),
                    body=restore + [recompute, backward], orelse=[], type_comment=None)
    return [_cut(rv, segments_again, loop, marker), each]


def _forward_loops(stmts, parent=None):
    """The forward sweeps' segment loops (the steps of one segment, and the loop over segments
    around them), inner ones first."""
    for s in stmts:
        if isinstance(s, (gast.If, gast.For, gast.While)):
            yield from _forward_loops(s.body, s)
            yield from _forward_loops(s.orelse, s)
            if isinstance(s, gast.For) and A.anno(s, "checkpoint_forward") is not None:
                yield s, parent


def _pushed(s, stacks):
    """The value ``s`` pushes on one of ``stacks`` (``_x_stack.append(value)``), else None."""
    if (isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) and isinstance(s.value.func, gast.Attribute)
            and s.value.func.attr == "append" and isinstance(s.value.func.value, gast.Name)
            and s.value.func.value.id in stacks):
        return s.value.args[0]
    return None


def _copies_on_restore(segment_loop, stacks):
    """``x = how(x)`` for each snapshot value the forward sweep saved as a copy ``how(x)`` (a
    later in-place update reaches its memory): the recomputation updates the restored value in
    place, and the snapshot must stay as saved (``vjp``'s pullback runs again)."""
    copies = []
    for s in segment_loop.body:
        value = _pushed(s, stacks)
        if isinstance(value, gast.Call) and len(value.args) == 1 and isinstance(value.args[0], gast.Name):
            name = value.args[0].id
            copies.append(A.assign(name, gast.Call(func=A.deepcopy(value.func), args=[A.load(name)], keywords=[])))
    return copies


def _without_pushes(stmts, stacks):
    return A.drop_statements(stmts, lambda s: _pushed(s, stacks) is not None)


def _snapshot_pushes(segment_loop, stacks):
    """``{stack: value}`` of the snapshot ``segment_loop`` (the loop over segments) pushes."""
    return {s.value.func.value.id: _pushed(s, stacks) for s in segment_loop.body if _pushed(s, stacks) is not None}


def _restored(stmts, stacks):
    """``{stack: name}`` of the snapshot restores ``name = stack.pop()`` among ``stmts``."""
    restored = {}
    for s in stmts:
        value = s.value if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) else None
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and value.func.attr == "pop" \
                and isinstance(value.func.value, gast.Name) and value.func.value.id in stacks:
            restored[value.func.value.id] = s.targets[0].id
    return restored


def _hold_final_values(fwd, stacks, namer, copy_value):
    """After each forward loop over segments, push the values its snapshots hold as the loop
    ends (copies: code after the loop may update them in place) on a stack of their own, which
    the reverse sweep pops to check the last segment's recomputation. Returns ``{segment
    name: (that stack, the snapshot stacks in its order)}``."""
    held = {}
    for block in list(A.blocks(fwd)):
        for segments in [s for s in block if isinstance(s, gast.For)]:
            steps = next((b for b in segments.body if A.anno(b, "checkpoint_forward") is not None), None)
            pushes = _snapshot_pushes(segments, stacks) if steps is not None else {}
            if not pushes:
                continue
            order, ends = sorted(pushes), namer.unique("_final_stack")
            values = [A.deepcopy(pushes[k]) if isinstance(pushes[k], gast.Call) else gast.Call(
                func=A.load(copy_value), args=[A.deepcopy(pushes[k])], keywords=[]) for k in order]
            push = gast.Attribute(value=A.load(ends), attr="append", ctx=gast.Load())
            block.insert(block.index(segments) + 1, gast.Expr(value=gast.Call(
                func=push, args=[gast.Tuple(elts=values, ctx=gast.Load())], keywords=[])))
            held[A.anno(steps, "checkpoint_forward")] = (ends, order)
    return held


def _check_each_segment(rev, loop, at, held, check, namer):
    """Around the reverse sweep's loop over segments ``loop`` (its recomputation at ``at``):
    compare the values each recomputed segment ends with with the snapshot the next segment
    restored (the loop's final values first), in ``check(expected, recomputed, names, where)``."""
    segment, where = A.anno(loop.body[at], "checkpoint_rerun")
    ends, order = held.get(segment, (None, ()))
    restored = _restored(loop.body[:at], order)
    if ends is None or set(restored) != set(order):
        return
    names = [restored[k] for k in order]
    expected, start = namer.unique("_expected"), namer.unique("_started")
    values = gast.Tuple(elts=[A.load(v) for v in names], ctx=gast.Load())
    compare = gast.Call(func=A.load(check), args=[A.load(expected), values, gast.Tuple(elts=[A.const(v) for v in names], ctx=gast.Load()), A.const(where)],
                        keywords=[])
    loop.body[at + 1:at + 1] = [gast.Expr(value=compare), A.assign(expected, A.load(start))]
    loop.body[at:at] = [A.assign(start, A.deepcopy(values))]  # as restored: the recomputation makes new values
    for block in A.blocks(rev):
        if any(s is loop for s in block):
            pop = gast.Call(func=gast.Attribute(value=A.load(ends), attr="pop", ctx=gast.Load()), args=[], keywords=[])
            block.insert(next(i for i, s in enumerate(block) if s is loop), A.assign(expected, pop))
            return


def finish_checkpoints(node, refs):
    """After ``record_values``: each recomputation in the reverse sweep becomes a copy of its
    loop's forward body with the values it saves, and the forward sweep's body saves nothing
    (its snapshots, outside the body, stay). Fails if a value stack is still touched there.
    Each recomputed segment is checked against the next snapshot (``check_recomputed``)."""
    n = A.anno(node, "n_forward")
    fwd, rev = node.body[:n], node.body[n:]
    stacks = set(A.anno(node, "stacks") or ())
    namer = A.anno(node, "namer")
    held = _hold_final_values(fwd, stacks, namer, refs("copy_value", runtime.copy_value))
    stacks |= {ends for ends, _ in held.values()}
    recorded, copies = {}, {}
    for loop, segments in list(_forward_loops(fwd)):
        recorded[A.anno(loop, "checkpoint_forward")] = A.deepcopy(loop.body)
        copies[A.anno(loop, "checkpoint_forward")] = _copies_on_restore(segments, stacks)
        loop.body = _without_pushes(loop.body, stacks) or [gast.Pass()]
        left = stacks & A.all_names(gast.Module(body=loop.body, type_ignores=[]))
        if left:
            raise SrcadError(f"srcad: a checkpointed loop's forward sweep still writes the value stack "
                             f"{sorted(left)[0]} (a bug): please report it, and drop srcad.checkpointed meanwhile")
    segment_loops = [s for s in A.walk(gast.Module(body=rev, type_ignores=[])) if isinstance(s, gast.For)
                     and any(A.anno(b, "checkpoint_rerun") is not None for b in s.body)]
    check = refs("check_recomputed", check_recomputed)
    for loop in segment_loops:
        at = next(i for i, b in enumerate(loop.body) if A.anno(b, "checkpoint_rerun") is not None)
        ident = A.anno(loop.body[at], "checkpoint_rerun")[0]
        loop.body[at].body = A.deepcopy(recorded[ident])
        restored = A.names_stored(gast.Module(body=loop.body[:at], type_ignores=[]))
        _check_each_segment(rev, loop, at, held, check, namer)
        at = next(i for i, b in enumerate(loop.body) if A.anno(b, "checkpoint_rerun") is not None)
        loop.body[at:at] = [A.deepcopy(c) for c in copies[ident] if c.targets[0].id in restored]
    head = [A.assign(ends, gast.List(elts=[], ctx=gast.Load())) for ends, _ in held.values()]
    node.body = head + fwd + rev
    A.set_anno(node, "n_forward", len(head) + len(fwd))
    A.set_anno(node, "stacks", sorted(stacks))
    return node
