"""What srcad accepts as a function to differentiate and as its arguments.

- ``unbind(fn)``: the plain Python function behind a callable, the arguments bound in
  front of the caller's (``self`` of a bound method, a ``functools.partial``'s) and the
  keywords fixed by a partial.
- ``Signature``: the function's parameters; turns ``wrt`` into parameter names when the
  transform is made (a misspelled name fails then, with a suggestion) and binds a call's
  arguments to them.
- ``check_arguments``: an allowlist of argument values. Arrays must be exactly
  ``np.ndarray`` (no ``np.matrix``, masked array or other subclass) or a NumPy-protocol
  array (``srcad.protocol.protocol_array``: Dask arrays, and duck arrays such as CuPy's), nothing may be
  complex, and what is differentiated must be float (arrays, NumPy scalars, Python
  floats, and lists, tuples, dicts, named tuples and dataclasses of them; a record's field
  may not be named like an array attribute such as ``T`` or ``shape``).
- ``checked_cotangent``: the same for a cotangent ``v`` (integers become floats).
- ``snapshot``: a private copy of arguments, so a pullback computes the derivative at the
  values the forward pass saw even if the caller changes its arrays afterwards.

>>> sig = Signature(lambda x, scale=2.0: x * scale)
>>> sig.wrt_names((0, "scale"))
('x', 'scale')
>>> sig.wrt_names(("scael",))
Traceback (most recent call last):
...
srcad.errors.WrtError: <doctest srcad.arguments[0]>:1: <lambda>: wrt='scael' is not a parameter (parameters: x, scale); did you mean 'scale'?
"""
import collections
import copy
import difflib
import functools
import inspect
import numbers
import reprlib
import types
import weakref

import numpy as np

from . import sourcemap
from .code_reading import first_written_by_hand
from .errors import ArgumentError, CotangentError, WrtError
from .guards import Guard, defaults_of, same_defaults
from .held_objects import CONTAINERS
from .registry import ATTRIBUTES, NONDIFF_ATTRIBUTES
from .pytrees import field_names, is_dataclass_instance, rebuilt, remade
from .protocol import copy_array, protocol_array



def is_structure(x):
    """Does ``x`` hold values srcad differentiates item by item: a list, tuple (named too),
    dict or dataclass instance (a pytree node, in JAX's words)?"""
    return isinstance(x, CONTAINERS) or is_dataclass_instance(x)
_CALL_DESCRIPTORS = (types.FunctionType, staticmethod, classmethod, functools.partialmethod)
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def unbind(fn, guards=None):
    """``(function, prefix, fixed, descriptor)`` for a callable: the plain function that
    runs, the positional arguments bound in front of the caller's, keywords fixed by a
    ``functools.partial``, and ``"static"``/``"class"`` for a staticmethod/classmethod object.
    An object whose class defines ``__call__`` is that method bound to it. ``guards``, a list,
    gets the guards that calling ``fn`` still runs that: a partial's keywords (a dict, changed
    in place) and the ``__call__`` of an object's class are the same objects."""
    prefix, fixed, descriptor = (), {}, None
    while True:
        if isinstance(fn, functools.partial):  # srcad.differentiable objects are partials too
            if guards is not None and getattr(fn, "__srcad_function__", None) is None:  # (not srcad's own)
                guards.append(Guard("partial keywords", fn, repr(fn.func), (), tuple(fn.keywords.items())))
            prefix = fn.args + prefix
            fixed = {**fn.keywords, **fixed}
            fn = fn.func
        elif isinstance(fn, types.MethodType):
            prefix = (fn.__self__,) + prefix
            fn = fn.__func__
        elif isinstance(fn, (staticmethod, classmethod)):
            descriptor = "static" if isinstance(fn, staticmethod) else "class"
            fn = fn.__func__
        elif getattr(fn, "__srcad_function__", fn) is not fn:  # srcad.custom_vjp
            fn = fn.__srcad_function__
        elif not isinstance(fn, type) and isinstance(inspect.getattr_static(type(fn), "__call__", None),
                                                     _CALL_DESCRIPTORS):
            static = inspect.getattr_static(type(fn), "__call__")
            if guards is not None:  # the object's class now, and what it holds (the descriptor as it is)
                guards.append(Guard("static", fn, type(fn).__qualname__, ("__call__",), static))
            if isinstance(static, types.FunctionType):
                prefix = (fn,) + prefix  # an object with a __call__ method (a model): that method, bound to it
                fn = static
            else:  # a staticmethod, classmethod or partialmethod: what it gives bound to the object
                fn = fn.__call__
        else:
            return fn, prefix, fixed, descriptor


