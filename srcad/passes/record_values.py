"""To-be-recorded analysis: save exactly the overwritten values the reverse sweep reads.

The reverse pass leaves a ``save`` placeholder before every assignment of the forward
sweep and a ``restore`` placeholder after its reverse. Afterwards a placeholder has
become real code only if the reverse sweep later reads the value it restores (backward
liveness over the reverse sweep, loops iterated to a fixpoint): outside loops a plain
copy (``_y_1 = y`` ... ``y = _y_1``), inside loops a value stack (``_y_stack.append(y)``
... ``y = _y_stack.pop()``); an element update saves only the elements it overwrites,
and ``list.append`` is undone with ``pop``. Placeholders nobody needs are gone.

In ``for ...: y = y * 2`` nothing is saved (the adjoint, ``dy = dy * 2``, reads no ``y``);
in ``for ...: y = np.sin(y)`` every old ``y`` is (``dy = dy * np.cos(y)`` reads it). The
argument ``finish`` needs for the gradient's shape is read from a name bound at entry.
Index arithmetic on a loop counter (``_t8 = i - 1``) is not read from the forward sweep at
all: ``passes.reverse_loops`` computes it again in the reverse loop (``_t8_again = i - 1``).

Memory shared between names (``passes.memory``) is followed too, so the reverse sweep reads
every value as the forward sweep saw it: before an in-place update, another name that
shares the updated memory and that the reverse sweep reads later is replaced by a copy
(``x = np.tanh(x); x[0] *= 2.0``: tanh's rule reads the old ``x``); a saved value an in-place
update may reach later is saved as a copy; and a user function's forward sweep, which keeps
its arguments for its backward sweep, gets copies of those a later update may reach.
"""
import copy

import gast

from .. import astutil as A
from .. import runtime
from .callees import Callee
from .fresh import SHAPE_ONLY_ARGUMENTS
from .item_forms import mark_element_reads
from .memory import may_change_later, memory_flow
from .memory_locations import shallow_copy_keeps
from .shapes import Spec
from .simplify import tidy


class _Sharing:
    """What the forward sweep's memory analysis says about each save site (``aliasing.memory_flow``)."""

    def __init__(self, fwd, params):
        self.sharers = {}  # update site id -> {name sharing the updated memory: needs a deep copy}
        self.stale = {}  # update site id -> {name an earlier update made stale: that update's site id}
        self.saved = {}  # name site id -> memory of the value it saves
        self.callee_args = {}  # id of ``y, saved = f_forward(...)`` -> {argument: its memory}
        self.mutated = memory_flow(fwd, params, self.note)

    def note(self, s, state):
        site = A.anno(s, "site") if not isinstance(s, gast.Expr) or A.anno(s, "save") is None else A.anno(s, "save")
        if site is not None and site.kind in ("subscript", "append") and site.var in state.names:
            own = state.names[site.var].own
            # (deep where copy_value's copy would still share the updated memory)
            self.sharers[site.id] = {n: bool((m.inner | shallow_copy_keeps(m)) & own) for n, m in state.names.items()
                                     if n != site.var and m.all() & own}
            earlier = {n: A.anno(update, "site") for n, (_, update, _) in state.stale.items()}
            self.stale[site.id] = {n: u.id for n, u in earlier.items() if u is not None and u.kind == "subscript"}
        elif site is not None and site.kind == "name" and site.var in state.names:
            self.saved[site.id] = state.names[site.var]
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Tuple) and isinstance(s.value, gast.Call):
            self.callee_args[id(s)] = {a.id: state.names.get(a.id) for a in s.value.args if isinstance(a, gast.Name)}

    def copy_of(self, memory, value, copy_value, deep_copy):
        """``value`` itself, or a copy of it if a later in-place update may reach its memory."""
        if memory is None:
            return value
        if may_change_later(memory.inner | shallow_copy_keeps(memory), self.mutated):
            return gast.Call(func=A.load(deep_copy), args=[value], keywords=[])
        if may_change_later(memory.own, self.mutated):
            return gast.Call(func=A.load(copy_value), args=[value], keywords=[])
        return value


def _copy_callee_arguments(fwd, sharing_facts, copy_value, deep_copy):
    """A user function's forward sweep keeps references to its arguments for its backward
    sweep: pass it copies of those a later in-place update may change. Returns whether it did."""
    copied = False
    for s in A.walk_statements(fwd):
        args = sharing_facts.callee_args.get(id(s))
        if args:
            new = [sharing_facts.copy_of(args.get(a.id), a, copy_value, deep_copy)
                   if isinstance(a, gast.Name) else a for a in s.value.args]
            copied |= any(n is not a for n, a in zip(new, s.value.args))
            s.value.args = new
    return copied


