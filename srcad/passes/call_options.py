"""What a library call's options ask of the memory analysis (``passes.memory``): which
argument binds a parameter (``call_argument``), a write through ``out=``, a result that may
be an argument itself (``copy=False``), an argument used as scratch space (``overwrite_*``),
an object array (``dtype=object``), and whether a ``*seq`` or ``**mapping`` srcad cannot read
could fill such an option.

>>> import gast, numpy as np
>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> def f(x, a):
...     return np.cumsum(x, 0, None, a)
>>> src = capture(f)
>>> call = resolve_calls(src.node, src).body[0].value
>>> out_argument(call).id
'a'
"""
import builtins
import inspect

import gast
import numpy as np

from .. import astutil as A
from .fresh import effect_call, is_in, is_ufunc, of_a_library


def _parameter_position(call, name):
    """The index among ``call``'s positional arguments of the function's parameter ``name``
    (``out``, ``copy``), or None where it cannot be passed by position or is not known."""
    callee = A.anno(call, "callee")
    if callee.kind == "object" and is_ufunc(callee.obj):
        return callee.obj.nin if name == "out" else None
    names = _passed_by_position(callee)
    return names.index(name) if names and name in names else None


def _passed_by_position(callee):
    """The names of the parameters a call of ``callee`` fills by position, in order (a
    method's after its receiver), or None where not known."""
    if callee.kind == "object":  # ([] for only *args and keyword-only ones: np.einsum(*operands, out=None))
        names = _positional_names(callee.obj)
        return names or _FUNCTION_PARAMETERS.get(id(callee.obj), names)
    if callee.kind == "method":  # x.cumsum(axis, dtype, out) binds like np.cumsum(x, axis, dtype, out)
        names = (_METHOD_PARAMETERS.get(callee.name) or _positional_names(getattr(np.ndarray, callee.name, None))
                 or _positional_names(getattr(np, callee.name, None)))  # (self or the array, ...)
        return names[1:] if names else None
    return None


# Builtins whose positional parameters all take items (Python publishes no signature for them).
_ITEMS_ONLY = {builtins.zip, builtins.max, builtins.min, builtins.range}


def spread_reaches_memory(callee, position):
    """Could a ``*seq`` at ``position`` among the arguments of a library's ``callee`` fill a
    parameter through which the call writes into or returns what it is given (``out``,
    ``copy``, ``overwrite_a``), or the value a call made for its effect changes? Yes for a
    ufunc (``np.add(a, b, *rest)``: ``out`` by position), and wherever the parameters are not
    known: only the allowlisted, and those whose parameters say so, are passed."""
    if effect_call(callee) or callee.kind == "object" and is_ufunc(callee.obj):
        return True
    if callee.kind == "object" and is_in(callee.obj, _ITEMS_ONLY):
        return False
    names = _passed_by_position(callee)
    return names is None or any(n in ("out", "copy") or n.startswith("overwrite_") for n in names[position:])


def mapping_reaches_memory(callee):
    """Could a ``**mapping`` given to a library's ``callee`` fill such a parameter? Not where all
    its parameters are known (no ``**kwargs``) and none is ``out``, ``copy`` or ``overwrite_*``:
    a key naming no parameter raises ``TypeError``, as in Python (``np.zeros(2, **options)``)."""
    if effect_call(callee) or callee.kind != "object" or is_ufunc(callee.obj):
        return True
    names = _KEYWORD_PARAMETERS.get(id(callee.obj))
    if names is None:
        try:
            params = inspect.signature(callee.obj).parameters.values()
        except (TypeError, ValueError):
            return True
        if any(p.kind == p.VAR_KEYWORD for p in params):
            return True
        names = [p.name for p in params]
    return any(n in ("out", "copy") or n.startswith("overwrite_") for n in names)


# NumPy's functions and ndarray methods written in C whose parameters older NumPy does not
# publish (np.astype's copy= is keyword-only, the method's is not): the ones passed by position
_FUNCTION_PARAMETERS = {id(np.array): ("object", "dtype"), id(np.asarray): ("a", "dtype", "order"),
                        id(np.asanyarray): ("a", "dtype", "order"), id(np.ascontiguousarray): ("a", "dtype"),
                        id(np.asfortranarray): ("a", "dtype"), id(np.zeros): ("shape", "dtype", "order"),
                        id(np.empty): ("shape", "dtype", "order")}
_KEYWORD_PARAMETERS = {id(np.zeros): ("shape", "dtype", "order", "device", "like"),
                       id(np.empty): ("shape", "dtype", "order", "device", "like")}
_METHOD_PARAMETERS = {"astype": ("self", "dtype", "order", "casting", "subok", "copy"), "view": ("self", "dtype", "type")}


