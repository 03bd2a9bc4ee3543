"""Lists passed to ufuncs: a ufunc (its ``reduce`` and ``accumulate`` too, or ``np.clip``,
``np.average``) takes a list or tuple as the array ``np.asarray`` makes of it, and so does srcad,
explicitly, before both transforms.

A rule of a ufunc computes with its operands and their derivatives (``x > y``, ``t * 2``),
which must be arrays: on a list, ``>`` fails and ``* 2`` repeats the list. After this pass a
container that carries derivatives reaches a ufunc only through ``_array = np.asarray(L)``,
whose rules lay the derivative out like the list again.

>>> import numpy as np
>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> from srcad.passes.normalize import normalize
>>> from srcad.passes.activity import activity
>>> def f(x):
...     acc = [x, x * 2.0]
...     return np.sum(np.maximum(acc, 0.5))
>>> src = capture(f)
>>> node = activity(normalize(resolve_calls(src.node, src), src), src, ("x",))
>>> print(A.to_source(ufunc_arrays(node, lambda name, obj: name)).strip().splitlines()[3:5])
['    acc_array1 = np.asarray(acc)', '    _t2 = np.maximum(acc_array1, 0.5)']
"""
import gast
import numpy as np

from .. import astutil as A
from .callees import Callee

#: NumPy functions that are not ufuncs but, like them, start with ``np.asarray`` of each
#: operand and have rules that compute with operands or derivatives
ARRAY_FUNCTIONS = (np.clip, np.average)


def ufunc_arrays(node, ref):
    """Pass each container that carries derivatives to a ufunc as ``np.asarray`` of it (a new
    active variable); ``ref(name, obj)`` names an object in generated code."""
    containers, active, varied = A.anno(node, "containers"), A.anno(node, "active"), A.anno(node, "varied")
    namer = A.anno(node, "namer")
    for block in _blocks(node):
        out = []
        for s in block:
            call = s.value if isinstance(s, (gast.Assign, gast.Expr)) else None
            callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
            if callee is not None and callee.kind == "object" and _takes_arrays(callee.obj):
                for i, a in enumerate(call.args):
                    if isinstance(a, gast.Name) and a.id in containers and a.id in varied:
                        array = namer.fresh(a.id + "_array")
                        func = gast.Attribute(value=A.load(ref("np", np)), attr="asarray", ctx=gast.Load())
                        as_array = gast.Call(func=func, args=[A.load(a.id)], keywords=[])
                        A.set_anno(as_array, "callee", Callee("object", obj=np.asarray, name="np.asarray"))
                        new = gast.copy_location(A.assign(array, as_array), s)
                        if A.anno(s, "origin") is not None:
                            A.set_anno(new, "origin", A.anno(s, "origin"))
                        out.append(new)
                        call.args[i] = A.load(array)
                        varied.add(array)
                        if a.id in active:
                            active.add(array)
            out.append(s)
        block[:] = out
    return node


def _blocks(node):
    """Every statement list in ``node``: the body and those of its ifs and loops."""
    todo = [node.body]
    while todo:
        block = todo.pop()
        yield block
        for s in block:
            if isinstance(s, (gast.If, gast.For, gast.While)):
                todo.extend(b for b in (s.body, s.orelse) if b)


def _takes_arrays(obj):
    owner = getattr(obj, "__self__", None)  # np.maximum.reduce([a, b, c]) reduces the array of the list
    return (isinstance(obj, np.ufunc) or any(obj is f for f in ARRAY_FUNCTIONS)
            or isinstance(owner, np.ufunc) and (obj == owner.reduce or obj == owner.accumulate))