def _copy_before_first_update(snapshots, facts):
    """A name copied before an update because the reverse sweep reads it later may already be
    stale there: an earlier update changed its memory (``w = u[1]; u[0] = w; u[-1] = ...``,
    where the reverse sweep reads ``w``). Copy it before that earlier update too, so no copy
    reads memory changed under it (what the aliasing check refuses when the adjoint is
    differentiated again)."""
    changed = True
    while changed:
        changed = False
        for site_id, names in list(snapshots.items()):
            for name in list(names):
                first = facts.stale.get(site_id, {}).get(name)
                if first is not None and name not in snapshots.get(first, ()):
                    snapshots.setdefault(first, set()).add(name)
                    facts.sharers.setdefault(first, {})[name] = facts.sharers[site_id][name]
                    changed = True


def _finish_with_entry_values(fwd, rev, params, refs, namer):
    """``finish(dx, x)`` at the end of the reverse sweep needs the argument ``x`` only for its
    shape and type: read it from a name bound once at entry, so a loop that rebinds ``x``
    (``x = x * c``) need not save every old ``x`` just to restore the argument."""
    finish, as_real = refs("finish", runtime.finish), refs("as_real", runtime.as_real)
    entry, start = 0, 0
    while entry < len(fwd) and _entry_conversion(fwd[entry], params):
        entry += 1
        if fwd[entry - 1].value.func.id == as_real:
            start = entry  # after integers became reals, before arguments updated in place are copied
    # arguments rebound after entry, or copied at entry because updated in place (if none, no
    # call of finish needs changing: the reverse sweep is not walked)
    rebound = A.names_stored(gast.Module(body=fwd[start:], type_ignores=[])) & set(params)
    kept = {}
    for call in A.walk(gast.Module(body=rev, type_ignores=[])) if rebound else ():
        if (isinstance(call, gast.Call) and isinstance(call.func, gast.Name) and call.func.id == finish
                and len(call.args) > 1 and isinstance(call.args[1], gast.Name) and call.args[1].id in rebound
                and call.args[1].id in params):
            p = call.args[1].id
            if p not in kept:
                kept[p] = namer.unique(f"_{p}_arg")
            call.args[1] = A.load(kept[p])
    return fwd[:start] + [A.assign(name, A.load(p)) for p, name in kept.items()] + fwd[start:]


def _entry_conversion(s, params):
    """``x = as_real(x)`` or ``x = copy_value(x)``, which the forward sweep starts with."""
    return (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and s.targets[0].id in params
            and isinstance(s.value, gast.Call) and isinstance(s.value.func, gast.Name) and len(s.value.args) == 1
            and isinstance(s.value.args[0], gast.Name) and s.value.args[0].id == s.targets[0].id)


def _needed_restores(rev, sharers, specs):
    """Restores whose value the reverse sweep reads later (backward liveness, loops to a
    fixpoint), and for each in-place update the other names sharing its memory that the
    reverse sweep reads later (they must be copied before the update). A read for the shape
    and dtype alone of a name that is an array of one known shape and dtype wherever it is
    bound needs no restore: any of its values answers it (``da = zeros_like(a)`` in a loop
    that rebinds ``a`` keeps no ``a`` per trip)."""
    needed = set()
    snapshots = {}
    uses = {}  # id(simple statement) -> (names it binds, names it reads): loops ask again each round

    def block(stmts, live):
        for s in reversed(stmts):
            live = stmt(s, live)
        return live

    def stmt(s, live):
        site = A.anno(s, "restore")
        if site is not None:
            read_later = set(sharers.get(site.id, ())) & live
            if read_later:
                snapshots.setdefault(site.id, set()).update(read_later)
            if site.var not in live:
                return live
            needed.add(site.id)
            if site.kind == "name":
                return live - {site.var}
            return live | ({site.var} | (A.names_read(site.index) if site.index is not None else set()))
        if isinstance(s, gast.If):
            return block(s.body, live) | block(s.orelse, live) | A.names_read(s.test)
        if isinstance(s, gast.For):
            target = s.target.id
            body_in = set()
            while True:
                new = block(s.body, live | body_in) - {target}
                if new <= body_in:
                    break
                body_in |= new
            return live | body_in | A.names_read(s.iter)
        found = uses.get(id(s))
        if found is None:
            found = uses[id(s)] = (A.names_stored(s), _value_reads(s, specs))
        return (live - found[0]) | found[1]

    block(rev, set())
    return needed, snapshots


