"""What the user's own functions return, for one shape inference (``passes.shapes``): each
function's source is read and put in normal form once, and its result worked out once for
each set of known arguments. Kept for one inference only, so a source file edited between
two first uses is read again (and ``check_source_is_code`` refuses it there).

>>> import numpy as np
>>> from srcad.passes.shape_values import Spec, UNKNOWN
>>> def twice(z):
...     return z * 2.0
>>> reads = []
>>> results = HelperResults(lambda node, known: reads.append(node.name) or known["z"])
>>> results.returned(twice, {"z": Spec((3,), np.float64)}), results.returned(twice, {"z": Spec((3,), np.float64)})
(Spec((3,), float64), Spec((3,), float64))
>>> reads
['twice']
"""
from .shape_values import UNKNOWN, Spec, freeze


class HelperResults:
    """``returned(fn, known)``: what ``read(node, known)`` says the normal form ``node`` of
    ``fn`` returns given abstract parameters ``known`` (unknown where srcad cannot read it)."""

    def __init__(self, read):
        self.read = read
        self.trees = {}  # function -> its normal form, or None where it cannot be read
        self.results = {}

    def returned(self, fn, known):
        key = (fn, tuple((name, freeze(v) if isinstance(v, Spec) else ("value", repr(v)))
                         for name, v in sorted(known.items())))
        if key not in self.results:
            self.results[key] = UNKNOWN  # while it is being read
            if fn not in self.trees:
                self.trees[fn] = _normal_form(fn)
            node = self.trees[fn]  # (read, never changed, by ``read``)
            if node is not None and [a.id for a in node.args.args] == list(known):
                self.results[key] = self.read(node, known)
        return self.results[key]


def _normal_form(fn):
    """``fn``'s source in A-normal form, or None where srcad cannot read it."""
    from ..errors import SrcadError
    from ..source_check import check_parameters, check_source_is_code
    from ..source import capture
    from .normalize import normalize
    from .resolve_calls import resolve_calls

    try:
        source = capture(getattr(fn, "__srcad_function__", fn))
        check_source_is_code(source)
        check_parameters(source)
        return normalize(resolve_calls(source.node, source), source)
    except (SrcadError, OSError, SyntaxError):  # the reverse pass says why, if it differentiates it
        return None
