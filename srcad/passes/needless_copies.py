"""Needless copies: an adjoint copied before an in-place update that no other live name sees.

The reverse transform copies a *shared* adjoint before updating it in place (``du =
copy_grad(du); du[1:-1] += g``), since other names may refer to the same buffer. Often they
all died first: the adjoint of ``u = u + k * p`` is handed to both operands (``d_t12 = du;
du = d_t12; d_t11 = d_t12``), ``d_t11`` is read and never again, and the copy of ``du``
costs a pass over the array every step of a loop. Guarantee: afterwards such a copy is gone
only where all of these hold, read off the generated code itself (fail closed: any other
shape of code keeps the copy):

- earlier in the same statement list, the buffer began as one the reverse transform knew
  was exclusive (an *owned* adjoint handed on, or a new array: annotation
  ``"exclusive_origin"``), and every name that refers to it since was bound by a plain
  ``a = b`` there; every other read of those names is an operand of arithmetic, a comparison
  or a call of a function known to return a new array (``np.vdot``), which makes no alias;
  none of them is written in place, or touched inside a nested statement, before the copy;
- each of those names other than the copied one is dead at the copy: it is read nowhere
  outside that statement list nor at or after the copy in it, and the list binds it (a plain
  assignment) before any read of it, so a later run of the list (a loop) rebinds it first;
  no function or lambda reads it.

Then the copied name is the buffer's only live reference, which is what a copy would make.

>>> import gast
>>> from srcad import astutil as A
>>> fn = gast.parse('''
... def f(v):
...     d_t12 = v * 2.0
...     du = d_t12
...     d_t11 = d_t12
...     dk = d_t11 * 3.0
...     du = copy_grad(du)
...     du[0] += dk
...     return du
... ''').body[0]
>>> _ = A.set_anno(fn.body[0], "exclusive_origin", True)
>>> _ = A.set_anno(fn.body[4], "ownership_copy", True)
>>> print(A.to_source(drop_needless_copies(fn)).strip())
def f(v):
    d_t12 = v * 2.0
    du = d_t12
    d_t11 = d_t12
    dk = d_t11 * 3.0
    du[0] += dk
    return du
"""
import collections

import gast

from .. import astutil as A
from .fresh import new_array_call
from .callees import dotted


def drop_needless_copies(node):
    """Remove each ``d = copy_grad(d)`` (annotation ``"ownership_copy"``) whose buffer no other
    live name refers to (see module doc); return ``node``."""
    if not any(A.anno(s, "ownership_copy") for s in A.walk_statements(node.body)):
        return node  # the common case: nothing to look at
    reads = None
    for stmts in list(A.blocks(node.body)):
        if not any(A.anno(s, "ownership_copy") for s in stmts):
            continue
        block = [_name_uses(s) for s in stmts]  # each statement's loads and stores, walked once
        if reads is None:
            reads = _function_reads(node, block if stmts is node.body else None)
        reads["block"] = block
        reads["aliased"] = {}  # id(statement) -> the names it may alias (_holders' walk, once per block)
        kept = [s for p, s in enumerate(stmts) if not (A.anno(s, "ownership_copy") and _exclusive(stmts, p, reads))]
        if len(kept) < len(stmts):
            stmts[:] = kept or [gast.Pass()]
    return node


def _name_uses(stmt):
    """``(loads, stores, inner)``: how often ``stmt`` loads each name, the names it stores, and
    the names read inside the functions and lambdas it holds."""
    loads, stores, inner = collections.defaultdict(int), set(), set()
    for n in A.walk(stmt):
        cls = n.__class__
        if cls is gast.Name:
            if isinstance(n.ctx, gast.Load):
                loads[n.id] += 1
            elif isinstance(n.ctx, gast.Store):
                stores.add(n.id)
        elif cls is gast.FunctionDef or cls is gast.Lambda:
            inner |= A.names_read(n)
    return loads, stores, inner


def _function_reads(node, body_uses=None):
    """How often the function loads each name, and the names read inside its functions and
    lambdas (from ``body_uses``, the ``_name_uses`` of its body's statements, if given)."""
    loads, inner = collections.Counter(), set()
    for counts, _, held in body_uses if body_uses is not None else [_name_uses(s) for s in node.body]:
        loads.update(counts)
        inner |= held
    return {"closures": inner, "loads": loads}


