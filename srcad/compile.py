"""Compilation and caching of generated code.

Generated functions are compiled once per (function code, wrt, container parameters),
inside a factory whose parameters are every name srcad introduces (runtime helpers,
builtins, rules' globals, callees' adjoints), so generated code never resolves one of
them in the user's scope, where user code could shadow it. The user's globals stay live
(the functions run in the user's module namespace) and the user's closure cells are
shared, not copied. The source is registered with ``linecache`` under a readable filename
(dropped when the code dies), so tracebacks, pdb and ``inspect.getsource`` show it, and
with a map from its lines to the user's (``srcad.sourcemap``), so tracebacks name the user's
line too (``srcad.tracebacks``).

The code that runs is the code that was differentiated: every name path the compiler
resolved (``np.sin``, ``cfg.act``, a closure's ``act``), every attribute generated code
reads off a module (``np.cos``) and every fact a rule template's module gave
(``srcad.facts``: a pasted ``K``, a decided ``if FLAG:``) is a guard, checked on every cache
lookup and, through ``Compiled.global_guards``, on every call; a changed binding means a new
compilation. A function whose call may rebind one of them itself is refused
(``srcad.rebinding``).
Caches hold user functions and code objects weakly, and compilation is thread-safe.
"""
import builtins
import itertools
import linecache
import re
import types
import weakref

import gast

from . import cache as persistent_cache
from . import facts
from . import registry
from . import sourcemap
from .code_cache import LOCK, CodeCache, Recursion, cached
from .errors import SrcadError
from .indentation import indent_code
from .guards import (_MISSING, Guard, _bound_guard, _CalleeFunction, _CalleeGuard, _follow, _scope_value, bindings,
                     check_unpatched, defaults_of, guards_hold, module_attribute_guards, item_classes,
                     resolved_dict_keys, resolved_item_classes, same_defaults, GuardList)
from .holding import _hold, hold_path, path_holds
from .rebinding import check_not_rebound
from .code_reading import installed_file
from .source import GENERATED_FILENAME, srcad_file, unwrap

_counter = itertools.count(1)
_CACHE = CodeCache()  # what compile_function and compile_jvp made, per user code object


