"""Which names denote a function defined in the function (``def h``, ``h = lambda ...``).

srcad inlines a call ``h(x)`` of such a function by its name (``inline.inline_call``), which
is right only where Python's scoping guarantees ``h`` denotes that function and nothing else:
``h`` is bound once in its scope, by the ``def`` or the lambda assignment, and no scope
between it and the call (a nested ``def``, a lambda, a comprehension) binds ``h`` itself.
A second binding in the same scope (``h = np.sin``, ``for h in fs``, a second ``def h``) is
refused where it is: which of them a call meets depends on the path taken to it. So is a
function defined in a nested scope with the name of one around it (normalising inlines by
name, in statement order, not by scope). A decorated ``def h`` is refused: ``h`` denotes what
the decorator returns."""
import gast

from .. import astutil as A

COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)
SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef) + COMPREHENSIONS


def scope_functions(scope, visible, source):
    """``(bound, defined)`` for the scope ``scope`` (a def, lambda or comprehension): the names
    it binds, and those of them that denote a function it defines. ``visible``: the functions
    the scope around it defines; raises ``SrcadSyntaxError`` at a binding that makes a call by
    name ambiguous (see the module docstring)."""
    bindings = {}  # name -> [(node, defines a function)], in source order
    for name, node, defines in _bindings(scope):
        bindings.setdefault(name, []).append((node, defines))
    defined = {}  # name -> the statement defining it
    if isinstance(scope, gast.ClassDef):  # its names are not its methods' (and srcad refuses a class here)
        return set(bindings), defined
    for name, found in bindings.items():
        if not any(defines for _, defines in found):
            continue
        found.sort(key=lambda b: (getattr(b[0], "lineno", 0) or 0, getattr(b[0], "col_offset", 0) or 0))
        if len(found) > 1:
            raise source.syntax_error(
                f"'{name}' is bound at line {found[0][0].lineno} and again here, and one of them defines a function "
                "in this function (def or lambda); srcad inlines a call of such a function by its name, which must "
                "then have no other binding (assignment, loop target, parameter, second def): give the function a "
                "name of its own", found[1][0])
        decorated = found[0][0]
        if isinstance(decorated, gast.FunctionDef) and decorated.decorator_list:
            raise source.syntax_error(  # (the name denotes what the decorator returns, not the def)
                f"srcad does not differentiate a function defined in the function with a decorator (on {name!r}): a "
                f"call of it runs what the decorator returns, not the def. Define {name!r} with its decorator at "
                "module level, or without it here", decorated.decorator_list[0])
        if name in visible:
            raise source.syntax_error(
                f"'{name}' defined here is also the name of a function defined around it; srcad inlines a call of a "
                "function defined in the function by its name, which must then denote one function: give this one "
                "a name of its own", found[0][0])
        defined[name] = found[0][0]
    return set(bindings), defined


def defined_before(scope, definition, call):
    """Has the statement ``definition`` of ``scope``'s body run whenever ``call`` (in the same
    scope) runs: is it earlier in a block that holds the call, not in a branch or loop of its
    own (``if c: def h`` then ``h(x)``: Python raises where ``c`` is false)? A call in a
    function nested in ``scope`` runs when that one is called: not decided here (True)."""
    path = _statement_path(scope.body if isinstance(scope, gast.FunctionDef) else [], call)
    return path is None or any(block[k] is definition for block, index in path for k in range(index))


def _statement_path(block, node):
    """``[(block, index), ...]``: the statements holding ``node``, outermost first; None if
    it is not in ``block`` (or only in a function or class defined there)."""
    for index, s in enumerate(block):
        if isinstance(s, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            continue
        if not any(n is node for n in gast.walk(s)):
            continue
        inner = [getattr(s, field, None) or [] for field in ("body", "orelse", "finalbody")]
        inner += [h.body for h in getattr(s, "handlers", ())] + [c.body for c in getattr(s, "cases", ())]
        for sub in inner:
            found = _statement_path(sub, node)
            if found is not None:
                return [(block, index)] + found
        return [(block, index)]
    return None


def inner_scope_children(scope):
    """The children of the scope node ``scope`` that run in its own scope: all but a
    comprehension's first iterable, evaluated in the scope around it (``outer_scope_children``)."""
    if not isinstance(scope, COMPREHENSIONS):
        return list(gast.iter_child_nodes(scope))
    first = scope.generators[0]
    parts = [scope.key, scope.value] if isinstance(scope, gast.DictComp) else [scope.elt]
    return parts + [first.target] + first.ifs + scope.generators[1:]


def outer_scope_children(scope):
    """The parts of the scope node ``scope`` evaluated in the scope around it."""
    return [scope.generators[0].iter] if isinstance(scope, COMPREHENSIONS) else []


def _bindings(scope):
    """``(name, node, defines)`` for each binding made directly in ``scope`` (not in the scopes
    nested in it): parameters, targets, ``del``, ``import``, ``global``, match captures and
    nested definitions; ``defines`` for a ``def`` or a lambda assigned to one name."""
    if isinstance(scope, COMPREHENSIONS):
        stack = [g.target for g in scope.generators]
    elif isinstance(scope, gast.ClassDef):
        stack = list(scope.body)
    else:
        args = scope.args
        stack = [a for a in args.posonlyargs + args.args + [args.vararg] + args.kwonlyargs + [args.kwarg]
                 if a is not None]
        stack += [] if isinstance(scope, gast.Lambda) else list(scope.body)
    while stack:
        node = stack.pop()
        if isinstance(node, gast.Name):
            if not isinstance(node.ctx, gast.Load):
                yield node.id, node, False
            continue
        if isinstance(node, SCOPES):
            if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
                yield node.name, node, isinstance(node, gast.FunctionDef)
            stack.extend(outer_scope_children(node))
            continue
        if (isinstance(node, gast.Assign) and isinstance(node.value, gast.Lambda) and len(node.targets) == 1
                and isinstance(node.targets[0], gast.Name)):  # as normalize reads it: a def
            yield node.targets[0].id, node, True
            continue
        if isinstance(node, (gast.Import, gast.ImportFrom)):
            yield from (((a.asname or a.name).split(".")[0], node, False) for a in node.names if a.name != "*")
        elif isinstance(node, (gast.Global, gast.Nonlocal)):
            yield from ((name, node, False) for name in node.names)
        elif isinstance(node, (gast.MatchAs, gast.MatchStar)) and node.name is not None:
            yield node.name, node, False
        elif isinstance(node, gast.MatchMapping) and node.rest is not None:
            yield node.rest, node, False
        stack.extend(A.child_nodes(node))
