"""What forward mode (``passes/forward.py``) knows about code before transforming it: the
static state of each tangent, and the dataflow facts it needs where control flow joins
(which names a block reads before assigning them, assigns on every path, or updates in
place).
"""
import collections

import gast

from .. import astutil as A
from .callees import method_call
from .fresh import effect_targets

#: a tangent is *zero* (no variable exists), *owned* (a buffer only this variable refers to)
#: or *shared* (may alias the caller's tangent or another tangent: copied before an update)
ZERO, OWNED, SHARED = "zero", "owned", "shared"


def read_counts(node):
    return collections.Counter(n.id for n in gast.walk(node)
                               if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))


def read_before_assigned(stmts, assigned=frozenset()):
    """Names a block may read before assigning them (whose value comes from before the block)."""
    assigned, exposed = set(assigned), set()
    for s in stmts:
        if isinstance(s, gast.If):
            exposed |= A.names_read(s.test) - assigned
            body, orelse = read_before_assigned(s.body, assigned), read_before_assigned(s.orelse, assigned)
            exposed |= body | orelse
            assigned |= definitely_assigned(s.body) & definitely_assigned(s.orelse)
        elif isinstance(s, (gast.For, gast.While)):
            exposed |= A.names_read(s) - assigned
        else:
            exposed |= A.names_read(s) - assigned
            assigned |= A.names_stored(s)
    return exposed


def definitely_assigned(stmts):
    names = set()
    for s in stmts:
        if isinstance(s, gast.If):
            names |= definitely_assigned(s.body) & definitely_assigned(s.orelse)
        elif not isinstance(s, (gast.For, gast.While)):
            names |= A.names_stored(s)
    return names


def mutated_in_place(stmts):
    """Names updated in place: ``S[i] = e``, ``L.append(e)``, ``L.pop()``."""
    names = set()
    for s in gast.walk(gast.Module(body=stmts, type_ignores=[])):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript):
            names.add(s.targets[0].value.id)
        elif isinstance(s, (gast.Assign, gast.Expr)) and (method_call(s.value, "append")
                                                           or method_call(s.value, "pop")):
            names.add(s.value.func.value.id)
        elif isinstance(s, gast.Expr):  # w.sort(), np.copyto(w, ...): a parameter's is copied first
            names |= effect_targets(s)
    return names
