"""Calls made for their effect that srcad refuses given values carrying derivatives, in both
modes: what such a call changes (an argument in place, a global, an attribute, a default
object every call shares) would carry no derivative, or srcad cannot see it. Each refusal
names what the call changes, where srcad knows it, and what to write instead."""
import gast

from .. import astutil as A
from .call_binding import user_function_call
from .effect_calls import assignment_instead
from .fresh import effect_targets, is_ufunc, new_array_call, stores_in_a_global
from .memory_calls import (attributes_stored_by_helper, defaults_updated_by_helper, globals_updated_by_helper,
                           updated_by_helper)


def refuse_effect_call(source, call, touched, node):
    """Refuse ``call``, made for its effect, given values that carry derivatives (``touched``,
    their names), in both modes: srcad cannot see what the call changes. The message names
    what the call changes where srcad knows it (an in-place method's receiver, ``np.copyto``'s
    first argument, what a helper of yours updates) and what carries a derivative."""
    callee = A.anno(call, "callee")
    what = f".{callee.name}()" if callee.kind == "method" else f"{callee.name}(...)"
    named = [t for t in touched if not t.startswith("_")]  # not a temporary of srcad's
    refuse_storing_in_a_global(source, callee, what, named, node)
    by_helper = [] if effect_targets(gast.Expr(value=call)) else updated_by_helper(call)  # a function of yours
    changed = [n for n in sorted(effect_targets(gast.Expr(value=call))) or by_helper if not n.startswith("_")]
    if not changed and _computes_only(callee, call):
        raise source.syntax_error(
            f"the result of {what} is not used: the call changes none of its arguments, so this line computes a value "
            f"and drops it; assign it ('y = {what}') or remove the line", node)
    target = f"on '{changed[0]}' " if changed else ""
    given = (f"given {', '.join(repr(n) for n in named)}, which carr{'y' if len(named) > 1 else 'ies'} a derivative"
             if named else "given a value carrying a derivative")
    if not changed:
        advice = f"make {callee.name} return what it computes and assign that instead of changing an argument in place"
    elif by_helper:
        text = A.to_source(call).strip()
        call_text = text if not any(n.startswith("_") for n in A.names_read(call)) else f"{callee.name}(...)"
        advice = (f"make {callee.name} return the new value of '{changed[0]}' and assign it "
                  f"('{changed[0]} = {call_text}')")
    else:
        advice = assignment_instead(call, changed[0])
    raise source.syntax_error(
        f"srcad does not differentiate the call {what} made for its effect {target}{given}: it cannot see "
        f"what the call changes; {advice}, or wrap the argument in srcad.stop_gradient if no derivative "
        "should flow", node)


def _computes_only(callee, call):
    """A call that changes none of its arguments: a ufunc, or a function whose result is always
    new memory, without ``out=``."""
    return (callee.kind == "object" and (is_ufunc(callee.obj) or new_array_call(callee.obj, call))
            and not any(k.arg == "out" for k in call.keywords))


def refuse_updating_a_default(source, call, node):
    """Refuse a call srcad compiles apart (its result carries a derivative) of a function of
    yours that leaves out a parameter whose default object it updates in place (Python's one
    default, shared by every call): the compiled function updates a copy. (Run as written,
    ``refuse_helper_storing_outside`` decides.)"""
    callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
    if callee is None or not user_function_call(callee):
        return
    defaults = defaults_updated_by_helper(call)
    if defaults:
        raise source.syntax_error(
            f"{callee.name}(...) updates in place the default of its parameter '{defaults[0]}', an object every "
            "call shares, which srcad would not update as Python does: give the function a fresh one "
            f"('{defaults[0]}=None' and make it in the function), or pass it explicitly", node)


def refuse_helper_storing_outside(source, call, varied, node):
    """Refuse ``a = memo(x)`` whose result needs no derivative (so srcad runs the call as
    written) where ``memo`` is a function of yours given a value carrying one (``varied``: the
    names that carry one) that stores what it computes in a global (``CACHE.append(a)``): read
    back, it would carry no derivative (its result is read instead, differentiated, where needed)."""
    callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
    if callee is None:
        return
    operands = [a.value if isinstance(a, gast.Starred) else a for a in call.args] + [k.value for k in call.keywords]
    named = sorted({n.id for o in operands for n in gast.walk(o) if isinstance(n, gast.Name)} & varied)
    if named and A.anno(call, "changes_arguments"):  # (``memory``: r = heapq.heappush(L, v) is the statement)
        refuse_effect_call(source, call, named, node)
    if not user_function_call(callee):
        return
    outside = globals_updated_by_helper(call) if named else []
    if outside:
        where = f"{outside[0]}, and srcad reads that as a constant"
    else:
        attributes = attributes_stored_by_helper(call) if named else []
        if not attributes:
            return
        owner = f"'{attributes[0]}'" if attributes[0] in A.names_read(call) else f"'{attributes[0]}', a global,"
        where = f"an attribute of {owner} and srcad runs the call as written (its result needs no derivative)"
    given = [n for n in named if not n.startswith("_")]
    which = f"'{given[0]}', which carries a derivative" if given else "a value carrying a derivative"
    raise source.syntax_error(
        f"{callee.name}(...), given {which}, stores what it computes in {where}, so whatever reads it back would "
        f"carry no derivative: return the value from {callee.name} and use that, or store srcad.stop_gradient(...) "
        "of it (a history, a log)", node)


def refuse_storing_in_a_global(source, callee, what, named, node):
    """Refuse ``HISTORY.append(y)`` on a list (dict, set) of the module with ``y`` carrying a
    derivative, saying what to do: a global is read as a constant, so whatever reads it back
    would carry none."""
    if callee.kind == "object" and stores_in_a_global(callee.obj):
        which = f"'{named[0]}', which carries a derivative," if named else "a value carrying a derivative"
        raise source.syntax_error(
            f"srcad does not differentiate the call {what}: it stores {which} in a list or dict of your "
            "module, and srcad reads a global as a constant, so whatever reads it back would carry no "
            f"derivative. To keep the value (a history, a log), store srcad.stop_gradient("
            f"{named[0] if named else 'value'}); to compute with it, keep the list in the function", node)
