"""Placeholder stacks turned around, for the numba backend (``numba_lowering``'s
*Placeholders*): a value first bound inside a loop is saved with ``_x_stack.append(x)`` before
each assignment, so its first save pushes the ``None`` bound at entry, which numba cannot type
with the values. Where the placeholder is pushed only before a literal, a literal of that type
replaces ``None``; otherwise the stack is turned around: each value is pushed *after* it is
assigned, and the restore ``x = _x_stack.pop()`` becomes ``x = previous_value(_x_stack, x)``.
A snapshot ``x = copy_value(x)`` right after such an assignment (taken before an update in place
may change what ``x`` reads) rebinds ``x`` to a copy of the value just assigned: it needs no
save of its own, and the value is pushed after it, so the stack holds the snapshot Python reads.
"""
import gast

from .. import astutil as A
from ..errors import SrcadError

PREVIOUS_VALUE = "previous_value"  # the generated code's name of ``backends.numba_runtime.previous_value``


class NotLowerable(SrcadError):
    """Generated code numba cannot run with the same meaning; ``node`` is where."""

    def __init__(self, message, node):
        super().__init__(message)
        self.message, self.node = message, node


def _push_of(stmt):
    """``(stack, name)`` if ``stmt`` is ``stack.append(name)`` or ``stack.append(copy_value(name))``
    (a copy of a value a later update in place may change: pushed after the assignment, it is
    still a copy of the value assigned)."""
    if (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)
            and isinstance(stmt.value.func, gast.Attribute) and stmt.value.func.attr == "append"
            and isinstance(stmt.value.func.value, gast.Name) and len(stmt.value.args) == 1
            and not stmt.value.keywords):
        pushed = stmt.value.args[0]
        if (isinstance(pushed, gast.Call) and isinstance(pushed.func, gast.Name)
                and pushed.func.id.rstrip("_") == "copy_value" and len(pushed.args) == 1 and not pushed.keywords):
            pushed = pushed.args[0]
        if isinstance(pushed, gast.Name):
            return stmt.value.func.value.id, pushed.id
    return None


def _pop_of(stmt):
    """``(stack, name)`` if ``stmt`` is ``name = stack.pop()``."""
    if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.Call) and isinstance(stmt.value.func, gast.Attribute)
            and stmt.value.func.attr == "pop" and isinstance(stmt.value.func.value, gast.Name)
            and not stmt.value.args and not stmt.value.keywords):
        return stmt.value.func.value.id, stmt.targets[0].id
    return None


def _snapshot_of(stmt):
    """``name`` if ``stmt`` is ``name = copy_value(name)``."""
    if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.Call) and isinstance(stmt.value.func, gast.Name)
            and stmt.value.func.id.rstrip("_") == "copy_value" and len(stmt.value.args) == 1
            and not stmt.value.keywords and isinstance(stmt.value.args[0], gast.Name)
            and stmt.value.args[0].id == stmt.targets[0].id):
        return stmt.targets[0].id
    return None


def _snapshot_after(block, k, name):
    """The position of ``name = copy_value(name)`` in ``block`` after ``block[k]`` with nothing
    binding ``name`` in between, or None."""
    for j in range(k + 1, len(block)):
        if _snapshot_of(block[j]) == name:
            return j
        if _binds(block[j], name) or isinstance(block[j], (gast.If, gast.For, gast.While, gast.Try, gast.With)) \
                and name in A.names_stored(block[j]):
            return None
    return None


def _binds(stmt, name):
    """Does ``stmt`` itself (not a nested block) bind ``name``?"""
    if isinstance(stmt, (gast.For, gast.AsyncFor)):
        return name in A.names_stored(stmt.target)
    if isinstance(stmt, (gast.If, gast.While, gast.Try, gast.With)):
        return False
    if isinstance(stmt, (gast.FunctionDef, gast.ClassDef, gast.Import, gast.ImportFrom)):
        return True  # never in generated code: refused below if it binds a saved name
    return name in A.names_stored(stmt)