def _value_reads(s, specs):
    """The names statement ``s`` reads, less those ``name = helper(...)`` reads only for a
    shape and dtype (``fresh.SHAPE_ONLY_ARGUMENTS``) that every value of the name shares:
    an array (not a number, whose type a helper may answer with) of one shape and dtype
    wherever it is bound (``shapes``). The name is bound by then (the forward statement the
    read undoes ran), so whichever of its values it holds serves."""
    names = A.names_read(s)
    call = s.value if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) else None
    if not isinstance(call, gast.Call):
        return names
    helper = A.anno(call.func, "denotes")
    positions = next((p for f, p in SHAPE_ONLY_ARGUMENTS.items() if f is helper), ())
    shape_only = {a.id for k, a in enumerate(call.args) if k in positions and isinstance(a, gast.Name)
                  and isinstance(specs.get(a.id), Spec) and specs[a.id].python is None and specs[a.id].shape}
    if not shape_only:
        return names
    elsewhere = set().union(*(A.names_read(a) for k, a in enumerate(call.args) if k not in positions),
                            *(A.names_read(kw.value) for kw in call.keywords), A.names_read(call.func))
    return names - (shape_only - elsewhere)


def record_values(node, refs, restore_for_shapes=False):
    """Turn the joint adjoint's placeholders into saves and restores; see module doc.
    ``restore_for_shapes``: restore a value read only for its shape too (numba types a name
    once, and a name left to hold another trip's value may be its ``None`` placeholder there)."""
    n = A.anno(node, "n_forward")
    namer = A.anno(node, "namer")
    params = set(A.anno(node, "params"))
    fwd, rev = node.body[:n], node.body[n:]
    fwd = _finish_with_entry_values(fwd, rev, params, refs, namer)
    copy_value = refs("copy_value", runtime.copy_value)
    deep_copy = refs("deepcopy", copy.deepcopy)
    specs = A.anno(node, "specs") or {}
    mark_element_reads(fwd, specs)
    facts = _Sharing(fwd, params)
    if _copy_callee_arguments(fwd, facts, copy_value, deep_copy):
        facts = _Sharing(fwd, params)  # what the functions keep no longer shares the copied arguments
    needed, snapshots = _needed_restores(rev, facts.sharers, {} if restore_for_shapes else specs)
    needed -= _hoist_loop_invariants(fwd, facts, params, specs)
    _copy_before_first_update(snapshots, facts)
    first_definitions = _first_definitions(fwd, params)

    def snapshot(site):
        """Copies of the other names sharing the memory an update changes, taken before it."""
        copies = []
        for other in sorted(snapshots.get(site.id, ())):
            if other not in params and other not in preinit:  # bound in a branch not taken: None
                preinit.append(other)
            how, obj = (deep_copy, copy.deepcopy) if facts.sharers[site.id][other] else (copy_value, runtime.copy_value)
            call = A.set_anno(gast.Call(func=A.load(how), args=[A.load(other)], keywords=[]), "callee",
                              Callee("object", obj=obj, name=how))  # what the analysis, run again, reads
            copies.append(A.assign(other, call))
        return copies
    stacks, slots, preinit = {}, {}, []

    def storage(site):
        if site.in_loop:
            if site.var not in stacks:
                stacks[site.var] = namer.unique(f"_{site.var.lstrip('_')}_stack")
            return stacks[site.var]
        if site.id not in slots:
            slots[site.id] = namer.fresh(f"_{site.var.lstrip('_')}_")
        return slots[site.id]

    def value_of(site):
        if site.kind == "subscript":
            region = gast.Subscript(value=A.load(site.var), slice=A.deepcopy(site.index), ctx=gast.Load())
            return gast.Call(func=A.load(copy_value), args=[region], keywords=[])
        return facts.copy_of(facts.saved.get(site.id), A.load(site.var), copy_value, deep_copy)

    def target_of(site):
        if site.kind == "subscript":
            return gast.Subscript(value=A.load(site.var), slice=A.deepcopy(site.index), ctx=gast.Store())
        return A.store(site.var)

    def with_snapshots(stmts):
        out = []
        for s in stmts:
            if A.anno(s, "save") is None and A.anno(s, "site") is not None:
                out.extend(snapshot(A.anno(s, "site")))
            if isinstance(s, (gast.If, gast.For, gast.While)):
                s.body = with_snapshots(s.body) or [gast.Pass()]
                s.orelse = with_snapshots(s.orelse)
            out.append(s)
        return out

    def rewrite(stmts, role):
        out = []
        for s in stmts:
            site = A.anno(s, role)
            if site is None:
                if isinstance(s, (gast.If, gast.For, gast.While)):
                    s.body = rewrite(s.body, role) or [gast.Pass()]
                    s.orelse = rewrite(s.orelse, role)
                out.append(s)
                continue
            if site.id not in needed or site.id in first_definitions:
                continue
            if site.kind == "append":
                if role == "restore":
                    pop = gast.Attribute(value=A.load(site.var), attr="pop", ctx=gast.Load())
                    out.append(gast.Expr(value=gast.Call(func=pop, args=[], keywords=[])))
                continue
            if site.kind == "pop":  # undo ``y = L.pop()``: push y back (its index is y)
                push = gast.Attribute(value=A.load(site.var), attr="append", ctx=gast.Load())
                out.append(gast.Expr(value=gast.Call(func=push, args=[A.deepcopy(site.index)], keywords=[])))
                continue
            if site.kind == "name" and site.var not in params and site.var not in preinit:
                preinit.append(site.var)
            where = storage(site)
            if role == "save":
                if site.in_loop:
                    push = gast.Attribute(value=A.load(where), attr="append", ctx=gast.Load())
                    out.append(gast.Expr(value=gast.Call(func=push, args=[value_of(site)], keywords=[])))
                else:
                    out.append(A.assign(where, value_of(site)))
            else:
                if site.in_loop:
                    pop = gast.Attribute(value=A.load(where), attr="pop", ctx=gast.Load())
                    value = gast.Call(func=pop, args=[], keywords=[])
                else:
                    value = A.load(where)
                out.append(A.assign(target_of(site), value))
        return out

    if snapshots:
        fwd = with_snapshots(fwd)
        # what is saved is what the snapshots left: a value copied before an update that
        # reaches its memory is saved as it is (R[i - 1, :] in a loop that stores R[i, :])
        facts = _Sharing(fwd, params)
    # a value saved before its first assignment (in a loop, or in a branch not taken) is None
    fwd = rewrite(fwd, "save")
    rev = tidy(rewrite(rev, "restore"))  # a branch left with only a comment is not valid Python
    head = [A.assign(var, A.const(None)) for var in preinit if _maybe_unbound(var, fwd)]
    head += [A.assign(stack, gast.List(elts=[], ctx=gast.Load())) for stack in stacks.values()]
    fwd = head + fwd
    node.body = fwd + rev
    A.set_anno(node, "n_forward", len(fwd))
    A.set_anno(node, "stacks", sorted(stacks.values()))
    return node


