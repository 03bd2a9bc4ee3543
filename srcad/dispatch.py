"""Which generated code a call of a ``Differentiable`` runs (``srcad.wrapper``): the version
specialised on its arguments' classes, shapes and dtypes (and those of the defaults it
leaves out), compiled on first use (after
``MAX_SPECIALISATIONS`` combinations one generic version that decides shapes at run time),
kept while the guards on the globals it read hold; the last call's code is found again
without building its key.
"""
import functools
import inspect
import types

import numpy as np

from . import registry
from .arguments import CONTAINERS, check_arguments, is_structure
from .held_objects import object_classes
from .backends.numba_backend import accelerate
from .compile import compile_function, guards_hold
from .errors import ArgumentError
from .guards import GuardList, protocol_array_key
from .passes.shapes import arg_spec, spec_key
from .passes.shape_values import freeze
from .pipeline import param_names
from .protocol import protocol_array
from .source import capture, trampoline

MAX_SPECIALISATIONS = 8  # shape/dtype combinations compiled per function before going generic


class CompiledCache:
    """The compiled code of a ``Differentiable`` per argument key (``_bound``), the guards of
    each (``_guards``) and the last call's (``_last``)."""

    def _functions(self, args, kwargs=None):
        """The generated (joint, forward, backward) for arguments like ``args``, ``kwargs``."""
        key, containers, foreign = self._key(args, kwargs)
        bound = self._bound.get(key)
        if bound is not None and not containers:  # arrays seen before: only the guards to check
            guards = self._guards.get(key)
            if guards is None or guards_hold(guards):
                return bound
        if (bound is None or containers) and self._sig is not None and (args or kwargs):
            self._check(args, kwargs or {})  # array keys hold class, shape, dtype: checked once
        if bound is None or (self._guards and key in self._guards and not guards_hold(self._guards[key])):
            if not all(g.holds() for g in self._made_from):
                raise ArgumentError(
                    f"{self._where}: what this derivative was made from has changed since (a functools.partial's "
                    "keywords, or the __call__ of an object's class): make it again (srcad.grad(...), "
                    "srcad.differentiable(...)) from the callable as it is now")
            bound = self._bound[key] = self._compile(args, kwargs or {}, key)  # new shapes, or a global was rebound
        if not (containers or foreign):  # every key item an (array shape, dtype) or a class: _recent can check it
            kept = self._guards.get(key)
            guards = None
            if kept is not None:
                guards = kept.quick if isinstance(kept, GuardList) else functools.partial(guards_hold, kept)
            joint = bound[0]
            matches = self._checkers.get(key)
            if matches is None:
                matches = self._checkers[key] = key_checker(key)
            positional = positional_cotangent(joint)
            self._last = (key, guards, joint, positional, matches)
            self._fast = None  # the adjoint's call without a prefix, every parameter required, no keywords
            if self._plain and not self._prefix and not self._one_tuple and positional == len(key) == self._needed:
                self._fast = fast_entry(key, kept, joint)
        return bound

    @staticmethod
    def _key(args, kwargs=None):
        """``(key, containers, foreign)``: the compiled code's key for arguments like ``args``,
        ``kwargs``, and whether some are structures or foreign arrays (checked on every call)."""
        key = ()
        containers = foreign = False
        for a in args:
            cls = a.__class__
            if cls is np.ndarray:
                key += ((a.shape, a.dtype),)
            elif cls in CONTAINERS:
                held = object_classes(("",), (a,))  # the classes of the objects in it: their methods resolve
                key += ((spec_key(a), held) if held else spec_key(a),)
                containers = True
            elif protocol_array(a):  # a Dask array: by shape, dtype and chunks
                key += (protocol_array_key(a),)
                foreign = True
            else:
                held = object_classes(("",), (a,))  # with the classes of the objects it holds (model.l2)
                key += (held if len(held) > 1 else cls,)
                # a named tuple or dataclass: its items vary; an object of yours: the classes of the objects
                # and the functions it holds, which change under the same class (``held_objects``)
                containers = containers or is_structure(a) or bool(held)
        if kwargs:
            key += tuple((k, spec_key(a)) for k, a in sorted(kwargs.items()))
            containers = True
        return key, containers, foreign

    def _recent(self, args):
        """``(key, guards, joint, cotangent position)`` of the last call if ``args`` have its
        key (the same classes, array shapes and dtypes, checked item by item as ``_functions``
        encodes them) and its guards still hold; else None (``_functions`` decides)."""
        last = self._last
        if last is None or not last[4](args):
            return None
        if last[1] is not None and not last[1]():
            return None
        return last

    def _check(self, args, kwargs):
        names = self._sig.names
        values = self._sig.values(args, kwargs, names)
        check_arguments(self._sig.where, names, values, self._names)

    def _source_function(self, args):
        """The Python function whose code is differentiated (nested derivatives differ)."""
        if registry.lookup(registry.VJP, self._original) is not None:
            return trampoline(self._original)  # a custom rule: differentiate a call to it
        return self.func

    def _compile(self, args, kwargs, key):
        fn = self._source_function(args)
        if not isinstance(fn, types.FunctionType):
            capture(fn)  # raises the error that says why srcad cannot read it
        params = generated_params(fn)
        names = self._names if self._names is not None else param_names(params, self._wrt)
        containers = tuple(p for p, a in zip(params, args) if is_structure(a))
        containers += tuple(p for p, a in kwargs.items() if is_structure(a))
        # not for a Dask array (or another protocol array) among the arguments: what derives from it is
        # such an array too, which the code specialised for NumPy arrays' shapes would accumulate in
        # place into NumPy buffers (``dw += ...`` where ``w`` is NumPy's and the data Dask's)
        specialised = len(self._bound) < MAX_SPECIALISATIONS and not any(
            protocol_array(a) for a in list(args) + list(kwargs.values()))
        for_numba = self._backend != "numpy"  # Options.for_numba
        classes = object_classes(params, args) + object_classes(kwargs, kwargs.values()) + object_classes(
            *left_out_defaults(fn, params, args, kwargs))
        values = args if len(args) == len(params) and not kwargs else values_with_defaults(fn, params, args, kwargs)
        if specialised and values is not None:
            specs = {p: arg_spec(a) for p, a in zip(params, values)}
            # (the defaults' specs are the compiled code's too: another function of the same code, or
            # the same after its defaults are rebound, may have others)
            compile_key = key if values is args else key + (("defaults",) + tuple(
                (p, freeze(specs[p])) for p in params[len(args):] if p not in kwargs),)
            compiled = compile_function(fn, names, containers, specs, compile_key, classes=classes,
                                        for_numba=for_numba)
        else:  # many shapes seen: one generic version that checks shapes at run time
            compiled = compile_function(fn, names, containers, classes=classes, for_numba=for_numba)
        self._compiled = compiled
        # a call that passes every parameter reads none of fn's defaults: rebinding them changes nothing
        rebindable = compiled.global_guards(fn, defaults_read=values is not args)
        if self._made_from:
            rebindable = GuardList(list(rebindable) + self._made_from)
        if rebindable:
            self._guards[key] = rebindable
        else:
            self._guards.pop(key, None)
        return accelerate(compiled.bind(fn), compiled, fn, self._backend)

    def _ensure_compiled(self):
        if not self._bound:
            self._functions(())


