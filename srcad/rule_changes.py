"""What in a rule template may change an adjoint's (tangent's) memory, other than the updates
``template`` applies (``rule_stores``): refused where the rule is registered.

An adjoint ``d[x]`` is an array other derivatives may share (``d[y]`` is read by every rule
of ``y``'s operands), so a rule changes it only by ``d[x] += e`` (``-=``, the buffer updates).
Anything else that may change that memory in place — ``g = d[x]`` then ``g += 1``, ``g[0] = 0``
or ``g.sort()``; ``d[y].fill(0)``; ``np.copyto(g, ...)``; a ufunc's ``out``, by keyword or
position; ``operator.iadd(g, 1)``; a function of yours given ``g`` — would corrupt other
derivatives, or be lost, silently. The check fails closed:

- a name *holds* an adjoint's memory where it may be bound to a value that is, views or
  contains one, anywhere in the template (any statement, any depth, a walrus, a loop's
  target): everything but arithmetic, comparisons and the results of functions and methods
  known to make new values (``np.zeros_like(d[y])``, ``d[y].copy()``, ``np.sum``, ``len``);
- a statement *changes* a value holding one where it stores into its items or attributes,
  updates it with an augmented assignment, calls a method of it not known to leave it as it
  is, or passes it to a function not known to leave its arguments as they are (srcad's tables
  of NumPy, SciPy, math and builtins; a ufunc without ``out``).

>>> import gast
>>> from types import SimpleNamespace
>>> rule = SimpleNamespace(marker="d", fn=SimpleNamespace(__globals__={"np": __import__("numpy")}))
>>> body = gast.parse("g = d[y]\\nh = np.zeros_like(g)\\nh += 1\\nd[x] += g * h").body
>>> _Holders(rule, body).changes(body[2]) is None
True
>>> body = gast.parse("g = d[y].reshape(-1)\\nfor i in range(2):\\n    g[i] = 0").body
>>> gast.dump(_Holders(rule, body).changes(body[1].body[0]))
"Name(id='g', ctx=Load(), annotation=None, type_comment=None)"
"""
import builtins
import operator

import gast

from . import astutil as A
from .errors import SrcadError
from .rule_stores import is_marker, rule_line, update

# methods of an array that leave it as it is (``view``'s and ``reshape``'s results are views:
# what they return holds the array's memory)
_READING_METHODS = {"reshape", "ravel", "transpose", "swapaxes", "view", "diagonal", "conj", "conjugate",
                    "squeeze", "__array__", "__len__", "__getitem__"}
_IN_PLACE_OPERATORS = {getattr(operator, name) for name in dir(operator)
                       if name.startswith("__i") or name.startswith("i") and hasattr(operator, name[1:])}
_NEW_VALUE_NODES = (gast.BinOp, gast.UnaryOp, gast.Compare, gast.Constant, gast.Lambda, gast.JoinedStr)
_DISPLAYS = (gast.List, gast.Tuple, gast.Set, gast.Dict)


