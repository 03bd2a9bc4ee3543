"""Fast forms: a NumPy call whose Python overhead outweighs its work, made by srcad's equal helper.

``np.pad`` is written in Python: padding a 126×126 array with one zero costs 28 µs, a new
zero array and one slice assignment 6 µs, and a stencil pads once per step. Guarantee:
afterwards every call of a function in ``FAST_FORMS`` calls its form in ``srcad.runtime``
instead, which returns the same array for every argument (the NumPy function's own call
outside its short path) and has the same rules, shape rule and freshness, so code
differentiated again is differentiated alike. Only the generated code changes: the user's
function still calls NumPy.

>>> import gast, numpy as np
>>> from srcad import astutil as A
>>> from srcad.passes.callees import Callee
>>> fn = gast.parse('''
... def f_adjoint(x, v=None):
...     y = np.pad(x, 1)
...     return y
... ''').body[0]
>>> _ = A.set_anno(fn.body[0].value, "callee", Callee("object", obj=np.pad, name="np.pad"))
>>> print(A.to_source(fast_forms(fn, lambda name, obj: name)).strip())
def f_adjoint(x, v=None):
    y = padded(x, 1)
    return y
"""
import gast
import numpy as np

from .. import astutil as A
from .. import runtime
from .callees import Callee

FAST_FORMS = {np.pad: ("padded", runtime.padded)}


def fast_forms(node, ref):
    """Call each function of ``FAST_FORMS`` in ``node`` through its fast form; ``ref(name,
    obj)`` names an object in generated code. Returns ``node``."""
    for call in A.walk(node):
        callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
        if callee is None or callee.kind != "object":
            continue
        form = next((f for fn, f in FAST_FORMS.items() if callee.obj is fn), None)
        if form is not None:
            name, obj = form
            call.func = A.load(ref(name, obj))
            A.set_anno(call, "callee", Callee("object", obj=obj, name=name))
    return node