def check_callable(fn):
    """Refuse, saying what it is, a value to differentiate that is no function (nor a
    method descriptor, ``classmethod`` under a decorator: ``unbind``)."""
    if not (callable(fn) or isinstance(fn, _CALL_DESCRIPTORS)):
        raise ArgumentError(f"srcad differentiates a function, and was given {type(fn).__name__} "
                            f"{reprlib.repr(fn)}: pass the function itself (a def, a lambda, a bound method, "
                            "a functools.partial)")
    if isinstance(fn, type):  # (making an object is no function of numbers srcad differentiates)
        raise ArgumentError(f"srcad differentiates a function, and was given the class {fn.__qualname__}: pass a "
                            "function that makes and uses its objects, or an object's method (obj.loss, or an "
                            "object with a __call__ method)")


def where(fn):
    """``file:line: name`` of a Python function, for messages."""
    code = getattr(fn, "__code__", None)
    name = getattr(fn, "__qualname__", repr(fn))
    origin = sourcemap.generated_from(code.co_filename) if code else None
    if origin is not None:  # a derivative srcad made (hvp is jvp of grad): name the user's function
        return f"{origin[0]}:{origin[1]}: {origin[2]} (srcad's derivative of it)"
    return f"{code.co_filename}:{code.co_firstlineno}: {name}" if code else name


_SIGNATURES = weakref.WeakKeyDictionary()  # function -> its Signature with nothing bound


def signature(fn, bound=0):
    """``Signature(fn, bound)``, made once per function (``srcad.grad(f)`` in a loop stays cheap)."""
    sig = _SIGNATURES.get(fn)
    if sig is None:
        sig = _SIGNATURES[fn] = Signature(fn)
    return sig.shifted(bound) if bound else sig


