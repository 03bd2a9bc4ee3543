"""Compilation and caching of generated code.

Generated functions are compiled once per (function code, wrt, container parameters),
inside a factory whose parameters are every name srcad introduces (runtime helpers,
builtins, rules' globals, callees' adjoints), so generated code never resolves one of
them in the user's scope, where user code could shadow it. The user's globals stay live
(the functions run in the user's module namespace) and the user's closure cells are
shared, not copied. The source is registered with ``linecache`` under a readable filename
(dropped when the code dies), so tracebacks, pdb and ``inspect.getsource`` show it.

The code that runs is the code that was differentiated: every name path the compiler
resolved (``np.sin``, ``cfg.act``, a closure's ``act``) and every attribute generated
code reads off a module (``np.cos``) is a guard, checked on every cache lookup and, through
``Compiled.global_guards``, on every call; a changed binding means a new compilation.
Caches hold user functions and code objects weakly, and compilation is thread-safe.
"""
import builtins
import itertools
import linecache
import textwrap
import threading
import types
import weakref

import gast
import numpy as np

from . import cache as persistent_cache
from .errors import SrcadError
from .source import GENERATED_FILENAME, unwrap

_counter = itertools.count(1)
_LOCK = threading.RLock()  # one compilation at a time; re-entered for callees
_LOCAL = threading.local()  # .in_progress: this thread's compilations (recursion detection)
_MISSING = object()


# ---- guards: what generated code takes as fixed


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


def _follow(value, attrs):
    for attr in attrs:
        if value is _MISSING:
            break
        try:
            value = getattr(value, attr)
        except Exception:  # a property that raises is as good as no attribute
            return _MISSING
    return value


