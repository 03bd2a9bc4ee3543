"""What numba must decide when it compiles, made decidable: part of the numba lowering.

numba gives every variable one type for the whole function and types both branches of an
``if`` it cannot decide before typing, so generated code that chooses by shape (a rule's
``if np.ndim(x) == 2 and np.ndim(y) == 2:`` fast path) fails to type on the branch that
never runs. Two rewrites make such choices static, without guessing anything:

- ``fold_constant_calls``: a call of a pure helper (``FOLDABLE``, recognised by the object
  a name denotes, never by its spelling) on literals only is computed now and replaced by
  its literal result (the axes ``tuple(np.argsort(transpose_axes(None, 2)))`` of a
  transpose's adjoint, which numba needs as a constant); where the number of axes is known
  only at run time, the inverse of reversing all axes is reversing them: ``np.transpose(g)``.
- ``outline_ndim_branches``: an ``if`` whose test reads only ``np.ndim`` of local values,
  ``is_ndarray`` of them (the lowered ``isinstance(x, np.ndarray)`` of a rule's fast path)
  and literals becomes a call of a new function that takes the values it reads, and the
  shapes of the tested values as tuples (for ``is_ndarray``, ``array_flag``'s tuple: one
  item for an array, none for anything else), and returns what it assigns. Its test reads
  ``len`` of those tuples, which numba replaces by a constant from the types it is called
  with, so it prunes the branch that cannot run before typing it.

>>> import gast, numpy as np
>>> from srcad import astutil as A
>>> fn = gast.parse('''
... def f_adjoint(x, y, g):
...     if np.ndim(x) == 2 and np.ndim(y) == 2:
...         dx = g @ y.T
...     else:
...         dx = matmul_dx(g, x, y)
...     return dx
... ''').body[0]
>>> made = outline_ndim_branches(fn, {"np.ndim": np.ndim}.get)  # what names denote
>>> print(A.to_source(gast.Module(body=[fn] + made, type_ignores=[])).strip())
def f_adjoint(x, y, g):
    dx, = _f_adjoint_branch1(g, x, y, dims_of(x), dims_of(y))
    return dx
<BLANKLINE>
<BLANKLINE>
def _f_adjoint_branch1(g, x, y, _dims_x, _dims_y):
    if len(_dims_x) == 2 and len(_dims_y) == 2:
        dx = g @ y.T
    else:
        dx = matmul_dx(g, x, y)
    return dx,
"""
import builtins
import math

import gast
import numpy as np

from .. import astutil as A
from ..rules import numpy_shapes
from .callees import dotted
from .numba_stacks import NotLowerable

DIMS_OF = "dims_of"  # the helper outlined branches are called with: an array's shape, a number's ()
IS_NDARRAY = "is_ndarray"  # the lowering's test for an array, decided by numba from the type
ARRAY_FLAG = "array_flag"  # what an outlined branch tests it with: (True,) for an array, () for anything else

FOLDABLE = {id(f): f for f in (tuple, np.argsort, numpy_shapes.transpose_axes)}  # pure: called when lowering


# ---- constant arguments ------------------------------------------------------------------


_NOT_LITERAL = object()


def _literal_value(node):
    """The Python value of a literal (numbers, None, tuples of them), else ``_NOT_LITERAL``."""
    if isinstance(node, gast.Constant) and (node.value is None or type(node.value) in (int, float, bool)):
        return node.value
    if isinstance(node, gast.Tuple):
        items = [_literal_value(e) for e in node.elts]
        return _NOT_LITERAL if any(i is _NOT_LITERAL for i in items) else tuple(items)
    return _NOT_LITERAL


def _as_literal(value):
    """The gast literal of ``value`` (a number, None, a tuple or 1-D integer array of them), or None."""
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "iub":
        value = tuple(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, tuple):
        items = [_as_literal(v) for v in value]
        return None if any(i is None for i in items) else gast.Tuple(elts=items, ctx=gast.Load())
    if value is None or type(value) in (int, float, bool):
        return A.const(value)
    return None


def _dotted(node):
    parts = dotted(node)
    return ".".join(parts) if parts else None


def _denotes(func, resolve, obj):
    name = _dotted(func)
    return name is not None and resolve(name) is obj