def values_with_defaults(fn, params, args, kwargs):
    """The value of each parameter of ``fn`` in a call with ``args`` and ``kwargs``, its default
    where it is left out: code specialised on their shapes (the key holds the arguments given;
    a default's shape is the same at every call while ``fn.__defaults__``, which the guards
    watch, is: a number, a string, None or a tuple of them). None where a parameter
    has no such value, or ``fn`` takes ``*args``, ``**kwargs`` or keyword-only parameters."""
    code = fn.__code__
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) or code.co_kwonlyargcount:
        return None
    given = dict(zip(params, args))
    if len(args) > len(params) or any(k not in params or k in given for k in kwargs):
        return None
    given.update(kwargs)
    defaults = fn.__defaults__ or ()
    first = len(params) - len(defaults)
    values = []
    for i, p in enumerate(params):
        if p in given:
            values.append(given[p])
        elif i >= first and _fixed_shape(defaults[i - first]):
            values.append(defaults[i - first])
        else:
            return None
    return values


def _fixed_shape(value):
    """Can ``value``, held as a default, never change shape or type in place? (Not an array:
    ``a.shape = ...`` and ``a.resize(...)`` change its shape in place. A module has none:
    ``xp=np``, read as the module, is checked when the code runs.)"""
    if isinstance(value, tuple):
        return all(_fixed_shape(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, complex, str, np.generic, types.ModuleType))


MISS = object()  # what ``fast_entry``'s function returns for arguments it does not take


def _key_tests(key, namespace):
    """The test that arguments ``a0, a1, ...`` have ``key`` (as ``_functions`` encodes it: an
    ndarray's shape and dtype, any other argument's class), as source; its names in ``namespace``."""
    namespace["ndarray"] = np.ndarray
    tests = []
    for i, k in enumerate(key):
        if k.__class__ is tuple:  # (shape, dtype) of an ndarray
            namespace[f"shape{i}"], namespace[f"dtype{i}"] = k
            tests.append(f"a{i}.__class__ is ndarray and a{i}.shape == shape{i} "
                         f"and (a{i}.dtype is dtype{i} or a{i}.dtype == dtype{i})")
        else:
            namespace[f"cls{i}"] = k
            tests.append(f"a{i}.__class__ is cls{i}")
    return " and ".join(tests) or "True"