def _cell_contents(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return _MISSING


class Guard:
    """One binding checked per call: ``root.attrs`` (read from ``holder``) is still ``obj``.

    ``holder`` is a closure cell, a globals dict (falling back to its builtins), or any
    object whose attributes are read (a module generated code closes over).
    """

    __slots__ = ("kind", "holder", "name", "attrs", "obj")

    def __init__(self, kind, holder, name, attrs, obj):
        self.kind, self.holder, self.name, self.attrs, self.obj = kind, holder, name, tuple(attrs), obj

    def holds(self):
        if self.kind == "cell":
            value = _cell_contents(self.holder)
        elif self.kind == "scope":
            value = self.holder.get(self.name, _MISSING)
            if value is _MISSING:
                value = _builtins_of(self.holder).get(self.name, _MISSING)
        elif self.kind == "code":  # a function's code swapped (IPython's %autoreload)
            return self.holder.__code__ is self.obj
        else:
            value = self.holder
        return _follow(value, self.attrs) is self.obj

    def __repr__(self):
        return f"Guard({'.'.join((self.name,) + self.attrs)} is {self.obj!r})"


def guards_hold(guards):
    """Are all ``guards`` (``Compiled.global_guards``) still true?"""
    return all(g.holds() for g in guards)


def bindings(fn, resolved=()):
    """What generated code for ``fn`` takes as fixed, as ``(path, object)`` pairs: every name
    path the compiler resolved (``resolved``: ``("cfg", "act")``) and every function-valued
    global or closure variable the code names (``act = np.tanh``). Rules were chosen for
    them, so a function whose ``act`` is ``np.sin`` must not reuse that code."""
    code = fn.__code__
    names = set(code.co_freevars)
    stack = [code]
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    found = {tuple(path): obj for path, obj in resolved}
    for name in sorted(names):
        obj = _scope_value(fn, name)
        if obj is not _MISSING and callable(obj) and not isinstance(obj, types.ModuleType) \
                and (name,) not in found and (name in code.co_freevars or name in fn.__globals__):
            found[(name,)] = obj
    return sorted(found.items(), key=lambda item: item[0])


def _bound_guard(fn, path, obj):
    """The per-call form of a binding of ``fn``: reads its cell or its globals directly."""
    name, attrs = path[0], path[1:]
    code = fn.__code__
    if name in code.co_freevars:
        return Guard("cell", fn.__closure__[code.co_freevars.index(name)], name, attrs, obj)
    return Guard("scope", fn.__globals__, name, attrs, obj)


def module_attribute_guards(module_source, closure):
    """Guards on attributes generated code reads off modules it closes over (``np_.cos``):
    monkeypatching ``np.cos`` must not change what the compiled code computes unseen."""
    guards = {}
    for node in gast.walk(gast.parse(module_source)):
        if not isinstance(node, gast.Attribute):
            continue
        attrs = []
        root = node
        while isinstance(root, gast.Attribute):
            attrs.append(root.attr)
            root = root.value
        if isinstance(root, gast.Name) and isinstance(closure.get(root.id), types.ModuleType):
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


class Compiled:
    """Generated code objects of one function: bind them to a function instance to run.

    ``codes`` are the functions the factory makes, in order; ``argdefs(defaults)`` gives
    each one's default arguments from the user function's. ``made_for`` is ``bindings(fn)``
    of the function it was generated from; ``inherited`` the guards of the user functions
    it calls and of the module attributes it reads.
    """

    def __init__(self, fn, generated, codes, argdefs, made_for, inherited=()):
        self.generated = generated
        self.codes = codes
        self.argdefs = argdefs
        self.made_for = list(made_for)
        self.inherited = list(inherited) + module_attribute_guards(generated.module_source, generated.closure)
        check_unpatched(self.inherited, fn)
        self._bound = weakref.WeakKeyDictionary()  # function instance -> its generated functions

    def matches(self, fn):
        """Was this code made for bindings like ``fn``'s (its closure, its globals)?"""
        for path, obj in self.made_for:
            if _follow(_scope_value(fn, path[0]), path[1:]) is not obj:
                return False
        return guards_hold(self.inherited)

    def global_guards(self, fn):
        """Everything that can change under the same function object, checked per call: its
        code (``%autoreload``), its globals and closure cells, attributes on the way."""
        return ([Guard("code", fn, fn.__name__, (), fn.__code__)]
                + [_bound_guard(fn, path, obj) for path, obj in self.made_for] + self.inherited)

    def bind(self, fn):
        """The generated functions, closing over ``fn``'s own cells."""
        fn = unwrap(fn)
        with _LOCK:
            bound = self._bound.get(fn)
            if bound is None:
                bound = self._bound[fn] = self._make(fn)
        return bound

    def _make(self, fn):
        user_cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        helper_cells = {name: types.CellType(obj) for name, obj in self.generated.closure.items()}
        out = []
        for code, argdefs in zip(self.codes, self.argdefs(fn.__defaults__ or ())):
            closure = tuple(user_cells[name] if name in user_cells else helper_cells[name]
                            for name in code.co_freevars)
            out.append(types.FunctionType(code, fn.__globals__, code.co_name, argdefs, closure))
        return tuple(out)


class _CodeCache:
    """Compiled code per user code object, held only as long as that code object lives.

    Keyed by identity (code objects compare equal across files), with a weak reference
    whose callback drops the entry; each entry maps (mode, wrt, containers, shapes) to
    the compiled variants, one per set of bindings.
    """

    def __init__(self):
        self._entries = {}  # id(code) -> (weakref to code, {rest of key: [Compiled, ...]})

    def variants(self, key):
        mode, code, rest = key[0], key[1], (key[0],) + key[2:]
        entry = self._entries.get(id(code))
        if entry is None or entry[0]() is not code:
            entry = (weakref.ref(code, self._dropper(id(code))), {})
            self._entries[id(code)] = entry
        return entry[1].setdefault(rest, [])

    def _dropper(self, ident):
        entries = self._entries

        def drop(ref):
            if entries.get(ident, (None,))[0] is ref:
                del entries[ident]

        return drop

    def __iter__(self):
        """Keys ``(mode, code, wrt, containers, shapes)`` of what is cached."""
        for ref, by_rest in list(self._entries.values()):
            code = ref()
            if code is not None:
                for rest in list(by_rest):
                    yield (rest[0], code) + rest[1:]

    def __len__(self):
        return sum(1 for _ in self)

    def clear(self):
        self._entries.clear()


_CACHE = _CodeCache()


def _cached(key, fn, make):
    """The compiled code for ``key`` whose bindings match ``fn``'s, made by ``make()`` if none."""
    for compiled in list(_CACHE.variants(key)):
        if compiled.matches(fn):
            return compiled
    in_progress = getattr(_LOCAL, "in_progress", None)
    if in_progress is None:
        in_progress = _LOCAL.in_progress = set()
    if key[:4] in in_progress:
        raise _Recursion(fn)
    with _LOCK:
        variants = _CACHE.variants(key)
        for compiled in variants:  # another thread may have made it meanwhile
            if compiled.matches(fn):
                return compiled
        in_progress.add(key[:4])
        try:
            compiled = make()
        finally:
            in_progress.discard(key[:4])
        variants.append(compiled)
    return compiled


class _Recursion(SrcadError):
    def __init__(self, fn):
        super().__init__(f"{fn.__name__} calls itself (directly or through other functions); srcad does "
                         "not differentiate recursion. Write it as a loop, or give it a rule with "
                         "srcad.custom_vjp")


_live_files = {}  # generated filename -> number of its code objects still alive


def _release(filename):
    _live_files[filename] -= 1
    if not _live_files[filename]:
        del _live_files[filename]
        linecache.cache.pop(filename, None)


def _load(text, fn, suffix, names):
    """Compile a generated factory module; its inner code objects named ``names``. The
    source stays in ``linecache`` while any of them lives."""
    filename = f"{GENERATED_FILENAME}{fn.__module__}.{fn.__qualname__}{suffix} #{next(_counter)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    factory = next(c for c in compile(text, filename, "exec").co_consts if isinstance(c, types.CodeType))
    inner = {c.co_name: c for c in factory.co_consts if isinstance(c, types.CodeType)}
    codes = tuple(inner[name] for name in names)
    _live_files[filename] = len(set(map(id, codes)))
    for code in {id(c): c for c in codes}.values():
        weakref.finalize(code, _release, filename)
    return filename, codes


class Module:
    """The names one generated module closes over, and how it calls other adjoints."""

    def __init__(self, source):
        self.source = source
        self.closure = {}
        self.inherited = []  # guards of the user functions this code calls

    def ref(self, name, obj):
        """The name under which generated code sees ``obj``: always a parameter of the
        factory, so a closure variable of the generated functions, never a name looked up in
        the user's scope at run time. It is ``name`` unless the function uses that name for
        something else (a local, a closure variable, another object): then ``name_``,
        ``name__``, ... If the function's own global (or builtin) ``name`` is ``obj``, the
        user's reads of it see the same object, and a guard recompiles if it is rebound."""
        from .astutil import anno

        namer = anno(self.source.node, "namer")
        taken = namer.taken if namer is not None else set()
        candidate = name
        while True:
            if candidate in self.closure:
                if self.closure[candidate] is obj:
                    return candidate
            elif candidate in self.source.closure:
                pass
            elif candidate not in taken:
                break
            elif candidate not in self._locals() and self._global_value(candidate) is obj:
                self._resolved().append(((candidate,), obj))
                break
            candidate += "_"
        self.closure[candidate] = obj
        taken.add(candidate)
        return candidate

    def _global_value(self, name):
        try:
            return self.source.lookup(name)
        except KeyError:
            return _MISSING

    def _locals(self):
        from .passes.resolve_calls import local_names

        if not hasattr(self, "_local_cache"):
            self._local_cache = local_names(self.source.node)
        return self._local_cache

    def _resolved(self):
        from .astutil import anno, set_anno

        resolved = anno(self.source.node, "resolved")
        if resolved is None:
            resolved = []
            set_anno(self.source.node, "resolved", resolved)
        return resolved

    def callee(self, fn, wrt, container_params, source, node):
        """Forward and backward functions of the user's function ``fn`` (compiled once)."""
        try:
            compiled = compile_function(fn, wrt, container_params)
        except _Recursion as exc:
            raise source.syntax_error(str(exc), node) from None
        self.inherited.extend(compiled.global_guards(fn))
        _, forward, backward = compiled.bind(fn)
        return forward, backward

    def jvp_callee(self, fn, wrt, container_params, source, node):
        """The jvp function of the user's function ``fn`` and its tangent parameter names."""
        compiled = compile_jvp(fn, wrt, container_params, caller=(source, node))
        self.inherited.extend(compiled.global_guards(fn))
        return compiled.bind(fn)[0], compiled.tangent_params

    def bind_builtins(self, node):
        """Route the builtins passes emit (``naming.builtin("range")``) through ``ref``."""
        from .astutil import anno
        from .naming import BUILTIN

        for n in gast.walk(node):
            name = anno(n, BUILTIN) if isinstance(n, gast.Name) else None
            if name is not None:
                n.id = self.ref(name, getattr(builtins, name))
        return node

    def resolved(self):
        """The name paths the compiler resolved in the user's scope, with what they denoted."""
        return list(self._resolved())

    def factory(self, sources, names):
        """A module defining ``__srcad_factory__(closure names...)``, which defines the
        generated functions and returns them."""
        params = sorted(set(self.closure) | set(self.source.closure))
        return (f"def __srcad_factory__({', '.join(params)}):\n" + textwrap.indent("\n".join(sources), "    ")
                + f"\n    return {', '.join(names)}\n")

    def finish(self, base, joint_source, forward_source, backward_source):
        from .codegen import Generated

        names = [f"{base}_adjoint", f"{base}_forward", f"{base}_backward"]
        factory = self.factory([joint_source, forward_source, backward_source], names)
        return Generated(base, joint_source, forward_source, backward_source, factory, dict(self.closure),
                         inherited=list(self.inherited), resolved=self.resolved())


def compile_function(fn, wrt, container_params=(), specs=None, spec_key=None):
    """Transform and compile the adjoint of ``fn`` for ``wrt`` (parameter names); cached.

    ``specs`` (parameter -> ``passes.shapes.arg_spec``) specialises the code on argument
    shapes and dtypes; ``spec_key`` is their hashable summary for the cache.
    """
    from .pipeline import Options, transform

    fn = unwrap(fn)
    key = ("rev", fn.__code__, tuple(wrt), tuple(container_params), spec_key)

    def make():
        module_key = key[1:]
        generated = persistent_cache.load_generated(fn, module_key)
        if generated is None:
            generated = transform(fn, Options(wrt=tuple(wrt), container_params=tuple(container_params), specs=specs))
            persistent_cache.store_generated(fn, module_key, generated)
        base = generated.name
        generated.filename, codes = _load(generated.module_source, fn, "",
                                          [f"{base}_{part}" for part in ("adjoint", "forward", "backward")])
        return Compiled(fn, generated, codes, lambda d: (d + (None,), d, (None,)), bindings(fn, generated.resolved),
                        generated.inherited)

    return _cached(key, fn, make)


def compile_jvp(fn, wrt, container_params=(), caller=None):
    """Transform and compile the jvp of ``fn`` for ``wrt`` (parameter names); cached.

    ``caller`` is ``(source, node)`` of a call site, for the error on recursion.
    """
    from .pipeline import Options, transform_jvp

    fn = unwrap(fn)
    key = ("fwd", fn.__code__, tuple(wrt), tuple(container_params), None)

    def make():
        generated = transform_jvp(fn, Options(wrt=tuple(wrt), container_params=tuple(container_params)))
        generated.filename, codes = _load(generated.module_source, fn, " jvp", [generated.name])
        compiled = Compiled(fn, generated, codes, lambda d: (d,), bindings(fn, generated.resolved), generated.inherited)
        compiled.tangent_params = generated.tangent_params
        return compiled

    try:
        return _cached(key, fn, make)
    except _Recursion as exc:
        if caller is not None:
            raise caller[0].syntax_error(str(exc), caller[1]) from None
        raise
