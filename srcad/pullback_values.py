"""The user's values a pullback reads: saved by the forward sweep, as it saw them.

A reverse sweep may read values of the user's scope that neither sweep binds: a global
``SCALE``, a closure variable, a module attribute ``cfg.A``. The joint adjoint reads them
once, in one call. The forward/backward pair behind ``vjp`` runs them at two moments, and a
pullback called after the user changed them (``SCALE = 7.0``, ``W[:] = 5.0``) would mix old
values and new. So the forward function saves each such value in its saved tuple (an array
copied, a list or dict of arrays copied all through) and the backward function reads the
saved one under a name of its own (``_SCALE_seen``), which it takes as a constant
(``stop_gradient``: where the pullback is differentiated, no derivative flows into a global).

Modules, classes and functions are not values: the code's guards follow those. Objects are
not copied (an attribute of an object held in a global, changed in place, is seen).

>>> import gast, types
>>> from srcad import astutil as A
>>> from srcad.pullback_values import outer_reads, read_saved
>>> cfg = types.SimpleNamespace(A=[1.0, 2.0], act=abs)
>>> rev = gast.parse("dx = d * SCALE * cfg.A[0] + cfg.act(x)").body
>>> lookup = {"SCALE": 1.5, "cfg": cfg, "d": 0, "x": 0}.__getitem__
>>> reads = outer_reads(rev, {"d", "x", "dx"}, lookup, lambda base: f"_{base}_seen")
>>> sorted(reads.items())
[(('SCALE',), '_SCALE_seen'), (('cfg', 'A'), '_cfg_A_seen')]
>>> print(A.to_source(gast.Module(body=read_saved(rev, reads), type_ignores=[])).strip())
dx = d * _SCALE_seen * _cfg_A_seen[0] + cfg.act(x)
"""
import builtins
import types

import gast
import numpy as np

from . import astutil as A


def outer_reads(stmts, bound, lookup, unique):
    """``{path: saved name}`` for each value of the user's scope ``stmts`` read (a name, or an
    attribute path ``("cfg", "A")`` off one) that is data, not a module, class or function;
    ``bound``: names the sweeps bind; ``lookup(name)`` the object a name denotes in the user's
    scope (``KeyError`` if none); ``unique(base)`` a fresh name."""
    paths = {}
    tree = gast.Module(body=stmts, type_ignores=[])
    called = {id(n.func) for n in A.walk(tree) if isinstance(n, gast.Call)}
    for node in A.walk(tree):
        path = _path(node)
        if path is None or path[0] in bound or not isinstance(node.ctx, gast.Load):
            continue
        try:
            value = lookup(path[0])
        except KeyError:
            continue
        for k in range(len(path)):
            last = k + 1 == len(path)
            # (what a call names and srcad cannot read, stats.gamma.pdf, is a function: not saved)
            if _is_data(value) and not (last and value is None and id(node) in called):
                paths.setdefault(path[:k + 1], None)
                break
            if last:
                break
            value = _attribute(value, path[k + 1])
    return {p: unique("_".join(p)) for p in sorted(paths)}


def saved_values(outer, lookup, copy_value, snapshot):
    """The expressions the forward function saves for ``outer`` (``outer_reads``): a copy of an
    array or number (``copy_value``), a deep one of anything else (``snapshot``): a list, tuple
    or dict, or what ``_attribute`` cannot read (``partial.keywords``)."""
    saved = []
    for path in outer:
        value = lookup(path[0])
        for attr in path[1:]:
            value = _attribute(value, attr)
        helper = copy_value if isinstance(value, (np.ndarray, np.generic, int, float, complex)) else snapshot
        saved.append(gast.Call(func=A.load(helper), args=[_expr(path)], keywords=[]))
    return saved


def saved_copies(fwd, params, live, yours):
    """Of the ``live`` names the forward function saves, ``({names}, {names})`` whose value may
    be the user's memory (a global's, a closure variable's: ``_t1 = PARAMS[0]``), to save as a
    copy, and those holding such memory as items (a list of a global's arrays, or what a call
    among ``yours``, ``calls_of_yours``, returned), to save as a deep one. The arguments are
    copied already (``vjp`` takes a snapshot of them)."""
    from .passes.memory import memory_flow

    end = gast.Return(value=None)
    at_end = []
    memory_flow(fwd + [end], params, lambda s, state: s is end and at_end.append(state))
    names = at_end[0].names if at_end else {}
    own, inner = set(), set()
    for name in live:
        memory = names.get(name)
        if memory is None:
            continue
        if any(kind in _USERS for kind, _ in memory.inner) or any(
                kind in ("new", "old") and (made[0] if isinstance(made, tuple) else made) in yours
                for kind, made in memory.all()):
            inner.add(name)  # (what a function of yours returns may hold its globals' arrays)
        elif any(kind in _USERS for kind, _ in memory.own):
            own.add(name)
    return own, inner


