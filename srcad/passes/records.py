"""Records built in differentiated code: ``State(x, v)`` of a dataclass or a named tuple.

A record class whose constructor only stores its arguments as its fields (a dataclass with
the ``__init__`` ``dataclasses`` writes and no ``__post_init__``; a named tuple) is built
as ``new_record(State, (x, v))``: the arguments bound to the fields in order, keywords and
literal defaults filled in, so the derivative of the construction is the tuple's (rules in
``srcad.rules.records``) and reading a field (``s.pos``) is differentiated as for a record
passed in. Anything else is refused at the call: ``*args``/``**kwargs``, a missing field,
a default made by a factory. A functional update of a record whose class srcad knows,
``dataclasses.replace(s, x=e)`` or a named tuple's ``s._replace(x=e)``, is that construction:
``new_record(State, (e, s.v))`` (``record_replace``).

>>> import dataclasses, gast
>>> from srcad.source import capture
>>> from srcad.passes.resolve_calls import resolve_calls
>>> from srcad.passes.normalize import normalize
>>> from srcad.astutil import to_source
>>> @dataclasses.dataclass
... class State:
...     pos: float
...     vel: float = 0.0
>>> def f(x):
...     s = State(x * 2.0)
...     return s.pos
>>> src = capture(f)
>>> print(to_source(normalize(resolve_calls(src.node, src), src)).strip())
def f(x):
    _t1 = x * 2.0
    _t2 = _t1, 0.0
    s = new_record_(State_, _t2)
    _t3 = s.pos
    return _t3
"""
import collections
import dataclasses
import inspect

import gast

from .. import astutil as A
from ..code_reading import written_by_hand
from ..errors import check_record_class
from ..naming import BUILTIN
from ..rules.records import new_record
from .callees import Callee, dotted, lookup_path

def record_fields(cls):
    """``(name, default)`` for each field of the record class ``cls`` in constructor order
    (``inspect.Parameter.empty`` where there is no default); None if ``cls`` is no record
    class whose constructor only stores its arguments."""
    if not isinstance(cls, type):
        return None
    if issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple):
        names, make = cls._fields, cls.__new__
    elif dataclasses.is_dataclass(cls) and not hasattr(cls, "__post_init__"):
        names, make = tuple(f.name for f in dataclasses.fields(cls)), cls.__init__
    else:
        return None
    code = getattr(make, "__code__", None)
    if code is None or not code.co_filename.startswith("<"):  # written by hand, not generated
        return None
    if written_protocol(cls) is not None:
        return None
    params = list(inspect.signature(cls).parameters.values())
    if tuple(p.name for p in params) != names or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return None  # an InitVar, a field with init=False
    return [(p.name, p.default) for p in params]


# Special methods a record class of yours may define itself: none of them changes what its
# operators, items, fields or construction do, which srcad differentiates as the record's
# (``__call__`` is a method srcad reads like any other: ``m(x)`` of a layer holding its weights).
_HARMLESS = frozenset({"__repr__", "__str__", "__format__", "__hash__", "__eq__", "__ne__", "__lt__", "__le__",
                       "__gt__", "__ge__", "__init_subclass__", "__class_getitem__", "__dir__", "__sizeof__",
                       "__call__"})


def written_protocol(cls):
    """The name of a special method (or a named tuple's ``_replace``/``_make``) that a class of
    yours in ``cls``'s bases writes by hand, other than those in ``_HARMLESS``: its ``+``,
    ``s[0]``, ``s.a``, ``len(s)``, construction or ``_replace`` is then not the record's that
    srcad differentiates (a ``__mul__`` giving a dot product, a ``__getitem__`` counting from
    the end, a ``__setattr__`` storing twice the value); else None."""
    return written_by_hand(cls, lambda name: name not in _HARMLESS and (
        name.startswith("__") and name.endswith("__") or name in ("_replace", "_make")))


def record_call(norm, e, cls, fields, out):
    """The call ``e`` of the record class ``cls`` (``fields``: ``record_fields(cls)``) as
    ``new_record(cls, (field values...))``, its statements emitted into ``out``."""
    names = [name for name, _ in fields]
    if any(isinstance(a, gast.Starred) for a in e.args) or any(k.arg is None for k in e.keywords):
        raise norm.error(f"srcad builds a {cls.__name__} from its fields given one by one; "
                         "write them out instead of * or **", e)
    if len(e.args) > len(names):
        raise norm.error(f"{cls.__name__} has {len(names)} fields but the call gives {len(e.args)}", e)
    values = dict(zip(names, e.args))
    for k in e.keywords:
        if k.arg not in names or k.arg in values:
            raise norm.error(f"{cls.__name__}(...) given the field {k.arg!r} twice or a field it does not have", e)
        values[k.arg] = k.value
    defaulted = [name for name, _ in fields if name not in values]
    if defaulted:  # the defaults written into the code are guarded: they can be rebound
        try:
            lookup_path(dotted(e.func) + ["__new__" if issubclass(cls, tuple) else "__init__"], norm.source)
        except (TypeError, KeyError, AttributeError):  # not a dotted name of the module or a closure
            raise norm.error(f"{cls.__name__}(...) without its field {defaulted[0]!r}: srcad reads a record's "
                             "defaults only where the class is called by a global name; pass the field", e) from None
    for name, default in fields:
        if name in values:
            continue
        if default is inspect.Parameter.empty:
            raise norm.error(f"{cls.__name__}(...) without its field {name!r}", e)
        if type(default) not in A.LITERAL_TYPES:
            raise norm.error(f"the default of {cls.__name__}.{name} is not a literal (a factory or an object): "
                             "srcad does not make it; pass the field", e)
        values[name] = A.const(default)
    return _new_record(norm, cls, [values[n] for n in names], e, out)


