"""What a value in a checkpointed loop's body is known to be, for ``checkpoint_state``: reading
an attribute of an object, indexing it or calling one of its methods runs code of its class
(a property, ``__getitem__``, a method named ``item``), so what the body may change depends on
the value's type, not on the name read.

Known: an array or number (shape inference's ``Spec``), a list, tuple or dict srcad tracks, a
string, a module, an object reachable when srcad compiles (a global or closure value: its
value now; an argument of a class of yours: its class, which the compiled code is specialised
on), a record (named tuple, dataclass) every binding of a name makes afresh, arithmetic on values
``runtime.numeric_constant`` checks where they are read (``p.k * x``: a number or an array once
the check passes, ``passes.complex_values``), the result of a function of yours that returns
an array or a number given what it is passed (``checkpoint_state`` reads it) or of srcad's own
helpers given arrays (in a derivative srcad made, ``as_real(q)``), and a random
generator made in the body from literal seeds (``np.random.default_rng(42)``: each
recomputation makes it again and draws the same numbers). Anything else is unknown.

>>> import collections
>>> attribute_problem(collections.namedtuple("P", "W b"), "W") is None
True
>>> attribute_problem(np.random.Generator, "bit_generator")
'a random generator'
"""
import functools
import numbers
import types

import gast
import numpy as np

from .. import astutil as A
from .. import registry, runtime
from ..code_reading import attribute_now, defines_getattribute, installed_class, installed_file
from ..naming import BUILTIN
from ..rule_templates import ElementwiseRule, PartialsRule
from ..rules.records import new_record
from .callees import dotted, local_names, lookup_path
from .random_draws import NUMBER_DRAWS, generator_made
from .records import record_fields
from .shape_values import UNKNOWN, Spec

ARRAY, CONTAINER, STRING, MODULE, GENERATOR = "array", "container", "string", "module", "generator"
SAFE = {ARRAY, CONTAINER, STRING, MODULE}  # reading them runs NumPy's or Python's code only
_RANDOM_STATES = (np.random.Generator, np.random.RandomState, np.random.BitGenerator)
_SEEDED = {np.random.default_rng, np.random.RandomState}
# Methods that make an object, which nothing given it calls.
_CONSTRUCTION = {"__init__", "__new__", "__init_subclass__", "__post_init__", "__class_getitem__", "__set_name__"}
# Descriptors whose reading runs no code of yours: a method, a slot, a named tuple's field.
_PLAIN_DESCRIPTORS = (types.FunctionType, staticmethod, classmethod, types.MemberDescriptorType,
                      types.GetSetDescriptorType, types.WrapperDescriptorType, types.MethodDescriptorType,
                      type(__import__("collections").namedtuple("_P", "a").a))


class Obj:
    """An object of a class srcad knows (``value``: the object itself, if reachable now)."""

    __slots__ = ("cls", "value")

    def __init__(self, cls, value=None):
        self.cls, self.value = cls, value


def value_kind(value):
    """The kind of a value srcad can see now."""
    if isinstance(value, types.ModuleType):
        return MODULE
    if isinstance(value, (np.ndarray, np.generic, bool, int, float, complex)) and (
            type(value).__module__ in ("builtins", "numpy")):
        return ARRAY
    if type(value) in (str, bytes):
        return STRING
    if type(value) in (list, tuple, dict, range, slice, type(None)):
        return CONTAINER
    return Obj(type(value), value)


def attribute_problem(cls, attr):
    """Why reading ``.attr`` of an object of ``cls`` may run code of yours, or None: a property
    or another descriptor of your classes, ``__getattribute__``, or ``__getattr__`` for a name
    the class does not hold."""
    if installed_class(cls) and not issubclass(cls, _RANDOM_STATES):
        return None  # NumPy's, Python's, a package's: its attributes only read it
    if issubclass(cls, _RANDOM_STATES):
        return "a random generator"
    if defines_getattribute(cls):
        return f"{cls.__name__} defines __getattribute__"
    for klass in cls.__mro__:
        if attr in klass.__dict__:
            found = klass.__dict__[attr]
            if not hasattr(type(found), "__get__") or isinstance(found, _PLAIN_DESCRIPTORS):
                return None
            return f"a property of {cls.__name__}" if isinstance(found, property) else \
                f"a descriptor ({type(found).__name__}) of {cls.__name__}"
    if any("__getattr__" in klass.__dict__ and not installed_class(klass) for klass in cls.__mro__):
        return f"{cls.__name__} defines __getattr__"
    return None  # an attribute of the instance


