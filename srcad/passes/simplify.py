"""Simplification: drop adjoint code that has no effect.

Afterwards the reverse sweep has no loop or branch whose body only restores values no
other reverse code reads, no trip counter that no loop reads, no ``pass`` beside other
statements and no comment that introduces nothing. First accumulations are already plain
assignments (the reverse pass tracks which adjoints are still zero).

>>> import gast
>>> from srcad.astutil import parse_stmts, to_source, set_anno
>>> fn = parse_stmts('''
... def f_adjoint(x, v=None):
...     y = x * 2
...     pass
...     return y
... ''')[0]
>>> _ = set_anno(fn, "n_forward", 2)
>>> print(to_source(simplify(fn)).strip())
def f_adjoint(x, v=None):
    y = x * 2
    return y
"""
import bisect

import gast

from .. import astutil as A


def _is_placeholder(s):
    return A.anno(s, "save") is not None or A.anno(s, "restore") is not None


def _reads(stmts):
    return set().union(*map(A.names_read, stmts))


def _placeholder_vars(stmts):
    return {A.anno(n, "restore").var for n in A.every_statement(stmts) if A.anno(n, "restore") is not None}


def _only_placeholders(stmts):
    for s in stmts:
        if isinstance(s, (gast.If, gast.For)):
            if not _only_placeholders(s.body + s.orelse):
                return False
        elif not (_is_placeholder(s) or A.is_comment(s) or isinstance(s, gast.Pass)):
            return False
    return True


def _prune(stmts, needed, removed_sites, pruned):
    out = []
    for s in stmts:
        if isinstance(s, (gast.If, gast.For)) and _only_placeholders([s]) and not (_placeholder_vars([s]) & needed):
            pruned.append(s)
            for n in A.every_statement([s]):
                if A.anno(n, "restore") is not None:
                    removed_sites.add(A.anno(n, "restore").id)
            continue
        if isinstance(s, (gast.If, gast.For)):
            s.body = _prune(s.body, needed, removed_sites, pruned)
            s.orelse = _prune(s.orelse, needed, removed_sites, pruned)
        out.append(s)
    return out


def _drop_forward(stmts, dead_vars, removed_sites):
    out = []
    for s in stmts:
        save = A.anno(s, "save")
        if save is not None and save.id in removed_sites:
            continue
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and s.targets[0].id in dead_vars:
            continue
        if isinstance(s, (gast.If, gast.For, gast.While)):
            s.body = _drop_forward(s.body, dead_vars, removed_sites)
            s.orelse = _drop_forward(s.orelse, dead_vars, removed_sites)
        out.append(s)
    return out


def tidy(stmts):
    """Remove ``pass`` beside other statements and comments that introduce nothing."""
    out = []
    for s in stmts:
        if isinstance(s, (gast.If, gast.For, gast.While)):
            s.body = tidy(s.body) or [gast.Pass()]
            s.orelse = tidy(s.orelse)
            if isinstance(s, gast.If) and all(isinstance(b, gast.Pass) for b in s.body) and s.orelse:
                s.test = gast.UnaryOp(op=gast.Not(), operand=s.test)
                s.body, s.orelse = s.orelse, []
        out.append(s)
    out = [s for s in out if not isinstance(s, gast.Pass)] or ([gast.Pass()] if out else [])
    kept = []
    for i, s in enumerate(out):
        if A.is_comment(s) and (i + 1 == len(out) or A.is_comment(out[i + 1])):
            continue
        kept.append(s)
    return kept


def _written(stmt):
    """Names a statement rebinds or changes in place."""
    return _uses(stmt)[1]


def _uses(node):
    """``(name -> loads, names written)`` of ``node``, in one walk (rebound or changed in place:
    an element store, ``np.add.at(a, ...)``, ``a.pop()``, ``a.append(v)``)."""
    counts, names = {}, set()
    for n in A.walk(node):
        if n.__class__ is gast.Name:
            if isinstance(n.ctx, gast.Load):
                counts[n.id] = counts.get(n.id, 0) + 1
            elif isinstance(n.ctx, gast.Store):
                names.add(n.id)
        elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            names.add(n.target.id)
        elif isinstance(n, (gast.Assign, gast.AugAssign)):
            for t in (n.targets if isinstance(n, gast.Assign) else [n.target]):
                if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                    names.add(t.value.id)
        elif isinstance(n, gast.Call) and n.args and isinstance(n.args[0], gast.Name) and (
                isinstance(n.func, gast.Attribute) and n.func.attr in ("at", "pop", "append")):
            names.add(n.args[0].id)
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and isinstance(n.func.value, gast.Name) \
                and n.func.attr in ("pop", "append"):
            names.add(n.func.value.id)
    return counts, names


