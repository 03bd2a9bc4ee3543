"""Functions objects hold in attributes, for ``resolve_calls``: ``self.act(z)`` where the object
holds ``np.tanh``, a function of yours (a lambda too) or a ``functools.partial`` of one in its
attribute ``act``, on an object the code is compiled for (an argument, the object of a bound
method, an object they hold in an attribute, three levels deep; a module-level object given to
a helper): ``held_objects.object_classes``' ``HeldFunction`` entries.

Guarantee: such a call is a call of the function the attribute held when the code was made (its
rule, or its source read), a partial's arguments and keywords read off the partial when the code
runs. The code is made for that function (the dispatch key holds it, or the guard on a module-level
object's attribute does: another function compiles anew), and checks when it runs that the
attribute still holds it (``held_objects.check_held_function``), so it never gives the
derivative of another function."""
import types
from typing import NamedTuple

import gast

from ..astutil import anno, deepcopy, replace_names, set_anno
from .callees import Callee, path_expr, readable
from .method_calls import has_rule, spread_partial, spread_rule_partial


def held_function_call(call, parts, held, source):
    """Rewrite ``call`` of the dotted name ``parts`` when ``held`` (path -> ``HeldFunction``) says
    the object holds a function there (module doc), annotated ``"held_function"``; else False.
    A partial of a function with a rule called with ``**`` keywords is refused (the rule binds
    keywords by name)."""
    found = held.get(".".join(parts))
    if found is None:
        return False
    receiver, name = parts[:-1], parts[-1]
    function = found.function
    if found.fixed is None:
        set_anno(call, "callee", Callee("object", obj=readable(function), name=".".join(parts)))
    elif isinstance(function, types.FunctionType) and not has_rule(function):
        spread_partial(call, parts, readable(function), found.fixed)
    elif any(k.arg is None for k in call.keywords):
        raise source.syntax_error(
            f"'{'.'.join(parts)}' holds {found!r}, whose rule binds keywords by name, and this call passes keywords "
            "with **, whose names srcad does not know when it compiles the code; pass them by name", call)
    else:
        spread_rule_partial(call, parts, function, found.fixed, found.keywords)
    set_anno(call, "held_function", HeldCall(path_expr(receiver), ".".join(receiver), name, found))
    return True


class HeldCall(NamedTuple):
    """A call of a held function, as ``held_function_check`` checks it when the code runs: the
    object (an expression, renamed with the tree it annotates when a helper is inlined), its text
    in the user's code, the attribute's name and the ``HeldFunction`` the code is made for."""
    receiver: gast.expr
    text: str
    name: str
    expected: object

    def renamed(self, mapping):
        return self._replace(receiver=replace_names(deepcopy(self.receiver), mapping))


def held_function_check(norm, call):
    """The statement ``check_held_function(self, 'act', <HeldFunction>, where, 'self')`` checking,
    when the code runs, the function a call annotated ``"held_function"`` calls; None for any
    other call."""
    found = anno(call, "held_function")
    if found is None:
        return None
    from ..held_objects import check_held_function
    from ..naming import BUILTIN

    def bound(name, obj):
        return set_anno(gast.Name(id=norm.namer.unique(name), ctx=gast.Load(), annotation=None, type_comment=None),
                        BUILTIN, (name, obj))

    where = f"{norm.source.filename}:{getattr(call, 'lineno', '?')}: "
    check = gast.Call(func=bound(check_held_function.__name__, check_held_function), args=[
        deepcopy(found.receiver), gast.Constant(value=found.name, kind=None), bound("held", found.expected),
        gast.Constant(value=where, kind=None), gast.Constant(value=found.text, kind=None)], keywords=[])
    set_anno(check, "callee", Callee("object", obj=check_held_function, name=check_held_function.__name__))
    return gast.copy_location(gast.Expr(value=check), call)