class Compiled:
    """Generated code objects of one function: bind them to a function instance to run.

    ``codes`` are the functions the factory makes, in order; ``argdefs(defaults)`` gives
    each one's default arguments from the user function's. ``made_for`` is ``bindings(fn)``
    of the function it was generated from; ``inherited`` the guards of the user functions
    it calls and of the module attributes it reads.
    """

    def __init__(self, fn, generated, codes, argdefs, made_for, inherited=(), pair=None):
        self.generated = generated
        self.codes = codes
        self.argdefs = argdefs
        self._pair = pair  # reverse mode: the forward/backward pair's (codes, argdefs), made at first need
        # held weakly: a cache entry lives as long as the user's code, never longer
        self.made_for = [(path, hold_path(_scope_value(fn, path[0]), path[1:], obj)) for path, obj in made_for]
        # the code of each Python function among them: a helper may be inlined, so its code
        # swapped in place (IPython's %autoreload) must recompile, as rebinding its name does
        # (and its defaults: an inlined helper's literal defaults are written into the code)
        self.made_for_code = [(path, _hold(obj), weakref.ref(obj.__code__), defaults_of(obj))
                              for path, obj in made_for if isinstance(obj, types.FunctionType)]
        self.made_for_keys = resolved_dict_keys(made_for)
        self.made_for_items = resolved_item_classes(made_for)
        generated.resolved = []
        # every function's reads, the pair's too (guarded now, even if it is made later)
        read = getattr(generated, "trees", None) or [generated.module_source,
                                                     getattr(generated, "pair_module_source", "")]
        if read is getattr(generated, "trees", None):
            generated.trees = None  # read once: the trees can go
        attribute_guards = module_attribute_guards(read, generated.closure)
        check_unpatched(attribute_guards, fn)
        self.inherited = list(inherited) + attribute_guards
        # a rule registered later may apply where this code differentiated a function's source
        self.inherited.append(Guard("object", registry, "srcad.registry", ("GENERATION",), registry.GENERATION))
        check_not_rebound(fn, self.global_guards(fn))

    def matches(self, fn):
        """Was this code made for bindings like ``fn``'s (its closure, its globals)?"""
        for path, held in self.made_for:
            if not path_holds(_scope_value(fn, path[0]), path[1:], held()):
                return False
        for path, _, code, defaults in self.made_for_code:
            now = _follow(_scope_value(fn, path[0]), path[1:])
            if getattr(now, "__code__", None) is not code() or not same_defaults(defaults_of(now), defaults):
                return False
        if any(tuple(now) != keys for _, now, keys in self.made_for_keys):  # (made_for: still the same dicts)
            return False
        if any(item_classes(now) != classes for _, now, classes in self.made_for_items):
            return False
        return guards_hold(self.inherited)

    def global_guards(self, fn, defaults_read=True):
        """Everything that can change under the same function object, checked per call: its
        code (``%autoreload``), its globals and closure cells, attributes on the way, the
        functions it calls and the module attributes it reads; its default arguments unless
        ``defaults_read`` is false (the calls guarded pass every parameter). (Made anew for each
        wrapper: a list kept here would hold ``fn`` and its globals, and so keep this cache
        entry alive for ever.)"""
        return GuardList(_function_guards(fn, fn.__name__, fn.__code__, defaults_read)
                         + [_bound_guard(fn, path, held()) for path, held in self.made_for]
                         + [g for path, held, code, _ in self.made_for_code if held() is not _MISSING
                            for g in _function_guards(held(), ".".join(path), code())]
                         + [Guard("keys", now, ".".join(path), (), keys) for path, now, keys in self.made_for_keys]
                         + [Guard("item classes", now, ".".join(path), (), classes)
                            for path, now, classes in self.made_for_items]
                         + self.inherited)

    def bind(self, fn):
        """The generated functions, closing over ``fn``'s own cells (made afresh: callers
        such as ``srcad.differentiable`` keep them): ``(joint, forward, backward)`` in reverse
        mode, where the forward/backward pair is compiled when first used."""
        fn = unwrap(fn)
        functions = self._functions(fn, self.codes, self.argdefs)
        return functions if self._pair is None else _Bound(self, fn, functions[0])

    def _functions(self, fn, codes, argdefs):
        user_cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        helper_cells = {name: types.CellType(obj.resolve() if isinstance(obj, _CalleeFunction) else obj)
                        for name, obj in self.generated.closure.items()}
        out = []
        for code, defaults in zip(codes, argdefs(fn.__defaults__ or ())):
            closure = tuple(user_cells[name] if name in user_cells else helper_cells[name]
                            for name in code.co_freevars)
            out.append(types.FunctionType(code, fn.__globals__, code.co_name, defaults, closure))
        return tuple(out)

    def defaults(self, fn, index):
        """The default arguments of generated function ``index`` (0 the joint adjoint, 1 and
        2 the forward/backward pair in reverse mode) for ``fn``'s defaults."""
        if index == 0 or self._pair is None:
            return self.argdefs(fn.__defaults__ or ())[index]
        self.pair(fn)
        return self._pair[1](fn.__defaults__ or ())[index - 1]

    def pair(self, fn):
        """The forward/backward pair bound to ``fn``, made and compiled on first use."""
        if callable(self._pair):
            with LOCK:
                if callable(self._pair):
                    self._pair = self._pair(fn)
        return self._functions(fn, *self._pair)


class _Bound(tuple):
    """``(joint, forward, backward)`` of reverse mode whose pair is made when first read."""

    def __new__(cls, compiled, fn, joint):
        self = super().__new__(cls, (joint,))
        self._compiled, self._fn, self._made = compiled, fn, None
        return self

    def __len__(self):
        return 3

    def __iter__(self):
        return iter((self[0], self[1], self[2]))

    def __getitem__(self, index):
        if index == 0:
            return tuple.__getitem__(self, 0)
        if self._made is None:
            self._made = self._compiled.pair(self._fn)
        return self._made[index - 1]


_live_files = {}  # generated filename -> number of its code objects still alive


def _release(filename):
    _live_files[filename] -= 1
    if not _live_files[filename]:
        del _live_files[filename]
        linecache.cache.pop(filename, None)
        sourcemap.release(filename)


