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

A function of yours that updates such a result (``W = self.W.copy(); W[0] += x``) changes
nothing outside only where its compiled code, with the check, runs: a caller's analysis takes
it so only at a call srcad compiles apart (``calls_compiled_apart``; ``memory_summaries``), and
refuses that call if it runs as written after all (``refuse_run_as_written``).

Guarantee: the code runs such a method only on a NumPy array (not of objects) or a number, and
raises a srcad error naming the user's line for any other receiver. The call itself is left as
it is (its derivative is the method's); a function refused for no such reason, or accepted
without the check, gets no check (its code is unchanged)."""
import gast

from .. import astutil as A
from ..runtime_stores import check_array_receiver
from .binding import helper_call
from .call_binding import user_function_call
from .memory_values import bind_call
from .user_text import UserText


def calls_compiled_apart(node):
    """The ids of the calls ``y = g(a, ...)`` of a function of yours in ``node`` (after
    ``activity``) that srcad compiles apart, running ``g``'s compiled code: ``y`` and a name
    given to ``g`` carry derivatives (``reverse_calls``, ``forward_calls``)."""
    active = A.anno(node, "active") or set()
    calls = set()
    for s in A.every_statement(node.body):
        call = s.value if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) else None
        if not isinstance(call, gast.Call) or s.targets[0].id not in active:
            continue
        callee = A.anno(call, "callee")
        if user_function_call(callee) and any(isinstance(a, gast.Name) and a.id in active
                                              for args in (bind_call(callee.obj, call) or {}).values() for a in args):
            calls.add(id(call))
    return calls


def refuse_run_as_written(source, call, node):
    """Refuse ``call``, which the memory analysis took for compiled apart, trusting the checks
    of its function's compiled code, where it runs as written (no argument carries derivatives
    here)."""
    if A.anno(call, "trusts_compiled_checks"):
        callee = A.anno(call, "callee")
        raise source.syntax_error(
            f"the call of {callee.name}(...) updates in place what a method such as .copy() returns, which srcad "
            "checks is a new array only where it compiles the function; here it runs the function as written (no "
            "argument carries a derivative). Make the copy with np.copy(...) or np.array(...) in that function, "
            "which srcad knows are new arrays", node)


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
