"""Condition names: names whose truth stays what it was while they are not rebound.

``numba_none_flags`` proves a read of ``t`` inside ``if c:`` after ``if c: t = ...`` when ``c``
is one of them. Guarantee: a name ``condition_names`` returns holds a value no other name but
condition names refers to (a comparison's, a ``not``'s, a constant, what its own stack pops,
another condition name's), and nothing stores into it, so its truth changes only where it is
rebound.
"""
import gast
import numpy as np

from .. import astutil as A
from ..extend import stop_gradient
from .callees import dotted
from .numba_stacks import PREVIOUS_VALUE


def condition_names(fn, trusted=frozenset(), resolve=None):
    """Names whose truth cannot change while they are not rebound: each is bound only by
    assignments of a comparison, a ``not``, a constant, or a pop of its own stack, and every read
    of one is in a test (through ``not``, ``and``/``or`` and comparisons), in a ``return`` or a
    push to its own stack (``_own_stack``), so no other name refers to its value and nothing
    stores into it (a one-element array tested by ``if``). A parameter is none (the caller may
    hold its value). ``trusted`` names are fresh where the first statement unpacks them (a
    backward sweep's saved values); ``c = d`` (``c = stop_gradient(d)``, with ``resolve`` telling
    srcad's) binds ``c`` to ``d``'s value, which is a condition name's if both are.

    >>> fn = gast.parse("def f(x):\\n    c = x > 0\\n    d = x > 1\\n    e = d\\n    y = c * 2\\n    if c and not d or e:\\n        pass").body[0]
    >>> sorted(condition_names(fn))  # ``c`` is read as a number, ``x`` is a parameter
    ['d', 'e']
    """
    allowed, fresh, copies = set(), set(), []
    if trusted and fn.body and isinstance(fn.body[0], gast.Assign):
        fresh.update(id(n) for n in A.walk(fn.body[0].targets[0]) if isinstance(n, gast.Name) and n.id in trusted)
    for node in A.walk(fn):
        if isinstance(node, (gast.If, gast.While, gast.IfExp)):
            allowed.update(id(n) for n in _test_operands(node.test))
        elif isinstance(node, gast.Return) and node.value is not None:
            allowed.update(id(n) for n in A.walk(node.value) if isinstance(n, gast.Name))
        elif (_stack_call(node, "append") and len(node.args) == 1 and isinstance(node.args[0], gast.Name)
              and _own_stack(fn, node.func.value.id, node.args[0].id)):
            allowed.add(id(node.args[0]))
        elif isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], gast.Name):
            source = copied(node.value, resolve)
            if source is not None:
                copies.append((node.targets[0], source))
            stack = _popped_stack(node.value, node.targets[0].id)
            own = stack is not None and _own_stack(fn, stack, node.targets[0].id)
            if isinstance(node.value, (gast.Compare, gast.Constant)) or is_not(node.value) or own or (
                    _new_truth(node.value, resolve)):
                fresh.add(id(node.targets[0]))
            if own:  # ``previous_value(s, c)`` reads ``c``
                allowed.update(id(n) for n in A.walk(node.value) if isinstance(n, gast.Name))
            if is_not(node.value) and isinstance(node.value.operand, gast.Name):  # ``c = not d``: a new bool
                allowed.add(id(node.value.operand))
    reads, binds = {}, {}
    for node in A.walk(fn):
        if isinstance(node, gast.Name):
            (reads if isinstance(node.ctx, gast.Load) else binds).setdefault(node.id, []).append(node)
    plain = set(binds) - {a.id for a in fn.args.args}
    while True:  # a copy is fresh, and its read allowed, only while both names stay condition names
        linked = {id(n) for target, source in copies if {target.id, source.id} <= plain for n in (target, source)}
        kept = {name for name in plain if all(id(n) in allowed | linked for n in reads.get(name, ()))
                and all(id(n) in fresh | linked for n in binds[name])}
        if kept == plain:
            return plain
        plain = kept


def copied(value, resolve):
    """The Name ``value`` is a copy of (``d``, ``stop_gradient(d)``), or None."""
    if isinstance(value, gast.Name):
        return value
    if (isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and len(value.args) == 1
            and not value.keywords and isinstance(value.args[0], gast.Name) and resolve is not None
            and resolve(value.func.id) is stop_gradient):
        return value.args[0]
    return None


# NumPy's tests that return a new value of their one argument's truth (a bool, or a new bool array)
_NEW_TRUTHS = (np.all, np.any, np.isnan, np.isfinite, np.isinf)


def _new_truth(value, resolve):
    """Is ``value`` ``np.all(a)`` (a call of ``_NEW_TRUTHS`` on one argument, no ``out=``), which
    ``resolve`` tells is NumPy's?"""
    return (resolve is not None and isinstance(value, gast.Call) and len(value.args) == 1 and not value.keywords
            and dotted(value.func) is not None and any(resolve(".".join(dotted(value.func))) is f for f in _NEW_TRUTHS))


def is_not(node):
    return isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not)


def _test_operands(test):
    """The names a test reads as a whole value (through ``not``, ``and``/``or``, comparisons)."""
    if isinstance(test, gast.Name):
        return [test]
    if is_not(test):
        return _test_operands(test.operand)
    if isinstance(test, gast.BoolOp):
        return [n for v in test.values for n in _test_operands(v)]
    if isinstance(test, gast.Compare):
        return [n for v in [test.left] + test.comparators for n in _test_operands(v)]
    return []


def _stack_call(node, method):
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and node.func.attr == method
            and isinstance(node.func.value, gast.Name))


def _popped_stack(value, name):
    """``s`` if ``value`` is ``s.pop()`` or ``previous_value(s, name)``."""
    if _stack_call(value, "pop") and not value.args:
        return value.func.value.id
    if (isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and value.func.id == PREVIOUS_VALUE
            and len(value.args) == 2 and all(isinstance(a, gast.Name) for a in value.args)
            and value.args[1].id == name):
        return value.args[0].id
    return None


def _own_stack(fn, stack, name):
    """Is every read of ``stack`` a push of ``name``, a pop bound to ``name`` alone, or in a ``return``?"""
    kept = set()
    for node in A.walk(fn):
        if _stack_call(node, "append") and node.func.value.id == stack and len(node.args) == 1 and (
                isinstance(node.args[0], gast.Name) and node.args[0].id == name):
            kept.add(id(node.func.value))
        elif isinstance(node, gast.Return) and node.value is not None:
            kept.update(id(n) for n in A.walk(node.value) if isinstance(n, gast.Name))
        elif (isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], gast.Name)
              and node.targets[0].id == name and _popped_stack(node.value, name) == stack):
            kept.update(id(n) for n in A.walk(node.value) if isinstance(n, gast.Name) and n.id == stack)
    return all(id(n) in kept for n in A.walk(fn)
               if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id == stack)
