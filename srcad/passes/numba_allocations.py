"""Fewer heap objects per call in numba-compiled code: part of the numba lowering.

numba puts every list and array on the heap and counts references to it, so a small one
made per loop step, or in a helper called per step, costs more than the arithmetic around
it: RK4's right-hand side ``np.array([dx, dy, dz])`` made a list and then an array, four
times a step, and each helper's gradient was copied on its way out. Two rewrites, each
decided by what the code does with a value (names found by what they denote, never by
their spelling):

- A list display bound to a name that is only read as values (the object of ``np.array``
  or ``np.asarray``, the same object in that call's adjoint ``array_grad``/``container_grad``,
  an item at a literal index, its ``len``, a forward sweep's saved value) becomes a tuple
  display: a tuple of numbers lives in registers, and the array made from it is the same.
- ``finish(g, x)`` copies ``g``, because numba cannot tell whether it is a view of the
  caller's cotangent; it becomes ``finish_owned(g, x)``, which hands ``g`` out as it is when
  it has ``x``'s shape and dtype, where every binding of ``g`` is an array this function
  made (an arithmetic result or a new array of zeros) and ``g`` is returned once.

>>> import gast, numpy as np
>>> from srcad import astutil as A, runtime
>>> from srcad.rules.numpy_shapes import array_grad
>>> fn = gast.parse('''
... def f_adjoint(a, b, v):
...     t = [a, b]
...     y = np.array(t)
...     dt = container_grad(array_grad(v, t, y), t)
...     g = zeros_like(y)
...     g[0] += dt[0]
...     return finish(g, y)
... ''').body[0]
>>> names = {"np": np, "np.array": np.array, "container_grad": runtime.container_grad,
...          "array_grad": array_grad, "zeros_like": runtime.zeros_like, "finish": runtime.finish}
>>> print(A.to_source(fewer_allocations(fn, names.get)).strip())
def f_adjoint(a, b, v):
    t = a, b
    y = np.array(t)
    dt = container_grad(array_grad(v, t, y), t)
    g = zeros_like(y)
    g[0] += dt[0]
    return finish_owned(g, y)
"""
import builtins

import gast
import numpy as np

from .. import astutil as A
from .. import runtime
from ..rules import numpy_shapes
from .callees import dotted

FINISH_OWNED = "finish_owned"  # the helper owned gradients are finished with

# where a list's items are read as values: (function, position of the list among its arguments)
_READ_AS_VALUES = ((np.array, 0), (np.asarray, 0), (numpy_shapes.array_grad, 1), (runtime.container_grad, 1),
                   (builtins.len, 0))
_NEW_ARRAYS = (runtime.zeros_like, runtime.full_of, np.zeros, np.ones, np.full)


def fewer_allocations(fn, resolve):
    """Rewrite ``fn`` (a generated function, gast ``FunctionDef``) in place as the module
    docstring says; ``resolve(dotted_name)`` is the object a free name denotes (None if
    unknown). Returns ``fn``."""
    _tuple_displays(fn, resolve)
    _owned_gradients(fn, resolve)
    return fn


def _callee(call, resolve):
    parts = dotted(call.func)
    return resolve(".".join(parts)) if parts else None


def _bindings(fn):
    """``{name: [node binding it]}``: every assignment, augmented assignment, loop target,
    deletion and other store of a name anywhere in ``fn``."""
    found = {}
    for node in A.walk(fn):
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
            found.setdefault(node.id, []).append(node)
    return found


def _single_assignments(fn):
    """``{name: Assign}`` for names stored exactly once in ``fn``, by a plain ``name = value``."""
    stores = _bindings(fn)
    single = {}
    for node in A.walk(fn):
        if (isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], gast.Name)
                and stores.get(node.targets[0].id) == [node.targets[0]]):
            single[node.targets[0].id] = node
    return single


def _saved_values(fn):
    """Name nodes among a forward sweep's saved values (``return y, (saved...)``)."""
    found = set()
    for node in A.walk(fn):
        if isinstance(node, gast.Return) and isinstance(node.value, gast.Tuple) and len(node.value.elts) == 2:
            pack = node.value.elts[1]
            if isinstance(pack, gast.Tuple):
                found.update(id(e) for e in pack.elts if isinstance(e, gast.Name))
    return found


def _tuple_displays(fn, resolve):
    displays = {name: node for name, node in _single_assignments(fn).items()
                if isinstance(node.value, gast.List) and not any(isinstance(e, gast.Starred) for e in node.value.elts)}
    if not displays:
        return
    allowed = _saved_values(fn)  # ids of Name nodes read as values
    for node in A.walk(fn):
        if isinstance(node, gast.Call):
            callee = _callee(node, resolve)
            for fn_, position in _READ_AS_VALUES:
                if callee is fn_ and len(node.args) > position and isinstance(node.args[position], gast.Name):
                    allowed.add(id(node.args[position]))
        elif (isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Load)
              and isinstance(node.value, gast.Name) and isinstance(node.slice, gast.Constant)
              and type(node.slice.value) is int):
            allowed.add(id(node.value))
    for node in A.walk(fn):
        if (isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id in displays
                and id(node) not in allowed):
            del displays[node.id]
    for node in displays.values():
        node.value = gast.Tuple(elts=node.value.elts, ctx=gast.Load())


def _is_new_array(value, resolve):
    if isinstance(value, (gast.BinOp, gast.UnaryOp)):
        return True  # arithmetic on an array makes a new one (on numbers, a number: nothing to copy)
    return isinstance(value, gast.Call) and any(_callee(value, resolve) is f for f in _NEW_ARRAYS)


def _owned_gradients(fn, resolve):
    finishes = [node for node in A.walk(fn)
                if isinstance(node, gast.Call) and _callee(node, resolve) is runtime.finish and len(node.args) == 2
                and not node.keywords and isinstance(node.args[0], gast.Name)]
    returned = {}  # name -> the number of times return statements read it
    for node in A.walk(fn):
        if isinstance(node, gast.Return) and node.value is not None:
            for n in A.walk(node.value):
                if isinstance(n, gast.Name):
                    returned[n.id] = returned.get(n.id, 0) + 1
    stores = _bindings(fn)
    assigned, updated = {}, set()  # name -> the values of its plain assignments; ids of in-place update targets
    for node in A.walk(fn):
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], gast.Name):
            assigned.setdefault(node.targets[0].id, []).append(node.value)
        elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            updated.add(id(node.target))  # an array updated in place keeps its buffer
    for call in finishes:
        name = call.args[0].id
        values = assigned.get(name, [])
        made_here = values and len(values) == len([s for s in stores.get(name, []) if id(s) not in updated]) \
            and all(_is_new_array(v, resolve) for v in values)
        if made_here and returned.get(name) == 1 and sum(c.args[0].id == name for c in finishes) == 1:
            call.func = A.load(FINISH_OWNED)
