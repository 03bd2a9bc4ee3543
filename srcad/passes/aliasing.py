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
import re

import gast

from .. import astutil as A
from .array_receivers import calls_compiled_apart, check_array_receivers
from .effect_calls import grown_list_advice
from .item_forms import mark_element_reads
from .memory import check_memory
from .memory_refusals import Refusal, describe_call
from .shapes import infer_shapes
from .user_text import UserText


def check_aliasing(node, source, arrays=(), numbers=(), keyed=(), specs=None):
    """Raise ``SrcadSyntaxError`` for in-place updates srcad cannot follow (see module doc);
    return ``node``. The message names the user's expressions, never srcad's temporaries.
    ``arrays`` are the parameters the code is only ever given arrays or numbers (a ``.copy()``
    of one shares nothing), ``numbers`` those given Python numbers (no update reaches them),
    ``keyed`` those given dicts whose keys are strings (``for k in d`` reads no array).
    ``specs`` (parameter -> ``shapes.arg_spec``): where the check would refuse, the shapes
    they imply may prove reads ``S[i, j]`` of one element (an integer per axis), which are
    NumPy scalars, no views (``y[0], y[1] = y[1], y[0]``, ``for v in vector``); it is then
    made again, and the function annotated ``"shapes_proved"`` (its code holds for those shapes only)."""
    A.set_anno(node, "array_params", tuple(arrays))  # (updated_parameters reads it: a copy of one is new memory)
    params = [a.id for a in node.args.args]
    compiled = calls_compiled_apart(node)
    first, proved = None, False
    try:
        while True:
            unproven = {}
            try:
                check_memory(node.body, params, arrays, source.lookup, numbers, keyed, unproven, compiled)
                break
            except Refusal as refusal:
                first = first or refusal  # (what the code does that srcad refuses, said as without the remedies)
                if check_array_receivers(node, source, unproven.values()):
                    continue
                if specs and not proved and mark_element_reads(node.body, A.anno(infer_shapes(node, specs), "specs"),
                                                               every_array=True):
                    proved = True
                    continue
                raise first from None
        if proved:
            A.set_anno(node, "shapes_proved", True)
    except Refusal as refusal:
        origin = _located(node.body, refusal.node)
        text = UserText(node, source)
        message = refusal.message
        if isinstance(message, tuple):
            message = _stale_message(refusal.node, text, *message)
        else:
            message = text.names_in(message)
        error = source.syntax_error(message, origin)
        raise (error if refusal.error is None else refusal.error(str(error))) from None
    return node


def _located(stmts, stmt):
    """The user's statement ``stmt`` came from; for a statement srcad made without a line
    (a call inside a comprehension), the nearest user statement before it."""
    found = None
    for s in A.walk_statements(stmts):
        origin = A.anno(s, "origin") or s
        if getattr(origin, "lineno", None):
            found = origin
        if s is stmt:
            break
    origin = A.anno(stmt, "origin") or stmt
    return origin if getattr(origin, "lineno", None) else found or origin


def _fresh(value):
    """Is ``value`` a call known to return new memory (``np.zeros_like(u)``, ``x.copy()``)?"""
    from .call_options import copies
    from .fresh import FRESH_METHODS, new_array_call

    callee = A.anno(value, "callee") if isinstance(value, gast.Call) else None
    return callee is not None and copies(value) and (callee.kind == "object" and new_array_call(callee.obj, value)
                                                     or callee.kind == "method" and callee.name in FRESH_METHODS)


def _sibling_parts(text, update, through, reader):
    """``(part, holder)`` where the updated name was bound to a part of an object, list or dict
    (``rm = self.running_mean``: ``self.running_mean``, ``self``) and ``reader`` is an operand of
    the update, the holder, or another part of it (``self.momentum``): srcad relates the two
    through the holder only, so the message names the part, never the operand. Else None."""
    if not isinstance(through, gast.Assign):
        return None
    part = text.expand(A.deepcopy(through.value), 0)
    if not _named_part(part):
        return None
    holder, other = A.to_source(part.value).strip(), text.expr(reader, 0)
    operand = reader in A.names_read(update.value)
    if not (operand or A.to_source(other).strip() == holder
            or (_named_part(other) and A.to_source(other.value).strip() == holder)):
        return None
    return A.to_source(part).strip(), holder