def item_problem(cls, special="__getitem__"):
    """Why indexing an object of ``cls`` (``special``: ``__getitem__``, ``__setitem__``) may run
    code of yours, or None."""
    for klass in cls.__mro__:
        if special in klass.__dict__:
            return None if installed_class(klass) else f"{cls.__name__}.{special} is your code"
    return None  # indexing fails: Python says so


def special_problem(cls, names=None):
    """Why an operator, iteration, a builtin (``float``, ``len``, ``print``) or a library function
    (``np.asarray``, ``np.sum``) given an object of ``cls`` may run code of yours, or None: a
    class of yours defines one of the special methods ``names`` it calls (None: any method or
    descriptor but construction, which a library function may look up by name). A record's
    generated methods (a named tuple's, a dataclass's ``__eq__``) are not yours."""
    record = record_fields(cls) is not None
    for klass in cls.__mro__:
        if installed_class(klass):
            continue
        for name, found in vars(klass).items():
            if names is None and (name in _CONSTRUCTION or not hasattr(type(found), "__get__") or isinstance(
                    found, (types.MemberDescriptorType, types.GetSetDescriptorType))) or \
                    names is not None and name not in names:
                continue
            code = getattr(getattr(found, "__func__", found), "__code__", None)
            if record and (code is None or code.co_filename.startswith("<") or installed_file(code.co_filename)):
                continue  # written by namedtuple or dataclass
            return f"{cls.__name__}.{name} is your code"
    return None


def is_seeded_generator(call):
    """``np.random.default_rng(42)``, ``np.random.RandomState(0)``: a generator made from literal
    seeds, which draws the same numbers each time it is made."""
    callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
    try:
        seeded = callee is not None and callee.kind == "object" and callee.obj in _SEEDED
    except TypeError:
        return False
    return seeded and len(call.args) == 1 and not call.keywords and isinstance(call.args[0], gast.Constant) \
        and type(call.args[0].value) is int


def _record_made(s):
    """The record class (a named tuple, a dataclass) whose object the statement ``s`` makes
    (``x = new_record(cls, (fields...))``: normal form's construction of a record), else None."""
    value = s.value if isinstance(s, gast.Assign) and len(s.targets) == 1 else None
    if isinstance(value, gast.Call) and getattr(A.anno(value, "callee"), "obj", None) is new_record:
        return (A.anno(value.args[0], BUILTIN) or (None, None))[1]
    return None


def _numeric_call(call, numeric):
    """Does ``call`` answer an array or a number (NumPy's or math's functions, but their random
    ones; a reading method of an array; ``abs``, ``len``...)?"""
    from .fresh import ARRAY_VIEW_METHODS, FRESH_METHODS, known_pure, module_of

    callee = A.anno(call, "callee")
    if callee is None:
        return False
    if callee.kind == "method":
        return call.func.value is not None and numeric(call.func.value) and (
            callee.name in FRESH_METHODS or callee.name in ARRAY_VIEW_METHODS) and callee.name != "tolist"
    if callee.kind != "object":
        return False
    module = module_of(callee.obj)
    if isinstance(callee.obj, np.ufunc) or (module.split(".")[0] in ("numpy", "math") and not module.startswith(
            "numpy.random") and not isinstance(callee.obj, type) or callee.obj is np.asarray):
        return True
    if module.split(".")[0] == "srcad" and known_pure(callee.obj):  # (in a derivative srcad made: as_real(q))
        return all(numeric(a) for a in call.args + [k.value for k in call.keywords])
    if _library_array_result(callee.obj):  # logsumexp(a, axis=0), norm.logpdf(x)
        return all(numeric(a) for a in call.args + [k.value for k in call.keywords])
    if callee.obj in (isinstance, issubclass, callable):
        return True  # (a bool, whatever it is given)
    return callee.obj in (abs, len, float, int, round, min, max, sum, pow) and all(
        numeric(a) for a in call.args) and not call.keywords


# SciPy's modules whose functions with rules answer arrays, numbers or tuples of them (not
# scipy.optimize, whose results are objects).
_SCIPY_ARRAY_MODULES = ("scipy.special", "scipy.stats", "scipy.linalg", "scipy.signal", "scipy.spatial")


