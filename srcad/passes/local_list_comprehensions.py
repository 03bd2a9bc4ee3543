"""A loop over a list of objects a comprehension makes, for ``local_lists``:
``layers = [Dense(W, b) for W, b in zip(Ws, bs)]`` then ``for layer in layers: x = layer(x)``.

Guarantee: the two become one loop making each object where the body uses it,
``for W_, b_ in list(zip(Ws, bs)): layer = Dense(W_, b_); x = layer(x)`` (the comprehension's
variables renamed apart from the function's), which ``local_objects`` lowers as an object made
in the loop. Python computes the same: the iterable is evaluated at the same point and read
whole before the body runs (``list``, as the comprehension did, so a body changing ``Ws`` changes
nothing), and making an object later is unobservable, as it only stores references. It is done
only where that is so: the comprehension has one ``for`` over names, no ``if``; its item is a
call of a plain class of the module (``local_classes.made_class``) whose arguments are the
comprehension's variables or constants, the class with ``object``'s ``__new__`` and an
``__init__`` that only stores its parameters or constants in attributes of ``self`` no class
attribute names (or none, given no arguments); the list is bound by a top-level assignment that the loop follows at
once, read by that loop alone, whose variable is a name; ``list`` is the builtin. Anything
else is left as it is (and refused as before where a derivative needs it).

>>> import numpy as np
>>> from srcad.astutil import to_source
>>> if True:  # (one example: the class and the function in one file, as in a module)
...     class Dense:
...         def __init__(self, W):
...             self.W = W
...         def __call__(self, x):
...             return np.tanh(x @ self.W)
...     def f(x, Ws):
...         layers = [Dense(W) for W in Ws]
...         for layer in layers:
...             x = layer(x)
...         return x
>>> src = capture(f)
>>> fuse_comprehensions(src.node, src)
>>> print(to_source(src.node).strip())
def f(x, Ws):
    for W_ in list(Ws):
        layer = Dense(W_)
        x = layer(x)
    return x
"""
import inspect
import types

import gast

from .. import astutil as A
from ..source import capture
from .callees import local_names
from .local_classes import fresh_in, made_class


def fuse_comprehensions(fn, source):
    """Fuse in ``fn`` each comprehension and loop the module doc allows (in place)."""
    locals_ = local_names(fn)
    if "list" in locals_ or "list" in source.globals:
        return
    taken = {n.id for n in A.walk(fn) if isinstance(n, gast.Name)} | locals_
    body, index = fn.body, 0
    while index + 1 < len(body):
        assign, loop = body[index], body[index + 1]
        fused = _fused(assign, loop, fn, locals_, taken, source)
        if fused is None:
            index += 1
            continue
        body[index:index + 2] = [fused]
        index += 1


def _fused(assign, loop, fn, locals_, taken, source):
    if not (isinstance(assign, gast.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0], gast.Name)
            and isinstance(assign.value, gast.ListComp) and len(assign.value.generators) == 1):
        return None
    name, made, gen = assign.targets[0].id, assign.value.elt, assign.value.generators[0]
    if not (isinstance(loop, gast.For) and isinstance(loop.iter, gast.Name) and loop.iter.id == name
            and isinstance(loop.target, gast.Name) and not gen.ifs and not gen.is_async):
        return None
    variables = _names_of(gen.target)
    if variables is None or not isinstance(made, gast.Call) or not _pure_constructor(made, variables, locals_, source):
        return None
    if any(isinstance(n, gast.Name) and n.id == name and n is not assign.targets[0] and n is not loop.iter
           or isinstance(n, (gast.Global, gast.Nonlocal)) and name in n.names for n in A.walk(fn)):
        return None  # the list is read elsewhere (mutated, aliased, returned, iterated again)
    renamed = {}
    for var in variables:
        renamed[var] = fresh_in(var + "_", taken)
        taken.add(renamed[var])
    known = A.anno(source.node, "renamed_from") or {}  # messages speak of the comprehension's W, not of W_
    A.set_anno(source.node, "renamed_from", {**known, **{new: old for old, new in renamed.items()}})
    target = A.replace_names(A.deepcopy(gen.target), renamed)
    snapshot = gast.Call(func=A.load("list"), args=[gen.iter], keywords=[])
    make = gast.Assign(targets=[A.store(loop.target.id)], value=A.replace_names(A.deepcopy(made), renamed),
                       type_comment=None)
    fused = gast.For(target=target, iter=gast.copy_location(snapshot, gen.iter),
                     body=[gast.copy_location(make, assign)] + loop.body, orelse=loop.orelse, type_comment=None)
    return gast.copy_location(fused, loop)


def _names_of(target):
    """The names a comprehension's target binds, if it is a name or a flat tuple of distinct ones."""
    parts = target.elts if isinstance(target, gast.Tuple) else [target]
    names = [p.id for p in parts if isinstance(p, gast.Name)]
    return names if len(names) == len(parts) and len(set(names)) == len(names) else None


def _pure_constructor(call, variables, locals_, source):
    """``call`` makes an object of a plain class of the module from the comprehension's
    variables and constants, storing only references (module doc)."""
    arguments = list(call.args) + [k.value for k in call.keywords]
    if any(k.arg is None for k in call.keywords) or not all(
            isinstance(a, gast.Constant) or isinstance(a, gast.Name) and a.id in variables for a in arguments):
        return False
    made = made_class(gast.Assign(targets=[A.store("_")], value=call, type_comment=None), locals_, source)
    if made is None or made[1] is not None or made[0].__new__ is not object.__new__:
        return False
    init = inspect.getattr_static(made[0], "__init__")
    if init is object.__init__:
        return not arguments
    if not isinstance(init, types.FunctionType):
        return False
    fdef = capture(init).node
    params = [a.id for a in fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs]
    if not params or fdef.args.vararg or fdef.args.kwarg or fdef.decorator_list:
        return False
    me = params[0]
    return all(_stores_reference(stmt, me, set(params[1:]), made[0]) for stmt in fdef.body)


def _stores_reference(stmt, me, params, cls):
    """``stmt`` of an ``__init__`` is a docstring, ``pass`` or ``self.a = p`` (tuples of them),
    ``a`` no attribute of the class (a property's setter would run code)."""
    if isinstance(stmt, gast.Pass) or isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant):
        return True
    if not isinstance(stmt, gast.Assign):
        return False

    def flat(node):
        return node.elts if isinstance(node, gast.Tuple) else [node]

    if len(stmt.targets) != 1 or len(flat(stmt.targets[0])) != len(flat(stmt.value)):
        return False  # self.a, self.b = pair would iterate the argument
    targets, values = flat(stmt.targets[0]), flat(stmt.value)
    return (all(isinstance(t, gast.Attribute) and isinstance(t.value, gast.Name) and t.value.id == me
                and not any(t.attr in vars(k) for k in cls.__mro__) for t in targets)
            and all(isinstance(v, gast.Constant) or isinstance(v, gast.Name) and v.id in params for v in values))