class _Holders:
    """The names of a template that may hold an adjoint's memory — that may be it or a view of
    it (``aliases``), or hold it as an item (``containers``) — and the changes to that memory."""

    def __init__(self, rule, body):
        self.rule, self.marker = rule, rule.marker
        self.aliases, self.containers = set(), set()
        nodes = [n for n in A.walk(gast.Module(body=body, type_ignores=[]))]
        while True:  # to a fixpoint: a name bound later may be read by an earlier loop's body
            before = len(self.aliases) + len(self.containers)
            for n in nodes:
                self._bind(n)
            if len(self.aliases) + len(self.containers) == before:
                break

    def _bind(self, n):
        if isinstance(n, gast.Assign):
            pairs = [(target, n.value) for target in n.targets]
        elif isinstance(n, (gast.For, gast.comprehension)):
            pairs = [(n.target, gast.Subscript(value=n.iter, slice=gast.Constant(value=0, kind=None),
                                               ctx=gast.Load()))]  # an item of what it runs over
        elif isinstance(n, gast.NamedExpr):
            pairs = [(n.target, n.value)]
        elif isinstance(n, gast.withitem) and n.optional_vars is not None:
            pairs = [(n.optional_vars, n.context_expr)]
        else:
            return
        for target, value in pairs:
            if isinstance(target, gast.Name):
                if self.shares(value):
                    self.aliases.add(target.id)
                if self.contains(value):
                    self.containers.add(target.id)
            elif isinstance(target, (gast.Subscript, gast.Attribute)):
                root = target.value
                while isinstance(root, (gast.Subscript, gast.Attribute)):
                    root = root.value
                if isinstance(root, gast.Name) and self.holds(value):  # L[0] = d[y]: L holds it
                    self.containers.add(root.id)
            elif self.holds(value):  # unpacking: each name may be any item
                names = {t.id for t in A.walk(target) if isinstance(t, gast.Name)}
                self.aliases |= names
                self.containers |= names

    def holds(self, expr):
        return self.shares(expr) or self.contains(expr)

    def shares(self, expr):
        """May ``expr``'s value be an adjoint's memory, or a view of it?"""
        if isinstance(expr, _NEW_VALUE_NODES) or isinstance(expr, _DISPLAYS):
            return False
        if is_marker(expr, self.marker):
            return True
        if isinstance(expr, gast.Name):
            return expr.id in self.aliases
        if isinstance(expr, gast.Subscript):
            return self.holds(expr.value)  # a view of it, or an item of a container
        if isinstance(expr, gast.Attribute):
            from .passes.fresh import PLAIN_ATTRIBUTES

            return expr.attr not in PLAIN_ATTRIBUTES and self.holds(expr.value)
        if isinstance(expr, gast.Call):
            return not self._makes_new(expr) and any(self.holds(part) for part in self._operands(expr))
        return any(self.holds(child) for child in gast.iter_child_nodes(expr) if isinstance(child, gast.expr))

    def contains(self, expr):
        """May ``expr``'s value hold an adjoint's memory as an item (``[d[y]]``)?"""
        if isinstance(expr, gast.Name):
            return expr.id in self.containers
        if isinstance(expr, _DISPLAYS):
            items = expr.keys + expr.values if isinstance(expr, gast.Dict) else expr.elts
            return any(self.holds(item) for item in items if item is not None)
        if isinstance(expr, gast.BinOp):  # [d[y]] * 2, [g] + rest
            return any(self.contains(side) or isinstance(side, _DISPLAYS) and self.holds(side)
                       for side in (expr.left, expr.right))
        if isinstance(expr, _NEW_VALUE_NODES):
            return False
        if isinstance(expr, gast.Call):
            return not self._makes_new(expr) and any(self.holds(part) for part in self._operands(expr))
        if isinstance(expr, (gast.Subscript, gast.Attribute)):
            return self.contains(expr.value)
        return any(self.holds(child) for child in gast.iter_child_nodes(expr) if isinstance(child, gast.expr))

    @staticmethod
    def _operands(call):
        receiver = [call.func.value] if isinstance(call.func, gast.Attribute) else []
        return receiver + [a.value if isinstance(a, gast.Starred) else a for a in call.args] + \
            [k.value for k in call.keywords]

    def _makes_new(self, call):
        """Is ``call``'s result new memory whatever its operands (``d[y].copy()``, ``np.sum(...)``)?"""
        from .passes.fresh import FRESH_METHODS, is_ufunc, new_array_call

        if any(k.arg in (None, "copy", "out") for k in call.keywords):
            return False
        if isinstance(call.func, gast.Attribute) and call.func.attr in FRESH_METHODS and not self._known(call.func):
            return True  # a method of the value (of an array: d[y].copy(), d[y].sum())
        obj = self._known(call.func)
        return obj is not None and (new_array_call(obj, call) or is_ufunc(obj) and len(call.args) <= obj.nin)

    def _known(self, func):
        """The object a name or dotted name of the rule's module denotes, else None."""
        from .guards import _MISSING, _follow

        path = []
        while isinstance(func, gast.Attribute):
            path.insert(0, func.attr)
            func = func.value
        if not isinstance(func, gast.Name) or func.id in self.aliases | self.containers:
            return None
        provided = self.rule.provided() if hasattr(self.rule, "provided") else {}  # srcad's helpers it pastes in
        scope = self.rule.fn.__globals__
        root = provided.get(func.id, scope[func.id] if func.id in scope else getattr(builtins, func.id, _MISSING))
        value = _follow(root, path)
        return None if value is _MISSING else value

    def changes(self, stmt):
        """The value that may be an adjoint's memory which ``stmt`` (not its nested statements)
        may change other than by an update ``template`` applies, else None."""
        applied = update(stmt, self.marker)
        targets = [stmt.target] if isinstance(stmt, (gast.AugAssign, gast.For)) else \
            stmt.targets if isinstance(stmt, gast.Assign) else \
            [w.optional_vars for w in stmt.items if w.optional_vars is not None] if isinstance(stmt, gast.With) else []
        for target in targets:
            if applied is not None and target is stmt.target:
                continue  # d[x] += e, d[x][i] += e
            for node in A.walk(target):
                if isinstance(node, (gast.Subscript, gast.Attribute)) and not isinstance(node.ctx, gast.Load) \
                        and self.shares(node.value):
                    return node.value  # a store into its memory
                if isinstance(stmt, gast.AugAssign) and node is target and self.shares(node):
                    return node  # g += e updates an array in place
        for expr in _own_expressions(stmt):
            for call in (n for n in A.walk(expr) if isinstance(n, gast.Call)):
                changed = self._call_changes(call, applied)
                if changed is not None:
                    return changed
        return None

    def _call_changes(self, call, applied):
        if applied is not None and applied[0] == "buffer" and call.args and call.args[0] is applied[1]:
            return None  # np.add.at(d[x], index, e)
        func = call.func
        if isinstance(func, gast.Attribute) and self._known(func) is None:  # a method of a value
            from .passes.fresh import FRESH_METHODS

            if self.shares(func.value) and func.attr not in _READING_METHODS | FRESH_METHODS:
                return func.value
            held = [a for a in self._operands(call)[1:] if self.holds(a)]  # x.T.dot(d[y]) reads d[y]
            return held[0] if held and func.attr not in _READING_METHODS | FRESH_METHODS else None
        held = [a for a in self._operands(call) if self.holds(a)]
        return None if not held or self._leaves_arguments(call) else held[0]

    def _leaves_arguments(self, call):
        """Is ``call`` known to leave its arguments as they are?"""
        from .passes.fresh import is_in, is_ufunc, known_pure

        obj = self._known(call.func)
        if obj is None or is_in(obj, _IN_PLACE_OPERATORS) or not known_pure(obj):
            return False
        if is_ufunc(obj):  # out=, or an out given by position
            return len(call.args) <= obj.nin and not any(k.arg in ("out", None) for k in call.keywords)
        return not any(k.arg in ("out", None) for k in call.keywords)


