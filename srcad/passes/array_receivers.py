"""Receivers checked to be arrays, for ``passes.aliasing``: ``b = self.W.copy()`` or
``ar = W.sum(axis=1)``, whose result the code updates in place, where srcad does not know what
the attribute or global holds.

The memory analysis takes ``a.copy()``, ``a.sum()``... (``fresh.FRESH_METHODS``) for new memory
only where ``a`` is known to be an array: the method of an object of yours (or of a list) by that
name may return memory it keeps. Where an in-place update is refused and such a call is among
the reasons (``memory.check_memory``'s ``unproven``), ``check_array_receivers`` puts
``check_array_receiver(a, 'copy', 'self.W', where)`` (``runtime_stores.check_array_receiver``)
before the statement, and the analysis is made again; past the check, ``a`` is an array or a
number (``memory_updates``), whose method's result is new memory.

Guarantee: the code runs such a method only on a NumPy array (not of objects) or a number, and
raises a srcad error naming the user's line for any other receiver. The call itself is left as
it is (its derivative is the method's); a function refused for no such reason, or accepted
without the check, gets no check (its code is unchanged)."""
import gast

from .. import astutil as A
from ..runtime_stores import check_array_receiver
from .binding import helper_call
from .user_text import UserText


def check_array_receivers(node, source, calls):
    """Put a check before each statement of ``node``'s body holding one of ``calls`` (method
    calls on a name) not checked yet; return whether any was put."""
    pending = {id(call): call for call in calls if not A.anno(call, "receiver_checked")}
    if not pending:
        return False
    text = UserText(node, source)
    checked = False
    for block in A.blocks(node.body):
        k = 0
        while k < len(block):
            s = block[k]
            found = [] if _compound(s) else [n for n in gast.walk(s) if id(n) in pending]
            for call in found:
                A.set_anno(call, "receiver_checked", True)
                block.insert(k, gast.copy_location(gast.Expr(value=_check(call, text, source, s)), s))
                A.set_anno(block[k], "origin", A.anno(s, "origin") or s)
                k += 1
                checked = True
            k += 1
    return checked


def _compound(s):
    return isinstance(s, (gast.If, gast.For, gast.While, gast.Try, gast.With, gast.FunctionDef))


def _check(call, text, source, s):
    """``check_array_receiver(a, 'copy', 'self.W', where)`` for the call ``a.copy()`` in ``s``."""
    origin = A.anno(s, "origin") or s
    line = getattr(origin, "lineno", None)
    where = f"{source.filename}:{line}: " if line else f"{source.filename}: "
    receiver = call.func.value
    return helper_call("check_array_receiver", check_array_receiver, A.load(receiver.id),
                       A.const(call.func.attr), A.const(text.value(receiver)), A.const(where))