def _new_record(norm, cls, values, e, out):
    """``new_record(cls, (values...))`` for the call ``e``, the tuple's statements emitted into ``out``."""
    items = norm.atom(gast.Tuple(elts=values, ctx=gast.Load()), out)
    maker = A.set_anno(A.load(norm.namer.unique("new_record")), BUILTIN, ("new_record", new_record))
    call = gast.Call(func=maker, args=[_class_name(norm, cls), items], keywords=[])
    A.set_anno(call, "callee", Callee("object", obj=new_record, name="new_record"))
    return gast.copy_location(call, e)


def _class_name(norm, cls):
    return A.set_anno(A.load(norm.namer.unique(cls.__name__)), BUILTIN, (cls.__name__, cls))


def record_replace(norm, e, callee, out):
    """``dataclasses.replace(s, x=e)`` or ``s._replace(x=e)`` where ``norm.record_classes`` says
    ``s`` holds a record of the class ``C`` (``method_calls.record_locals``, the classes the code
    is compiled for, a helper's parameter given one) as ``new_record(C, (e, s.v))``: the
    construction with the fields not given read off ``s``, evaluated in Python's order (``s``,
    then the keywords as written). ``dataclasses.replace`` is refused where the class is not
    known or not a record's; ``s._replace`` then stays a method call, which has no rule
    (``errors.no_method_rule`` says why). Refused too: a call Python does not run (a positional
    field, a field the class lacks). None for any other call."""
    if callee.kind == "object" and callee.obj is dataclasses.replace:
        named_tuple, what = False, "dataclasses.replace(s, ...)"
        if len(e.args) != 1 or isinstance(e.args[0], gast.Starred) or any(k.arg is None for k in e.keywords):
            raise norm.error("srcad lowers dataclasses.replace(s, field=value, ...) with the record as its one "
                             "positional argument and the new fields by keyword, written out (no * or **); "
                             "Python takes no other field positionally either", e)
        receiver = e.args[0]
    elif callee.kind == "method" and callee.name == "_replace" and isinstance(e.func, gast.Attribute):
        named_tuple, what, receiver = True, "s._replace(...)", e.func.value
    else:
        return None
    path = dotted(receiver)
    cls = norm.record_classes.get(".".join(path)) if path else None
    fields = None if cls is None else record_fields(cls)
    if named_tuple:
        if fields is None or not issubclass(cls, tuple) or not namedtuple_methods(cls):
            return None  # not a named tuple srcad knows there, or one with a _replace or _make of its own
        if e.args or any(k.arg is None for k in e.keywords):
            raise norm.error("s._replace takes the new fields by keyword, written out (no * or **): "
                             "s._replace(x=...); Python takes none positionally", e)
    elif cls is None or issubclass(cls, tuple):
        known = f"'{'.'.join(path)}' is a {cls.__qualname__}, not a dataclass" if cls is not None else (
            "srcad does not know the class of what it is given here")
        raise norm.error(
            f"srcad lowers {what} only where it knows s's class: a record built in this function "
            "(s = State(...), then bound again only to dataclasses.replace(s, ...), s._replace(...) or the result "
            "of a function given s), an argument of the differentiated function, or a parameter of a helper given "
            f"one of these; {known}. Build the new record with its class instead (State(x=..., v=s.v))", e)
    elif fields is None:
        raise norm.error(f"srcad lowers {what} as the construction {cls.__name__}(...), which it differentiates "
                         f"only for a record whose constructor just stores its fields ({cls.__name__} has a "
                         "__post_init__, an InitVar or a field with init=False); build the new record yourself", e)
    names = [name for name, _ in fields]
    for k in e.keywords:
        if k.arg not in names:
            raise norm.error(f"{cls.__name__} has no field {k.arg!r} (its fields: {', '.join(names)}); {what} "
                             f"with it raises {'ValueError' if named_tuple else 'TypeError'} in Python", e)
    record = norm.atom(receiver, out)
    given = {k.arg: norm.atom(k.value, out) for k in e.keywords}
    values = [given[n] if n in given else gast.Attribute(value=A.deepcopy(record), attr=n, ctx=gast.Load())
              for n in names]
    return _new_record(norm, cls, values, e, out)


def namedtuple_methods(cls):
    """Are ``cls._replace`` and ``cls._make`` (which ``_replace`` calls) the ones ``namedtuple`` writes?"""
    def code(owner, name):
        attr = inspect.getattr_static(owner, name, None)
        return getattr(getattr(attr, "__func__", attr), "__code__", None)

    return all(code(cls, name) is code(_NAMEDTUPLE, name) is not None for name in ("_replace", "_make"))


_NAMEDTUPLE = collections.namedtuple("_NAMEDTUPLE", "field")


def record_check(norm, name, cls, node):
    """The statement checking, when the code runs, that ``name`` holds a ``cls`` after ``node``
    bound it to what a function returned (``method_calls.record_locals`` took that on trust)."""
    checker = A.set_anno(A.load(norm.namer.unique("check_record_class")), BUILTIN,
                         ("check_record_class", check_record_class))
    where = f"{norm.source.filename}:{getattr(node, 'lineno', '?')}: "
    check = gast.Call(func=checker, args=[A.load(name), _class_name(norm, cls), A.const(name), A.const(where)],
                      keywords=[])
    A.set_anno(check, "callee", Callee("object", obj=check_record_class, name="check_record_class"))
    return gast.copy_location(gast.Expr(value=check), node)
