"""What numba freezes into compiled code: the user's globals, closure values and module
attributes the lowered functions read, and the function's default arguments. Each global,
closure value or attribute must be a number, a tuple of numbers, a module or a function; all
are checked per call to be still bound (``numba_backend._Build.holds``: a rebinding compiles
again); a value that can change in place (an array, a list) would change unseen, and is refused.
Each is kept as ``(holder, key, value)``: a dict and a key, a cell and None, or a weak
reference to a function and ``"__defaults__"``.
"""
import types
import weakref

import gast
import numpy as np

from .. import astutil as A
from ..passes import numba_lowering

MISSING = object()


def cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return MISSING


def current(holder, key):
    """What ``holder`` (as in a frozen entry) now holds under ``key``; ``MISSING`` if nothing."""
    if key is None:
        return cell_value(holder)
    if isinstance(holder, weakref.ref):
        held = holder()
        return MISSING if held is None else getattr(held, key, MISSING)
    return holder.get(key, MISSING)


def frozen_defaults(fn):
    """The entry for ``fn``'s default arguments, which the build's generated functions take
    (a function is held weakly: a build lives no longer than the function)."""
    return (weakref.ref(fn), "__defaults__", fn.__defaults__)


_IMMUTABLE = (bool, int, float, complex, str, bytes, type(None), np.generic, types.ModuleType)


def frozen_user_values(lowered, generated, fn, cells):
    """The user's globals and closure values the code reads, and the module attributes it
    reads, which numba freezes into it: each must be a number, a module or a function, and is
    checked per call to be still bound (rebinding compiles again); a mutable one (an array, a
    list) would change unseen: refused."""
    module = gast.Module(body=lowered, type_ignores=[])
    local = defined(module)
    frozen, seen = [], set()
    read = {}  # id of a Name or Attribute node -> (holder, key, value) of what it reads
    for node in gast.walk(module):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id not in local:
            name = node.id
            if name in numba_lowering.HELPERS:
                continue
            if name in generated.closure:
                value = generated.closure[name]
                if isinstance(value, types.ModuleType):  # srcad's own binding: only its attributes can change
                    read[id(node)] = (None, None, value)
                continue
            if name in cells:
                read[id(node)] = (cells[name], None, cell_value(cells[name]))
            elif name in fn.__globals__:
                read[id(node)] = (fn.__globals__, name, fn.__globals__[name])
            else:
                continue  # a builtin, or unbound: numba says so
            _add_frozen(read[id(node)], node, name, frozen, seen)
    for node in _attributes_outermost_last(module):  # cfg.scale: a module's attribute is frozen as well
        base = read.get(id(node.value))
        if base is not None and isinstance(base[2], types.ModuleType) and isinstance(node.ctx, gast.Load):
            attributes = vars(base[2])
            read[id(node)] = (attributes, node.attr, attributes.get(node.attr, MISSING))
            _add_frozen(read[id(node)], node, f"{base[2].__name__}.{node.attr}", frozen, seen)
    return frozen


def defined(module):
    """Names the lowered module binds: its functions, their parameters and locals."""
    return A.names_stored(module) | {f.name for f in module.body} | {a.id for f in module.body for a in f.args.args}


def _attributes_outermost_last(tree):
    """Attribute nodes, each after the one it is read from (``a.b`` before ``a.b.c``)."""
    found = [n for n in gast.walk(tree) if isinstance(n, gast.Attribute)]
    depth = {}

    def level(n):
        if id(n) not in depth:
            depth[id(n)] = level(n.value) + 1 if isinstance(n.value, gast.Attribute) else 0
        return depth[id(n)]

    return sorted(found, key=level)


def _immutable(value):
    return isinstance(value, _IMMUTABLE) or isinstance(value, tuple) and all(map(_immutable, value))


def _add_frozen(entry, node, name, frozen, seen):
    holder, key, value = entry
    if holder is None:
        return
    # a number, a tuple of numbers or a module, or a function (numba compiles calls only of what
    # it knows, by identity)
    if not (_immutable(value) or callable(value) and not isinstance(value, np.ndarray)):
        raise numba_lowering.NotLowerable(
            f"the code reads {name!r}, a {type(value).__name__} that compiled code would freeze (a later change "
            "would not be seen); pass it to the function as an argument", node)
    if (id(holder), key) not in seen:
        seen.add((id(holder), key))
        frozen.append((holder, key, value))