def _load(text, fn, suffix, names):
    """Compile a generated factory module; its inner code objects named ``names``. The
    source stays in ``linecache`` while any of them lives."""
    name = fn.__qualname__.replace("__srcad_factory__.<locals>.", "")  # a derivative's derivative
    filename = f"{GENERATED_FILENAME}{fn.__module__}.{name}{suffix} #{next(_counter)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    sourcemap.register(filename, text, fn)  # tracebacks name the user's line (srcad.tracebacks)
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
        self._callee_functions = {}  # (guard, index) -> the one stand-in for that function
        self.callee_shapes_proved = False  # a jvp callee's code holds for its arguments' shapes only

    def ref(self, name, obj):
        """The name under which generated code sees ``obj``: always a parameter of the
        factory, so a closure variable of the generated functions, never a name looked up in
        the user's scope at run time. It is ``name`` unless the function uses that name for
        something else (a local, a closure variable, another object): then ``name_``,
        ``name__``, ... If the function's own global (or builtin) ``name`` is ``obj``, the
        user's reads of it see the same object, and a guard recompiles if it is rebound."""
        from .astutil import anno
        from .naming import identifier

        namer = anno(self.source.node, "namer")
        taken = namer.taken if namer is not None else set()
        candidate = identifier(name)
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
        from .passes.callees import local_names

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

    def callee(self, fn, wrt, container_params, source, node, specs=None, classes=(), constant_params=(), keyed=()):
        """Forward and backward functions of the user's function ``fn`` (compiled once per
        ``specs``: the shapes and dtypes the caller knows its arguments have; ``classes``,
        those of its object arguments; ``constant_params``, those it gives constants; and
        ``keyed``, those it gives dicts whose keys are strings)."""
        from .passes.shapes import specs_key

        try:
            compiled = compile_function(fn, wrt, container_params, specs=specs or None,
                                        spec_key=specs_key(specs) if specs else None, classes=classes,
                                        constant_params=constant_params, keyed=keyed)
        except Recursion as exc:
            raise source.syntax_error(str(exc), node) from None
        except SrcadError as exc:
            raise _at_the_call(exc, fn, source, node, "register_vjp") from None
        guard = self._callee_guard(fn, compiled)
        return self._callee_function(guard, 1), self._callee_function(guard, 2)

    def jvp_callee(self, fn, wrt, container_params, source, node, classes=(), arrays=(), numbers=(), specs=None,
                   keyed=()):
        """The jvp function of the user's function ``fn`` and its tangent parameter names;
        ``arrays``, ``numbers``: its parameters the caller gives arrays or numbers, Python numbers;
        ``keyed``: dicts whose keys are strings;
        ``specs``: the shapes the caller knows them to have (``compile_jvp``). Where the callee's
        code holds for those shapes only, so does the caller's (``callee_shapes_proved``)."""
        try:
            compiled = compile_jvp(fn, wrt, container_params, caller=(source, node), classes=classes, arrays=arrays,
                                   numbers=numbers, keyed=keyed, specs=specs or None)
        except SrcadError as exc:
            raise _at_the_call(exc, fn, source, node, "register_jvp") from None
        self.callee_shapes_proved |= compiled.proved_for is not None
        return self._callee_function(self._callee_guard(fn, compiled), 0), compiled.tangent_params

    def _callee_guard(self, fn, compiled):
        for guard in self.inherited:
            if guard.fn() is unwrap(fn) and guard.compiled is compiled:
                return guard
        fn = unwrap(fn)
        # a callee found through a name is guarded by that name: hold it weakly; one made while
        # compiling (``srcad.grad(h)(x)`` in the code) lives only here
        named = any(unwrap(obj) is fn for _, obj in self._resolved())
        guard = _CalleeGuard(fn, compiled, weak=named)
        self.inherited.append(guard)
        return guard

    def _callee_function(self, guard, index):
        key = (id(guard), index)
        if key not in self._callee_functions:
            self._callee_functions[key] = _CalleeFunction(guard, index)
        return self._callee_functions[key]

    def bind_builtins(self, node):
        """Route the builtins passes emit (``naming.builtin("range")``) through ``ref``."""
        from .astutil import anno, walk
        from .naming import BUILTIN

        for n in walk(node):
            name = anno(n, BUILTIN) if isinstance(n, gast.Name) else None
            if name is not None:  # (a pass may name a srcad object so: ``(name, object)``)
                n.id = self.ref(*name) if isinstance(name, tuple) else self.ref(name, getattr(builtins, name))
        return node

    def resolved(self):
        """The name paths the compiler resolved in the user's scope, with what they denoted."""
        return list(self._resolved())

    def factory(self, sources, names):
        """A module defining ``__srcad_factory__(closure names...)``, which defines the
        generated functions and returns them."""
        return factory_source(self.factory_params(), sources, names)

    def factory_params(self):
        return sorted(set(self.closure) | set(self.source.closure))

    def finish(self, base, joint_source, make_pair, trees):
        """The ``codegen.Generated`` of the joint adjoint, with ``make_pair()`` to make the
        forward/backward pair's sources later; ``trees`` are all three functions' trees."""
        from .codegen import Generated

        factory = self.factory([joint_source], [f"{base}_adjoint"])
        return Generated(base, joint_source, "", "", factory, dict(self.closure), inherited=list(self.inherited),
                         resolved=self.resolved(), make_pair=make_pair, trees=trees,
                         factory_params=self.factory_params())


