"""Decorators' wrappers that only pass a call on: a call of one is a call of the function it wraps.

A decorator such as

    def logged(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs)
        return wrapper

makes a function whose ``*args`` and ``**kwargs`` srcad cannot differentiate through; but
``wrapper(a, b)`` binds ``a`` and ``b`` exactly as ``fn(a, b)`` does and returns its result, so
srcad reads the call as one of ``fn`` (``callees.readable``). Accepted exactly that wrapper (fail
closed): a Python function whose ``__wrapped__`` is the function its closure calls, whose only
parameters are ``*args`` and ``**kwargs``, and whose body, a docstring aside, is
``return f(*args, **kwargs)`` of the closure's ``f``, its source being the code that runs. Any
other wrapper stays the function it is (a call passing it values that carry derivatives is
refused: ``call_binding.refuse_active_packing``). What the wrapper's closure cell holds, and
that function's code, are facts of the compilation in progress (``srcad.facts``): a cell
rebound later (``nonlocal fn``, ``wrapper.__closure__[0].cell_contents = g``) recompiles.

>>> import functools
>>> def logged(fn):
...     @functools.wraps(fn)
...     def wrapper(*args, **kwargs):
...         return fn(*args, **kwargs)
...     return wrapper
>>> def square(v):
...     return v * v
>>> passed_through(logged(square)) is square
True
"""
import inspect
import types

import gast

from .. import facts, registry
from ..errors import SrcadError
from ..source import capture, srcad_file
from ..source_check import check_source_is_code

_PACKED = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def passed_through(obj):
    """The function ``obj`` passes every call on to, unchanged, when it is such a wrapper (its
    wrapped function's own, for wrappers of wrappers); else ``obj``."""
    while True:
        cell = _passing_cell(obj)
        if cell is None:
            return obj
        name, obj = cell[0], obj.__wrapped__
        # the code read is the wrapped function's: guarded on the cell holding it, with that code
        facts.record(cell[1], (name,), obj)
        facts.record(cell[1], (name, "__code__"), obj.__code__)


def _passing_cell(fn):
    """``(name, cell)`` of the closure variable a pass-through wrapper ``fn`` calls (holding
    ``fn.__wrapped__``); None if ``fn`` is no such wrapper."""
    if not isinstance(fn, types.FunctionType) or not hasattr(fn, "__wrapped__") or fn.__closure__ is None:
        return None
    code = fn.__code__
    if (code.co_flags & _PACKED != _PACKED or code.co_argcount or code.co_kwonlyargcount or code.co_posonlyargcount
            or srcad_file(code.co_filename)):
        return None
    if registry.lookup(registry.VJP, fn) is not None or registry.is_nondifferentiable(fn):
        return None  # a rule of its own is what a call of it means
    called = _called_name(fn)
    if called not in code.co_freevars:
        return None
    cell = fn.__closure__[code.co_freevars.index(called)]
    try:
        return (called, cell) if cell.cell_contents is fn.__wrapped__ else None
    except ValueError:  # an empty cell
        return None


def _called_name(fn):
    """The name ``fn``'s body calls in ``return f(*args, **kwargs)``, its whole body (a docstring
    aside), read from source that is the code that runs; None for any other body."""
    try:
        source = capture(fn)
        check_source_is_code(source)
    except (SrcadError, SyntaxError, OSError, TypeError):
        return None
    node = source.node
    body = node.body[1:] if node.body and _is_docstring(node.body[0]) else node.body
    args, kwargs = node.args.vararg, node.args.kwarg
    if len(body) != 1 or not isinstance(body[0], gast.Return) or not isinstance(body[0].value, gast.Call):
        return None
    call = body[0].value
    passes_args = (len(call.args) == 1 and isinstance(call.args[0], gast.Starred)
                   and isinstance(call.args[0].value, gast.Name) and call.args[0].value.id == args.id)
    passes_kwargs = (len(call.keywords) == 1 and call.keywords[0].arg is None
                     and isinstance(call.keywords[0].value, gast.Name) and call.keywords[0].value.id == kwargs.id)
    if not (passes_args and passes_kwargs and isinstance(call.func, gast.Name)) or call.func.id in (args.id, kwargs.id):
        return None
    return call.func.id


def _is_docstring(s):
    return isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant) and isinstance(s.value.value, str)
