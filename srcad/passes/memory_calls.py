"""What a call of a function of yours does to memory, as the reverse and forward passes ask
(``passes.reverse_calls``): the names given to it that it updates in place, the globals it
updates, what it stores by an attribute, and whether it changes nothing outside. Read from its
summary (``memory_summaries``).
"""
import inspect

import gast
import numpy as np

from .. import astutil as A
from .memory import _summary_flow
from .memory_summaries import helper_summary
from .memory_values import bind_call


def updated_by_helper(call):
    """The names given to ``call``, of a function of yours srcad reads, that it updates in place."""
    callee = A.anno(call, "callee")
    summary = helper_summary(callee.obj, _summary_flow) if callee is not None and callee.kind == "object" else None
    bound = (bind_call(callee.obj, call) or {}) if summary is not None else {}
    return sorted({a.id for p in (summary or ((), ()))[1] for a in bound.get(p, ()) if isinstance(a, gast.Name)})


def globals_updated_by_helper(call):
    """What outside the call ``call``'s function of yours updates in place, where srcad reads
    it: the globals (``CACHE.append(a)``), and the defaults of the parameters the call leaves
    out (``defaults_updated_by_helper``). Each as the words naming it."""
    callee = A.anno(call, "callee")
    summary = helper_summary(callee.obj, _summary_flow) if callee is not None and callee.kind == "object" else None
    if summary is None:
        return []
    return ([f"'{name}', a global" for name in summary[3]]
            + [f"the default of its parameter '{p}'" for p in defaults_updated_by_helper(call)])


def defaults_updated_by_helper(call):
    """The parameters ``call`` leaves out whose default objects its function of yours updates
    in place (``def log(y, hist=HISTORY): hist.append(y)``): objects that outlive the call."""
    callee = A.anno(call, "callee")
    summary = helper_summary(callee.obj, _summary_flow) if callee is not None and callee.kind == "object" else None
    bound = bind_call(callee.obj, call) if summary is not None else None
    if bound is None:
        return []
    defaults = _defaults(callee.obj)
    # ``acc *= 2`` on a number (a string, a tuple of them) binds a new object: the default stays as it was
    return sorted(p for p in summary[1]
                  if p not in bound and not (p in defaults and cannot_change_in_place(defaults[p])))


def _defaults(fn):
    """parameter -> default object, as ``bind_call`` reads the signature (a partial's keywords too)."""
    try:
        parameters = inspect.signature(getattr(fn, "__srcad_function__", fn), follow_wrapped=False).parameters
    except (TypeError, ValueError):
        return {}
    return {name: p.default for name, p in parameters.items() if p.default is not inspect.Parameter.empty}


def cannot_change_in_place(value):
    """Can no update in place change ``value``? A number, string, bytes or ``None`` (NumPy's number
    and bool scalars too, not a 0-d array nor a structured np.void, a view), or a tuple of them."""
    if type(value) is tuple:
        return all(cannot_change_in_place(v) for v in value)
    return (type(value) in (int, float, complex, bool, str, bytes, type(None))
            or isinstance(value, (np.number, np.bool_)))


def changes_nothing_outside(call):
    """Does ``call``'s function of yours, which srcad reads, change nothing it is given, no
    global and no object's attribute (read as an update, as ``attributes_stored_by_helper``
    does)? Then a call of it for its effect (a check, a print) runs as written."""
    callee = A.anno(call, "callee")
    if callee is None or callee.kind != "object":
        return False
    summary = helper_summary(callee.obj, _summary_flow, attributes=True)
    return summary is not None and not summary[1] and not summary[3]


def attributes_stored_by_helper(call):
    """The globals, and the names given to ``call``, that its function of yours stores into by
    an attribute (``STATE.last = y``, ``obj.last = y``, ``STATE.last += y``), itself or through
    a function it calls, beyond what it updates otherwise."""
    callee = A.anno(call, "callee")
    if callee is None or callee.kind != "object":
        return []
    stored = helper_summary(callee.obj, _summary_flow, attributes=True)
    if stored is None:
        return []
    plain = helper_summary(callee.obj, _summary_flow) or (None, set(), None, [])
    bound = bind_call(callee.obj, call) or {}
    given = sorted({a.id for p in stored[1] - plain[1] for a in bound.get(p, ()) if isinstance(a, gast.Name)})
    return [g for g in stored[3] if g not in plain[3]] + given
