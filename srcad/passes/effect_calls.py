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
import numpy as np

from .. import astutil as A
from .. import runtime
from .binding import helper_call
from .call_options import overwritten_arguments
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


def library_store(norm, call, out, node):
    """Emit ``np.fill_diagonal(a, v, wrap)`` on a named array as ``a[diagonal_positions(a, v, wrap,
    where)] = v``, ``np.put_along_axis(a, i, v, axis)`` as ``a[along_axis_positions(a, i, axis,
    where)] = v``, ``a.fill(v)`` as ``check_fill(a, v, 'a', where); a[...] = v``, ``np.copyto(a, v)``
    as ``check_copyto(a, v); a[...] = v`` and NumPy's
    ``rng.shuffle(a)`` as ``a[...] = a[shuffle_order(rng, a, where)]`` (``runtime_stores``):
    element stores, which srcad differentiates, and whose memory it checks, as if written so.
    ``call`` has atoms for operands; ``node`` is the user's statement. True if it was one."""
    callee = A.anno(call, "callee")
    if _numpy_shuffle(callee):
        return _shuffle_store(norm, call, callee, out, node)
    if callee is not None and callee.kind == "method" and callee.name == "fill":
        return _fill_store(norm, call, out, node)
    if callee is None or callee.kind != "object" or not any(callee.obj is f for f in _STORE_PARAMETERS):
        return False
    if any(isinstance(a, gast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    where = A.const(f"{norm.source.filename}:{getattr(node, 'lineno', None) or '?'}")
    # (by NumPy's documented parameters: np.copyto, a builtin, has no inspect.signature before NumPy 2.4)
    bound = _bound(_STORE_PARAMETERS[callee.obj], call)
    if bound is None:
        return False  # (Python's own error, where the call runs)
    if callee.obj is np.fill_diagonal:
        target, value = bound["a"], bound["val"]
        if not isinstance(target, gast.Name):
            return False
        positions = helper_call("diagonal_positions", runtime.diagonal_positions, A.load(target.id),
                                A.deepcopy(value), bound.get("wrap", A.const(False)), where)
        index = norm.atom(positions, out)
    elif callee.obj is np.put_along_axis:
        target, value, axis = bound["arr"], bound.get("values"), bound.get("axis")
        if value is None or axis is None or not isinstance(target, gast.Name) or (
                isinstance(axis, gast.Constant) and axis.value is None):
            return False  # (axis=None stores into the flattened array: left as written)
        positions = helper_call("along_axis_positions", runtime.along_axis_positions, A.load(target.id),
                                A.deepcopy(bound["indices"]), A.deepcopy(axis), where)
        index = norm.atom(positions, out)
    else:
        target, value = bound["dst"], bound["src"]
        if set(bound) != {"dst", "src"} or not isinstance(target, gast.Name):
            return False  # casting= or where=: not a plain store
        out.append(gast.Expr(value=helper_call("check_copyto", runtime.check_copyto, A.load(target.id),
                                               A.deepcopy(value))))
        index = A.const(Ellipsis)
    norm.assign_to(gast.Subscript(value=A.load(target.id), slice=index, ctx=gast.Store()), value, out)
    return True


def _fill_store(norm, call, out, node):
    """``a.fill(v)`` of a named value as ``check_fill(a, v, 'a', where); a[...] = v``: a NumPy
    array's fill is that store, which srcad differentiates (a broadcast of ``v``) and whose
    memory it checks; the check refuses any other receiver where the code runs."""
    if len(call.args) != 1 or isinstance(call.args[0], gast.Starred) or call.keywords or not isinstance(
            call.func.value, gast.Name):
        return False
    target, value = call.func.value.id, call.args[0]
    where = A.const(f"{norm.source.filename}:{getattr(node, 'lineno', None) or '?'}: ")
    out.append(gast.Expr(value=helper_call("check_fill", runtime.check_fill, A.load(target), A.deepcopy(value),
                                           A.const(target), where)))
    norm.assign_to(gast.Subscript(value=A.load(target), slice=A.const(Ellipsis), ctx=gast.Store()), value, out)
    return True


def _numpy_shuffle(callee):
    """Is ``callee`` NumPy's shuffle: ``np.random.shuffle``, or ``rng.shuffle`` of a generator
    the function makes (``random_draws.read_draws`` marks it with the generator's class)?"""
    if callee is None:
        return False
    if callee.kind == "object":
        return callee.obj is np.random.shuffle
    return callee.kind == "method" and callee.name == "shuffle" and callee.obj in (np.random.Generator,
                                                                                   np.random.RandomState)


def _shuffle_store(norm, call, callee, out, node):
    """``rng.shuffle(a)`` of a named array as ``a[...] = a[shuffle_order(rng, a, 'a', where)]``: the rows
    permuted by an element store (of a gather), which srcad differentiates and whose memory it
    checks, with the random draws the shuffle makes. Any other form (``axis=``) is left as written."""
    if len(call.args) != 1 or call.keywords or not isinstance(call.args[0], gast.Name):
        return False
    target = call.args[0].id
    rng = A.deepcopy(call.func.value) if callee.kind == "method" else A.const(None)
    where = A.const(f"{norm.source.filename}:{getattr(node, 'lineno', None) or '?'}")
    order = norm.atom(helper_call("shuffle_order", runtime.shuffle_order, rng, A.load(target), A.const(target), where), out)
    rows = gast.Subscript(value=A.load(target), slice=order, ctx=gast.Load())
    norm.assign_to(gast.Subscript(value=A.load(target), slice=A.const(Ellipsis), ctx=gast.Store()), rows, out)
    return True


_STORE_PARAMETERS = {np.fill_diagonal: ("a", "val", "wrap"), np.copyto: ("dst", "src", "casting", "where"),
                     np.put_along_axis: ("arr", "indices", "values", "axis")}


def _bound(names, call):
    """``{parameter: operand}`` of ``call`` to a function whose parameters are ``names`` (every
    one may be given by position or keyword), or None where the call does not bind."""
    if len(call.args) > len(names):
        return None
    bound = dict(zip(names, call.args))
    for k in call.keywords:
        if k.arg not in names or k.arg in bound:
            return None
        bound[k.arg] = k.value
    return bound if all(n in bound for n in names[:2]) else None


# What to write instead of a call changing an array ``a`` in place that srcad does not
# differentiate: an assignment it does (for messages). By NumPy function, then by method name.
_ASSIGNMENTS = [
    (np.put, "{a}[np.unravel_index(ind, {a}.shape)] = v"),
    (np.place, "{a}[mask] = vals"),
    (np.putmask, "{a} = np.where(mask, values, {a})"),
    (np.copyto, "{a} = np.where(where, src, {a})"),
    (np.fill_diagonal, "{a} = np.where(np.eye(*{a}.shape, dtype=bool), val, {a})"),
]
_METHOD_ASSIGNMENTS = {"sort": "{a} = np.sort({a})", "partition": "{a} = np.partition({a}, kth)",
                       "fill": "{a}[...] = value", "put": "{a}[np.unravel_index(ind, {a}.shape)] = v",
                       "shuffle": "{a} = {a}[{rng}.permutation(len({a}))]",
                       "insert": "{a}.append(v)' for each item and read '{a}[::-1]",  # (inserts at 0)
                       "extend": "{a}.append(item)' for each item, or '{a}.extend([item1, item2])"}


def grown_list_advice():
    """What to write where a list that is an item of a list or dict is appended to."""
    return ("srcad does not follow a list held in a list or dict as it grows: keep it in a name of its own "
            "('items = []', then 'items.append(...)')")


def assignment_instead(call, changed):
    """``"write '...' instead"``: the assignment that does what ``call`` does to the array named
    ``changed`` in place (an array of srcad's own, ``a``), or advice to assign a new array."""
    callee = A.anno(call, "callee")
    a = changed if changed and not changed.startswith("_") else "a"
    if a == "a" and callee is not None and callee.kind == "method" and callee.name == "append":
        return grown_list_advice()  # hist["loss"].append(v): the list is an item
    form = None
    if callee is not None and callee.kind == "object":
        form = next((f for fn, f in _ASSIGNMENTS if callee.obj is fn), None)
        name = getattr(callee.obj, "__name__", "")
    else:
        name = callee.name if callee is not None else ""
    form = form or _METHOD_ASSIGNMENTS.get(name)
    scratch = overwritten_arguments(call)
    if form is None and scratch:  # (scipy.linalg.solve(A, b, overwrite_b=True))
        option = next((o for o, arg in scratch if isinstance(arg, gast.Name) and arg.id == changed), scratch[0][0])
        return f"leave {option} out (or pass False) so that '{a}' keeps its values"
    if form is None:  # (no name of yours for srcad's temporary: rows[i] of rows[i].extend(...))
        return f"assign a new value {'' if a == 'a' else f'to {a!r} '}instead of changing it in place"
    receiver = call.func.value if isinstance(call.func, gast.Attribute) else None  # rng of rng.shuffle
    ours = receiver is None or any(n.startswith("_") for n in A.names_read(receiver))  # srcad's temporary
    rng = "rng" if ours else A.to_source(receiver).strip()
    return f"write '{form.format(a=a, rng=rng)}' instead"


def check_assert(norm, s):
    """Refuse an ``assert`` that calls for an effect: it runs in the primal only."""
    for call in A.walk(s):
        callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
        if callee is not None and effect_call(callee):
            raise norm.error("srcad does not differentiate a call made for its effect inside an assert (it "
                             "runs in the primal only); make the call a statement of its own", call)