def _library_array_result(obj):
    """Does ``obj``, a function of SciPy's with a derivative rule, answer an array or a number (or
    a tuple of them: ``logsumexp(..., return_sign=True)``, ``lu_factor``) given arrays and numbers?
    Known for an elementwise or partials rule's function and for SciPy's array modules."""
    from .fresh import known_pure, module_of

    rule = registry.lookup(registry.VJP, obj)
    if rule is None or not known_pure(obj) or module_of(obj).split(".")[0] != "scipy":
        return False
    return isinstance(rule, (ElementwiseRule, PartialsRule)) or module_of(obj).startswith(_SCIPY_ARRAY_MODULES)


def _checked_names(node, assigned, params):
    """Names ``runtime.numeric_constant`` checks where each binding of them is made (right after
    it: ``passes.complex_values``, for a value read off an object that reaches an operator),
    and parameters it checks where the function starts: numbers or arrays once the check
    passes, or what an operator refuses with a number (None, a string, a class), or a list or
    tuple of those."""
    checked_after = {id(s): _checked_first(block[i + 1:]) for block in A.blocks(node.body)
                     for i, s in enumerate(block)}
    return {n for n, bound in assigned.items()
            if all(isinstance(b, gast.Assign) and n in checked_after[id(b)] for b in bound)} | (
        _checked_first(node.body) & (params - set(assigned)))


def _checked_first(statements):
    """The names ``runtime.numeric_constant`` checks in the checks ``statements`` start with."""
    names = set()
    for s in statements:
        call = s.value if isinstance(s, gast.Expr) else None
        callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
        if callee is None or callee.kind != "object" or not any(
                callee.obj is check for check in (runtime.numeric_constant, runtime.real_constant)):
            return names
        if callee.obj is runtime.numeric_constant and isinstance(call.args[0], gast.Name):
            names.add(call.args[0].id)
    return names