def _exclusive(stmts, p, reads):
    target = stmts[p].targets[0].id
    holders = _holders(stmts, p, target, reads["aliased"])
    return holders is not None and all(_dead_after(stmts, p, name, reads) for name in holders - {target})


def _holders(stmts, p, target, aliased):
    """The names that refer to ``target``'s buffer just before ``stmts[p]``, followed from the
    start of ``stmts``; None unless the buffer began exclusive there and escaped nowhere.

    Each buffer seen is a group of names. A group is exclusive when its first statement is
    annotated ``"exclusive_origin"`` (a new array, or an owned adjoint that no name here
    refers to yet); a name copied from one no group holds yet starts a group that is not."""
    group_of, members, exclusive = {}, [], []

    def start(names, is_exclusive):
        members.append(set(names))
        exclusive.append(is_exclusive)
        for n in names:
            leave(n)
            group_of[n] = len(members) - 1

    def leave(name):
        g = group_of.pop(name, None)
        if g is not None:
            members[g].discard(name)

    def spoil(names):  # their memory may have escaped: no group they are or will be in is exclusive
        for n in names:
            if n in group_of:
                exclusive[group_of[n]] = False
            else:
                start({n}, False)

    for s in stmts[:p]:
        if isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant):
            continue  # a placeholder
        origin = bool(A.anno(s, "exclusive_origin"))
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name):
            name, value = s.targets[0].id, s.value
            if isinstance(value, gast.Name):
                if value.id in group_of:
                    leave(name)
                    group_of[name] = group_of[value.id]
                    members[group_of[name]].add(name)
                else:
                    start({name, value.id}, origin)
                continue
            spoil(_cached(aliased, s, lambda: _aliased_reads(value)))
            leave(name)
            if origin:
                start({name}, True)
            continue
        if isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name):
            spoil(_cached(aliased, s, lambda: _aliased_reads(s.value)))  # ``d += e``: who refers to what is unchanged
            continue
        spoil(_cached(aliased, s, lambda: A.all_names(s)))  # an update in place, a nested statement, anything else
    g = group_of.get(target)
    return members[g] if g is not None and exclusive[g] else None


def _cached(table, stmt, compute):
    found = table.get(id(stmt))
    if found is None:
        found = table[id(stmt)] = compute()
    return found


def _aliased_reads(expr):
    """The names ``expr`` reads in a way whose result may share their memory: any read but an
    operand of arithmetic, of a comparison, or of a call of a function known to return a new
    array."""
    found = set()
    for n in A.walk(expr):
        if isinstance(n, (gast.BinOp, gast.UnaryOp, gast.Compare)):
            continue
        fresh_call = isinstance(n, gast.Call) and _fresh_call(n)
        for child in _children(n):
            if isinstance(child, gast.keyword):
                child = child.value  # out=, where=: never plain operands
            elif fresh_call:
                continue
            if isinstance(child, gast.Name):
                found.add(child.id)
    if isinstance(expr, gast.Name):
        found.add(expr.id)
    return found


def _children(node):
    for field in node._fields:
        value = getattr(node, field, None)
        if isinstance(value, gast.AST):
            yield value
        elif isinstance(value, list):
            yield from (v for v in value if isinstance(v, gast.AST))


def _fresh_call(call):
    """Is ``call`` one known to return a new array (``np.vdot`` from a rule)?"""
    func = call.func
    parts, root = dotted(func), func
    while isinstance(root, gast.Attribute):
        root = root.value
    obj = A.anno(root, "denotes") if parts else None
    for attr in parts[1:] if parts else ():
        obj = getattr(obj, attr, None)
    return obj is not None and new_array_call(obj, call)


def _dead_after(stmts, p, name, reads):
    """Is ``name`` read nowhere but in ``stmts`` before ``p``, and bound there before any read?"""
    if name in reads["closures"]:
        return False
    loads_here = 0
    bound_first = None
    for i, (s, (counts, stored, _)) in enumerate(zip(stmts, reads["block"])):
        loads = counts.get(name, 0)
        if loads and i >= p:
            return False
        loads_here += loads
        if bound_first is None and (loads or name in stored):
            bound_first = (not loads and isinstance(s, gast.Assign)
                           and any(isinstance(t, gast.Name) and t.id == name for t in s.targets))
    return bool(bound_first) and loads_here == reads["loads"][name]