def _propagate_copies(stmts, single, adjoints, reads, facts):
    """Within one block, ``a = b`` between adjoints: read ``b`` where ``a`` was read.

    ``a`` must be assigned only here and read only later in this block, and ``b`` must not
    change before the last of those reads (in the last one it may: its value is read first).
    Linear in the block: which statements read and write each name is indexed once (renaming
    ``a`` to ``b`` changes no statement's writes, and every question looks only forward).
    ``facts`` (``_index``) holds each statement's reads and writes, nested blocks' included.
    """
    read_counts = [facts[id(s)][0] for s in stmts]  # per statement: name -> loads, nested ones included
    readers, writers = {}, {}
    for j, s in enumerate(stmts):
        for name in read_counts[j]:
            readers.setdefault(name, []).append(j)
        for name in facts[id(s)][1]:
            writers.setdefault(name, []).append(j)
    removed = set()
    for i, s in enumerate(stmts):
        if isinstance(s, _BLOCKS):
            s.body = _propagate_copies(s.body, single, adjoints, reads, facts)
            s.orelse = _propagate_copies(s.orelse, single, adjoints, reads, facts)
        if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Name)
                and s.targets[0].id in single and s.value.id in adjoints):
            continue
        a, b = s.targets[0].id, s.value.id
        users = readers.get(a, [])[bisect.bisect_right(readers.get(a, []), i):]
        local_reads = sum(read_counts[j][a] for j in users)
        last = users[-1] if users else i
        end = last + 1 if isinstance(stmts[last], _BLOCKS) else last
        b_writes = writers.get(b, [])
        changed = any(not _is_copy(stmts[j], b, a)  # b = a gives b back
                      for j in b_writes[bisect.bisect_right(b_writes, i):bisect.bisect_left(b_writes, end)])
        if local_reads != reads.get(a, 0) or changed:
            continue
        for j in users:
            A.replace_names(stmts[j], {a: b})
            for nested in A.walk_statements([stmts[j]]):  # the statement and those inside it read b now
                counts = facts[id(nested)][0]
                if a in counts:
                    counts[b] = counts.get(b, 0) + counts.pop(a)
        readers[b] = sorted(set(readers.get(b, [])) | set(users))
        reads[b] = reads.get(b, 0) + local_reads - 1
        removed.add(i)
    return [s for i, s in enumerate(stmts) if i not in removed and not (
        isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
        and isinstance(s.value, gast.Name) and s.targets[0].id == s.value.id)]


_BLOCKS = (gast.If, gast.For, gast.While)


def _index(stmts, facts):
    """``facts[id(s)] = (name -> loads, names written)`` for every statement in ``stmts`` and in
    the blocks inside them, each node read once: a block's statement adds up its body's facts."""
    for s in stmts:
        if not isinstance(s, _BLOCKS):
            facts[id(s)] = _uses(s)
            continue
        header = [s.test] if not isinstance(s, gast.For) else [s.target, s.iter]
        counts, written = {}, set()
        for part in header:
            part_counts, part_written = _uses(part)
            for name, k in part_counts.items():
                counts[name] = counts.get(name, 0) + k
            written |= part_written
        _index(s.body, facts)
        _index(s.orelse, facts)
        for inner in s.body + s.orelse:
            for name, k in facts[id(inner)][0].items():
                counts[name] = counts.get(name, 0) + k
            written |= facts[id(inner)][1]
        facts[id(s)] = (counts, written)


def _is_copy(stmt, target, source):
    return (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == target
            and isinstance(stmt.value, gast.Name) and stmt.value.id == source)


def _single_assignments(stmts, names, facts):
    counts = {}
    for s in A.every_statement(stmts):
        if not isinstance(s, _BLOCKS):
            for name in facts[id(s)][1] if id(s) in facts else _written(s):
                counts[name] = counts.get(name, 0) + 1
    return {n for n in names if counts.get(n, 0) == 1}


def simplify(node):
    """Remove adjoint code without effect from the joint adjoint ``node``; see module doc."""
    n = A.anno(node, "n_forward")
    fwd, rev = node.body[:n], node.body[n:]
    counters = {s.targets[0].id for s in A.every_statement(fwd)
                if isinstance(s, gast.Assign) and A.anno(s, "counter_init")}
    removed_sites = set()
    while True:
        needed, pruned = _reads(rev), []
        before = len(removed_sites)
        rev = _prune(rev, needed, removed_sites, pruned)
        if len(removed_sites) == before:
            break
    dead_counters = counters - (_reads(rev) if pruned else needed)
    for s in A.every_statement(rev) if dead_counters else ():
        if A.anno(s, "restore") is not None and A.anno(s, "restore").var in dead_counters:
            removed_sites.add(A.anno(s, "restore").id)
    rev = _drop_restores(rev, removed_sites)
    fwd = _drop_forward(fwd, dead_counters, removed_sites)
    fwd, rev = tidy(fwd), tidy(rev)
    # an adjoint that only renames another (d_t6 = d_t7) is read under its first name
    adjoints = A.anno(node, "adjoint_names") or set()
    facts = {}
    _index(rev, facts)
    reads = {}
    for s in rev:
        for name, k in facts[id(s)][0].items():
            reads[name] = reads.get(name, 0) + k
    rev = _propagate_copies(rev, _single_assignments(rev, adjoints, facts), adjoints, reads, facts)
    node.body = fwd + rev
    A.set_anno(node, "n_forward", len(fwd))
    return node


def _drop_restores(stmts, removed_sites):
    out = []
    for s in stmts:
        restore = A.anno(s, "restore")
        if restore is not None and restore.id in removed_sites:
            continue
        if isinstance(s, (gast.If, gast.For)):
            s.body = _drop_restores(s.body, removed_sites)
            s.orelse = _drop_restores(s.orelse, removed_sites)
        out.append(s)
    return out
