"""Compilation and caching of generated code.

Generated functions are compiled once per (function code, wrt, container parameters),
inside a factory whose parameters are the helpers and rules' globals they use, so those
are fast closure reads, while the user's globals stay live (the functions run in the
user's module namespace) and the user's closure cells are shared, not copied. The
source is registered with ``linecache`` under a readable filename, so tracebacks, pdb
and ``inspect.getsource`` show the generated code.
"""
import itertools
import linecache
import textwrap
import types

from . import cache as persistent_cache
from .errors import SrcadError
from .source import unwrap

_counter = itertools.count(1)
_CACHE = {}  # (mode, code, wrt, containers, shapes) -> [Compiled, ...] one per set of bindings
_IN_PROGRESS = set()


def bindings(fn):
    """What generated code for ``fn`` takes as fixed: the function-valued globals and
    closure variables it names (``act = np.tanh``), by identity. Rules were chosen for them,
    so a function whose ``act`` is ``np.sin`` must not reuse that code."""
    code = fn.__code__
    names = set()
    stack = [code]
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    out = []
    for name in sorted(names):
        obj = fn.__globals__.get(name, _MISSING)
        if obj is not _MISSING and callable(obj) and not isinstance(obj, types.ModuleType):
            out.append(("global", name, obj))
    for name, cell in sorted(zip(code.co_freevars, fn.__closure__ or ())):
        obj = _cell_contents(cell)
        if obj is not _MISSING and callable(obj) and not isinstance(obj, types.ModuleType):
            out.append(("closure", name, obj))
    return out


_MISSING = object()


def guards_hold(guards):
    """Are ``(globals dict, name, object)`` bindings still the same objects?"""
    return all(scope.get(name, _MISSING) is obj for scope, name, obj in guards)


def _cell_contents(cell):
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return _MISSING


class Compiled:
    """Generated code objects of one function: bind them to a function instance to run.

    ``codes`` are the functions the factory makes, in order; ``argdefs(defaults)`` gives
    each one's default arguments from the user function's.
    """

    def __init__(self, generated, codes, argdefs, made_for, inherited=()):
        self.generated = generated
        self.codes = codes
        self.argdefs = argdefs
        self.made_for = made_for  # bindings(fn) of the function it was generated from
        self.inherited = list(inherited)  # guards of the user functions it calls
        self._bound = {}  # function instance -> its generated functions

    def matches(self, fn):
        """Was this code made for bindings like ``fn``'s (its closure, its globals)?"""
        cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        for kind, name, obj in self.made_for:
            current = fn.__globals__.get(name, _MISSING) if kind == "global" else _cell_contents(
                cells.get(name)) if name in cells else _MISSING
            if current is not obj:
                return False
        return guards_hold(self.inherited)

    def global_guards(self, fn):
        """What can change under the same function object: module globals, checked per call."""
        return [(fn.__globals__, name, obj) for kind, name, obj in self.made_for if kind == "global"] + self.inherited

    def bind(self, fn):
        """The generated functions, closing over ``fn``'s own cells."""
        fn = unwrap(fn)
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


def _cached(key, fn, make):
    """The compiled code for ``key`` whose bindings match ``fn``'s, made by ``make()`` if none."""
    variants = _CACHE.setdefault(key, [])
    for compiled in variants:
        if compiled.matches(fn):
            return compiled
    if key[:4] in _IN_PROGRESS:
        raise _Recursion(fn)
    _IN_PROGRESS.add(key[:4])
    try:
        compiled = make()
    finally:
        _IN_PROGRESS.discard(key[:4])
    variants.append(compiled)
    return compiled


class _Recursion(SrcadError):
    def __init__(self, fn):
        super().__init__(f"{fn.__name__} calls itself (directly or through other functions); srcad does "
                         "not differentiate recursion. Write it as a loop, or give it a rule with "
                         "srcad.custom_vjp")


def _load(text, fn, suffix, names):
    """Compile a generated factory module; its inner code objects named ``names``."""
    filename = f"<srcad-generated {fn.__module__}.{fn.__qualname__}{suffix} #{next(_counter)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    factory = next(c for c in compile(text, filename, "exec").co_consts if isinstance(c, types.CodeType))
    inner = {c.co_name: c for c in factory.co_consts if isinstance(c, types.CodeType)}
    return filename, tuple(inner[name] for name in names)


class Module:
    """The names one generated module closes over, and how it calls other adjoints."""

    def __init__(self, source):
        self.source = source
        self.closure = {}
        self.inherited = []  # guards of the user functions this code calls

    def ref(self, name, obj):
        """The name under which generated code sees ``obj`` (``name`` unless it is taken)."""
        from .astutil import anno

        namer = anno(self.source.node, "namer")
        candidate = name
        while True:
            if candidate in self.closure:
                if self.closure[candidate] is obj:
                    return candidate
            elif namer is None or candidate not in namer.taken:
                break
            else:
                try:
                    if self.source.lookup(candidate) is obj and candidate not in self._locals():
                        return candidate  # the user's own binding of the same object
                except KeyError:
                    pass
            candidate += "_"
        self.closure[candidate] = obj
        if namer is not None:
            namer.taken.add(candidate)
        return candidate

    def _locals(self):
        from .passes.resolve_calls import local_names

        if not hasattr(self, "_local_cache"):
            self._local_cache = local_names(self.source.node)
        return self._local_cache

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
                         inherited=list(self.inherited))


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
        inherited = []
        if generated is None:
            generated = transform(fn, Options(wrt=tuple(wrt), container_params=tuple(container_params), specs=specs))
            inherited = generated.inherited
            persistent_cache.store_generated(fn, module_key, generated)
        base = generated.name
        generated.filename, codes = _load(generated.module_source, fn, "",
                                          [f"{base}_{part}" for part in ("adjoint", "forward", "backward")])
        return Compiled(generated, codes, lambda d: (d + (None,), d, (None,)), bindings(fn), inherited)

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
        compiled = Compiled(generated, codes, lambda d: (d,), bindings(fn), generated.inherited)
        compiled.tangent_params = generated.tangent_params
        return compiled

    try:
        return _cached(key, fn, make)
    except _Recursion as exc:
        if caller is not None:
            raise caller[0].syntax_error(str(exc), caller[1]) from None
        raise
