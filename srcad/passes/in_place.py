"""Augmented assignments whose in-place update cannot fail, known from the shapes.

``z op= e`` is normalised to ``t = z op e`` and ``z = in_place_result(t, z)``: where ``z`` is
an array, NumPy updates it in place, keeping its shape and dtype or raising, and
``runtime.in_place_result`` does the same when the code runs. Where shape inference knows that
``t`` has ``z``'s shape and dtype (or that ``z`` is a Python number, which is rebound), the
check can neither fail nor cast, and the call is dropped.

>>> import gast, numpy as np
>>> from srcad import astutil as A, runtime
>>> from srcad.passes.callees import Callee
>>> from srcad.passes.shape_values import Spec
>>> fn = gast.parse("def f(z, e):\\n    t = z + e\\n    z = in_place_result(t, z)\\n    return z").body[0]
>>> call = fn.body[1].value
>>> _ = A.set_anno(call, "callee", Callee("object", obj=runtime.in_place_result, name="in_place_result"))
>>> _ = A.set_anno(fn, "specs", {"z": Spec((3,), np.float64), "t": Spec((3,), np.float64)})
>>> print(A.to_source(fold_in_place_checks(fn)).strip())
def f(z, e):
    t = z + e
    z = t
    return z
"""
import gast

from .. import astutil as A
from .. import runtime
from ..naming import BUILTIN
from .callees import Callee


def in_place_check(new, old):
    """The call ``in_place_result(new, old)`` that ``normalize`` makes of ``old op= e``, ``new``
    being ``old op e`` (``runtime.in_place_result``: an array keeps its shape and dtype, or NumPy's
    error)."""
    func = A.set_anno(A.load("in_place_result"), BUILTIN, ("in_place_result", runtime.in_place_result))
    call = gast.Call(func=func, args=[new, old], keywords=[])
    return A.set_anno(call, "callee", Callee("object", obj=runtime.in_place_result, name="in_place_result"))


def fold_in_place_checks(node):
    """Replace, in ``node`` (annotated ``"specs"`` by ``infer_shapes``), each
    ``x = in_place_result(new, old)`` that cannot fail or cast by ``x = new`` (and a temporary
    ``x`` that only the next statement reads, ``z = x``, by ``z = new``); returns ``node``."""
    specs = A.anno(node, "specs") or {}
    reads = {}
    for n in A.walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            reads[n.id] = reads.get(n.id, 0) + 1
    for block in A.blocks(node.body):
        dropped = set()
        for k, s in enumerate(block):
            if not _needless_check(s, specs):
                continue
            s.value = A.load(s.value.args[0].id)
            after = block[k + 1] if k + 1 < len(block) else None
            if (isinstance(after, gast.Assign) and isinstance(after.value, gast.Name)
                    and after.value.id == s.targets[0].id and reads.get(after.value.id) == 1):
                after.value = s.value
                dropped.add(id(s))
        block[:] = [s for s in block if id(s) not in dropped]
    return node


def _needless_check(s, specs):
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.Call) and len(s.value.args) == 2
            and all(isinstance(a, gast.Name) for a in s.value.args)):
        return False
    callee = A.anno(s.value, "callee")
    if callee is None or callee.kind != "object" or callee.obj is not runtime.in_place_result:
        return False
    new, old = (specs.get(a.id) for a in s.value.args)
    return old is not None and (old.python is not None
                                or new is not None and new.shape == old.shape and new.dtype == old.dtype)
