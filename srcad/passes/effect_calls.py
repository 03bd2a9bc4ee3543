"""Calls made for their effect, wherever ``normalize`` meets them: a call that changes its
receiver or an argument in place (``fresh.effect_call``) is a statement of its own.

Guarantee: afterwards such a call is never part of an expression. One whose result is None
(``r = x.sort()``, ``c and L.append(v)``, an append in a comprehension) is hoisted to a
statement where Python evaluates it, its value ``None``: it is then differentiated, or
refused, exactly as that statement. ``v = d.setdefault(k, e)`` becomes the call and then
``d[k]``. An update spelled as a special method (``z.__setitem__(i, v)``) and an effect inside
an ``assert`` (which runs in the primal only) are refused.

>>> import gast
>>> from srcad import astutil as A
>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> from srcad.passes.normalize import normalize
>>> def f(x):
...     L = []
...     r = L.append(x)
...     return L[0]
>>> src = capture(f)
>>> print(A.to_source(normalize(resolve_calls(src.node, src), src)).strip())
def f(x):
    L = []
    L.append(x)
    r = None
    _t1 = L[0]
    return _t1
"""
import gast

from .. import astutil as A
from .fresh import effect_call


def effect_value(norm, e, callee, out):
    """The value of the call ``e`` (of ``callee``) where it is made for its effect, its
    statements emitted into ``out`` by ``norm`` (the normaliser); None if it is not one."""
    effect = effect_call(callee)
    if effect == "special":
        raise norm.error(f"srcad does not differentiate an update written as a call of {callee.name or 'a special method'}; "
                         "write it as an assignment (z[i] = v, z += v)", e)
    if A.anno(e, "for_effect"):  # a statement of its own already
        return None
    if effect == "none":
        norm.stmt_Expr(gast.copy_location(gast.Expr(value=e), e), out)
        return A.const(None)
    if effect == "value" and callee.name == "setdefault" and e.args and isinstance(e.func, gast.Attribute):
        key, receiver = norm.atom(e.args[0], out), norm.atom(e.func.value, out)
        e = gast.Call(func=gast.Attribute(value=receiver, attr=e.func.attr, ctx=gast.Load()),
                      args=[key] + e.args[1:], keywords=e.keywords)
        A.set_anno(e, "callee", callee)
        norm.stmt_Expr(gast.Expr(value=e), out)
        return gast.Subscript(value=A.deepcopy(receiver), slice=A.deepcopy(key), ctx=gast.Load())
    return None


def check_assert(norm, s):
    """Refuse an ``assert`` that calls for an effect: it runs in the primal only."""
    for call in A.walk(s):
        callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
        if callee is not None and effect_call(callee):
            raise norm.error("srcad does not differentiate a call made for its effect inside an assert (it "
                             "runs in the primal only); make the call a statement of its own", call)
