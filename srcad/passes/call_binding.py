"""Calls of your functions that srcad compiles apart, in both modes: which calls those are,
how a call's nodes bind to the function's parameters, and what the function's code is
compiled for (the classes of the objects it is given, dicts keyed by strings, the defaults
it leaves out), with the refusals where a binding would lose a derivative (a value carrying
one packed into ``*args``/``**kwargs``, a ``*spread`` of them, a derivative srcad made)."""
import inspect
import types

import gast

from .. import astutil as A
from .. import registry
from ..source import identifier, srcad_api_function
from .memory_calls import changes_nothing_outside
from .method_calls import argument_classes


def is_python_function(obj):
    obj = getattr(obj, "__srcad_function__", obj)
    return isinstance(obj, types.FunctionType)


def user_function_call(callee):
    """Is ``callee`` a Python function without a rule, which srcad differentiates through its
    own forward sweep where the result and an argument carry derivatives (on copies of what it
    updates in place), and otherwise runs as written?"""
    return (callee is not None and callee.kind == "object" and registry.lookup(registry.VJP, callee.obj) is None
            and not registry.is_nondifferentiable(callee.obj) and is_python_function(callee.obj))


def only_reads(call):
    """Is ``call`` (made for its effect) of a function of yours srcad reads that changes nothing
    it is given, no global and no attribute (a check of its input, a print)? It runs as written."""
    return user_function_call(A.anno(call, "callee")) and changes_nothing_outside(call)


def refuse_derivative_call(source, obj, name, node):
    """A derivative srcad made (``srcad.adjoint(f)``, ``srcad.value_and_grad(f)``, ``D.grad``)
    is not ``f``: refuse to differentiate a call to it, rather than read the wrong source."""
    from .. import api

    made = isinstance(obj, types.MethodType) and isinstance(obj.__self__, api.Differentiable)
    made = made or srcad_api_function(obj)  # made in the API, its error boundary, a method of Differentiable
    if made:
        raise source.syntax_error(
            f"{name} is a derivative made by srcad; srcad differentiates a derivative only when "
            "the code calls srcad.grad(f)(...) directly. Write that, or wrap the call in "
            "srcad.stop_gradient if no derivative should flow through it", node)


def keyword_defaults(fn, bound, refs):
    """Keywords for ``fn``'s keyword-only parameters a call leaves to their defaults (``bound``:
    its ``inspect`` binding): the generated code of ``fn`` takes every parameter by position or
    name, without defaults, so the caller passes the objects ``fn`` holds (``refs`` names them)."""
    held = dict(getattr(fn, "__kwdefaults__", None) or {})
    code = fn.__code__
    if code.co_kwonlyargcount or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        # its code takes them all as plain parameters, without the positional defaults too
        # (pipeline.check_parameters): a parameter left out would take none, or another's
        positional, values = code.co_varnames[:code.co_argcount], fn.__defaults__ or ()
        held.update(zip(positional[len(positional) - len(values):], values))
    return [gast.keyword(arg=k, value=A.load(refs(f"{identifier(fn)}_{k}", v)))
            for k, v in held.items() if k not in bound.arguments]


def refuse_active_packing(source, call, fn, name, bound, carries):
    """Refuse a call of ``fn``, a compiled user function, that packs values carrying derivatives
    (``carries(name)``) into its ``*args`` or ``**kwargs`` (``bound``: ``inspect`` binding of the
    call's nodes), such as a decorator's ``wrapper(*args, **kwargs)`` that does more than pass
    the call on (``pass_through``): their derivatives would be lost."""
    for value in bound.arguments.values():
        items = value.values() if isinstance(value, dict) else value if isinstance(value, tuple) else ()
        if any(isinstance(item, gast.Name) and carries(item.id) for item in items):
            if fn.__code__.co_name == "<lambda>" and hasattr(fn, "__wrapped__"):
                raise source.syntax_error(
                    f"this call passes a value that carries a derivative into the *args of {name}, a lambda a "
                    f"decorator made with functools.wraps(f)(lambda *args: ...) (line {fn.__code__.co_firstlineno} "
                    f"of {fn.__code__.co_filename}); srcad follows a decorator's wrapper only where it is a def: "
                    "write `@functools.wraps(f)` over `def wrapper(*args, **kwargs): return f(*args, **kwargs)` "
                    "and return wrapper, or call the function it wraps", call)
            what = (f"{name}, a decorator's wrapper that does more than `return f(*args, **kwargs)` of the "
                    "function it wraps (srcad differentiates through that wrapper only)" if hasattr(fn, "__wrapped__")
                    else f"{name} (a decorator's wrapper?)")
            raise source.syntax_error(
                f"this call passes a value that carries a derivative into the *args or **kwargs of {what}, which "
                "srcad does not differentiate through; call the function it wraps, or give it a rule with "
                "srcad.custom_vjp", call)