class Kinds:
    """What the values of a function (A-normal form) are known to be. ``specs``: arrays and
    numbers; ``containers``: lists, tuples and dicts; ``classes``: parameter (or ``p.attr``
    path) -> the class srcad compiles for; ``scope``: the statements where a seeded generator
    is made afresh each time they run (a checkpointed loop's body, a helper's); ``numbers``:
    names known to hold an array or a number (kind only); ``answers_number(call, numeric,
    abstract)``: does a call of a function of yours answer an array or a number when each
    argument ``a`` for which ``numeric(a)`` holds is one (read by ``checkpoint_state``)?"""

    def __init__(self, node, source, specs, containers, classes, scope, structures=None, strings=(), numbers=(),
                 answers_number=None):
        self.source, self.specs, self.containers, self.classes = source, specs, containers, classes or {}
        self.answers_number = answers_number or (lambda call, numeric, abstract: False)
        self.structures, self.strings, self.numbers = structures or {}, set(strings), set(numbers) - set(containers)
        self.locals = local_names(node)
        self.params = {a.id for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs}
        self.assigned, self.inside = {}, {id(s) for s in A.walk(gast.Module(body=scope, type_ignores=[]))}
        for s in A.walk(node):
            for target in (s.targets if isinstance(s, gast.Assign) else [s.target] if isinstance(
                    s, (gast.For, gast.AugAssign, gast.AnnAssign)) else []):
                for n in target.elts if isinstance(target, (gast.Tuple, gast.List)) else [target]:
                    if isinstance(n, gast.Name):  # (not ``a`` of ``a[i] = v``)
                        self.assigned.setdefault(n.id, []).append(s)
        self.memo = {}
        self.checked = _checked_names(node, self.assigned, self.params)
        self.numeric = self._numeric_names()

    def of(self, expr):
        """The kind of ``expr``: one of ``SAFE``, ``GENERATOR``, an ``Obj``, or None (unknown)."""
        if isinstance(expr, gast.Constant):
            return STRING if isinstance(expr.value, (str, bytes)) else ARRAY if isinstance(
                expr.value, (numbers.Number, type(None))) else None
        if isinstance(expr, gast.UnaryOp) and isinstance(expr.operand, gast.Constant):  # -0.5
            return self.of(expr.operand)
        if isinstance(expr, gast.Name):
            if expr.id not in self.memo:
                self.memo[expr.id] = None  # (an assignment reading itself)
                self.memo[expr.id] = self._name(expr.id)
            return self.memo[expr.id]
        if isinstance(expr, gast.Attribute):
            path = dotted(expr)
            if path and ".".join(path) in self.classes and path[0] not in self.assigned:
                return Obj(self.classes[".".join(path)])
            base = self.of(expr.value)
            if base in (ARRAY, STRING):
                return ARRAY
            if base == MODULE or isinstance(base, Obj) and base.value is not None and attribute_problem(
                    base.cls, expr.attr) is None:
                try:
                    return value_kind(getattr(self.of_value(expr.value), expr.attr))
                except Exception:
                    return None
            return None
        if isinstance(expr, gast.Subscript):
            items = self.structures.get(expr.value.id) if isinstance(expr.value, gast.Name) else None
            items = items.values() if isinstance(items, dict) else items if isinstance(items, (list, tuple)) else ()
            return ARRAY if self.of(expr.value) == ARRAY or items and all(isinstance(v, Spec) for v in items) \
                else None
        return None

    def _numeric_names(self):
        """Names every binding of which is an array or number: a parameter given one, arithmetic,
        an item or attribute of one, NumPy's or math's result, an array's method (the largest
        such set: ``x = x * 2`` in a loop keeps ``x`` an array)."""
        names = {n for n, bound in self.assigned.items()
                 if all(isinstance(b, gast.Assign) and len(b.targets) == 1 and isinstance(b.targets[0], gast.Name)
                        or isinstance(b, gast.For) and isinstance(b.target, gast.Name) for b in bound)
                 and (n not in self.params or isinstance(self._spec(n), Spec) or n in self.numbers)}
        changed = True
        while changed:
            changed = False
            for n in sorted(names):
                if not all(self._numeric_binding(b, names) for b in self.assigned[n]):
                    names.discard(n)
                    changed = True
        return names

    def _numeric_binding(self, s, names):
        if isinstance(s, gast.For):  # for t in range(n)
            bound = self.assigned.get(s.iter.id, []) if isinstance(s.iter, gast.Name) else []
            return len(bound) == 1 and isinstance(bound[0], gast.Assign) and isinstance(bound[0].value, gast.Call) \
                and getattr(A.anno(bound[0].value, "callee"), "obj", None) is range
        return self._numeric(s.value, names)

    def _numeric(self, e, names):
        if isinstance(e, gast.Constant):  # (None too: reading it runs no code of yours, as ``of`` says)
            return isinstance(e.value, (numbers.Number, type(None)))
        if isinstance(e, gast.Tuple):  # (a function's results: its items are read as such)
            return all(self._numeric(item, names) for item in e.elts)
        if isinstance(e, gast.Name):
            if e.id in names or isinstance(self._spec(e.id), Spec) or e.id in self.numbers and (
                    e.id in self.params and e.id not in self.assigned):  # (else its bindings decide: ``names``)
                return True
            if e.id in self.locals:
                return False
            try:
                return value_kind(self.source.lookup(e.id)) == ARRAY
            except Exception:
                return False
        if isinstance(e, (gast.Attribute, gast.Subscript)):
            if self._numeric(e.value, names):
                return True
            path = dotted(e) if isinstance(e, gast.Attribute) else None
            if path and path[0] not in self.locals:
                try:  # np.pi, CONFIG.scale: a module's, or a plain attribute of an object of yours, now
                    owner = self.source.lookup(path[0])
                    for attr in path[1:]:
                        if not isinstance(owner, types.ModuleType) and attribute_problem(type(owner), attr):
                            return False
                        owner = attribute_now(owner, attr)
                    return value_kind(owner) == ARRAY
                except Exception:
                    return False
            return False
        if isinstance(e, (gast.BinOp, gast.UnaryOp, gast.Compare)):
            operands = [e.left, e.right] if isinstance(e, gast.BinOp) else [e.operand] if isinstance(
                e, gast.UnaryOp) else [e.left] + e.comparators
            # an operand checked to be a number or an array (or a list of them) computes one
            return all(self._numeric(o, names) or isinstance(o, gast.Name) and o.id in self.checked
                       for o in operands)
        if isinstance(e, gast.Call):
            numeric = functools.partial(self._numeric, names=names)
            return (self._seeded_draw(e) or self._number_draw(e) or _numeric_call(e, numeric)
                    or self.answers_number(e, numeric, self.abstract))
        return False

    def _number_draw(self, call):
        """``rng.standard_normal(...)``, ``np.random.uniform(...)``: a draw that answers an array
        or a number, of NumPy's generator (made by ``np.random.default_rng`` at each binding of
        the name, a global one, or NumPy's own). (Drawn in a checkpointed loop, it is refused.)"""
        from .fresh import module_of

        callee = A.anno(call, "callee")
        if callee is not None and callee.kind == "object":
            return module_of(callee.obj).startswith("numpy.random") and getattr(
                callee.obj, "__name__", None) in NUMBER_DRAWS
        receiver = call.func.value if isinstance(call.func, gast.Attribute) else None
        if callee is None or callee.kind != "method" or callee.name not in NUMBER_DRAWS or not isinstance(
                receiver, gast.Name):
            return False
        generators = (np.random.Generator, np.random.RandomState)  # (exactly: a subclass may draw otherwise)
        if receiver.id in self.params:  # compiled for its class
            return receiver.id not in self.assigned and self.classes.get(receiver.id) in generators
        if receiver.id not in self.locals:  # a global one (the compiled code is guarded on it)
            try:
                return type(self.source.lookup(receiver.id)) in generators and type(
                    lookup_path([receiver.id], self.source)) in generators
            except Exception:
                return False
        bound = self.assigned.get(receiver.id, [])
        return bool(bound) and all(isinstance(b, gast.Assign) and generator_made(b.value) is not None for b in bound)

    def _seeded_draw(self, call):
        """``rng.standard_normal(...)`` of a generator the scope seeds itself."""
        receiver = call.func.value if isinstance(call.func, gast.Attribute) else None
        if not isinstance(receiver, gast.Name) or getattr(A.anno(call, "callee"), "kind", None) != "method":
            return False
        bound = self.assigned.get(receiver.id, [])
        return len(bound) == 1 and isinstance(bound[0], gast.Assign) and is_seeded_generator(bound[0].value) \
            and id(bound[0]) in self.inside

    def abstract(self, expr):
        """What shape inference knows of ``expr``: a ``Spec``, a list, tuple or dict of them, or
        ``UNKNOWN`` (for a function of yours it calls, read with it)."""
        if isinstance(expr, gast.Name):
            spec = self._spec(expr.id)
            return spec if isinstance(spec, Spec) else self.structures.get(expr.id, UNKNOWN)
        if isinstance(expr, gast.Constant) and isinstance(expr.value, (int, float, complex)):
            return Spec((), np.asarray(expr.value).dtype, type(expr.value))
        return UNKNOWN

    def _spec(self, name):
        return self.specs(name) if callable(self.specs) else self.specs.get(name)

    def of_value(self, expr):
        """The value now of a global or closure path (only for ``MODULE`` and ``Obj`` kinds)."""
        if isinstance(expr, gast.Name):
            return self.source.lookup(expr.id)
        return getattr(self.of_value(expr.value), expr.attr)

    def _name(self, name):
        if isinstance(self._spec(name), Spec) or name in self.numeric or name in self.numbers and (
                name in self.params and name not in self.assigned):
            return ARRAY
        if name in self.strings:
            return STRING
        if name in self.classes and name not in self.assigned:
            return Obj(self.classes[name])
        if name in self.containers:
            return CONTAINER
        if name not in self.locals:
            try:
                kind = value_kind(self.source.lookup(name))
            except Exception:
                return None
            if isinstance(kind, Obj):
                lookup_path([name], self.source)  # the compiled code is guarded on this object
            return kind
        bindings = self.assigned.get(name, [])
        made = {_record_made(b) for b in bindings}
        if name not in self.params and len(made) == 1 and None not in made:  # s = State(q, v) at each binding
            return Obj(made.pop())
        if name in self.params or len(bindings) != 1 or not isinstance(bindings[0], gast.Assign):
            return None
        value = bindings[0].value
        if is_seeded_generator(value):
            return GENERATOR if id(bindings[0]) in self.inside else None
        return self.of(value) if isinstance(value, (gast.Name, gast.Attribute, gast.Subscript, gast.Constant)) \
            else None