def _hoist_loop_invariants(fwd, facts, params, specs):
    """Move out of its loops, to just before the outermost, an assignment in a loop of a name
    bound nowhere else to a value that is the same in every iteration and cannot fail or
    warn (``_t5 = F.T``, ``h = 0.5 * dt`` of arguments no loop rebinds and nothing updates
    in place): the reverse sweep then reads the one value, and nothing is saved per
    iteration. Returns the save sites this leaves unneeded."""
    bound, updated = _bindings(fwd)
    hoisted, moves = set(), []
    changed = {}  # id(loop) -> the names it may change, worked out once per loop

    def changed_by(loop):
        if id(loop) not in changed:
            changed[id(loop)] = _names_changed_by(loop)
        return changed[id(loop)]

    def scan(stmts, outermost):
        for s, following in zip(stmts, stmts[1:] + [None]):
            if isinstance(s, (gast.For, gast.While)):
                loop = outermost or (stmts, s)
                scan(s.body, loop)
                scan(s.orelse, loop)
            elif isinstance(s, gast.If):
                scan(s.body, outermost)
                scan(s.orelse, outermost)
            elif (outermost is not None and A.anno(s, "save") is not None
                  and _invariant_binding(A.anno(s, "save"), following, outermost[1], bound, updated, params, changed_by)
                  and _cannot_fail(following.value, specs)):
                site = A.anno(s, "save")
                memory = facts.saved.get(site.id)
                if memory is not None and not may_change_later(memory.own | memory.inner, facts.mutated):
                    hoisted.add(site.id)
                    moves.append((stmts, following, outermost))

    scan(fwd, None)
    for body, assign, (block, loop) in moves:
        body.remove(assign)
        block.insert(block.index(loop), assign)
    return hoisted


