"""To-be-recorded analysis: save exactly the overwritten values the reverse sweep reads.

The reverse pass leaves a ``save`` placeholder before every assignment of the forward
sweep and a ``restore`` placeholder after its reverse. Afterwards a placeholder has
become real code only if the reverse sweep reads the variable: outside loops a plain
copy (``_y_1 = y`` ... ``y = _y_1``), inside loops a value stack (``_y_stack.append(y)``
... ``y = _y_stack.pop()``); an element update saves only the elements it overwrites,
and ``list.append`` is undone with ``pop``. Placeholders nobody needs are gone.

In ``for ...: y = y * 2`` nothing is saved (the adjoint, ``dy = dy * 2``, reads no ``y``);
in ``for ...: y = np.sin(y)`` every old ``y`` is (``dy = dy * np.cos(y)`` reads it).
"""
import gast

from .. import astutil as A
from .. import runtime


def _walk_stmts(stmts, skip_loops_over=None):
    for s in stmts:
        if isinstance(s, gast.For) and isinstance(s.target, gast.Name) and s.target.id == skip_loops_over:
            continue
        yield s
        if isinstance(s, (gast.If, gast.For, gast.While)):
            yield from _walk_stmts(s.body, skip_loops_over)
            yield from _walk_stmts(s.orelse, skip_loops_over)


def _reads(stmts, skip_loops_over=None):
    """Names the statements read; with ``skip_loops_over``, not inside a loop over that name."""
    names = set()
    for s in _walk_stmts(stmts, skip_loops_over):
        if A.anno(s, "save") is not None or A.anno(s, "restore") is not None:
            continue
        children = [c for c in gast.iter_child_nodes(s) if not isinstance(c, gast.stmt)]
        for c in children:
            for n in gast.walk(c):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                    names.add(n.id)
    return names


def record_values(node, refs):
    """Turn the joint adjoint's placeholders into saves and restores; see module doc."""
    n = A.anno(node, "n_forward")
    namer = A.anno(node, "namer")
    params = set(A.anno(node, "params"))
    fwd, rev = node.body[:n], node.body[n:]
    sites = {A.anno(s, "save").id: A.anno(s, "save") for s in _walk_stmts(fwd) if A.anno(s, "save") is not None}
    sites.update({A.anno(s, "restore").id: A.anno(s, "restore") for s in _walk_stmts(rev)
                  if A.anno(s, "restore") is not None})
    needed = _reads(rev)
    while True:  # restoring S[i] reads i: keep what restores read, too
        more = set()
        for site in sites.values():
            if site.var in needed and site.index is not None:
                more |= A.names_read(site.index)
        if more <= needed:
            break
        needed |= more
    first_definitions = _first_definitions(fwd, params)
    copy_value = refs("copy_value", runtime.copy_value)
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
        return A.load(site.var)

    def target_of(site):
        if site.kind == "subscript":
            return gast.Subscript(value=A.load(site.var), slice=A.deepcopy(site.index), ctx=gast.Store())
        return A.store(site.var)

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
            if site.var not in needed or site.id in first_definitions:
                continue
            if site.loop_target and site.var not in _reads(rev, skip_loops_over=site.var):
                continue  # only reverse loops read it, and they set it themselves
            if site.kind == "append":
                if role == "restore":
                    pop = gast.Attribute(value=A.load(site.var), attr="pop", ctx=gast.Load())
                    out.append(gast.Expr(value=gast.Call(func=pop, args=[], keywords=[])))
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

    # a value saved before its first assignment (in a loop, or in a branch not taken) is None
    fwd = rewrite(fwd, "save")
    rev = rewrite(rev, "restore")
    head = [A.assign(var, A.const(None)) for var in preinit if _maybe_unbound(var, fwd)]
    head += [A.assign(stack, gast.List(elts=[], ctx=gast.Load())) for stack in stacks.values()]
    fwd = head + fwd
    node.body = fwd + rev
    A.set_anno(node, "n_forward", len(fwd))
    A.set_anno(node, "stacks", sorted(stacks.values()))
    return node


def _first_definitions(fwd, params):
    """Save sites outside loops that bind a name for the first time: nothing to save."""
    seen, first = set(params), set()

    def scan(stmts):
        for s in stmts:
            site = A.anno(s, "save")
            if site is not None and site.kind == "name" and not site.in_loop and site.var not in seen:
                first.add(site.id)
            if isinstance(s, gast.If):  # the branches are exclusive
                before = set(seen)
                scan(s.body)
                after_body = set(seen)
                seen.clear()
                seen.update(before)
                scan(s.orelse)
                seen.update(after_body)
            elif isinstance(s, (gast.For, gast.While)):
                scan(s.body)
            seen.update(A.names_stored(s) if not isinstance(s, (gast.If, gast.For, gast.While))
                        else A.names_stored(gast.Module(body=s.body + s.orelse, type_ignores=[]))
                        | ({s.target.id} if isinstance(s, gast.For) else set()))

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
