"""Alternative constructors, for ``passes.local_objects``: ``m = Model.from_params(W)`` of a
class method ending in ``return cls(...)``.

Guarantee: such a statement becomes ``_a1, _a2 = _Model_from_params(W)`` then
``m = Model(_a1, k=_a2)``: the class method's body as a function defined in the function (which
normalisation inlines), returning the arguments it gave ``cls`` instead of calling it; the
object is then made, and lowered, as any made by its class. Python runs the same steps in the
same order (the body, then the arguments of ``cls(...)``, then the construction). Only where
that is provably so: the statement binds one name; ``Model.from_params`` is a class method of a
class of the function's module, a plain function of that module (positional parameters with
literal defaults, no decorator, closure, ``*args``, ``**kwargs``, generator), which reads no
name the function binds, and whose body uses ``cls`` only as ``return cls(...)``, its last
statement and its only ``return``, without ``*``/``**``; or as ``return cls.make(...)`` of
another class method so written (``Model.make``, read through the same class as Python binds
it; its body is a function defined in the function too, called in its place). Anything else
is left as it was. The code is guarded on the function ``Model.from_params`` (and
``Model.make``) holds, its code and defaults, and the body is given the defaults the function
holds (set since, they may differ from its source's).

>>> from srcad.source import capture
>>> from srcad.astutil import to_source
>>> from srcad.passes.local_objects import local_names
>>> if True:  # (one example: the method and the function in one file, as in a module)
...     class Model:
...         def __init__(self, W, k=1.0):
...             self.W, self.k = W, k
...         @classmethod
...         def from_params(cls, W):
...             return cls(W * 2.0, k=3.0)
...     def f(W):
...         m = Model.from_params(W)
...         return m.W * m.k
>>> src = capture(f)
>>> read_alternative_constructors(src.node, src, local_names(src.node))
>>> print(to_source(src.node).strip())
def f(W):
<BLANKLINE>
    def _Model_from_params(W):
        return W * 2.0, 3.0
    _Model_from_params_0, _Model_from_params_1 = _Model_from_params(W)
    m = Model(_Model_from_params_0, k=_Model_from_params_1)
    return m.W * m.k
"""
import inspect
import types

import gast

from .. import astutil as A
from ..astutil import LITERAL_TYPES
from ..errors import SrcadError
from .callees import dotted, lookup_path, path_expr
from .local_classes import fresh_in
from .local_functions import SCOPES


def read_alternative_constructors(node, source, locals_):
    """Rewrite in place each ``name = C.alternative(...)`` of ``node`` (the function ``source``
    reads; ``locals_``: its local names) as the module docstring says."""
    taken, defined = A.all_names(node), []
    for scope in [n for n in A.walk(node) if hasattr(n, "body")]:
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(scope, field, None)
            if not isinstance(statements, list):
                continue
            for index in reversed(range(len(statements))):
                made = _made_by_class_method(statements[index], source, locals_, taken)
                if made is not None:
                    path, fdefs, keywords = made
                    count = len(fdefs[0].body[-1].value.elts)  # (the first returns the arguments of cls(...))
                    statements[index:index + 1] = _constructed(statements[index], path, fdefs[-1], count, keywords, taken)
                    defined.extend(fdefs)
    node.body[:0] = defined  # (the definitions first: they bind nothing else)


def _made_by_class_method(s, source, locals_, taken):
    """``(class path, the bodies as FunctionDefs, keyword names)`` for ``name = C.method(...)``
    of a class method so written (module docstring), else None: the last body is the method's,
    returning the arguments it gives ``cls``; those before it, the class methods it reaches
    through ``return cls.other(...)`` (each given a fresh name in ``taken``)."""
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.Call) and not any(isinstance(a, gast.Starred) for a in s.value.args)
            and all(k.arg is not None for k in s.value.keywords)):
        return None
    parts = dotted(s.value.func)
    if parts is None or len(parts) < 2 or parts[0] in locals_:
        return None
    try:
        cls = lookup_path(parts[:-1], source)  # guarded: the class rebound means new code
    except (KeyError, AttributeError):
        return None
    if not isinstance(cls, type):
        return None
    made = _constructor_bodies(parts[:-1], cls, parts[-1], source, locals_, taken, ())
    return None if made is None else (parts[:-1], *made)