def _positional_names(fn):
    """The names of ``fn``'s parameters that can be passed by position, in order, or None
    (memoised for libraries' functions: ``inspect.signature`` costs ~30 µs, and the memory
    analysis asks per call site)."""
    known = _POSITIONAL.get(id(fn))
    if known is not None and known[0] is fn:
        return known[1]
    try:
        params = inspect.signature(fn).parameters.values()  # (a NumPy function: its implementation's)
        names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        names = None
    if of_a_library(fn):  # a library's, kept; never a function of yours
        _POSITIONAL[id(fn)] = (fn, names)  # (the object kept: its id is not reused while the entry lives)
    return names


_POSITIONAL = {}


def call_argument(call, name):
    """What ``call`` passes for the parameter ``name``, by keyword or by position, or None."""
    for k in call.keywords:
        if k.arg == name:
            return k.value
    position = _parameter_position(call, name)
    if position is not None and position >= 0 and not any(isinstance(a, gast.Starred) for a in call.args):
        if len(call.args) > position:
            return call.args[position]
    return None


def out_argument(call):
    """The ``out`` argument a call writes into (``out=a`` or passed by position), or None; for a
    library's function also its ``output`` given an array (SciPy's ``ndimage``: ``output=buf``;
    ``output=np.float32`` written in the call names a type: ``passes.normalize_calls``). None for
    a function of yours srcad reads: its ``out`` is a parameter like any other, and what it
    changes in what it is given is its summary's."""
    from .call_binding import user_function_call  # (call_binding reads the memory analysis, which reads this)

    callee = A.anno(call, "callee")
    if user_function_call(callee) and not of_a_library(callee.obj):
        return None
    arg = call_argument(call, "out")
    if arg is None and _library_call(call) and not A.anno(call, "output_is_a_type"):
        arg = call_argument(call, "output")
        targets = arg.elts if isinstance(arg, gast.Tuple) else [arg]
        arg = arg if all(isinstance(t, (gast.Name, gast.Subscript)) for t in targets) else None
    return None if arg is None or isinstance(arg, gast.Constant) and arg.value is None else arg


def _library_call(call):
    callee = A.anno(call, "callee")
    return callee is not None and callee.kind == "object" and of_a_library(callee.obj)


def overwritten_arguments(call):
    """``[(option, argument)]``: the arguments ``call`` asks a library function to use as
    scratch space, by keyword or by position, with anything but a literal False or None
    (``scipy.linalg.solve(a, b, overwrite_b=True)``: ``("overwrite_b", b)``;
    ``np.median(a, overwrite_input=True)``: ``a``). Its result assigned or not, such a call
    changes them in place. Every argument where the one an option names is not found; ``[]``
    where the call overwrites nothing."""
    callee = A.anno(call, "callee")
    if not _library_call(call):
        return []  # (what a function of yours changes is its summary's)
    names = _passed_by_position(callee) or []
    spread = any(isinstance(a, gast.Starred) for a in call.args)
    passed = dict(zip(names, call.args)) if not spread else {}
    passed.update((k.arg, k.value) for k in call.keywords if k.arg is not None)
    found = []
    for option, value in passed.items():
        if option.startswith("overwrite_") and not (isinstance(value, gast.Constant) and value.value in (False, None)):
            scratch = names[0] if option == "overwrite_input" and names else option[len("overwrite_"):]
            if scratch not in passed:
                return [(option, a) for a in list(call.args) + [k.value for k in call.keywords]]
            found.append((option, passed[scratch]))
    return found


def copies(call):
    """False if the call may return an argument itself: asked not to copy (``copy=`` anything
    but a literal True, by keyword or by position: ``np.nan_to_num(y, False)`` returns ``y``),
    or builtin ``sum`` given a start that is not a literal (``sum([], start)`` is ``start``)."""
    callee = A.anno(call, "callee")
    if callee is not None and callee.kind == "object" and callee.obj is builtins.sum:
        return not any(isinstance(a, gast.Starred) for a in call.args) and all(
            isinstance(a, gast.Constant) for a in call.args[1:] + [k.value for k in call.keywords])
    arg = call_argument(call, "copy")
    return arg is None or isinstance(arg, gast.Constant) and arg.value is True


def makes_object_array(call):
    """A NumPy call given ``dtype=object`` (or ``"O"``, ``np.object_``) anywhere in its
    arguments, or ``np.full`` with the fill value None."""
    callee = A.anno(call, "callee")
    obj = callee.obj if callee is not None and callee.kind == "object" else None
    if not (getattr(obj, "__module__", None) or "").startswith("numpy") and not isinstance(obj, np.ufunc):
        return False
    for arg in list(call.args) + [k.value for k in call.keywords]:
        if (isinstance(arg, gast.Name) and arg.id == "object") or (
                isinstance(arg, gast.Attribute) and arg.attr == "object_") or (
                isinstance(arg, gast.Constant) and arg.value in ("O", "object", "|O")):
            return True
    return obj is np.full and len(call.args) > 1 and isinstance(call.args[1], gast.Constant) and call.args[1].value is None
