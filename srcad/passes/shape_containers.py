r"""Which names may hold a list or dict whose structure changes after it is bound: their
structure is not known to shape inference (``passes.shapes``).

A name changes where an item is stored into it, a method such as ``append`` is called on
it, or it is given to a call that may change it (a function of yours); every name that may
share items with a changing one changes too (an alias, an item, a display holding it, a
copy). An array given to such a call holds no list or dict whose structure the call could
change, so ``passes.shapes`` first leaves those names out (``leave_out``) and keeps the
result only if each of them holds a number or a numeric array there (``holds_no_container``).

>>> import gast
>>> from srcad.astutil import walk
>>> flow = ContainerFlow(walk(gast.parse("def f(x):\n    s = x * 2.0\n    L = [s, x]\n    t = step(s)\n")))
>>> sorted(flow.changing()), sorted(flow.given)
(['L', 's', 't', 'x'], ['s'])
>>> sorted(flow.changing(leave_out={"s"}))
[]
"""
import numbers

import gast

from .. import astutil as A
from .shape_values import Spec
from .standins import CHANGING_METHODS, keeps_arguments


def operand_names(node):
    """Names ``node`` reads as values (not the dotted names of the functions it calls)."""
    if isinstance(node, gast.Call):
        names = set()
        for a in node.args + [k.value for k in node.keywords]:
            names |= operand_names(a)
        if isinstance(node.func, gast.Attribute) and A.anno(node, "callee").kind == "method":
            names |= operand_names(node.func.value)
        return names
    return A.names_read(node)


def _may_change_arguments(call):
    callee = A.anno(call, "callee")
    return callee is None or callee.kind not in ("method", "object") or (
        callee.kind == "object" and not keeps_arguments(callee.obj))


class ContainerFlow:
    """Read off the ``nodes`` of a function (``astutil.walk``'s): ``given``, the names it gives to calls that may change
    them (not NumPy's, not a builtin), and ``changing(leave_out)``, the names that may hold a
    list or dict changed after it is bound, together with every name that may share items with
    them; a name of ``leave_out`` is not taken to change where it is given to a call (see the
    module doc). ``operands`` is ``operand_names`` (or a function giving what it gives)."""

    def __init__(self, nodes, operands=None):
        operands = operands or operand_names
        self.given, self._changed, self._groups = set(), set(), []
        for s in nodes:
            if isinstance(s, gast.Assign):
                target = s.targets[0]
                if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
                    self._changed.add(target.value.id)
                elif isinstance(target, gast.Name) and isinstance(s.value, (gast.Name, gast.Subscript, gast.List,
                                                                             gast.Tuple, gast.Dict, gast.BinOp, gast.Call)):
                    # an alias, an item, a literal holding it, a concatenation or a copy may share items
                    self._groups.append({target.id} | operands(s.value))
            if isinstance(s, gast.Call):
                callee = A.anno(s, "callee")
                if callee is not None and callee.kind == "method":
                    if callee.name in CHANGING_METHODS and isinstance(s.func.value, gast.Name):
                        self._changed.add(s.func.value.id)
                elif _may_change_arguments(s):
                    self.given |= operands(s)
        self._groups_of = {}
        for group in self._groups:
            for name in group:
                self._groups_of.setdefault(name, []).append(group)

    def changing(self, leave_out=frozenset()):
        changed = self._changed | (self.given - set(leave_out))
        todo, linked = list(changed), set()
        while todo:  # a name linked to a changing one may share its items
            for group in self._groups_of.get(todo.pop(), ()):
                if id(group) not in linked:
                    linked.add(id(group))
                    todo.extend(group - changed)
                    changed |= group
        return changed


def holds_no_container(value):
    """Is ``value`` (abstract) a number or an array of numbers, which holds no list or dict?"""
    if isinstance(value, Spec):
        return value.dtype.kind in "biufc"
    return isinstance(value, numbers.Number)