def _unpack(n):
    return "".join(f"a{i}, " for i in range(n))


def key_checker(key):
    """``matches(args)``: do ``args`` have ``key``? One compiled test per key, no loop."""
    namespace = {}
    tests = _key_tests(key, namespace)
    unpack = f"    {_unpack(len(key))}= args\n" if key else ""
    text = f"def matches(args):\n    if len(args) != {len(key)}:\n        return False\n{unpack}    return {tests}\n"
    return _defined(text, "<srcad-trampoline key check>", namespace, "matches")


def fast_entry(key, guards, joint):
    """``entry(args)``: ``joint(*args)`` for the arguments of ``key`` followed by an optional float
    array cotangent, while ``guards`` (``Compiled.global_guards``, or None) hold; ``MISS`` for
    any other call (the general path decides). One Python frame: the argument test, the
    guards (their identity tests inline) and the call."""
    namespace = {"MISS": MISS, "joint": joint}
    tests = _key_tests(key, namespace)
    n, names = len(key), _unpack(len(key))
    lines = ["def entry(args):",
             "    n = len(args)",
             f"    if n == {n + 1}:",
             f"        {names}v = args",
             "        if v.__class__ is not ndarray or v.dtype.kind != 'f':",
             "            return MISS",
             f"    elif n == {n}:",
             f"        {names}= args" if n else "        pass",
             "        v = None",
             "    else:",
             "        return MISS",
             f"    if not ({tests}):",
             "        return MISS"]
    inline = guards.inline_test(namespace, "_guard") if isinstance(guards, GuardList) else None
    if inline is not None:  # an attribute gone or a global deleted raises: the general path decides
        lines += ["    try:", f"        if not ({inline}):", "            return MISS",
                  "    except Exception:", "        return MISS"]
    elif guards is not None:
        namespace["guards"] = functools.partial(guards_hold, guards)
        lines += ["    if not guards():", "        return MISS"]
    lines.append(f"    return joint({names}v)")
    # named like srcad's glue, so a traceback through it hides it (tracebacks._INTERNAL_PREFIXES)
    return _defined("\n".join(lines) + "\n", "<srcad-trampoline fast entry>", namespace, "entry")


_TRAMPOLINE_CODES = {}  # (text, filename) -> its compiled code: bound afresh to each namespace


def _defined(text, filename, namespace, name):
    """The function ``name`` that ``text`` defines, with ``namespace`` as its globals. The text
    names the objects it tests (``shape0``, ``_guard3``), which ``namespace`` binds, so every
    wrapper of the same code (``srcad.grad(f)(x)`` made anew in a loop) compiles it once."""
    code = _TRAMPOLINE_CODES.get((text, filename))
    if code is None:
        if len(_TRAMPOLINE_CODES) >= 4096:  # (texts differ by key length and guard tests: few in practice)
            _TRAMPOLINE_CODES.clear()
        code = _TRAMPOLINE_CODES[text, filename] = compile(text, filename, "exec")
    exec(code, namespace)
    return namespace[name]


def positional_cotangent(joint):
    """How many arguments precede the cotangent when every parameter of the generated joint
    adjoint is passed by position (-1: it cannot be passed by position)."""
    code = joint.__code__
    return code.co_argcount - 1 if not code.co_kwonlyargcount else -1


def left_out_defaults(fn, params, args, kwargs):
    """``(names, values)`` of the parameters a call with ``args`` and ``kwargs`` leaves to the
    defaults the generated code keeps (``def loss(x, box=Box())``; where ``fn`` takes ``*args``,
    ``**kwargs`` or keyword-only parameters the API fills every default in): the code is
    compiled for their classes, as for the arguments passed."""
    code = fn.__code__
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) or code.co_kwonlyargcount:
        return (), ()
    defaults = fn.__defaults__ or ()
    first = len(params) - len(defaults)
    names = [p for i, p in enumerate(params) if i >= max(first, len(args)) and p not in kwargs]
    return names, [defaults[params.index(p) - first] for p in names]


def generated_params(fn):
    """The parameters of the code generated for ``fn``: all of them, in order (``*args`` and
    ``**kwargs`` as one tuple and one dict parameter, keyword-only ones as plain ones)."""
    code = fn.__code__
    names, n = code.co_varnames, code.co_argcount
    if not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) and not code.co_kwonlyargcount:
        return names[:n]
    keyword_only, rest = names[n:n + code.co_kwonlyargcount], n + code.co_kwonlyargcount
    varargs = names[rest:rest + 1] if code.co_flags & inspect.CO_VARARGS else ()
    rest += len(varargs)
    varkw = names[rest:rest + 1] if code.co_flags & inspect.CO_VARKEYWORDS else ()
    return names[:n] + varargs + keyword_only + varkw
