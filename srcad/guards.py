"""Guards: what compiled code takes as fixed, and the checks that it still is.

Every name path the compiler resolved in the user's scope (``np.sin``, ``cfg.act``, a
closure's ``act``), every function-valued global or closure variable the code names, every
user function it calls and every attribute generated code reads off a module it closes
over (``np.cos``) is recorded. ``Compiled.matches`` checks them on every cache lookup,
``Compiled.global_guards`` gives the per-call checks. Recorded objects are held weakly
where they can be, so a cache entry never keeps the user's functions or modules alive.

>>> import numpy as np
>>> g = Guard("object", np, "np", ("cos",), np.cos)
>>> g.holds()
True
"""
import ast
import builtins
import inspect
import keyword
import types
import weakref

import gast
import numpy as np

from .astutil import LITERAL_TYPES, walk
from .code_reading import code_names
from .errors import SrcadError
from .held_objects import CONTAINERS, object_classes
from .holding import _MISSING, _Reread, _follow, _same, bound_from, mark_bound_from


def _scope_value(fn, name):
    """What ``name`` denotes in ``fn``'s scope now (closure, globals, builtins), or _MISSING."""
    code = fn.__code__
    if name in code.co_freevars:
        return _cell_contents(fn.__closure__[code.co_freevars.index(name)])
    value = fn.__globals__.get(name, _MISSING)
    if value is _MISSING:
        value = _builtins_of(fn.__globals__).get(name, _MISSING)
    return value


def _builtins_of(scope):
    found = scope.get("__builtins__", builtins)
    return vars(found) if isinstance(found, types.ModuleType) else found