def turn_around_placeholder_stacks(fn):
    placeholders = {}
    for s in fn.body:
        if (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
                and A.is_none(s.value)):
            placeholders[s.targets[0].id] = s
    stacks = {}  # name -> its stack, for placeholders that are pushed
    typed = {}  # name -> a literal value of its type, for names only pushed before a literal or range
    for block in A.blocks(fn.body):
        for k, s in enumerate(block):
            push = _push_of(s)
            if push and push[1] in placeholders:
                if stacks.setdefault(push[1], push[0]) != push[0]:
                    raise NotLowerable(f"{push[1]!r} is saved on two stacks", s)
                literal = _literal_assigned(block, k, push[1])
                if literal is None:
                    typed[push[1]] = None
                elif typed.get(push[1], literal) is not None:
                    typed.setdefault(push[1], literal)
    for name, literal in typed.items():
        if literal is not None:  # the placeholder is pushed once and never read: any value of the type
            placeholders[name].value = literal
            del stacks[name]
    for block in A.blocks(fn.body):
        _check_every_assignment_saved(block, stacks, placeholders)
    for block in A.blocks(fn.body):
        block[:] = turned_around(block, stacks, placeholders)
    return stacks


def _check_every_assignment_saved(block, stacks, placeholders):
    snapshots = set()  # positions of snapshots of a value a saved assignment just bound
    for k, s in enumerate(block):
        for name, stack in stacks.items():
            if not _binds(s, name) or s is placeholders[name] or _pop_of(s) == (stack, name) or k in snapshots:
                continue
            if not (isinstance(s, gast.Assign) and (stack, name) in _pushes_before(block, k)):
                raise NotLowerable(
                    f"{name!r} is assigned here without its previous value being saved for the reverse sweep", s)
            snapshot = _snapshot_after(block, k, name)
            if snapshot is not None:
                snapshots.add(snapshot)


def _literal_assigned(block, k, name):
    """The placeholder a push at ``block[k]`` can have: a copy of the literal (or of
    ``range(0)`` for a ``range(...)``) that the assignment after its run of pushes gives
    ``name``; None if it assigns anything else."""
    while k < len(block) and _push_of(block[k]):
        k += 1
    s = block[k] if k < len(block) else None
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
            and s.targets[0].id == name):
        return None
    if isinstance(s.value, gast.Constant) and type(s.value.value) in (int, float, bool):
        return A.const(s.value.value)
    if (isinstance(s.value, gast.Call) and isinstance(s.value.func, gast.Name) and s.value.func.id == "range"
            and not s.value.keywords):
        return gast.Call(func=A.load("range"), args=[A.const(0)], keywords=[])
    return None


def _pushes_before(block, k):
    """The ``(stack, name)`` pushes in the run of pushes right before ``block[k]``."""
    found = set()
    while k and _push_of(block[k - 1]):
        k -= 1
        found.add(_push_of(block[k]))
    return found


def turned_around(block, stacks, placeholders):
    dropped = {id(placeholders[name]) for name in stacks if name in placeholders}
    out, pending, deferred = [], [], {}  # deferred: position of a snapshot -> the pushes that follow it
    for k, s in enumerate(block):
        if id(s) in dropped:
            continue
        push = _push_of(s)
        if push and stacks.get(push[1]) == push[0]:
            pending.append(s)  # pushed after the assignment that follows
            continue
        pop = _pop_of(s)
        if pop and stacks.get(pop[1]) == pop[0]:
            s = A.assign(pop[1], gast.Call(func=A.load(PREVIOUS_VALUE), args=[A.load(pop[0]), A.load(pop[1])],
                                           keywords=[]))
        out.append(s)
        out.extend(deferred.pop(k, ()))
        for p in pending:
            snapshot = _snapshot_after(block, k, _push_of(p)[1])
            if snapshot is None:
                out.append(p)
            else:  # the stack holds the snapshot, which is what the name holds from there on
                deferred.setdefault(snapshot, []).append(p)
        pending = []
    return out + pending
