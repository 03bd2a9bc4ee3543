"""Records built in differentiated code: ``State(x, v)`` of a dataclass or a named tuple.

A record class whose constructor only stores its arguments as its fields (a dataclass with
the ``__init__`` ``dataclasses`` writes and no ``__post_init__``; a named tuple) is built
as ``new_record(State, (x, v))``: the arguments bound to the fields in order, keywords and
literal defaults filled in, so the derivative of the construction is the tuple's (rules in
``srcad.rules.records``) and reading a field (``s.pos``) is differentiated as for a record
passed in. Anything else is refused at the call: ``*args``/``**kwargs``, a missing field,
a default made by a factory.

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
import dataclasses
import inspect

import gast

from .. import astutil as A
from ..naming import BUILTIN
from ..rules.records import new_record
from .callees import dotted, lookup_path

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
    params = list(inspect.signature(cls).parameters.values())
    if tuple(p.name for p in params) != names or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return None  # an InitVar, a field with init=False
    return [(p.name, p.default) for p in params]


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
    items = norm.atom(gast.Tuple(elts=[values[n] for n in names], ctx=gast.Load()), out)
    record_class = A.set_anno(A.load(norm.namer.unique(cls.__name__)), BUILTIN, (cls.__name__, cls))
    maker = A.set_anno(A.load(norm.namer.unique("new_record")), BUILTIN, ("new_record", new_record))
    from .callees import Callee

    call = gast.Call(func=maker, args=[record_class, items], keywords=[])
    A.set_anno(call, "callee", Callee("object", obj=new_record, name="new_record"))
    return gast.copy_location(call, e)