def _cell_contents(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return _MISSING


def defaults_of(fn):
    """What a call binds from ``fn``'s defaults: its positional defaults (a tuple, replaced
    only by rebinding) and its keyword-only ones, item by item (the dict can change in place)."""
    kw = getattr(fn, "__kwdefaults__", None)
    return getattr(fn, "__defaults__", None), kw, tuple(kw.items()) if kw else ()


def same_defaults(now, then):
    """Are two ``defaults_of`` the same objects?"""
    return (now[0] is then[0] and now[1] is then[1] and len(now[2]) == len(then[2])
            and all(k is j and v is w for (k, v), (j, w) in zip(now[2], then[2])))


_FUNCTION_PARTS = {"code": "__code__", "defaults": "__defaults__", "kwdefaults": "__kwdefaults__"}


class Guard:
    """One binding checked per call: ``root.attrs`` (read from ``holder``) is still ``obj``.

    ``holder`` is a closure cell, a globals dict (falling back to its builtins), or any
    object whose attributes are read (a module generated code closes over).
    """

    __slots__ = ("kind", "holder", "name", "attrs", "obj")

    def __init__(self, kind, holder, name, attrs, obj):
        self.kind, self.holder, self.name, self.attrs, self.obj = kind, holder, name, tuple(attrs), obj

    def holds(self):
        kind = self.kind
        if kind == "object":
            value = self.holder
        elif kind == "scope":
            value = self.holder.get(self.name, _MISSING)
            if value is _MISSING:
                value = _builtins_of(self.holder).get(self.name, _MISSING)
        elif kind == "cell":
            value = _cell_contents(self.holder)
        elif kind == "partial keywords":  # a functools.partial's keywords: the same objects
            now, items = self.holder.keywords, self.obj
            return len(now) == len(items) and all(now.get(k, _MISSING) is v for k, v in items)
        elif kind == "keys":  # a resolved dict's keys, in order (``resolved_dict_keys``)
            return tuple(self.holder) == self.obj
        elif kind == "item classes":  # the classes of a resolved list's objects (``resolved_item_classes``)
            return item_classes(self.holder) == self.obj
        elif kind == "kwdefault":  # one item of a function's __kwdefaults__ (the dict changes in place)
            now = self.holder.__kwdefaults__
            return now is not None and now.get(self.attrs[0], _MISSING) is self.obj
        elif kind == "static":  # what the class of the object holder is now has as its attribute
            return inspect.getattr_static(type(self.holder), self.attrs[0], _MISSING) is self.obj
        else:  # "code", "defaults", "kwdefaults": a function's code swapped (IPython's %autoreload),
            # or its default arguments rebound (f.__defaults__ = ...)
            return getattr(self.holder, _FUNCTION_PARTS[kind]) is self.obj
        obj = self.obj
        if type(obj) is _Reread:
            return obj.holds(value, self.attrs)
        for attr in self.attrs:
            value = getattr(value, attr, _MISSING)
        return value is obj or _same(value, obj)

    def __repr__(self):
        return f"Guard({'.'.join((self.name,) + self.attrs)} is {self.obj!r})"


class _CalleeGuard:
    """The user's function this code calls still has the code and bindings its compiled
    adjoint was made for (held weakly: the caller's cache entry must not keep it alive). A
    callee that is srcad's binding of another callee's code (``helper_backward`` in a
    generated adjoint differentiated again) is held as its stand-in, which binds it again."""

    __slots__ = ("fn", "code", "compiled", "defaults")

    def __init__(self, fn, compiled, weak=True):
        standin = bound_from(fn)
        if standin is not None:  # any binding of it is the same function: a fresh wrapper's is found too
            self.fn = standin.live
        else:
            self.fn = weakref.ref(fn) if weak else (lambda: fn)
        self.code, self.compiled = weakref.ref(fn.__code__), compiled
        self.defaults = defaults_of(fn)  # the caller passes its keyword-only defaults (reverse_calls)

    def holds(self):
        fn = self.fn()
        return (fn is not None and fn.__code__ is self.code() and same_defaults(defaults_of(fn), self.defaults)
                and self.compiled.matches(fn))


class _CalleeFunction:
    """Stands in the generated closure for a callee's generated function (``helper_forward``)
    until the code is bound: then it is the callee's own, bound to the live callee.

    While the guard holds every binding is the same function (the same code, the callee's
    globals, cells and defaults), so the last one is handed out again while something holds
    it, and each is marked with this stand-in (``bound_from``): code generated from a caller's
    adjoint (``srcad.jvp(srcad.grad(f), ...)``) then matches the adjoint a new wrapper binds,
    instead of being made again for every ``srcad.grad(f)``."""

    def __init__(self, guard, index):
        self.guard, self.index = guard, index
        self._last = _dead

    def resolve(self):
        bound = self.live()
        if bound is None:
            raise SrcadError("a function this generated code calls no longer exists; differentiate again")
        return bound

    def live(self):
        """The callee's generated function bound to it, or None once the callee is gone."""
        fn = self.guard.fn()
        if fn is None:
            return None
        bound = self._last()
        if bound is None:
            bound = self.guard.compiled.bind(fn)[self.index]
            mark_bound_from(bound, self)
            self._last = weakref.ref(bound)  # (weakly: it holds the callee's globals)
        return bound


def _dead():
    return None


def protocol_array_key(x):
    """What compiled code for an argument ``x`` with NumPy's protocols (a Dask or CuPy array,
    ``srcad.arguments.protocol_array``) is keyed on: its class, shape, dtype and chunking (a
    Dask array's ``chunks``), never its values; the code itself decides shapes at run time.

    >>> protocol_array_key(np.ones((2, 3)))[1:]
    ((2, 3), dtype('float64'), None)
    """
    chunks = getattr(x, "chunks", None)
    return (x.__class__, x.shape, x.dtype, chunks if isinstance(chunks, tuple) else None)


def guards_hold(guards):
    """Are all ``guards`` (``Compiled.global_guards``) still true?"""
    if isinstance(guards, GuardList):
        return guards.hold()
    return all(g.holds() for g in guards)


class GuardList(list):
    """Guards checked on every call. Most are one attribute of a module or a function
    (``np.dot``, ``f.__code__``) or a global: those are compared by identity in one small
    generated function (``_identity_check``), so the check costs a fraction of a microsecond;
    any difference (or a guard of another form) falls back to each guard's own ``holds``."""

    def __init__(self, guards):
        super().__init__(guards)
        terms, objects, self._others = {}, [], []
        for g in guards:
            term = _identity_term(g)
            if term is None:
                self._others.append(g)
            else:  # the same guard twice (np.dot read at two places): one test
                terms.setdefault((term[0], id(term[1]), id(term[2])), term)
        for term in terms.values():
            objects.extend(term[1:])
        self._tests, self._objects = [t[0] for t in terms.values()], objects
        self._fast = _identity_check(self._tests, objects)

    def hold(self):
        if not self._fast():  # a difference, an attribute gone, a global deleted: ask each guard
            return all(g.holds() for g in self)
        return not self._others or all(g.holds() for g in self._others)

    def inline_test(self, namespace, prefix):
        """The identity tests as one expression (objects bound in ``namespace`` under names
        starting with ``prefix``) for generated code that runs them without a call; False
        from it may still be a hold, as from ``quick``. None when some guard is of another form."""
        if self._others:
            return None
        names = [f"{prefix}{k}" for k in range(len(self._objects))]
        namespace.update(zip(names, self._objects))
        namespace.update(_CHECK_GLOBALS)
        return " and ".join(t.format(h=names[2 * k], o=names[2 * k + 1]) for k, t in enumerate(self._tests)) or "True"

    @property
    def quick(self):
        """A function of no arguments, True only if every guard holds (False may still be a
        hold: the caller then asks ``hold``); the identity tests alone when they are all."""
        return self._fast if not self._others else self.hold


def _identity_term(g):
    """``(test, holder, expected)`` for a guard that one identity test decides, with ``{h}``
    and ``{o}`` standing for its holder and expected object; None for any other guard."""
    if not isinstance(g, Guard):
        return None
    if g.kind in _FUNCTION_PARTS:
        return (f"{{h}}.{_FUNCTION_PARTS[g.kind]} is {{o}}", g.holder, g.obj)
    if g.kind == "kwdefault":  # (a None __kwdefaults__ raises: the test is False, the slow path decides)
        return (f"{{h}}.__kwdefaults__.get({g.attrs[0]!r}, _MISSING) is {{o}}", g.holder, g.obj)
    if g.kind == "static":
        return (f"_static(type({{h}}), {g.attrs[0]!r}, _MISSING) is {{o}}", g.holder, g.obj)
    # (a number or string only ever rebound to another value, such as registry.GENERATION or a
    # rule's module constant, is told by identity too)
    simple = callable(g.obj) or isinstance(g.obj, (types.ModuleType, int)) or type(g.obj) in LITERAL_TYPES
    if not simple or not all(a.isidentifier() and not keyword.iskeyword(a) for a in g.attrs):
        return None
    if g.kind == "object" and len(g.attrs) == 1:
        return (f"{{h}}.{g.attrs[0]} is {{o}}", g.holder, g.obj)
    if g.kind == "scope" and g.name in g.holder and len(g.attrs) <= 1:  # a global (not a builtin), np.dot
        path = "".join(f".{a}" for a in g.attrs)
        # (a global deleted raises KeyError: both places that run the tests take it for False)
        return (f"{{h}}[{g.name!r}]{path} is {{o}}", g.holder, g.obj)
    return None


def _identity_check(tests, objects):
    """A function of no arguments that is True when every test holds, False otherwise (also
    when a test raises: an attribute gone, a global deleted). The holders and expected objects
    are its defaults, so each test is a few attribute reads and an ``is``."""
    code = _CHECK_CODES.get(tuple(tests))
    if code is None:
        params = [f"_{k}" for k in range(len(objects))]
        body = " and ".join(t.format(h=params[2 * k], o=params[2 * k + 1]) for k, t in enumerate(tests)) or "True"
        namespace = dict(_CHECK_GLOBALS)
        exec(f"def check({', '.join(params)}):\n    try:\n        return {body}\n"
             "    except Exception:\n        return False\n", namespace)
        code = _CHECK_CODES[tuple(tests)] = namespace["check"].__code__
    return types.FunctionType(code, _CHECK_GLOBALS, "check", tuple(objects))


_CHECK_CODES = {}  # the tests, as text -> the code that runs them (functions differ in their defaults only)
_CHECK_GLOBALS = {"_MISSING": _MISSING, "_static": inspect.getattr_static}


def bindings(fn, resolved=()):
    """What generated code for ``fn`` takes as fixed, as ``(path, object)`` pairs: every name
    path the compiler resolved (``resolved``: ``("cfg", "act")``) and every function-valued
    global or closure variable the code names (``act = np.tanh``). Rules were chosen for
    them, so a function whose ``act`` is ``np.sin`` must not reuse that code."""
    code = fn.__code__
    names = set(code.co_freevars) | code_names(code)
    found = {tuple(path): obj for path, obj in resolved}
    for name in sorted(names):
        obj = _scope_value(fn, name)
        if obj is not _MISSING and callable(obj) and not isinstance(obj, types.ModuleType) \
                and (name,) not in found and (name in code.co_freevars or name in fn.__globals__):
            found[(name,)] = obj
    return sorted(found.items(), key=lambda item: item[0])


def resolved_dict_keys(made_for):
    """``(path, dict, keys)`` for each dict among the resolved ``(path, object)`` pairs: a
    ``functools.partial``'s ``keywords`` or a frozen distribution's ``kwds``, whose items
    generated code passes on by name (``CLIP.func(x, a_min=CLIP.keywords['a_min'])``). The
    dict changes in place, so its identity is not enough: a key added would be left out, a key
    deleted would fail, so the keys are guarded too. The values need no guard: the code reads
    them when it runs."""
    return [(path, obj, tuple(obj)) for path, obj in made_for if type(obj) is dict]


def resolved_item_classes(made_for):
    """``(path, container, classes)`` for each list, tuple or dict among the resolved ``(path,
    object)`` pairs holding objects of classes of yours (``item_classes``): a module-level list
    of layers, whose methods the code calls through those classes (``passes.item_methods``). The
    list changes in place, so an object of another class put in it makes the code again."""
    return [(path, obj, item_classes(obj)) for path, obj in made_for if type(obj) in CONTAINERS and item_classes(obj)]


def item_classes(container):
    """The classes of the objects of yours a container holds, as code is made for them."""
    return object_classes(("",), (container,))


def _bound_guard(fn, path, obj):
    """The per-call form of a binding of ``fn``: reads its cell or its globals directly."""
    name, attrs = path[0], path[1:]
    code = fn.__code__
    if name in code.co_freevars:
        return Guard("cell", fn.__closure__[code.co_freevars.index(name)], name, attrs, obj)
    return Guard("scope", fn.__globals__, name, attrs, obj)


def module_attribute_guards(code, closure):
    """Guards on attributes generated code reads off modules it closes over (``np_.cos``):
    monkeypatching ``np.cos`` must not change what the compiled code computes unseen.
    ``code``: its source text, or a list of texts and trees."""
    guards = {}
    # texts are parsed with ast, not gast (its conversion costs ten times the parse); gast's
    # node classes are ast.AST subclasses named alike, so one walk reads both
    trees = [ast.parse(c) if isinstance(c, str) else c for c in ([code] if isinstance(code, str) else code)]
    for node in (n for tree in trees for n in walk(tree)):
        if not isinstance(node, (ast.Attribute, gast.Attribute)):
            continue
        attrs = []
        root = node
        while isinstance(root, (ast.Attribute, gast.Attribute)):
            attrs.append(root.attr)
            root = root.value
        if isinstance(root, (ast.Name, gast.Name)) and isinstance(closure.get(root.id), types.ModuleType):
            module = closure[root.id]
            attrs = tuple(reversed(attrs))
            # a leading run of module attributes (np.linalg.norm): guard the path to the first non-module
            path = ()
            value = module
            for attr in attrs:
                value = _follow(value, (attr,))
                path += (attr,)
                if not isinstance(value, types.ModuleType):
                    break
            if value is not _MISSING:
                guards[(id(module), path)] = Guard("object", module, root.id, path, value)
    return list(guards.values())


_PRISTINE = {}  # module name -> its namespace when srcad first saw it


def _remember(module):
    return _PRISTINE.setdefault(module.__name__, dict(vars(module)))


for _module in (np, np.linalg, np.fft):
    _remember(_module)


def check_unpatched(guards, fn):
    """Refuse generated code that would call a module function someone replaced (``np.cos =
    ...``): srcad's rules mean the library's own functions, and a patched one would give
    another derivative silently."""
    for guard in guards:
        owner = _follow(guard.holder, guard.attrs[:-1]) if guard.kind == "object" else None
        if not isinstance(owner, types.ModuleType):
            continue
        original = _remember(owner).get(guard.attrs[-1], _MISSING)
        if original is not _MISSING and original is not guard.obj:
            code = fn.__code__
            raise SrcadError(
                f"{code.co_filename}:{code.co_firstlineno}: {fn.__qualname__}: the derivative srcad generates "
                f"calls {owner.__name__}.{guard.attrs[-1]}, which has been replaced ({guard.obj!r}) since srcad "
                "was imported; srcad's rules compute with the library's own function. Restore it (undo the "
                "monkeypatch) before differentiating.")