def _bindings(fwd):
    """``({name: how many statements bind it}, {names updated in place or augmented})``."""
    bound, updated = {}, set()
    for s in A.walk_statements(fwd):
        targets = s.targets if isinstance(s, gast.Assign) else [s.target] if isinstance(s, (gast.AugAssign, gast.For)) else []
        for t in targets:
            for n in A.walk(t):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                    bound[n.id] = bound.get(n.id, 0) + 1
            if not isinstance(t, gast.Name) or isinstance(s, gast.AugAssign):
                updated |= {n.id for n in A.walk(t) if isinstance(n, gast.Name)}  # updated in place
    return bound, updated


def _invariant_binding(site, s, loop, bound, updated, params, changed_by):
    """Is ``s`` the only binding of the saved name, to a value of arguments ``loop`` keeps?"""
    if (site.kind != "name" or not isinstance(s, gast.Assign) or len(s.targets) != 1
            or not isinstance(s.targets[0], gast.Name) or s.targets[0].id != site.var
            or bound.get(site.var) != 1 or site.var in updated or site.var in params):
        return False
    read = A.names_read(s.value)
    if not read <= params or read & updated:
        return False
    return not read & changed_by(loop)


def _names_changed_by(loop):
    """The names ``loop`` may change: those it binds, and those its calls are given (a method
    such as ``L.append`` or a function may change what it is given)."""
    changing = A.names_stored(loop)
    for call in A.walk(loop):
        if isinstance(call, gast.Call):
            changing |= A.names_read(call)
    return changing


def _cannot_fail(value, specs):
    """Is ``value`` one that evaluating once more (or where the loop would not run) can
    neither raise nor warn: an array's transpose, or Python floats added or multiplied?"""
    def python_float(n):
        if isinstance(n, gast.Constant):
            return isinstance(n.value, float)
        return isinstance(n, gast.Name) and getattr(specs.get(n.id), "python", None) is float

    if isinstance(value, gast.Attribute) and value.attr in ("T", "mT") and isinstance(value.value, gast.Name):
        spec = specs.get(value.value.id)
        return spec is not None and spec.python is None and len(spec.shape) >= (2 if value.attr == "mT" else 0)
    if isinstance(value, gast.BinOp) and isinstance(value.op, (gast.Add, gast.Sub, gast.Mult)):
        return python_float(value.left) and python_float(value.right)
    return False


def _first_definitions(fwd, params):
    """Save sites outside loops that bind a name for the first time: nothing to save."""
    seen, first = set(params), set()

    def scan(stmts):
        """Follow ``stmts``; return the names they store (``A.names_stored``), read off the
        nested blocks as they are scanned, not walked again per level."""
        stored = set()
        for s in stmts:
            site = A.anno(s, "save")
            if site is not None and site.kind == "name" and not site.in_loop and site.var not in seen:
                first.add(site.id)
            if isinstance(s, gast.If):  # the branches are exclusive
                before = set(seen)
                inner = scan(s.body)
                after_body = set(seen)
                seen.clear()
                seen.update(before)
                inner |= scan(s.orelse)
                seen.update(after_body)
                seen.update(inner)
                stored |= inner | A.names_stored(s.test)
            elif isinstance(s, (gast.For, gast.While)):
                inner = scan(s.body) | A.names_stored(gast.Module(body=s.orelse, type_ignores=[]))
                seen.update(inner | ({s.target.id} if isinstance(s, gast.For) else set()))
                stored |= inner | (A.names_stored(s.target) | A.names_stored(s.iter) if isinstance(s, gast.For)
                                   else A.names_stored(s.test))
            else:
                inner = A.names_stored(s)
                seen.update(inner)
                stored |= inner
        return stored

    scan(fwd)
    return first


def _maybe_unbound(var, fwd):
    """Is ``var`` read by a save before any assignment at the top level binds it?"""
    for s in fwd:
        if isinstance(s, gast.Assign) and any(isinstance(t, gast.Name) and t.id == var for t in s.targets):
            return False
        if var in A.names_read(s) or (isinstance(s, (gast.If, gast.For, gast.While))):
            return True
    return True