def stacks_holding(fwd, names):
    """The stacks ``fwd`` pushes any of ``names`` on (``_t2_stack.append(_t2)``, in a loop):
    they hold what those were on each pass (a view of a global's row, a function's result)."""
    return {s.value.func.value.id for s in A.every_statement(fwd)
            if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) and isinstance(s.value.func, gast.Attribute)
            and s.value.func.attr == "append" and isinstance(s.value.func.value, gast.Name)
            and len(s.value.args) == 1 and isinstance(s.value.args[0], gast.Name) and s.value.args[0].id in names}


def calls_of_yours(fwd, closure):
    """Ids of the assignments of ``fwd`` (at any depth) that call a function of yours, a method
    bound to an object (``_bound_to_object``), or the forward function of a helper's pair (a
    name of the generated module's ``closure``): what it returns may be (or hold) the memory of
    its globals or defaults, which the memory analysis does not see through generated code."""
    from .guards import _CalleeFunction
    from .passes.fresh import known_pure
    from .source import GENERATED_FILENAME

    found = set()
    for s in A.every_statement(fwd) if closure is not None else ():
        if not (isinstance(s, gast.Assign) and isinstance(s.value, gast.Call)):
            continue
        callee = A.anno(s.value, "callee")
        if callee is not None:
            yours = callee.kind == "object" and callable(callee.obj) and (
                not known_pure(callee.obj) or _bound_to_object(callee.obj))
        else:  # a helper's forward function: its stand-in until the code is bound, or the function
            fn = closure.get(s.value.func.id) if isinstance(s.value.func, gast.Name) else None
            code = getattr(fn, "__code__", None)
            yours = isinstance(fn, _CalleeFunction) or code is not None and code.co_filename.startswith(
                GENERATED_FILENAME)
        if yours:
            found.add(id(s))
    return found


def _bound_to_object(fn):
    """Is ``fn`` a method bound to an object (``{"W": W}.get``, ``W.view``)? What it returns
    may be that object's memory, a global's."""
    owner = getattr(fn, "__self__", None)
    return owner is not None and not isinstance(owner, types.ModuleType)


_USERS = ("global", "global-item")

# builtins whose results hold no memory but their arguments': a forward sweep reading only
# these besides its own names reaches no memory of the user's (``globals``, ``getattr`` of a
# module, ``__import__`` can, and are not here)
_NO_OUTER_MEMORY = {id(getattr(builtins, name)) for name in (
    "range", "len", "enumerate", "zip", "reversed", "abs", "float", "int", "bool", "complex", "min", "max",
    "sum", "round", "isinstance", "print", "tuple", "list", "dict", "sorted", "any", "all", "pow", "divmod",
    "slice")}  # by identity: a user's value may be unhashable or equal to anything


def may_read_outer_memory(names, lookup):
    """Can reading ``names`` (a forward sweep's reads of names it does not bind) reach memory of
    the user's? Not when each denotes one of a few builtins; otherwise ``saved_copies`` decides."""
    for name in names:
        try:
            value = lookup(name)
        except KeyError:
            return True
        if id(value) not in _NO_OUTER_MEMORY:
            return True
    return False


