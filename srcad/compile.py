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
from .source import unwrap

_counter = itertools.count(1)
_CACHE = {}  # (code, wrt, containers) -> Compiled
_IN_PROGRESS = set()


class Compiled:
    """Generated code objects of one function: bind them to a function instance to run."""

    def __init__(self, generated, codes, freevars_of_user):
        self.generated = generated
        self.codes = codes
        self.user_freevars = freevars_of_user
        self._bound = {}  # function instance -> its generated functions

    def bind(self, fn):
        """Functions (joint, forward, backward) closing over ``fn``'s own cells."""
        fn = unwrap(fn)
        bound = self._bound.get(fn)
        if bound is None:
            bound = self._bound[fn] = self._make(fn)
        return bound

    def _make(self, fn):
        user_cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        helper_cells = {name: types.CellType(obj) for name, obj in self.generated.closure.items()}
        out = []
        defaults = fn.__defaults__ or ()
        for code, argdefs in zip(self.codes, (defaults + (None,), defaults, (None,))):
            closure = tuple(user_cells[name] if name in user_cells else helper_cells[name]
                            for name in code.co_freevars)
            out.append(types.FunctionType(code, fn.__globals__, code.co_name, argdefs, closure))
        return tuple(out)


class Module:
    """The names one generated module closes over, and how it calls other adjoints."""

    def __init__(self, source):
        self.source = source
        self.closure = {}
        self.namer = None

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
        key = (fn.__code__, tuple(wrt), tuple(container_params))
        if key in _IN_PROGRESS:
            raise source.syntax_error(
                f"{fn.__name__} calls itself (directly or through other functions); srcad does not "
                "differentiate recursion. Write it as a loop, or give it a rule with srcad.custom_vjp", node)
        compiled = compile_function(fn, wrt, container_params)
        _, forward, backward = compiled.bind(fn)
        return forward, backward

    def finish(self, base, joint_source, forward_source, backward_source):
        from .codegen import Generated

        names = sorted(set(self.closure) | set(self.source.closure))
        inner = "\n".join([joint_source, forward_source, backward_source])
        fname = f"{base}_adjoint", f"{base}_forward", f"{base}_backward"
        factory = (f"def __srcad_factory__({', '.join(names)}):\n"
                   + textwrap.indent(inner, "    ")
                   + f"\n    return {', '.join(fname)}\n")
        return Generated(base, joint_source, forward_source, backward_source, factory, dict(self.closure))


def compile_function(fn, wrt, container_params=(), specs=None, spec_key=None):
    """Transform and compile ``fn`` for ``wrt`` (parameter names); cached.

    ``specs`` (parameter -> ``passes.shapes.arg_spec``) specialises the code on argument
    shapes and dtypes; ``spec_key`` is their hashable summary for the cache.
    """
    from .pipeline import Options, transform

    fn = unwrap(fn)
    key = (fn.__code__, tuple(wrt), tuple(container_params), spec_key)
    compiled = _CACHE.get(key)
    if compiled is not None:
        return compiled
    _IN_PROGRESS.add(key[:3])
    try:
        generated = persistent_cache.load_generated(fn, key)
        if generated is None:
            generated = transform(fn, Options(wrt=tuple(wrt), container_params=tuple(container_params), specs=specs))
            persistent_cache.store_generated(fn, key, generated)
    finally:
        _IN_PROGRESS.discard(key[:3])
    filename = f"<srcad-generated {fn.__module__}.{fn.__qualname__} #{next(_counter)}>"
    text = generated.module_source
    lines = text.splitlines(keepends=True)
    linecache.cache[filename] = (len(text), None, lines, filename)
    code = compile(text, filename, "exec")
    factory_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    inner = {c.co_name: c for c in factory_code.co_consts if isinstance(c, types.CodeType)}
    base = generated.name
    codes = tuple(inner[f"{base}_{part}"] for part in ("adjoint", "forward", "backward"))
    generated.filename = filename
    compiled = Compiled(generated, codes, fn.__code__.co_freevars)
    _CACHE[key] = compiled
    return compiled
