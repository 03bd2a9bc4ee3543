"""Aliasing check: refuse in-place updates whose effect on other names srcad cannot see.

NumPy views share memory: after ``r = A[0]; r[1] = x`` the array ``A`` has changed too.
srcad's adjoint follows names, so it must know which names may share memory. This pass
tracks it *fail closed*: a value is a new array only if it comes from an allowlist of
operations known to return fresh memory (arithmetic, ufuncs, reductions, ``np.zeros``,
``.copy()``, ``np.concatenate``, ``@`` ...); any other value (``x.T``, ``np.flip(x)``,
``np.asarray(x)``, ``x.reshape(...)``, a basic slice, a call of a user function, an item of a
container) may share memory with every array it was computed from. Afterwards it
guarantees, for every in-place update of ``S`` (``S[i] = e``, ``S.append(e)``, ``np.add.at``,
an augmented assignment ``S += e``, a call made for its effect such as ``np.copyto(S, e)``):

- no other name that may share memory with ``S`` is read after the update (before it is
  bound again), and
- the update does not reach an argument's memory through another name (srcad never
  changes the caller's arrays), nor a global array;
- a call made for its effect does not change memory an earlier statement read (its old
  value could not be restored for the derivative), and no call writes into an ``out``
  argument, by keyword or by position.

Otherwise it raises ``SrcadSyntaxError`` at the update, saying what to copy.

``passes.memory`` is the analysis behind it. ``record_values`` runs it again on the
forward sweep to copy, before an in-place update, the values the reverse sweep still reads.

>>> import numpy as np
>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> from srcad.passes.normalize import normalize
>>> def f(x):
...     A = np.zeros((2, 2))
...     r = A[0]
...     r[1] = x
...     return A.sum()
>>> src = capture(f)
>>> try:
...     check_aliasing(normalize(resolve_calls(src.node, src), src), src)
... except SyntaxError as e:
...     print(e.msg)
in-place update of 'r', which shares memory with 'A' (line 3), and 'A' is read after it (line 5); write 'r = A[0].copy()' (or update 'A' itself)
"""
import gast

from .. import astutil as A
from .memory import Refusal, check_memory, describe_call


def check_aliasing(node, source):
    """Raise ``SrcadSyntaxError`` for in-place updates srcad cannot follow (see module doc);
    return ``node``."""
    try:
        check_memory(node.body, [a.id for a in node.args.args])
    except Refusal as refusal:
        origin = A.anno(refusal.node, "origin") or refusal.node
        message = refusal.message
        if isinstance(message, tuple):
            message = _stale_message(refusal.node, *message)
        raise source.syntax_error(message, origin) from None
    return node


def _stale_message(update, updated, reader, made, copied, line):
    in_place = A.anno(update, "in_place")
    made_line = getattr(made, "lineno", None)
    where = f" (line {made_line})" if made_line else ""
    if isinstance(update, gast.Assign) and isinstance(update.value, gast.Call) and updated == reader:
        return (f"{describe_call(update.value)} updates its argument '{updated}' in place, and '{updated}' is read "
                f"after the call (line {line}); srcad differentiates the function on a copy of its arguments, "
                f"so make it return the new value instead")
    if in_place is not None:
        op = in_place[2]
        return (f"'{updated} {op}= ...' updates '{updated}' in place, and '{reader}', which shares memory with "
                f"it{where}, is read after it (line {line}); write '{updated} = {updated} {op} ...' to make a new "
                f"array instead")
    single = isinstance(made, gast.Assign) and len(made.targets) == 1 and isinstance(made.targets[0], gast.Name)
    hint = A.to_source(made.value).strip() if single else "..."
    if single and not isinstance(made.value, (gast.Name, gast.Call, gast.Attribute, gast.Subscript)):
        hint = f"({hint})"
    instead = f" (or update '{reader}' itself)" if copied == updated else ""
    return (f"in-place update of '{updated}', which shares memory with '{reader}'{where}, and '{reader}' is "
            f"read after it (line {line}); write '{copied} = {hint}.copy()'{instead}")

