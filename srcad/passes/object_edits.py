"""How ``passes.local_objects`` edits the function: a use of an object replaced by a node, its
statement by another (``Statement``), or a call put before its statement into a name
(``Hoisted``), only where Python evaluates nothing of that statement before the call that the
call may change (``first_in_statement``)."""
import gast

from .callees import dotted


class Statement:
    """A replacement of the statement holding a use, not of the use."""

    def __init__(self, statement, new):
        self.statement, self.new = statement, new


class Hoisted:
    """A use replaced by the name ``read``, which the statement ``before``, put before the
    statement ``statement`` holding the use, binds."""

    def __init__(self, statement, before, read):
        self.statement, self.before, self.read = statement, before, read


# the nodes whose operands Python evaluates each time, in the order of these fields
_EAGER = {gast.BinOp: ("left", "right"), gast.UnaryOp: ("operand",), gast.Call: ("func", "args", "keywords"),
          gast.keyword: ("value",), gast.Tuple: ("elts",), gast.List: ("elts",), gast.Subscript: ("value", "slice"),
          gast.Attribute: ("value",), gast.Compare: ("left", "comparators")}
_STATEMENTS = {gast.Assign: "value", gast.Return: "value", gast.Expr: "value", gast.If: "test", gast.For: "iter"}


def first_in_statement(node, parents, changed, local):
    """The statement whose expression Python evaluates ``node`` in before anything else of it
    that may read what the call ``node`` changes (a name in ``changed``) or do anything: only
    literals, names and attributes of names not ``local`` (a module's, a global object's) come
    before it; None where ``node`` is not so placed, or may not run (an ``and``, a conditional
    expression, a ``while`` test)."""
    child, parent = node, parents.get(id(node))
    while type(parent) in _EAGER:
        operands = [o for f in _EAGER[type(parent)] for o in (getattr(parent, f) if isinstance(
            getattr(parent, f), list) else [getattr(parent, f)])]
        if not any(o is child for o in operands) or (isinstance(parent, gast.Compare) and child in operands[2:]):
            return None  # (a later comparison of a chain may not run)
        if not all(_inert(earlier, changed, local) for earlier in operands[:[id(o) for o in operands].index(id(child))]):
            return None
        child, parent = parent, parents.get(id(parent))
    field = _STATEMENTS.get(type(parent))
    return parent if field is not None and getattr(parent, field) is child else None


def _inert(e, changed, local):
    """Is ``e`` literals, names not ``changed`` and attributes of names not ``local``, under
    arithmetic?"""
    if isinstance(e, gast.Constant):
        return True
    if isinstance(e, gast.UnaryOp):
        return _inert(e.operand, changed, local)
    if isinstance(e, gast.BinOp):
        return _inert(e.left, changed, local) and _inert(e.right, changed, local)
    path = dotted(e)
    return path is not None and path[0] not in changed and (len(path) == 1 or path[0] not in local)


class Replace(gast.NodeTransformer):
    """Each node whose id ``replaced`` maps replaced (a ``Statement`` replaces its statement; a
    ``Hoisted`` puts its statement before the one holding the use)."""

    def __init__(self, replaced):
        self.replaced = replaced
        self.statements = {id(r.statement): r.new for r in replaced.values() if isinstance(r, Statement)}
        self.before = {}
        for r in replaced.values():
            if isinstance(r, Hoisted):
                self.before.setdefault(id(r.statement), []).append(r.before)

    def visit(self, node):
        before = [self.generic_visit(s) for s in self.before.get(id(node), ())]
        if id(node) in self.statements:
            return before + [self.generic_visit(self.statements[id(node)])] if before else self.generic_visit(
                self.statements[id(node)])
        new = self.replaced.get(id(node))
        if isinstance(new, Hoisted):
            return new.read
        if new is not None and not isinstance(new, Statement):
            return self.generic_visit(new)  # (its arguments may use the object too)
        return before + [self.generic_visit(node)] if before else self.generic_visit(node)