def refuse_active_spread(source, call, name, carries):
    """Refuse a call of a compiled user function with ``*seq`` whose items carry derivatives
    (``carries(name)``): the callee's parameters bind to its items only when the code runs, so
    their derivatives would be lost. (A ``def`` of the caller's module is inlined instead, where
    the items bind as Python binds them: ``passes.binding``.)"""
    for arg in call.args:
        if isinstance(arg, gast.Starred) and any(carries(n) for n in A.names_read(arg)):
            raise source.syntax_error(
                f"srcad differentiates a call of {name} with a *spread argument only where it inlines the function "
                "(a def at the top level of this module, not a lambda); pass the arguments one by one", call)


def bind_arguments(source, fn, call, name, carries):
    """The ``inspect`` binding of ``call``'s nodes to the parameters of ``fn``, a user function
    compiled apart. A ``**mapping`` (a global ``functools.partial``'s keywords) binds only when
    the code runs: the parameters it may fill are left out, as constants (what it holds
    carries no derivative, else the call is refused: ``carries(name)``)."""
    refuse_active_spread(source, call, name, carries)
    named = {k.arg: k.value for k in call.keywords if k.arg is not None}
    spread = [k.value for k in call.keywords if k.arg is None]
    for mapping in spread:
        if any(carries(n) for n in A.names_read(mapping)) or getattr(fn, "__kwdefaults__", None):
            raise source.syntax_error(
                f"srcad differentiates a call of {name} with a **mapping argument only where it inlines the "
                "function (a def at the top level of this module, not a lambda) and nothing in the mapping carries "
                "a derivative; pass the arguments by name one by one", call)
    signature = inspect.signature(fn, follow_wrapped=False)
    try:
        return signature.bind_partial(*call.args, **named) if spread else signature.bind(*call.args, **named)
    except TypeError as exc:
        raise source.syntax_error(f"bad call to {name}: {exc}", call) from None


def call_classes(fn_node, fn, call, bound, source, local):
    """``argument_classes`` of ``call`` of ``fn`` (``bound``: ``bind_arguments``; ``local``: the
    caller's ``local_names``), with those of the default objects it leaves out (``def inner(x,
    box=GBOX)``; none where a ``**mapping`` may fill them): its code is compiled for them."""
    from ..held_objects import object_classes

    left = [] if any(k.arg is None for k in call.keywords) else [
        (p, param.default) for p, param in inspect.signature(fn, follow_wrapped=False).parameters.items()
        if p not in bound.arguments and param.default is not param.empty]
    receiver = next(iter(bound.arguments), None)  # an object of a list: the functions it holds (item_methods)
    held = tuple((f"{receiver}.{attr}", function) for attr, function in A.anno(call, "item_functions") or ())
    return argument_classes(fn_node, bound.arguments, source, local) + held + object_classes(
        [p for p, _ in left], [d for _, d in left])


def keyed_arguments(node, bound):
    """The parameters of a function of yours that a call (``bound``) in ``node`` gives a dict
    whose keys are strings throughout (activity's ``"string_keyed"``)."""
    keyed = A.anno(node, "string_keyed") or ()
    return tuple(p for p, a in bound.arguments.items() if isinstance(a, gast.Name) and a.id in keyed)
