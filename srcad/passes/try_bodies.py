r"""Which in-place updates a ``try`` body (with ``except``) may make: those of memory it made
itself. ``passes.statements`` refuses any other (an exception half-way would leave the memory
changed, with no record for the derivative of the handler's path).

A body's names are handed on only when it finishes, so what it made is read by no handler and
by nothing after the ``try`` if an exception stops it half-way: a list a comprehension fills, a
local array made by ``np.zeros`` and then filled, a counter ``k = 0`` then ``k += 1``. A name
holds such memory from a statement that makes it (``name = []``, ``{}``, a tuple display, a
literal, a call returning new memory, ``passes.fresh``) or hands it on (``t = k``,
``normalize``'s ``k op= e`` of such a ``k``) on every path up to the update (loops to a
fixpoint), and not after it is bound to anything else. Items are not such memory: ``t[0] += 1``
of ``t = (x, y)`` updates ``x``.

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
from ..runtime_boundary import in_place_result
from .fresh import MUTATING_METHODS, known_pure, new_array_call


def outside_update(stmts, made):
    """The first statement of a try body that may update in place memory the body did not make
    (``made``: the names that hold memory it made, on every path to ``stmts``), or None. Memory
    the body made is read nowhere else if an exception stops it half-way: the body's names are
    handed on only when it finishes (``_lower_handlers``)."""
    return _scan(stmts, set(made))[0]


def _scan(stmts, made):
    """(the first statement of ``stmts`` that may update memory not in ``made``, or None; the
    names holding memory the body made after ``stmts``; those held so at every ``break`` or
    ``continue`` of the innermost loop, or None if there is none)."""
    jumped = None
    for s in stmts:
        if isinstance(s, gast.If):
            found, after_body, jumped_body = _scan(s.body, set(made))
            if found:
                return found, made, jumped
            found, after_else, jumped_else = _scan(s.orelse, set(made))
            if found:
                return found, made, jumped
            made = after_body & after_else
            jumped = _meet(_meet(jumped, jumped_body), jumped_else)
        elif isinstance(s, (gast.For, gast.While)):
            target = A.names_stored(s.target) if isinstance(s, gast.For) else set()
            head = made - target
            while True:  # an iteration starts from what the last one (or a continue) left
                found, after, jumps = _scan(s.body, set(head))
                again = (head & after & (after if jumps is None else jumps)) - target
                if found or again == head:
                    break
                head = again
            if found:
                return found, made, jumped
            found, made, _ = _scan(s.orelse, set(head))
            if found:
                return found, made, jumped
            made &= head if jumps is None else jumps  # a break leaves what it saw
        elif isinstance(s, (gast.Break, gast.Continue)):
            jumped = _meet(jumped, made)
        else:
            updated = _updated_name(s)
            if updated is not None and updated not in made:
                return s, made, jumped
            passed_on = _passes_on_made(s, made)
            made -= A.names_stored(s)
            if passed_on or _makes_memory(s):
                made.add(s.targets[0].id)
    return None, made, jumped


def _meet(jumped, more):
    return more if jumped is None else jumped if more is None else jumped & more


def _binds_name(s):
    return isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)


def _passes_on_made(s, made):
    """Does ``s`` bind a name to memory the body made (the names ``made`` hold) or to new memory:
    ``t = k`` of such a name; ``normalize``'s ``k op= e``, ``t = k op e`` (computed into k's
    memory or into new memory), then ``u = in_place_result(t, k)`` (which is t)?"""
    if not _binds_name(s):
        return False
    value = s.value
    if isinstance(value, gast.Name):
        return value.id in made
    in_place = A.anno(s, "in_place")
    if in_place is not None:
        return in_place[0] in made
    callee = A.anno(value, "callee") if isinstance(value, gast.Call) else None
    return (callee is not None and callee.kind == "object" and callee.obj is in_place_result
            and isinstance(value.args[0], gast.Name) and value.args[0].id in made)


def _makes_memory(s):
    """``name = []``, ``name = {}``, ``name = (a, b)``, ``name = f(...)`` of a function that returns new memory
    (and is not asked to return an argument or write into one), or ``name = 0``: a number (or
    any literal) is memory no one else sees change (``k += 1`` rebinds ``k``)."""
    if not _binds_name(s):
        return False
    if isinstance(s.value, (gast.List, gast.Tuple, gast.Dict, gast.Constant)):
        return True
    call = s.value if isinstance(s.value, gast.Call) else None
    callee = A.anno(call, "callee") if call is not None else None
    return (callee is not None and callee.kind == "object" and new_array_call(callee.obj, call) and copies(call)
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
