"""Python's scopes of names: what a statement reads from, and binds in, the scope it stands in
(the variables of a comprehension, a lambda or a nested ``def`` are their own)."""
import gast

from . import astutil as A
from .astutil import child_fields


def scope_names(node):
    """(names read, names bound) in the scope ``node`` is in, as Python scopes them: the
    variables of a comprehension, a lambda or a nested ``def`` are its own, not the enclosing
    function's; what those read from outside (and a first iterable, defaults, decorators) is
    read by it, and a nested ``def`` binds its name. ``names_read``/``names_stored`` see every
    name alike: before comprehensions are inlined, ``it = [it for it in r]`` reads no ``it``.

    >>> scope_names(gast.parse("it = [it * a for it in r]").body[0]) == ({"a", "r"}, {"it"})
    True
    """
    read, bound = set(), set()
    _scope_names(node, read, bound)
    return read, bound


_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def _scope_names(node, read, bound):
    if isinstance(node, list):
        for item in node:
            _scope_names(item, read, bound)
    elif isinstance(node, gast.Name):
        if node.annotation is not None:  # a parameter's annotation
            _scope_names(node.annotation, read, bound)
        (read if isinstance(node.ctx, gast.Load) else bound).add(node.id)
    elif isinstance(node, _COMPREHENSIONS):
        first, *rest = node.generators
        _scope_names(first.iter, read, bound)  # evaluated where the comprehension stands
        inner = [first.target, first.ifs] + [[g.target, g.iter, g.ifs] for g in rest]
        inner += [node.key, node.value] if isinstance(node, gast.DictComp) else [node.elt]
        own = {n for g in node.generators for n in A.names_stored(g.target)}
        _nested_scope(inner, own, read, bound, binds_outside=True)
    elif isinstance(node, gast.Lambda):
        _scope_names(node.args.defaults + [d for d in node.args.kw_defaults if d is not None], read, bound)
        _nested_scope(node.body, _parameters(node.args), read, bound)
    elif isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
        _scope_names(node.decorator_list + node.args.defaults + [d for d in node.args.kw_defaults if d is not None],
                     read, bound)
        bound.add(node.name)
        inner_read, inner_bound = scope_names(node.body)
        declared = {n for x in A.walk(gast.Module(body=node.body, type_ignores=[]))
                    if isinstance(x, (gast.Global, gast.Nonlocal)) for n in x.names}
        read |= inner_read - (_parameters(node.args) | inner_bound) | (inner_read & declared)
        bound |= inner_bound & declared
    elif isinstance(node, gast.AST):
        for field in child_fields(node):
            value = getattr(node, field, None)
            if value is not None:
                _scope_names(value, read, bound)


def _nested_scope(parts, own, read, bound, binds_outside=False):
    """Names read and bound by ``parts`` of a nested scope whose own variables are ``own``.
    In a comprehension (``binds_outside``) an assignment expression binds in the enclosing scope."""
    inner_read, inner_bound = set(), set()
    _scope_names(parts, inner_read, inner_bound)
    read |= inner_read - own
    if binds_outside:
        bound |= inner_bound - own


def _parameters(args):
    return {a.id for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]
            if a is not None}