def constant_saved(fwd, live, candidates, params):
    """Of the ``live`` names a forward sweep ``fwd`` saves, those that hold a constant for every
    derivative: ``candidates`` (activity's ``"derivative_free"`` names, with the parameters
    every call gives a constant) that ``fwd`` binds only by plain assignments from constants
    (no parameter in ``params``), never updates in place
    (a subscript or attribute store, an augmented assignment, an ``out=``, an argument of a
    call whose result is dropped) and never binds otherwise (a loop target, an unpacking).

    Where the pullback is differentiated again these must stay constants (an axis, a trip
    count): its saved tuple is one argument, so by name all of it would carry derivatives.

    >>> import gast
    >>> from srcad import astutil as A
    >>> from srcad.passes.callees import Callee
    >>> fwd = gast.parse("n = len(x)\\nk = n - 1\\ny = x * k\\nfor t in range(3):\\n    k2 = t").body
    >>> calls = [n for n in A.walk(gast.Module(body=fwd, type_ignores=[])) if isinstance(n, gast.Call)]
    >>> _ = [A.set_anno(n, "callee", Callee("object", {"len": len, "range": range}[n.func.id])) for n in calls]
    >>> sorted(constant_saved(fwd, ["n", "k", "y", "k2"], {"n", "k", "k2"}, {"x"}))
    ['k', 'n']
    """
    from .passes.activity import derivative_sources

    values, unsure = {}, set()
    for s in _statements(fwd):
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name):
            values.setdefault(s.targets[0].id, []).append(s.value)
        elif isinstance(s, gast.Expr) and not _leaves_arguments(s.value):
            unsure |= A.names_read(s)
        elif isinstance(s, gast.For) and isinstance(s.target, gast.Name) and isinstance(s.iter, gast.Name):
            values.setdefault(s.target.id, []).append(s.iter)  # an index of a constant range is one
        elif not isinstance(s, (gast.If, gast.While, gast.Expr)):
            targets = s.target if isinstance(s, (gast.For, gast.AugAssign)) else gast.Tuple(
                elts=getattr(s, "targets", []), ctx=gast.Store())
            unsure |= A.all_names(targets) if not isinstance(s, gast.For) else A.names_stored(targets)
    for n in A.walk(gast.Module(body=fwd, type_ignores=[])):  # np.add(a, b, out=buffer) updates buffer
        if isinstance(n, gast.Call):
            unsure |= {name for k in n.keywords if k.arg == "out" for name in A.names_read(k.value)}
    bound = set(values) | unsure
    constant = {x for x in live if x in candidates and x not in unsure}  # a parameter is bound by no statement
    changed = True
    while changed:
        changed = False
        for x in sorted(constant):
            for value in values.get(x, ()):
                sources = derivative_sources(value) if _annotated(value) else A.names_read(value)
                if any(n in params or (n in bound and n not in constant) for n in sources):
                    constant.discard(x)
                    changed = True
                    break
    return constant


def _statements(stmts):
    """Every statement of ``stmts``, with those inside branches and loops."""
    for s in stmts:
        yield s
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(s, field, None)
            if isinstance(inner, list):
                yield from _statements(inner)


def _leaves_arguments(call):
    """Is ``call`` one that changes none of its arguments (a check srcad writes, such as
    ``real_constant``; a NumPy function that only reads)?"""
    from .passes.fresh import NO_EFFECT, is_in, known_pure

    callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
    return (callee is not None and callee.kind == "object"
            and (is_in(callee.obj, NO_EFFECT) or known_pure(callee.obj)))


def _annotated(value):
    """Do the calls of ``value`` say what they call (``derivative_sources`` needs it)?"""
    return all(A.anno(n, "callee") is not None for n in A.walk(value) if isinstance(n, gast.Call))


def read_saved(stmts, outer):
    """``stmts`` (copies) reading each path of ``outer`` under its saved name."""
    if not outer:
        return stmts
    stmts = [A.deepcopy(s) for s in stmts]
    return [_Reader(outer).visit(s) for s in stmts]


class _Reader(gast.NodeTransformer):
    def __init__(self, outer):
        self.outer = outer

    def visit_Attribute(self, node):
        path = _path(node)
        if path in self.outer and isinstance(node.ctx, gast.Load):
            return A.load(self.outer[path])
        return self.generic_visit(node)

    def visit_Name(self, node):
        if (node.id,) in self.outer and isinstance(node.ctx, gast.Load):
            return A.load(self.outer[(node.id,)])
        return node


def _path(node):
    """``("cfg", "A")`` for ``cfg.A``, ``("x",)`` for ``x``; None for anything else."""
    attrs = []
    while isinstance(node, gast.Attribute):
        attrs.append(node.attr)
        node = node.value
    return (node.id,) + tuple(reversed(attrs)) if isinstance(node, gast.Name) else None


def _expr(path):
    expr = A.load(path[0])
    for attr in path[1:]:
        expr = gast.Attribute(value=expr, attr=attr, ctx=gast.Load())
    return expr


def _attribute(value, name):
    """``value.name`` as stored (a module's or an object's own ``__dict__``), never running a
    property or a module's ``__getattr__`` while compiling; None if it is not stored so."""
    try:
        return vars(value).get(name)
    except TypeError:
        return None


def _is_data(value):
    return not (callable(value) or isinstance(value, types.ModuleType)) and not _is_plain_object(value)


def _is_plain_object(value):
    """An object whose attributes may be data (a module-like namespace, a config object): its
    attributes are looked at, the object itself is not saved."""
    return isinstance(value, types.SimpleNamespace) or (
        hasattr(value, "__dict__") and not isinstance(value, (np.ndarray, np.generic, list, tuple, dict)))