def _named_part(expr):
    """``obj.attr`` or ``d["key"]``: a part of a holder by a name written in the code."""
    return isinstance(expr, gast.Attribute) or (isinstance(expr, gast.Subscript)
                                                 and isinstance(expr.slice, gast.Constant))


_DISPLAYS = (gast.List, gast.Tuple, gast.Dict, gast.Set)  # (a tuple has no .copy(): its items must be copies)


def _appends(update):
    """Is ``update`` the statement ``L.append(v)``?"""
    call = update.value if isinstance(update, (gast.Expr, gast.Assign)) else None
    callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
    return callee is not None and callee.kind == "method" and callee.name == "append"


def _holder_fix(holder, written):
    """A container holding a value that shares memory with ``written``: a copy of the container
    would share its items, so the item itself must be a copy."""
    return (f"'{holder}' holds a value that shares memory with '{written}' (put in it by its display, an "
            f"append or an item assignment): put a copy of that value in it ('.copy()')")


def _stale_message(update, text, updated, reader, made, copied, line, through, container):
    in_place = A.anno(update, "in_place")
    made_line = getattr(made, "lineno", None)
    where = f" (line {made_line})" if made_line else ""
    after = f"after it (line {line})" if line else "after it"
    written, read = text(updated), text(reader)
    sibling = _sibling_parts(text, update, through, reader) if in_place is not None else None
    if sibling is not None:
        part, holder = sibling
        bound_line = getattr(A.anno(through, "origin") or through, "lineno", None)
        return (f"'{written} {in_place[2]}= ...' updates '{written}' in place, and with it '{part}', which "
                f"'{written}' is{f' (line {bound_line})' if bound_line else ''}; " + (
                    f"'{holder}', which holds it, is read {after}: write " if read == holder else
                    f"'{read}' is read {after}, and srcad cannot tell whether it shares memory with '{part}' (both "
                    f"are reached through '{holder}'): write ") +
                f"'{written} = {written} {in_place[2]} ...' to make a new array (which leaves '{part}' as it was)")
    if isinstance(update, gast.Assign) and isinstance(update.value, gast.Call) and updated == reader:
        return (f"{describe_call(update.value)} updates its argument '{written}' in place, and '{written}' is read "
                f"{after.replace('after it', 'after the call')}; srcad differentiates the function on a copy of "
                f"its arguments, so make it return the new value instead")
    loop_line = text.loop_line(reader) if reader in text.single else None
    if loop_line is not None:
        if in_place is not None and written != read:
            # the loop's item itself (an array a list or dict holds, a row): a copy of the container would hold
            # the same arrays; a new array leaves them as they were
            op = in_place[2]
            if read.isidentifier():  # a list's or an array's own items
                where = f"'for i, {written} in enumerate({read}.copy()): {read}[i] = {written} {op} ...'"
            else:
                where = (f"'for k in list(d): d[k] = d[k] {op} ...' for a dict, 'for i, {written} in "
                         f"enumerate(L.copy()): L[i] = {written} {op} ...' for a list or an array's rows")
            return (f"in-place update of '{written}', an item of what the for loop at line {loop_line} iterates "
                    "over, which is read again: srcad does not follow an item changed through the loop's name; store "
                    f"a new array where the item is, looping over a copy: {where}")
        if read.endswith(".keys()") or not read.isidentifier() and not read.endswith(")"):
            # (d.keys(), or srcad's own list of d.items(): its copy is what srcad reads as one)
            return (f"in-place update of '{written}' while the for loop at line {loop_line} iterates over its keys or "
                    f"items; iterate over a list of its keys instead ('for k in list({written}):', then "
                    f"'v = {written}[k]')")
        shares = "" if written == read else f", which shares memory with '{read}',"
        copy = f"list({read})" if read.endswith(")") else f"{read}.copy()"  # reversed(L): the list of its items
        return (f"in-place update of '{written}'{shares} while the for loop at line {loop_line} iterates over "
                f"'{read}'; iterate over a copy instead ('for ... in {copy}')")
    if copied not in text.user and _appends(update):  # hist["loss"].append(v): a copy would lose the item
        fix = f"{grown_list_advice()} and put it into '{read}' once it is complete"
    elif copied not in text.user:  # srcad's temporary: copy the expression where the user wrote it
        fix = f"write '{text(copied)}.copy()' there instead"
    else:
        single = isinstance(made, gast.Assign) and len(made.targets) == 1 and isinstance(made.targets[0], gast.Name)
        hint = text.value(made.value) if single else "..."
        if single and isinstance(made.value, _DISPLAYS):
            fix = _holder_fix(copied, written)
        elif single and A.anno(made.value, "lowered_method"):  # (passes.local_objects: o.copy() of your class)
            called = A.anno(made.value, "lowered_method")
            fix = (f"'{copied}' is what '{called}(...)', a method of yours, returns, which may be what the object "
                   f"holds: write '{copied} = np.array({called}(...))' to make a new array")
        elif single and _fresh(made.value) and A.anno(made.value, "callee").kind == "method":
            # a method named like NumPy's copy of a value not known to be an array (yours may lie)
            fix = (f"'{copied}' is made by '{hint}', which srcad takes as new memory only where it knows what "
                   f"the value is (an array, a list, a dict: a method of yours may return what it holds): write "
                   f"'{copied} = np.array({hint})' to make a new array")
        elif single and _fresh(made.value):  # new memory already: the names take turns (a, b = b, a)
            fix = (f"'{copied}' is new memory where it is made, so the two names share memory by taking turns with "
                   f"the same arrays (a swap such as '{written}, {read} = {read}, {written}' in a loop), which srcad "
                   f"cannot tell apart: make the new value a new array each time ('{written} = ...' rather than "
                   f"'{written}[...] = ...')")
        elif single and re.search(r"\.(keys|values|items)\(\)$", hint):  # a dict's live view, which has no copy
            fix = f"write '{copied} = list({hint})'"
        else:
            if single and not isinstance(made.value, (gast.Name, gast.Call, gast.Attribute, gast.Subscript)):
                hint = f"({hint})"
            fix = (f"write '{copied} = {hint}.copy()'" if single else f"make '{copied}' a copy where it is assigned "
                   "('.copy()')") + (f" (or update '{read}' itself)" if copied == updated else "")
    if in_place is not None:
        op = in_place[2]
        if updated in text.user:  # a view changed in place: either its base should change, or it should not
            fix = (f"to change '{read}', update it where it is indexed ('{read}[...] {op}= ...'); otherwise write "
                   f"'{written} = {written} {op} ...' to make a new array")
        elif re.fullmatch(re.escape(read) + r"\[[^\]]*\]\[.*\]", written):  # P[1][3] += ...: P[1] is a view
            fix = f"update '{read}' through one subscript ('{read}[i, j] {op}= ...', not '{read}[i][j] {op}= ...')"
        elif container:  # (a copy of a list, tuple or dict would share the item)
            fix = _holder_fix(read, written)
        elif view := re.fullmatch(re.escape(read) + r"(\.\w+(\(.*\))?)\[.*\]", written):  # a.T[0] *= 3
            example = f"; '{read}[:, 0]' for '{read}.T[0]'" if view.group(1) == ".T" else ""
            fix = (f"'{read}{view.group(1)}' is a view of '{read}', which the update changes: update '{read}' "
                   f"through a subscript of its own ('{read}[...] {op}= ...'{example}), or write '{read} = ...' "
                   "with the new values")
        else:  # S[i] op= e: S[i] may be a view, so S's memory changes under what shares it
            fix = f"make '{read}' a copy where it is assigned ('.copy()')"
        return (f"'{written} {op}= ...' updates '{written}' in place, and '{read}', which shares memory with "
                f"it{where}, is read {after}; {fix}")
    return (f"in-place update of '{written}', which shares memory with '{read}'{where}, and '{read}' is "
            f"read {after}; {fix}")