def _function_guards(fn, name, code, defaults=True):
    """``fn``'s code is still ``code``, and (with ``defaults``) its default arguments the ones
    the generated code was bound to, or inlined with."""
    if not defaults:
        return [Guard("code", fn, name, (), code)]
    kw = fn.__kwdefaults__  # a dict changes in place (f.__kwdefaults__["k"] = ...): each item is guarded too
    return [Guard("code", fn, name, (), code), Guard("defaults", fn, name, (), fn.__defaults__),
            Guard("kwdefaults", fn, name, (), kw)] + [Guard("kwdefault", fn, name, (k,), v)
                                                       for k, v in (kw or {}).items()]


def factory_source(params, sources, names):
    """The text of a module defining ``__srcad_factory__(*params)``, which defines the
    functions ``sources`` and returns those named ``names``."""
    return (f"def __srcad_factory__({', '.join(params)}):\n" + indent_code("\n".join(sources), "    ")
            + f"\n    return {', '.join(names)}\n")


def _at_the_call(exc, fn, source, node, register):
    """An error met inside an installed library's source, raised instead at the user's call of
    that library function (what they can act on: a rule for the function they called); a class
    method's refusal to make an object of its class, at the call through an object."""
    from .passes.inline import class_parameter

    if getattr(exc, "made_through_object", False) and class_parameter(source) is None:
        return _repointed(exc, source, node)  # the first caller that is no class method: the user's call
    code = getattr(unwrap(fn), "__code__", None)
    from .registry import describe

    inside_srcad = srcad_file(getattr(exc, "filename", None) or "")  # (not the user's line already)
    srcads = code is not None and (srcad_file(code.co_filename)
                                   or code.co_filename.startswith(GENERATED_FILENAME) and inside_srcad)
    if srcads and source.is_generated():
        # a rule's helper (or code srcad generated for one) met while differentiating srcad's own
        # code again: say so at the generated line, which the error maps back to the user's
        return source.syntax_error(
            f"srcad takes no derivative of the derivative of {describe(fn)} (second order: hvp, hessian, "
            f"grad of grad): {str(exc).splitlines()[0].split(': ', 1)[-1]}", node)
    if code is None or not installed_file(code.co_filename) or installed_file(source.filename):
        return exc
    name = describe(fn)
    cause = re.split(r"; |\. (?=[A-Z])", str(exc).splitlines()[0])[0]  # where and why, not its advice
    return source.syntax_error(
        f"{name} could not be differentiated through its source: {cause}; register a rule with "
        f"srcad.extend.{register}({name}) (or srcad.stop_gradient around the call if no derivative "
        "should flow through it)", node)


def _repointed(exc, source, node):
    """A class method's refusal to make an object of the class it is called through, raised at
    the user's ``obj.method(...)`` (the line to change; the class methods it went through call
    each other through ``cls``) and naming where it was met."""
    return source.syntax_error(
        f"{source.line(node.lineno).strip()} calls a class method through an object; {exc.message} "
        f"(met at {exc.filename}:{exc.lineno})", node)


