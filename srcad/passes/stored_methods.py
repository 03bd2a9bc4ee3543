"""Bound methods kept as values: ``APPLY = H.apply`` at module level then ``APPLY(x)``, or a
dispatch table's item ``{"a": H.apply}``. Python calls such a value ``m`` as
``m.__func__(m.__self__, x)``: the function it was bound from, on the object it holds.

Guarantee: a call of a stored bound method of your code (its function a plain Python function,
not installed code, without a rule) is rewritten as that call, the function inlined for the
class of the object it holds, as ``model.loss(x)`` is (``method_calls.bound_method_call``): the
function and the object's class are guarded (another method or object of another class bound to
the name compiles anew), the object itself is read when the code runs. Any other bound method
keeps the call as written (a rule for it, or for its library's function, still applies).

>>> class Layer:
...     def apply(self, x):
...         return 2.0 * x
>>> APPLY = Layer().apply
>>> stored_method(APPLY) is Layer.apply, receiver_class(APPLY) is Layer, stored_method(len)
(True, True, None)
"""
import types

import gast

from .. import astutil as A
from ..code_reading import installed_file
from .callees import Callee, lookup_path, path_expr, readable
from .method_calls import ClassItself, has_rule


def stored_method(obj):
    """The function srcad reads for a call of ``obj``, a bound method of your code kept as a
    value (module docstring); else None."""
    if not isinstance(obj, types.MethodType) or not isinstance(obj.__func__, types.FunctionType):
        return None
    function = obj.__func__
    if has_rule(obj) or has_rule(function) or installed_file(function.__code__.co_filename) \
            or isinstance(obj.__self__, types.ModuleType):
        return None
    return function


def receiver_class(obj):
    """What the function of the bound method ``obj`` is inlined for: its object's class, or the
    class itself that a class method is bound to."""
    owner = obj.__self__
    return ClassItself(owner) if isinstance(owner, type) else type(owner)


def global_stored_method(parts, source):
    """For a global (or closure) bound method ``APPLY`` (the dotted name ``parts``) that
    ``stored_method`` reads: ``(function, APPLY.__func__, APPLY.__self__, cls)``, the function
    and expressions, so that ``APPLY(x)`` is ``APPLY.__func__(APPLY.__self__, x)``, inlined for
    ``cls`` (guarded on the function and the object's class); else None."""
    try:
        obj = lookup_path(parts, source)
        if stored_method(obj) is None:
            return None
        function = lookup_path(parts + ["__func__"], source)
        lookup_path(parts + ["__self__", "__class__"], source)  # (compiled for that class)
    except (KeyError, AttributeError):  # (an object whose class reads its attributes itself: a tuple's)
        return None
    return readable(function), path_expr(parts + ["__func__"]), path_expr(parts + ["__self__"]), receiver_class(obj)


def stored_method_call(call, parts, source):
    """``APPLY(x)`` of a ``global_stored_method`` rewritten as ``APPLY.__func__(APPLY.__self__, x)``;
    False for any other call."""
    found = global_stored_method(parts, source)
    if found is None:
        return False
    function, func, receiver, cls = found
    _bind(call, func, receiver, function, ".".join(parts), cls)
    return True


def table_method_call(call, method, obj, name):
    """Make ``call`` the call of the bound method ``obj`` (that ``stored_method`` reads), held by
    the expression ``method``, as ``method.__func__(method.__self__, ...)``."""
    func = gast.Attribute(value=method, attr="__func__", ctx=gast.Load())
    receiver = gast.Attribute(value=A.deepcopy(method), attr="__self__", ctx=gast.Load())
    _bind(call, func, receiver, readable(stored_method(obj)), name, receiver_class(obj))


def _bind(call, func, receiver, function, name, cls):
    call.func = gast.copy_location(func, call.func)
    call.args = [receiver] + call.args
    A.set_anno(call, "callee", Callee("object", obj=function, name=name))
    A.set_anno(call, "receiver_class", cls)
