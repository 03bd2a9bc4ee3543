"""Placeholder stacks turned around, for the numba backend (``numba_lowering``'s
*Placeholders*): a value first bound inside a loop is saved with ``_x_stack.append(x)`` before
each assignment, so its first save pushes the ``None`` bound at entry, which numba cannot type
with the values. Where the placeholder is pushed only before a literal, a literal of that type
replaces ``None``; otherwise the stack is turned around, so that its top is always the current
value of ``x``: each value is pushed *after* the assignment it saves (the next statement binding
``x``: ``_t19_stack.append(_t19); _t18 += y; _t19 = _t18`` pushes after ``_t19 = _t18``), an
assignment that is not saved (a second one in the same step, as a chained comparison's
``if _t4: _t2 = _t3 < 0.5`` makes) replaces the top (``set_current_value(_x_stack, x)``), and the
restore ``x = _x_stack.pop()`` becomes ``x = previous_value(_x_stack, x)``. The stack then holds,
below its top, exactly the values the Python code pushes, but the placeholder.
A push that copies (``append(copy_value(x))``, for a value an update in place may change) copies
when ``x`` is assigned, Python when it is next saved: an update in place in between (``x[0] =
...``) would make them differ, so such a push and ``set_current_value`` copy with
``unchanged_copy``, which numba compiles for immutable values only (a float ``s += ...`` saves
as a copy, ``in_place_result``). Any other push or pop of a turned-around stack (an element
saved on it) is refused. A snapshot ``x = copy_value(x)`` right after such an assignment (taken before an update in place
may change what ``x`` reads) rebinds ``x`` to a copy of the value just assigned: it needs no
save of its own, and the value is pushed after it, so the stack holds the snapshot Python reads.
"""
import gast

from .. import astutil as A
from ..errors import SrcadError

PREVIOUS_VALUE = "previous_value"  # the generated code's name of ``backends.numba_runtime.previous_value``
SET_CURRENT_VALUE = "set_current_value"  # and of ``backends.numba_runtime.set_current_value``
UNCHANGED_COPY = "unchanged_copy"  # and of ``backends.numba_copies.unchanged_copy``


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
    copied = _copied_names(fn, stacks)
    for block in A.blocks(fn.body):
        block[:] = turned_around(block, stacks, placeholders, copied)
    return stacks


def _copied_names(fn, stacks):
    """The names in ``stacks`` whose pushes are copies (``append(copy_value(x))``)."""
    return {_push_of(s)[1] for s in A.every_statement(fn.body)
            if _push_of(s) and stacks.get(_push_of(s)[1]) == _push_of(s)[0]
            and isinstance(s.value.args[0], gast.Call)}


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


_STRAIGHT = (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr, gast.Pass)  # no jump, no block


def turned_around(block, stacks, placeholders, copied=frozenset()):
    """``block`` with its saved names' stacks turned around, so that a stack's top is always its
    name's current value: a push moves after the assignment it saves (the next statement that
    binds the name, past straight-line statements), or after the snapshot of it; an assignment
    not saved (a second one in the same step, one in a branch) sets the top to its value
    (``set_current_value``); a restore reads the value below the top."""
    dropped = {id(placeholders[name]) for name in stacks if name in placeholders}
    out, pending, deferred = [], {}, {}  # pending: name -> its push; deferred: snapshot position -> pushes
    for k, s in enumerate(block):
        if id(s) in dropped:
            continue
        push = _push_of(s)
        if push and stacks.get(push[1]) == push[0]:
            if push[1] in pending:
                raise NotLowerable(f"{push[1]!r} is saved twice for one assignment", s)
            pending[push[1]] = _copied_unchanged(s)  # pushed after the assignment it saves
            continue
        _refuse_other_stack_uses(s, stacks)
        if pending and not isinstance(s, _STRAIGHT):
            raise NotLowerable(f"{next(iter(pending))!r} is saved for an assignment this statement may skip", s)
        restores = {name for name, stack in stacks.items() if _pop_of(s) == (stack, name)}
        for name in restores:
            s = A.assign(name, gast.Call(func=A.load(PREVIOUS_VALUE), args=[A.load(stacks[name]), A.load(name)],
                                         keywords=[]))
        out.append(s)
        snapshots = deferred.pop(k, {})
        out.extend(snapshots.values())
        for name, stack in stacks.items():
            if name in restores or name in snapshots or not _binds(s, name):
                continue
            if name in pending:  # s is straight: checked above
                p = pending.pop(name)
                snapshot = _snapshot_after(block, k, name)
                if snapshot is None:
                    out.append(p)
                else:  # the stack holds the snapshot, which is what the name holds from there on
                    deferred.setdefault(snapshot, {})[name] = p
            elif isinstance(s, (gast.For, gast.AsyncFor)):
                s.body.insert(0, gast.copy_location(_set_current(stack, name, name in copied), s))
            elif isinstance(s, _STRAIGHT):
                out.append(gast.copy_location(_set_current(stack, name, name in copied), s))
            else:
                raise NotLowerable(f"{name!r} is assigned here in a way numba's stacks cannot follow", s)
    if pending:
        raise NotLowerable(f"{next(iter(pending))!r} is saved for an assignment that never comes",
                           pending[next(iter(pending))])
    return out


def _refuse_other_stack_uses(stmt, stacks):
    """A turned-around stack is pushed only its name's values and popped only into its name: an
    element saved on it (``_z_stack.append(copy_value(z[0]))``) would be read for the name."""
    if not isinstance(stmt, _STRAIGHT) or _pop_of(stmt) in {(stack, name) for name, stack in stacks.items()}:
        return
    for node in gast.walk(stmt):
        if (isinstance(node, gast.Attribute) and node.attr in ("append", "pop") and isinstance(node.value, gast.Name)
                and node.value.id in stacks.values()):
            raise NotLowerable(f"an element overwritten in place is saved among {node.value.id!r}, which numba "
                               "pushes after each assignment of the name; bind the name before the loop", stmt)


def _copied_unchanged(push):
    """``stack.append(copy_value(x))`` as ``stack.append(unchanged_copy(x))``; a push of ``x``
    itself as it is."""
    copied = push.value.args[0]
    if not isinstance(copied, gast.Call):
        return push
    return gast.copy_location(gast.Expr(value=gast.Call(func=push.value.func, args=[
        gast.Call(func=A.load(UNCHANGED_COPY), args=copied.args, keywords=[])], keywords=[])), push)


def _set_current(stack, name, copy):
    value = A.load(name)
    if copy:  # copied as the name's pushes are (an update in place may change the value later)
        value = gast.Call(func=A.load(UNCHANGED_COPY), args=[value], keywords=[])
    return gast.Expr(value=gast.Call(func=A.load(SET_CURRENT_VALUE), args=[A.load(stack), value], keywords=[]))