class Signature:
    """The parameters of ``fn`` as a caller sees them once ``bound`` leading positional
    parameters are filled (``self`` of a method, a partial's arguments)."""

    def __init__(self, fn, bound=0):
        # no strong reference to fn: the table of signatures must not keep functions alive
        self.where = where(fn)
        self.wrapper_hint = _wrapper_hint(fn)
        self.signature = inspect.signature(fn, follow_wrapped=False)
        try:  # its defaults may be rebound later (f.__defaults__ = ...): bind reads them then
            self._function = weakref.ref(fn)
        except TypeError:
            self._function = None
        self._made_with = defaults_of(fn)
        params = list(self.signature.parameters.values())
        self.names = tuple(p.name for p in params)
        self.positional = tuple(p.name for p in params if p.kind in _POSITIONAL)
        self.varargs = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), None)
        self.varkw = next((p.name for p in params if p.kind is p.VAR_KEYWORD), None)
        self.simple = all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)
        self.required_names = tuple(p.name for p in params if p.kind in _POSITIONAL and p.default is p.empty)
        self.required = len(self.required_names)
        self.bound = bound
        self.visible = self.positional[bound:]  # what wrt=0, 1, ... denote

    def shifted(self, more):
        """This signature with ``more`` leading parameters bound too (a method's ``self``)."""
        new = object.__new__(Signature)
        new.__dict__.update(self.__dict__)
        new.bound = self.bound + more
        new.visible = self.positional[new.bound:]
        return new

    def wrt_names(self, wrt):
        """``wrt`` (positions among the caller's arguments, or names) as parameter names."""
        names = []
        for w in wrt:
            if isinstance(w, bool) or not isinstance(w, (int, str)):
                raise WrtError(f"{self.where}: wrt={w!r}: wrt is a parameter's position or name, or a tuple of them")
            if isinstance(w, int):
                if w < 0 and (self.varargs is not None or not set(self.visible) <= set(self.required_names)):
                    raise WrtError(f"{self.where}: wrt={w} (or argnums={w}): JAX counts a negative position from the "
                                   f"last argument a call passes, srcad would count from the function's last "
                                   f"parameter, and a call may pass fewer (a parameter with a default, *args): give "
                                   f"the position from the front or the parameter's name{self.wrapper_hint}")
                if -len(self.visible) <= w < len(self.visible):
                    names.append(self.visible[w])
                    continue
                if self.varargs is not None:
                    raise WrtError(f"{self.where}: wrt={w} falls in *{self.varargs}; srcad differentiates with "
                                   f"respect to named parameters: write the function with one parameter per "
                                   f"argument (or pass wrt={self.varargs!r} for the whole tuple){self.wrapper_hint}")
                raise WrtError(f"{self.where}: wrt={w} but the function takes {len(self.visible)} "
                               f"argument{'s' if len(self.visible) != 1 else ''} ({', '.join(self.visible)})")
            if w in self.positional[: self.bound]:
                raise WrtError(f"{self.where}: wrt={w!r} is bound already (a method's self or a partial's "
                               "argument) and is held constant")
            if w not in self.names:
                close = [n for n in self.names if n.lower() == w.lower()] or difflib.get_close_matches(
                    w, self.names, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise WrtError(f"{self.where}: wrt={w!r} is not a parameter (parameters: "
                               f"{', '.join(self.names)}){hint}{self.wrapper_hint}")
            names.append(w)
        if len(set(names)) != len(names):
            raise WrtError(f"{self.where}: wrt={tuple(wrt)!r} names a parameter twice")
        return tuple(names)

    def cotangent_by_keyword(self):
        """May ``v=`` pass the cotangent? Not when it would bind a parameter (or ``**kwargs``)."""
        return "v" not in self.names and self.varkw is None

    def needed(self, keywords):
        """How many positional arguments the caller must pass, given ``keywords``: beyond
        them a positional argument is the cotangent (None: with ``*args`` none is)."""
        if self.varargs is not None:
            return None
        required = self.required_names[self.bound:]
        return sum(1 for name in required if name not in keywords) if keywords else len(required)

    def bind(self, args, kwargs):
        """``(positional, keywords)`` to call the function (and its generated code) with;
        for plain positional parameters every argument, defaults included, is positional."""
        n = len(args)
        if not kwargs and self.simple and self.required <= n <= len(self.names):
            return args, {}
        try:
            bound = self.current().bind(*args, **kwargs)
        except TypeError as exc:
            raise ArgumentError(f"{self.where}: {exc}") from None
        bound.apply_defaults()  # every parameter by position, *args a tuple and **kwargs a dict
        return tuple(bound.arguments.values()), {}

    def split(self, args, kwargs, fixed):
        """A call with keywords rearranged as ``(positional, keywords)`` for the transforms that
        find their arguments by position (``srcad.derivatives``): every positional parameter by
        position, its default where left out, keywords for the keyword-only ones and
        ``**kwargs``. ``args`` starts with the bound prefix; ``fixed`` (a partial's keywords)
        is left out, the partial passes it, and the positional parameters after one it fixes
        stay keywords."""
        try:
            bound = self.current().bind(*args, **{**fixed, **kwargs})
        except TypeError as exc:
            raise ArgumentError(f"{self.where}: {exc}") from None
        bound.apply_defaults()
        positional, keywords, by_keyword = [], {}, False
        for param in self.current().parameters.values():
            name, value = param.name, bound.arguments[param.name]
            by_keyword = by_keyword or (name in fixed and param.kind in _POSITIONAL)
            if name in fixed and name not in kwargs:
                continue
            if param.kind is param.VAR_POSITIONAL:
                positional.extend(value)
            elif param.kind is param.VAR_KEYWORD:
                keywords.update((k, a) for k, a in value.items() if k not in fixed or k in kwargs)
            elif param.kind in _POSITIONAL and not by_keyword:
                positional.append(value)
            else:
                keywords[name] = value
        return tuple(positional), keywords

    def with_defaults(self, args):
        """``args`` (from ``bind``, all positional) followed by the defaults of the parameters
        after them, for ``vjp``, which copies its arguments: a default array changed after the
        forward pass must not reach the pullback."""
        if not self.simple or len(args) >= len(self.names):
            return args
        rest = list(self.current().parameters.values())[len(args):]
        return tuple(args) + tuple(p.default for p in rest)

    def current(self):
        """The ``inspect.Signature`` with the function's default arguments as they are now."""
        fn = self._function() if self._function is not None else None
        if fn is not None:
            now = defaults_of(fn)
            if not same_defaults(now, self._made_with):
                self.signature, self._made_with = inspect.signature(fn, follow_wrapped=False), now
        return self.signature

    def bind_tangents(self, args, tangents, fixed):
        """``bind`` for forward mode: ``(arguments, tangents)`` with every parameter by
        position; a parameter without a tangent (a default, a fixed keyword) gets None, and
        ``*args`` a tuple of tangents (zeros for those not given) or None."""
        values, _ = self.bind(args, fixed)
        try:
            given = self.signature.bind_partial(*tangents).arguments
        except TypeError as exc:
            raise ArgumentError(f"{self.where}: {exc}") from None
        out = []
        for name, value in zip(self.names, values):
            t = given.get(name)
            if name == self.varargs and t is not None:
                t = None if all(u is None for u in t) else tuple(
                    np.zeros(np.shape(a)) if u is None else u for u, a in zip(t, value))
            out.append(None if name == self.varkw else t)
        return tuple(values), tuple(out)

    def values(self, positional, keywords, names):
        """The arguments bound to parameters ``names`` (defaults where not passed)."""
        if not self.simple and not keywords and len(positional) == len(self.names):  # as ``bind`` gives them
            given = dict(zip(self.names, positional))
            return [given[name] for name in names]
        out = []
        params = self.signature.parameters
        for name in names:
            if name in self.positional and self.positional.index(name) < len(positional):
                out.append(positional[self.positional.index(name)])
            elif name in keywords:
                out.append(keywords[name])
            elif name == self.varargs:
                out.append(tuple(positional[len(self.positional):]))
            else:
                out.append(params[name].default if params[name].default is not params[name].empty else None)
        return out


def _wrapper_hint(fn):
    inner = getattr(fn, "__wrapped__", None)
    if inner is None:
        return ""
    return (f". {fn.__qualname__} is a wrapper another decorator made around {where(inner)}, and srcad "
            "differentiates the code that runs: apply srcad.differentiable to the function before the other "
            "decorator, or give the wrapper the function's parameters")


def check_arguments(where_, names, values, differentiated):
    """Raise ``ArgumentError`` for an argument outside the allowlist (see the module doc)."""
    for name, value in zip(names, values):
        why = _refusal(value, name in differentiated)
        if why is not None:
            raise ArgumentError(f"{where_}: argument {name!r} is {why}")


def _refusal(x, differentiated):
    cls = x.__class__
    if cls is np.ndarray or protocol_array(x):
        if cls is not np.ndarray and not all(isinstance(n, numbers.Integral) for n in x.shape):
            return (f"a {cls.__module__}.{cls.__qualname__} of unknown shape {x.shape}; srcad decides "
                    "derivatives from shapes: give it known chunk sizes first (x.compute_chunk_sizes())")
        kind = x.dtype.kind
        if kind == "c":
            return f"a complex array; {_COMPLEX}"
        if differentiated and kind != "f":
            return (f"an array of dtype {x.dtype}, and srcad differentiates only with respect to floats: "
                    "pass it converted with .astype(float), or leave it out of wrt")
        return None
    if isinstance(x, np.ndarray):
        return (f"a {cls.__module__}.{cls.__qualname__}, a subclass of np.ndarray that srcad does not model "
                "(np.matrix multiplies with *, a masked array ignores masked entries); pass a plain "
                "array (np.asarray(x), or for a masked array x.filled(value))")
    record = is_dataclass_instance(x) or (isinstance(x, tuple) and hasattr(cls, "_fields"))
    if isinstance(x, (dict, list, tuple)) or record:
        base = next((t for t in (dict, list, tuple) if isinstance(x, t)), None)
        changed = [m for m in _READ_BY if base is not None and differentiated and getattr(cls, m, None) is not getattr(
            base, m, None) and not (cls.__module__ == "collections" and cls.__name__ in ("OrderedDict", "defaultdict"))]
        if changed:
            return (f"a {cls.__qualname__}, a subclass of {base.__name__} with its own {changed[0]}: srcad reads and "
                    f"differentiates a {base.__name__} argument as a plain {base.__name__}; pass {base.__name__}(x), "
                    "in the order your code reads it")
        # (every class but Python's own is read, installed ones too: a standalone export of this
        # check must not carry srcad's reading of where packages are installed)
        reads = first_written_by_hand([k for k in cls.__mro__ if k.__module__ != "builtins"],
                                      _ATTRIBUTE_ACCESS.__contains__) if record and differentiated else None
        if reads is not None:
            return (f"a {cls.__qualname__}, whose class writes its own {reads}: srcad reads and differentiates a "
                    "record argument by its fields as stored; remove it, or pass the arrays it holds")
        if record and differentiated:
            fields = field_names(x) if is_dataclass_instance(x) else cls._fields
            clash = next((f for f in fields if f in ATTRIBUTES or f in NONDIFF_ATTRIBUTES), None)
            if clash is not None:
                return (f"a {cls.__name__} with a field named {clash!r}, and srcad reads .{clash} as the array "
                        f"attribute of that name: rename the field")
        items = x.values() if isinstance(x, dict) else [getattr(x, f) for f in field_names(x)] if (
            is_dataclass_instance(x)) else x
        for item in items:
            why = _refusal(item, differentiated)
            if why is not None:
                return f"a {cls.__name__} holding {why}"
        return None
    if isinstance(x, (complex, np.complexfloating)):
        return f"a complex number; {_COMPLEX}"
    if differentiated and not (cls is float or isinstance(x, np.floating)):
        if isinstance(x, (numbers.Integral, np.bool_)):
            return (f"an integer ({x!r}), and srcad differentiates only with respect to floats: pass "
                    f"{float(x)!r}, or leave it out of wrt")
        advice = (": a scipy.sparse matrix is taken only as the constant operand of a matrix product (leave it out "
                  "of wrt); pass .toarray() of it to differentiate with respect to its entries"
                  ) if cls.__module__.startswith("scipy.sparse") else (
            f": make {cls.__name__} a dataclass (@dataclasses.dataclass, its arrays as fields), whose "
            "gradient is a copy with the fields' gradients, or pass the arrays it holds"
        ) if hasattr(x, "__dict__") and not isinstance(x, type) and not callable(x) else ""
        return (f"a {cls.__name__}, and srcad differentiates only with respect to float arrays and numbers "
                f"(and lists, tuples, dicts, named tuples and dataclasses of them){advice}")
    return None


# the special methods that may make a record's fields read otherwise than as stored
_ATTRIBUTE_ACCESS = frozenset({"__getattribute__", "__getattr__", "__setattr__", "__delattr__"})

# the methods a subclass of dict, list or tuple may override to be read differently
_READ_BY = ("__iter__", "__getitem__", "__len__", "keys", "values", "items", "get", "__reversed__")

_COMPLEX = ("srcad differentiates real arrays only (no convention for complex derivatives is "
            "implemented): pass the real and imaginary parts as separate float arrays")


def checked_cotangent(v, where_, what="cotangent"):
    """``v`` as a cotangent (or a tangent): float arrays and numbers (integer ones become
    float) in tuples, lists and dicts; anything else is a ``CotangentError``. Cheap for a
    float array."""
    cls = v.__class__
    if v is None or cls is float:
        return v
    if cls is np.ndarray:
        kind = v.dtype.kind
        if kind == "f":
            return v
        if kind in "iu":
            return v.astype(np.float64)
    elif cls is dict:
        return {k: checked_cotangent(item, where_, what) for k, item in v.items()}
    elif cls is list or cls is tuple:
        return cls(checked_cotangent(item, where_, what) for item in v)
    elif isinstance(v, tuple) and hasattr(v, "_fields"):  # a named tuple output's cotangent
        return remade(v, [checked_cotangent(item, where_, what) for item in v])
    elif isinstance(v, np.floating):
        return v
    elif is_dataclass_instance(v):  # a dataclass argument's tangent
        return rebuilt(v, {k: checked_cotangent(getattr(v, k), where_, what) for k in field_names(v)})
    elif protocol_array(v) and v.dtype.kind in "fiu":
        return v if v.dtype.kind == "f" else v.astype(np.float64)  # lazily, where v lives
    elif isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return float(v)
    kind = (f"an array of dtype {v.dtype}" if cls is np.ndarray or protocol_array(v)
            else f"a {cls.__module__}.{cls.__qualname__} (an ndarray subclass)" if isinstance(v, np.ndarray)
            else f"a {cls.__name__}")
    extra = f"; {_COMPLEX}" if isinstance(v, (complex, np.complexfloating)) or (
        (isinstance(v, np.ndarray) or protocol_array(v)) and v.dtype.kind == "c") else ""
    raise CotangentError(f"{where_}: the {what} is {kind}; pass a float array or number "
                         f"(a tuple or dict of them for a tuple or dict output){extra}")


def snapshot(x):
    """A copy of ``x``'s arrays (inside lists, tuples, dicts, deques and dataclasses, subclasses
    of them too); other values as they are."""
    cls = x.__class__
    if cls is np.ndarray:
        return x.copy()
    if protocol_array(x):
        return copy_array(x)
    if cls is list:
        return [snapshot(item) for item in x]
    if cls is dict:
        return {k: snapshot(item) for k, item in x.items()}
    if isinstance(x, dict):  # OrderedDict, defaultdict: a copy of the same class (its default factory too)
        out = copy.copy(x)
        for k, item in x.items():
            out[k] = snapshot(item)
        return out
    if isinstance(x, collections.deque):
        return collections.deque((snapshot(item) for item in x), maxlen=x.maxlen)
    if isinstance(x, list):
        out = copy.copy(x)
        out[:] = [snapshot(item) for item in x]
        return out
    if isinstance(x, tuple):
        items = [snapshot(item) for item in x]
        return remade(x, items) if hasattr(x, "_fields") else cls(items)
    if is_dataclass_instance(x):
        return rebuilt(x, {k: snapshot(getattr(x, k)) for k in field_names(x)})
    return x
