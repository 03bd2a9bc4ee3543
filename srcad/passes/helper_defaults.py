"""The defaults of a module helper srcad inlines, as Python bound them.

Python evaluates a function's default arguments once, when its ``def`` runs, so their text may
no longer say their value: a global rebound since, ``f.__defaults__`` set, a default array
changed in place. Guarantee: afterwards every default of the inlined ``FunctionDef`` is either
its literal text, where the value held has that type and text; or a dotted name denoting the
very function, type or module held; or a name the generated code closes over that holds the
object itself. A function default its ``def`` no longer names is refused (the helper is
specialised on the functions it is given).

>>> import gast
>>> _same_literal(_literal(gast.parse("-0.0").body[0].value), 0.0), _same_literal((1,), (True,))
(False, False)
"""
import types

import gast

from .. import astutil as A
from ..guards import _same
from ..naming import BUILTIN
from .callees import denoted, dotted


def with_held_defaults(norm, call, fn, fdef):
    """``fdef`` (a copy, if any default changes) whose defaults are the objects ``fn`` holds.
    Python evaluated them once, when the ``def`` ran, so their text may no longer say their
    value (a global rebound since, ``f.__defaults__`` set, a default array changed in place).
    A literal of the same type and text as the value held, or a dotted name denoting the very
    function, type or module held, stays as written (rules, and the functions a helper is
    specialised on, need them known when the code is generated); any other default is the
    object held itself, which the generated code closes over. Guards on ``fn``'s defaults
    recompile the code when they are rebound (``compile._function_guards``)."""
    args = fdef.args
    held, held_kw = fn.__defaults__ or (), fn.__kwdefaults__ or {}
    keyword_only = {a.id for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
    if len(held) != len(args.defaults) or set(held_kw) != keyword_only:
        raise norm.error(
            f"srcad inlines {fn.__qualname__} here, and its default arguments are not those its def writes "
            "(its __defaults__ or __kwdefaults__ was set); pass those arguments explicitly", call)
    names = [a.id for a in (args.posonlyargs + args.args)[len(args.posonlyargs + args.args) - len(held):]]
    defaults = [_held_default(norm, call, fn, name, d, v) for name, d, v in zip(names, args.defaults, held)]
    kw_defaults = [None if d is None else _held_default(norm, call, fn, a.id, d, held_kw[a.id])
                   for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if all(a is b for a, b in zip(defaults + kw_defaults, args.defaults + args.kw_defaults)):
        return fdef
    fdef = A.deepcopy(fdef)
    fdef.args.defaults, fdef.args.kw_defaults = defaults, kw_defaults
    return fdef


def _held_default(norm, call, fn, param, written, value):
    """The expression for the default of ``param`` written ``written`` whose value is ``value``."""
    if _same_literal(_literal(written), value):
        return written
    parts = dotted(written)
    if parts is not None and (callable(value) or isinstance(value, types.ModuleType)):
        try:
            if _same(denoted(parts, norm.source), value):
                return written
        except (KeyError, AttributeError):
            pass
        if not isinstance(value, type):  # a function the helper would be specialised on
            raise norm.error(
                f"srcad inlines {fn.__qualname__} here, specialised on the functions it is given, and a default "
                f"argument written '{A.to_source(written).strip()}' holds another function now; pass it "
                "explicitly", call)
    name = norm.namer.unique(f"{fn.__name__}_{param}_default")
    return A.set_anno(A.load(name), BUILTIN, (name, value))  # the object itself, in the closure


def _same_literal(literal, value):
    """Is ``value`` what ``literal`` writes: the same type and text (``-0.0`` is not ``0.0``,
    ``True`` is not ``1``), item by item for a tuple?"""
    if type(literal) is not type(value):
        return False
    if type(value) is tuple:
        return len(literal) == len(value) and all(_same_literal(a, b) for a, b in zip(literal, value))
    return repr(literal) == repr(value)


_NOT_LITERAL = object()


def _literal(node):
    """The value of a literal number, string or tuple of them (``-1.5``, ``(2, 3)``), else ``_NOT_LITERAL``."""
    if isinstance(node, gast.Constant):
        return node.value if type(node.value) in A.LITERAL_TYPES else _NOT_LITERAL
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        inner = _literal(node.operand)
        if type(inner) in (int, float, complex):
            return -inner if isinstance(node.op, gast.USub) else inner
        return _NOT_LITERAL
    if isinstance(node, gast.Tuple):
        items = tuple(_literal(e) for e in node.elts)
        return _NOT_LITERAL if any(i is _NOT_LITERAL for i in items) else items
    return _NOT_LITERAL
