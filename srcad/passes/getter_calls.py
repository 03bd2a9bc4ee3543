"""Getters of constant keys: ``operator.itemgetter(1, 0)`` and ``operator.attrgetter("a.b")``,
read as the reads they make, for ``resolve_calls`` and ``functional``.

Guarantee: a getter called where it is made on a name, ``itemgetter(1, 0)(p)`` or
``attrgetter("w")(obj)``, its keys literals, is replaced by the reads themselves, ``(p[1], p[0])``
and ``obj.w``, before the objects and lists the function makes are lowered (so an object read
by a getter is read by its attributes, as written out). The name is read once per key, as the
getter reads it, and nothing runs between; anything else is left as it is.

>>> from srcad.source import capture
>>> from srcad.astutil import to_source
>>> import operator
>>> def f(p):
...     return operator.itemgetter(1, 0)(p)
>>> src = capture(f)
>>> read_getter_calls(src.node, src)
>>> print(to_source(src.node).strip())
def f(p):
    return p[1], p[0]
"""
import operator

import gast

from .. import astutil as A
from .callees import Callee, dotted, local_names, lookup_path

GETTERS = (operator.itemgetter, operator.attrgetter)


def read_getter_calls(fn, source):
    """Replace in ``fn`` (in place) each getter called on a name where it is made."""
    _Reads(local_names(fn), source).visit(fn)


class _Reads(A.Transformer):
    """``read_getter_calls``' one pass (a class made once: ``A.Transformer`` keeps its visitors)."""

    def __init__(self, locals_, source):
        self.locals_, self.source = locals_, source

    def visit_Call(self, node):
        self.generic_visit(node)
        maker = node.func
        parts = dotted(maker.func) if isinstance(maker, gast.Call) else None
        if parts is None or parts[0] in self.locals_ or node.keywords or len(node.args) != 1:
            return node
        try:
            made_by = lookup_path(parts, self.source)
        except (KeyError, AttributeError):
            return node
        if made_by not in GETTERS:
            return node
        A.set_anno(maker, "callee", Callee("object", obj=made_by, name=".".join(parts)))
        return getter_read(maker, node.args) or node


def getter_read(fn, args):
    """``operator.itemgetter(1)`` applied to the name ``t`` as the read ``t[1]`` it makes
    (several keys: the tuple of reads), ``operator.attrgetter("a.b")`` as ``t.a.b``; None for any
    other function value. Only constant keys: the getter holds the keys it was made with."""
    callee = A.anno(fn, "callee") if isinstance(fn, gast.Call) else None
    if (callee is None or callee.kind != "object" or callee.obj not in GETTERS
            or fn.keywords or not fn.args or not all(isinstance(k, gast.Constant) for k in fn.args)
            or len(args) != 1 or not isinstance(args[0], gast.Name)):
        return None
    if callee.obj is operator.attrgetter and not all(isinstance(k.value, str) for k in fn.args):
        return None
    reads = []
    for key in fn.args:
        if callee.obj is operator.itemgetter:
            reads.append(gast.Subscript(value=A.load(args[0].id), slice=A.const(key.value), ctx=gast.Load()))
            continue
        read = A.load(args[0].id)
        for attr in key.value.split("."):
            read = gast.Attribute(value=read, attr=attr, ctx=gast.Load())
        reads.append(read)
    picked = reads[0] if len(reads) == 1 else gast.Tuple(elts=reads, ctx=gast.Load())
    return gast.copy_location(picked, fn)