class _FoldConstantCalls(gast.NodeTransformer):
    def __init__(self, resolve):
        self.resolve = resolve

    def visit_Call(self, node):
        self.generic_visit(node)
        if (_denotes(node.func, self.resolve, np.transpose) and len(node.args) == 2 and not node.keywords
                and self._reverses_all_axes(node.args[1])):
            node.args = node.args[:1]  # the inverse of reversing every axis is reversing every axis
            return node
        name = _dotted(node.func)
        fn = self.resolve(name) if name else None
        if fn is None or FOLDABLE.get(id(fn)) is not fn or node.keywords:
            return node
        args = [_literal_value(a) for a in node.args]
        if any(a is _NOT_LITERAL for a in args):
            return node
        try:
            folded = _as_literal(fn(*args))
        except Exception:  # left to run, and fail, as it would in NumPy code
            return node
        return node if folded is None else folded


    def _reverses_all_axes(self, node):
        """Is ``node`` ``tuple(np.argsort(transpose_axes(None, n)))`` for any ``n``?"""
        chain = [tuple, np.argsort, numpy_shapes.transpose_axes]
        for fn in chain:
            if not (isinstance(node, gast.Call) and _denotes(node.func, self.resolve, fn) and not node.keywords
                    and node.args):
                return False
            if fn is numpy_shapes.transpose_axes:
                return len(node.args) == 2 and isinstance(node.args[0], gast.Constant) and node.args[0].value is None
            if len(node.args) != 1:
                return False
            node = node.args[0]
        return False


def fold_constant_calls(fn, resolve):
    """Replace, in ``fn``, each call of a ``FOLDABLE`` function on literals by its literal
    result; ``resolve(dotted_name)`` is the object a free name denotes (None if unknown)."""
    _FoldConstantCalls(resolve).visit(fn)
    return fn


# ---- math's domain errors ---------------------------------------------------------------------

CHECKED_MATH = "checked_math"
# math functions numba computes with another outcome than Python (nan or inf where Python
# raises, a wrapped int64 where Python's int grows): each call goes through ``checked_math``
# (``backends.numba_python``), which raises as Python does
MATH_CHECKED = {getattr(math, name): name for name in (
    "sqrt", "log", "log10", "log2", "log1p", "acos", "asin", "acosh", "atanh", "cos", "sin", "tan", "exp", "expm1",
    "cosh", "sinh", "gamma", "lgamma", "pow", "ldexp", "floor", "ceil", "trunc")}
# math functions whose compiled result is Python's (no error from finite arguments in Python)
MATH_AS_IN_PYTHON = {math.atan, math.atan2, math.asinh, math.tanh, math.erf, math.erfc, math.fabs, math.hypot,
                     math.copysign, math.degrees, math.radians, math.isnan, math.isinf, math.isfinite}


def check_math_errors(fn, resolve):
    """``math.sqrt(x)`` -> ``checked_math("sqrt", x)`` for each function of ``MATH_CHECKED``, and
    ``round(x)`` and ``int(x)`` (a Python int) -> ``checked_math("round", x)``, ``checked_math("int",
    x)``; any other ``math`` function is refused (fail closed), except those of ``MATH_AS_IN_PYTHON``."""
    for node in gast.walk(fn):
        if not isinstance(node, gast.Call):
            continue
        name = _dotted(node.func)
        obj = resolve(name) if name is not None else None
        if obj in (builtins.round, builtins.int) and len(node.args) == 1 and not node.keywords:
            kind = obj.__name__
        elif getattr(obj, "__module__", None) == "math":
            kind = MATH_CHECKED.get(obj)
        else:
            continue
        if kind is None and obj in MATH_AS_IN_PYTHON:
            continue
        if kind is None or node.keywords or any(isinstance(a, gast.Starred) for a in node.args):
            raise NotLowerable(f"{name}() is not known to compile with Python's meaning (its errors and results); "
                               "use backend='numpy', or backend='auto'", node)
        node.func = A.load(CHECKED_MATH)
        node.args = [A.const(kind)] + node.args
    return fn


# ---- branches decided by the number of dimensions ---------------------------------------------


def _ndim_tested(test, resolve, tested, flagged):
    """Is ``test`` made only of ``np.ndim(local)``, ``is_ndarray(local)``, literals, comparisons
    and and/or/not? Appends the names whose ``np.ndim`` it reads to ``tested``, those it tests
    with ``is_ndarray`` to ``flagged``."""
    if isinstance(test, gast.BoolOp):
        return all(_ndim_tested(v, resolve, tested, flagged) for v in test.values)
    if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
        return _ndim_tested(test.operand, resolve, tested, flagged)
    if isinstance(test, gast.Constant):
        return type(test.value) in (int, bool)
    if isinstance(test, gast.Compare):
        return (all(isinstance(op, (gast.Eq, gast.NotEq, gast.Lt, gast.LtE, gast.Gt, gast.GtE)) for op in test.ops)
                and all(_ndim_tested(v, resolve, tested, flagged) for v in [test.left, *test.comparators]))
    if not (isinstance(test, gast.Call) and len(test.args) == 1 and not test.keywords
            and isinstance(test.args[0], gast.Name)):
        return False
    if _denotes(test.func, resolve, np.ndim):
        tested.append(test.args[0].id)
        return True
    if isinstance(test.func, gast.Name) and test.func.id == IS_NDARRAY:  # the lowering's own call (its name is checked free)
        flagged.append(test.args[0].id)
        return True
    return False


