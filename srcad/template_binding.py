"""Binding a rule's parameters to the operands of one call: by position (the function's own
order where the rule gives it), by keyword, ``*args`` and ``**kwargs``, and literal defaults;
refused where the call does not fit the rule.
"""
import inspect

import gast
import numpy as np

from . import astutil as A, facts
from .errors import SrcadError
from .registry import Refusal, code_called


class Binding(dict):
    """Parameter name -> operand atom, remembering the call site for refusals."""

    def __init__(self, site):
        super().__init__()
        self.site = site


def bind(rule, args, keywords, site):
    """Map the rule's parameters to the call's operand atoms (defaults as literals)."""
    if isinstance(rule, Refusal):
        raise site.error(rule.message())
    bound = Binding(site)
    params = rule.params
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    varargs = next((p for p in params if p.kind == p.VAR_POSITIONAL), None)
    varkw = next((p for p in params if p.kind == p.VAR_KEYWORD), None)
    for arg in args:
        if isinstance(arg, gast.Starred):
            raise site.error("srcad cannot differentiate a call with * arguments; pass the operands one by one")
    places = getattr(rule, "positions", None)
    if places is not None and len(places) >= len(args):  # by the function's own parameters, in its order
        for (name, mine), arg in zip(places, args):
            if mine is None:
                raise site.error(f"the derivative rule of {site.what} does not support the argument '{name}' "
                                 f"(given by position)")
            bound[mine] = arg
    else:
        if len(args) > len(positional) and varargs is None:
            raise site.error(f"too many arguments for the rule of {site.what}")
        for p, arg in zip(positional, args):
            bound[p.name] = arg
        if varargs is not None:
            bound[varargs.name] = list(args[len(positional):])
    extra = {}
    names = {p.name for p in params}
    for kw in keywords:
        if kw.arg is None:
            raise site.error("srcad cannot differentiate a call with ** arguments")
        if kw.arg in names and kw.arg not in bound and kw.arg != getattr(varargs, "name", None):
            bound[kw.arg] = kw.value
        elif varkw is not None:
            extra[kw.arg] = kw.value
        else:
            raise site.error(
                f"the derivative rule of {site.what} does not support the keyword argument '{kw.arg}'"
            )
    runs_with = _function_defaults(rule)
    for p in params:
        if p.name in bound or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in runs_with:  # what the function ran with, whatever default the rule writes
            if runs_with[p.name] is None:
                raise site.error(f"the call of {site.what} leaves out '{p.name}', whose default in the function is "
                                 f"not a literal srcad can give your rule (it would see its own default, not what "
                                 f"the function ran with); pass {p.name} in the call")
            bound[p.name] = runs_with[p.name]
            continue
        if p.default is inspect.Parameter.empty:
            raise site.error(f"missing argument '{p.name}' for {site.what}")
        bound[p.name] = _literal(p.default, rule)
    if varkw is not None:
        bound[varkw.name] = extra
    for name, value in bound.items():  # scipy's overwrite_a=True: the input is scratch space afterwards
        if name.startswith("overwrite_") and not (isinstance(value, gast.Constant) and value.value in (False, None)):
            raise site.error(f"srcad does not differentiate {site.what} with {name} other than False (it may "
                             f"overwrite its argument, which the derivative and your code read); leave {name} out")
    return bound


def _function_defaults(rule):
    """For a rule of yours, the literal defaults of the function it is for, by name: a call
    that leaves a parameter out runs the function with its default, which the rule must see
    (a rule's ``scale=5.0`` for the function's ``scale=2.0`` gave the derivative at 5.0);
    None for a default that is no literal (an array), which a call may not leave out."""
    if getattr(rule, "_own", True):
        return {}
    try:
        params = inspect.signature(rule.key).parameters.values()
    except (TypeError, ValueError):
        return {}
    found = {}
    for p in params:
        if p.default is not inspect.Parameter.empty and p.default is not np._NoValue:  # (NumPy's "not given")
            try:
                found[p.name] = _literal(p.default, rule)
            except SrcadError:
                found[p.name] = None  # (the rule's own default would be a guess: refused at the call)
    function = code_called(inspect.unwrap(rule.key))  # (a bound method's function, a callable object's __call__)
    pasted = any(v is not None for v in found.values())
    if pasted and function is not None:  # rebinding them recompiles
        facts.record(function, ("__defaults__",), function.__defaults__)
        for name, value in (function.__kwdefaults__ or {}).items():
            facts.record(function, ("__kwdefaults__", name), value)
    return found


def _literal(value, rule):
    if isinstance(value, (type(None), bool, int, float, complex, str)):
        return A.const(value)
    if isinstance(value, tuple) and all(isinstance(v, (int, float, str, type(None))) for v in value):
        return gast.Tuple(elts=[A.const(v) for v in value], ctx=gast.Load())
    raise SrcadError(f"{rule}: default values of rule parameters must be literals")
