r"""Which in-place updates a ``try`` body (with ``except``) may make: those of memory it made
itself. ``passes.statements`` refuses any other (an exception half-way would leave the memory
changed, with no record for the derivative of the handler's path).

A body's names are handed on only when it finishes, so what it made is read by no handler and
by nothing after the ``try`` if an exception stops it half-way: a list a comprehension fills, a
local array made by ``np.zeros`` and then filled. A name holds such memory from a statement
that makes it (``name = []``, ``{}``, a call returning new memory, ``passes.fresh``) on every
path up to the update, and not after it is bound to anything else.

>>> import gast
>>> from srcad.passes.callees import Callee
>>> body = gast.parse("a = []\nfor i in r:\n    a.append(i)\nx.append(1)").body
>>> for call in [n for n in gast.walk(gast.Module(body=body, type_ignores=[])) if isinstance(n, gast.Call)]:
...     _ = A.set_anno(call, "callee", Callee("method", name="append"))
>>> outside_update(body, set()).lineno
4
"""
import gast

from .. import astutil as A
from .call_options import copies, out_argument
from .fresh import MUTATING_METHODS, known_pure, returns_new_array


def outside_update(stmts, made):
    """The first statement of a try body that may update in place memory the body did not make
    (``made``: the names that hold memory it made, on every path to ``stmts``), or None. Memory
    the body made is read nowhere else if an exception stops it half-way: the body's names are
    handed on only when it finishes (``_lower_handlers``)."""
    for s in stmts:
        if isinstance(s, gast.If):
            found = outside_update(s.body, set(made)) or outside_update(s.orelse, set(made))
            if found:
                return found
            made &= _still_made(s.body, made) & _still_made(s.orelse, made)
        elif isinstance(s, (gast.For, gast.While)):  # an iteration starts from what the last one left
            made -= A.names_stored(s.target) if isinstance(s, gast.For) else set()
            made &= _still_made(s.body, made)
            found = outside_update(s.body, set(made)) or outside_update(s.orelse, set(made))
            if found:
                return found
        else:
            updated = _updated_name(s)
            if updated is not None and updated not in made:
                return s
            made -= A.names_stored(s)
            if _makes_memory(s):
                made.add(s.targets[0].id)
    return None


def _still_made(stmts, made):
    """The names of ``made`` that still hold memory the body made after ``stmts``, whichever
    path ran (bound again only to new memory, or not at all)."""
    rebound = set()
    for s in A.walk_statements(stmts):
        if isinstance(s, gast.For):
            rebound |= A.names_stored(s.target)
        elif not isinstance(s, (gast.If, gast.While)) and not _makes_memory(s):
            rebound |= A.names_stored(s)
    return made - rebound


def _makes_memory(s):
    """``name = []``, ``name = {}`` or ``name = f(...)`` of a function that returns new memory
    (and is not asked to return an argument or write into one)."""
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)):
        return False
    if isinstance(s.value, (gast.List, gast.Dict)):
        return True
    call = s.value if isinstance(s.value, gast.Call) else None
    callee = A.anno(call, "callee") if call is not None else None
    return (callee is not None and callee.kind == "object" and returns_new_array(callee.obj) and copies(call)
            and out_argument(call) is None)  # (np.array(x, copy=False) may be x; out=a is a)


def _updated_name(s):
    """The name whose memory the normalised statement ``s`` updates in place ("" for memory
    srcad cannot name: a call made for its effect), or None if it updates none."""
    call = s.value if isinstance(s, (gast.Expr, gast.Assign)) and isinstance(s.value, gast.Call) else None
    callee = A.anno(call, "callee") if call is not None else None
    if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript):
        return _name_of(s.targets[0].value)
    if A.anno(s, "in_place") is not None:
        return A.anno(s, "in_place")[0] or ""
    if callee is not None and callee.kind == "method" and callee.name in MUTATING_METHODS | {"append"}:
        return _name_of(call.func.value) if isinstance(call.func, gast.Attribute) else ""
    if (isinstance(s, gast.Expr) and callee is not None and callee.kind == "object"
            and not known_pure(callee.obj) and not callable(getattr(callee.obj, "__code__", None))):
        return ""
    return None


def _name_of(node):
    return node.id if isinstance(node, gast.Name) else ""