def _constructor_bodies(path, cls, name, source, locals_, taken, reached):
    """``(FunctionDefs, keyword names)`` of the class method ``cls.name`` (``cls`` at ``path``)
    ending in ``return cls(...)``, or in ``return cls.other(...)`` of another such (``reached``:
    the methods on the way, none met twice); None for anything else."""
    method = inspect.getattr_static(cls, name, None)
    if name in reached or not isinstance(method, classmethod) or not isinstance(method.__func__, types.FunctionType):
        return None
    fn = method.__func__
    # guarded: its body is pasted, so the method rebound on the class (or its defaults) means new code
    if lookup_path(path + [name, "__func__"], source) is not fn:
        return None
    code = fn.__code__
    if (fn.__globals__ is not source.globals or fn.__closure__ or code.co_filename != source.filename
            or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_GENERATOR)
            or code.co_kwonlyargcount or code.co_posonlyargcount or code.co_argcount < 1):
        return None
    from ..source import capture

    try:
        fdef = A.deepcopy(capture(fn).node)
    except SrcadError:
        return None
    held = fn.__defaults__ or ()  # (guarded with the function) its source may say another value
    if len(held) != len(fdef.args.defaults) or any(type(d) not in LITERAL_TYPES for d in held):
        return None
    fdef.args.defaults = [A.const(d) for d in held]
    me = fdef.args.args[0].id
    last = fdef.body[-1] if fdef.body else None
    made = last.value if isinstance(last, gast.Return) else None
    if not (isinstance(made, gast.Call) and not any(isinstance(a, gast.Starred) for a in made.args)
            and all(k.arg for k in made.keywords)):
        return None
    nested = {id(n) for d in A.walk(fdef) if isinstance(d, SCOPES) and d is not fdef for n in A.walk(d)}
    if (sum(isinstance(n, gast.Return) and id(n) not in nested for n in A.walk(fdef)) != 1
            or sum(isinstance(n, gast.Name) and n.id == me for n in A.walk(fdef)) != 2  # (its parameter, the call)
            or any(isinstance(n, (gast.Global, gast.Nonlocal, gast.Yield, gast.YieldFrom)) for n in A.walk(fdef))
            or (A.names_read(fdef) - _bound(fdef)) & locals_):
        return None
    if isinstance(made.func, gast.Name) and made.func.id == me:  # return cls(...): its arguments
        earlier, keywords = [], [k.arg for k in made.keywords]
        last.value = gast.Tuple(elts=made.args + [k.value for k in made.keywords], ctx=gast.Load())
    elif dotted(made.func) is not None and len(dotted(made.func)) == 2 and dotted(made.func)[0] == me:
        # return cls.other(...): the arguments other gives cls, other bound to the same class
        found = _constructor_bodies(path, cls, made.func.attr, source, locals_, taken, reached + (name,))
        if found is None:
            return None
        earlier, keywords = found
        last.value.func = A.load(earlier[-1].name)
    else:
        return None
    fdef.name = fresh_in(f"_{'_'.join(path)}_{name}", taken)
    taken.add(fdef.name)
    fdef.args.args = fdef.args.args[1:]
    fdef.decorator_list = []
    return earlier + [fdef], keywords


def _bound(fdef):
    """The names ``fdef`` binds (its parameters among them)."""
    return {n.id for n in A.walk(fdef) if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}


def _constructed(s, path, fdef, count, keywords, taken):
    """The statements replacing ``s``: the ``count`` arguments from ``fdef``'s call, then the construction."""
    names = [fresh_in(f"_{fdef.name.strip('_')}_{k}", taken) for k in range(count)]
    taken.update(names)
    arguments = gast.Assign(targets=[gast.Tuple(elts=[A.store(n) for n in names], ctx=gast.Store())],
                            value=gast.Call(func=A.load(fdef.name), args=s.value.args, keywords=s.value.keywords),
                            type_comment=None)
    positional = names[:count - len(keywords)]
    given = [gast.keyword(arg=k, value=A.load(n)) for k, n in zip(keywords, names[count - len(keywords):])]
    construction = gast.Assign(targets=s.targets, value=gast.Call(
        func=path_expr(path), args=[A.load(n) for n in positional], keywords=given), type_comment=None)
    new = [arguments if names else gast.Expr(value=arguments.value), construction]
    for statement in new:
        for n in A.walk(statement):
            gast.copy_location(n, s)
    return new