def compile_function(fn, wrt, container_params=(), specs=None, spec_key=None, classes=(), for_numba=False,
                     constant_params=(), keyed=()):
    """Transform and compile the adjoint of ``fn`` for ``wrt`` (parameter names); cached.

    ``specs`` (parameter -> ``passes.shapes.arg_spec``) specialises the code on argument
    shapes and dtypes; ``spec_key`` is their hashable summary for the cache. ``classes``
    (``held_objects.object_classes``) are the classes of arguments whose methods it calls.
    ``for_numba``: ``Options.for_numba``. ``constant_params``: ``Options.constant_params``.
    ``keyed``: ``Options.keyed_params`` (a caller that knows them: ``Compiler.callee``).
    """
    from .pipeline import Options, transform

    fn = unwrap(fn)
    key = ("rev", fn.__code__, tuple(wrt), tuple(container_params), spec_key) + ((tuple(classes),) if classes else ()) \
        + (("for numba",) if for_numba else ()) + ((("constant",) + tuple(constant_params),) if constant_params else ()) \
        + ((("keyed",) + tuple(keyed),) if keyed else ())

    def make():
        module_key = key[1:]
        generated = persistent_cache.load_generated(fn, module_key)
        if generated is None:
            generated = transform(fn, Options(wrt=tuple(wrt), container_params=tuple(container_params), specs=specs,
                                              param_classes=tuple(classes), for_numba=for_numba,
                                              constant_params=tuple(constant_params), keyed_params=tuple(keyed)))
            persistent_cache.store_generated(fn, module_key, generated)
        base = generated.name
        generated.filename, codes = _load(generated.module_source, fn, "", [f"{base}_adjoint"])

        def make_pair(fn):  # the user's function is passed in, not held: the cache holds it weakly
            generated.ensure_pair()
            pair_codes = _load(generated.pair_module_source, fn, " vjp", [f"{base}_forward", f"{base}_backward"])[1]
            return pair_codes, lambda d: (d, (None,))

        return Compiled(fn, generated, codes, lambda d: (d + (None,),), bindings(fn, generated.resolved),
                        generated.inherited + facts.guards(generated.facts), pair=make_pair)

    return cached(_CACHE, key, fn, make, key[:4] + (tuple(classes), id(fn)))


def compile_jvp(fn, wrt, container_params=(), caller=None, classes=(), arrays=(), numbers=(), keyed=(), specs=None):
    """Transform and compile the jvp of ``fn`` for ``wrt`` (parameter names); cached.

    ``caller`` is ``(source, node)`` of a call site, for the error on recursion; ``classes``
    as for ``compile_function``; ``arrays``: the parameters given arrays or numbers, ``numbers``
    those given Python numbers, ``keyed`` those given dicts whose keys are strings. The code
    does not depend on the arguments' shapes, except where the aliasing check needed
    ``specs`` (parameter -> ``shapes.arg_spec``) to accept it (``for v in vector`` updating
    ``vector`` later): such code is made again for other shapes.
    """
    from .pipeline import Options, transform_jvp
    from .passes.shapes import specs_key

    fn = unwrap(fn)
    key = ("fwd", fn.__code__, tuple(wrt), tuple(container_params), None) + ((tuple(classes),) if classes else ()) \
        + ((("arrays",) + tuple(arrays), ("numbers",) + tuple(numbers)) if arrays else ()) \
        + ((("keyed",) + tuple(keyed),) if keyed else ())
    shapes = specs_key(specs) if specs else None

    def make():
        generated = transform_jvp(fn, Options(wrt=tuple(wrt), container_params=tuple(container_params),
                                              param_classes=tuple(classes), array_params=tuple(arrays),
                                              number_params=tuple(numbers), keyed_params=tuple(keyed), specs=specs))
        generated.filename, codes = _load(generated.module_source, fn, " jvp", [generated.name])
        compiled = Compiled(fn, generated, codes, lambda d: (d,), bindings(fn, generated.resolved),
                            generated.inherited + facts.guards(generated.facts))
        compiled.tangent_params = generated.tangent_params
        compiled.proved_for = shapes if generated.shapes_proved else None
        return compiled

    try:
        compiled = cached(_CACHE, key, fn, make, key[:4] + (tuple(classes), id(fn)))
        if compiled.proved_for is not None and compiled.proved_for != shapes:  # right for other shapes only
            compiled = cached(_CACHE, key + (("shapes", shapes),), fn, make, key[:4] + (tuple(classes), id(fn)))
        return compiled
    except Recursion as exc:
        if caller is not None:
            raise caller[0].syntax_error(str(exc), caller[1]) from None
        raise