def _own_expressions(stmt):
    """The expressions of ``stmt`` itself, not those of the statements nested in it."""
    for field in stmt._fields:
        if field in ("body", "orelse", "finalbody", "handlers"):
            continue
        value = getattr(stmt, field, None)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, gast.AST):
                yield item


def check_changes(rule, body):
    """Refuse a change to an adjoint's memory in ``body`` other than the updates (module doc)."""
    holders = _Holders(rule, body)
    for stmt in A.every_statement(body):
        changed = holders.changes(stmt)
        if changed is not None:
            _refuse(rule, stmt, changed)


def _refuse(rule, stmt, changed):
    from .rule_templates import describe

    m = rule.marker
    place, code = rule_line(rule, stmt)
    raise SrcadError(
        f"{place}: `{code}` in the rule for {describe(rule.key)} may change {A.to_source(changed).strip()} in "
        f"place, which may be the memory of an adjoint ({m}[...]) other derivatives share; srcad applies only "
        f"`{m}[x] += ...` and `{m}[x] -= ...` to an adjoint, so the change would corrupt other derivatives or "
        f"be lost: compute a new value instead (`g = g * 2`, not `g *= 2`; `np.zeros_like(g)`, not "
        f"`g.fill(0)`; give a function of yours `g.copy()`)")