def _assigned_on_every_path(stmts):
    """Names every run of ``stmts`` binds (statements at its top level, and ifs both of whose
    branches bind them)."""
    found = set()
    for s in stmts:
        if isinstance(s, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
            found |= A.names_stored(s)
        elif isinstance(s, gast.If):
            found |= _assigned_on_every_path(s.body) & _assigned_on_every_path(s.orelse)
    return found


_LEAVES = (gast.Return, gast.Break, gast.Continue, gast.Yield, gast.YieldFrom, gast.FunctionDef, gast.Lambda,
           gast.Global, gast.Nonlocal)


class _OutlineNdimBranches(gast.NodeTransformer):
    def __init__(self, fn, resolve):
        self.fn, self.resolve, self.made = fn, resolve, []
        self.local = A.names_stored(fn) | {a.id for a in fn.args.args}

    def visit_If(self, node):
        self.generic_visit(node)
        tested, flagged = [], []
        if not (_ndim_tested(node.test, self.resolve, tested, flagged) and tested + flagged):
            return node
        if any(isinstance(n, _LEAVES) for n in gast.walk(node)) or not set(tested + flagged) <= self.local:
            return node  # control leaves the branch, or a tested value is no local: stays, for numba to judge
        if any(f"_dims_{t}" in self.local for t in tested) or any(f"_array_{t}" in self.local for t in flagged):
            return node  # the name its shape (or flag) would get is taken
        assigned = sorted(A.names_stored(node))
        every_path = _assigned_on_every_path(node.body) & _assigned_on_every_path(node.orelse)
        updated = {n for s in gast.walk(node) if isinstance(s, gast.AugAssign) for n in A.names_stored(s.target)}
        read = (A.names_read(node) | updated | set(assigned) - every_path) & self.local
        params = sorted(read - set(tested) - set(flagged)) + sorted(set(tested) | set(flagged))
        tested, flagged = sorted(set(tested)), sorted(set(flagged))
        dims = {name: f"_dims_{name}" for name in tested}
        flags = {name: f"_array_{name}" for name in flagged}
        test = _NdimAsLength(dims, flags, self.resolve).visit(node.test)
        name = f"_{self.fn.name}_branch{len(self.made) + 1}"
        body = [gast.If(test=test, body=node.body, orelse=node.orelse),
                gast.Return(value=gast.Tuple(elts=[A.load(n) for n in assigned], ctx=gast.Load()))]
        args = gast.arguments(args=[gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None)
                                    for p in params + [dims[t] for t in tested] + [flags[t] for t in flagged]],
                              posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
        made = gast.FunctionDef(name=name, args=args, body=body, decorator_list=[], returns=None,
                                type_comment=None, type_params=[])
        gast.copy_location(made, node)
        for n in gast.walk(made):
            if hasattr(n, "lineno") and getattr(n, "lineno", None) is None:
                gast.copy_location(n, node)
        self.made.append(made)
        call = gast.Call(func=A.load(name), keywords=[],
                         args=[A.load(p) for p in params]
                         + [gast.Call(func=A.load(DIMS_OF), args=[A.load(t)], keywords=[]) for t in tested]
                         + [gast.Call(func=A.load(ARRAY_FLAG), args=[A.load(t)], keywords=[]) for t in flagged])
        out = (gast.Assign(targets=[gast.Tuple(elts=[A.store(n) for n in assigned], ctx=gast.Store())], value=call,
                           type_comment=None) if assigned else gast.Expr(value=call))
        return gast.copy_location(out, node)


class _NdimAsLength(gast.NodeTransformer):
    def __init__(self, dims, flags, resolve):
        self.dims, self.flags, self.resolve = dims, flags, resolve

    def visit_Call(self, node):
        if _denotes(node.func, self.resolve, np.ndim):
            return gast.Call(func=A.load("len"), args=[A.load(self.dims[node.args[0].id])], keywords=[])
        if isinstance(node.func, gast.Name) and node.func.id == IS_NDARRAY:
            flag = gast.Call(func=A.load("len"), args=[A.load(self.flags[node.args[0].id])], keywords=[])
            return gast.Compare(left=flag, ops=[gast.Eq()], comparators=[A.const(1)])
        return node


def outline_ndim_branches(fn, resolve):
    """Outline each ``if`` of ``fn`` decided by ``np.ndim`` (and ``is_ndarray``) of locals into a new function
    (see the module docstring); returns the new ``FunctionDef``s, which the module of ``fn``
    must define. An ``if`` that returns, breaks or continues stays as it is."""
    outliner = _OutlineNdimBranches(fn, resolve)
    outliner.visit(fn)
    return outliner.made
