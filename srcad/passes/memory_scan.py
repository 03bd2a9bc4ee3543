r"""Facts the memory analysis (``passes.memory``) reads off a function's statements once, before
it follows them: the names it binds, those used only as value stacks, those bound only to
index arrays, and the assignments whose value a function of yours made.

>>> import gast
>>> body = gast.parse("s = []\ns.append(x)\ni = [0, 2]\ny = s.pop()").body
>>> sorted(stacks(body)), sorted(index_arrays(body)), sorted(bound_names(body))
(['s'], ['i', 's'], ['i', 's', 'y'])
"""
import gast

from .. import astutil as A
from .fresh import INDEX_ARRAY_FUNCTIONS, is_in, known_pure


def makes_index_array(rhs):
    """Is ``rhs`` an index array (a list, a mask, np.argsort(...)): indexing with it copies?"""
    callee = A.anno(rhs, "callee") if isinstance(rhs, gast.Call) else None
    return (isinstance(rhs, (gast.List, gast.Compare))
            or callee is not None and callee.kind == "object" and is_in(callee.obj, INDEX_ARRAY_FUNCTIONS))


def made_by_yours(stmts):
    """Ids of the assignments (at any depth) whose value a function of yours made: a call of
    your function or class, or a method of a value of unknown type."""
    found = set()
    for s in A.every_statement(stmts):
        if isinstance(s, gast.Assign) and isinstance(s.value, gast.Call):
            callee = A.anno(s.value, "callee")
            if callee is None or callee.kind == "method" or callee.kind == "object" and not known_pure(callee.obj):
                found.add(id(s))
    return found


def stacks(stmts):
    """Names used only as stacks: bound to ``[]`` only, read only to push (``L.append(e)``)
    and pop (``L.pop()``, ``y = L.pop()``). Nothing else reaches their items (srcad's
    ``_x_stack`` of saved values)."""
    as_stack, elsewhere, rest = set(), [], []  # (the names of the other uses: read in one walk)
    for s in A.walk_statements(stmts):
        value = s.value if isinstance(s, (gast.Expr, gast.Assign)) else None
        single = isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
        if single and isinstance(value, gast.List) and not value.elts:
            as_stack.add(s.targets[0].id)
        elif isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and isinstance(
                value.func.value, gast.Name) and not value.keywords and (
                isinstance(s, gast.Expr) and value.func.attr == "append" and len(value.args) == 1
                or (isinstance(s, gast.Expr) or single) and value.func.attr == "pop" and not value.args):
            as_stack.add(value.func.value.id)
            elsewhere += value.args + (s.targets if isinstance(s, gast.Assign) else [])
        elif isinstance(s, gast.For):
            elsewhere += [s.target, s.iter]
        elif isinstance(s, (gast.If, gast.While)):
            elsewhere.append(s.test)
        else:
            rest.append(s)
    if not as_stack:  # (no name is used as a stack anywhere: the tree is not walked)
        return as_stack
    return as_stack - A.all_names(gast.Module(body=rest, type_ignores=[])).union(*map(A.all_names, elsewhere))


def bindings(stmts):
    """``(bound, index arrays)``: the names ``stmts`` bind, and those every binding of which is an
    index array. (One walk of the tree: each statement's own parts, a loop's or a branch's
    head, are read as ``walk_statements`` meets it.)"""
    found, loop_targets, simple, heads = set(), set(), [], []
    for s in A.walk_statements(stmts):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and makes_index_array(s.value):
            found.add(s.targets[0].id)
            heads.append(s)
        elif isinstance(s, gast.For):
            loop_targets.add(s.target.id)
            heads += [s.target, s.iter]
        elif isinstance(s, (gast.If, gast.While)):
            heads.append(s.test)
        else:
            simple.append(s)
    stored = A.names_stored(gast.Module(body=simple, type_ignores=[]))  # (by the other simple statements)
    bound = stored.union(*(A.names_stored(h) for h in heads))
    return bound, found - loop_targets - stored


def index_arrays(stmts):
    """Names every binding of which is an index array (``bindings``)."""
    return bindings(stmts)[1]


def bound_names(stmts):
    return bindings(stmts)[0]
