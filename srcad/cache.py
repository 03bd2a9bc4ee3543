"""An opt-in cache of generated code across processes: ``SRCAD_CACHE_DIR=/path/to/dir``.

Transforming a function is the expensive part of its first use; this cache keeps the
generated source, so a new process compiles it without running the pipeline again. The
entries live in a private directory, written atomically and checked before use
(``cache_store``); this module decides what an entry holds and is keyed by, and when it may
be used:

- An entry's key material is srcad's version and source files, Python's and NumPy's
  versions, the function's source, file, line and code, what every name it uses is bound to
  (so rebinding ``act = np.sin`` is a different entry), and every name used by the functions
  of its module it names, in turn (helpers srcad may inline), the registered rules, ``wrt``,
  container parameters and the argument shapes the code is specialised on.
- Only code whose every closure object can be found again by module and qualified name
  among the modules already imported is cached (srcad's helpers and rules' globals); code
  that calls other differentiated user functions is not. Reading an entry never imports.
- The entry lists every name path the code was resolved through (``cfg.act``) with a
  description of what it denoted, and every fact of a rule's module it took as fixed
  (``srcad.facts``: a pasted ``K``, a decided ``cfg.SQUARE``, the code and defaults of a
  template of yours) with its exact value; an entry is used only if each still denotes the same. Code whose facts cannot be described exactly
  (an array's data, an object's state) is not cached.

A missing, unreadable or mismatching entry is a miss: the function is transformed as
without a cache.
"""
import dataclasses
import functools
import hashlib
import json
import os
import re
import sys
import types

import numpy as np

from . import facts
from .astutil import LITERAL_TYPES
from .cache_store import FORMAT, directory, load, store
from .code_reading import code_names
from .guards import protocol_array_key
from .protocol import protocol_array

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_fingerprints = {}  # memoised per process: srcad's sources, the rule tables


# ---- what generated code depends on: the key material

def _stable(text):
    """``text`` without memory addresses, which differ between processes."""
    return _ADDRESS.sub("", text)


def _const_repr(const):
    if isinstance(const, types.CodeType):
        return _code_digest(const)
    if isinstance(const, frozenset):  # its order follows string hashes, which differ between processes
        return f"frozenset({sorted(_const_repr(c) for c in const)})"
    if isinstance(const, tuple):
        return f"({', '.join(_const_repr(c) for c in const)},)"
    return _stable(repr(const))


def _code_digest(code):
    """The parts of a code object that decide what it does (nested code objects included)."""
    h = hashlib.sha256()
    h.update(code.co_code)
    for const in code.co_consts:
        h.update(_const_repr(const).encode() + b"\0")
    h.update(repr((code.co_names, code.co_varnames, code.co_freevars, code.co_filename, code.co_firstlineno,
                   code.co_flags, code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount)).encode())
    return h.hexdigest()


def _describe(value, names, depth=0):
    """What ``value`` is, as far as generated code could depend on it (never its data)."""
    if isinstance(value, types.ModuleType):
        members = [f"{n}={_describe(getattr(value, n), names, depth + 1)}" for n in sorted(names)
                   if depth < 2 and n in vars(value)]
        return f"module {value.__name__}({', '.join(members)})"
    value = getattr(value, "__srcad_function__", value)
    if isinstance(value, types.MethodType):
        value = value.__func__
    if isinstance(value, types.FunctionType):  # its defaults too: an inlined helper's are written into the code
        defaults = _describe(value.__defaults__, names, depth + 1)
        kw = sorted((value.__kwdefaults__ or {}).items())
        return (f"function {value.__module__}.{value.__qualname__} {_code_digest(value.__code__)} defaults "
                f"{defaults} {[(k, _describe(v, names, depth + 1)) for k, v in kw]}")
    if isinstance(value, types.CodeType):  # a rule template's (``facts``): what it does
        return f"code {_code_digest(value)}"
    if isinstance(value, np.ndarray):
        return f"ndarray {value.shape} {value.dtype}"
    if type(value) in LITERAL_TYPES:  # a number or string generated code may hold as written
        return f"{type(value).__name__} {value!r}"
    if type(value) is tuple and depth < 4:
        return f"tuple({', '.join(_describe(v, names, depth + 1) for v in value)})"
    if type(value) is dict and depth < 4 and all(type(k) is str for k in value):
        return f"dict({[(k, _describe(v, names, depth + 1)) for k, v in sorted(value.items())]})"
    if isinstance(value, functools.partial) and depth < 4:
        return (f"partial({_describe(value.func, names, depth + 1)}, {_describe(value.args, names, depth + 1)}, "
                f"{[(k, _describe(v, names, depth + 1)) for k, v in sorted(value.keywords.items())]})")
    if isinstance(value, type) and depth < 2:  # a class: what is defined in it (methods, field defaults)
        members = [(k, _describe(v, (), depth + 1)) for k, v in sorted(vars(value).items())
                   if not (k.startswith("__") and k.endswith("__")) or k in ("__call__", "__init__", "__new__")]
        fields = getattr(value, "__dataclass_fields__", None) or {}
        defaults = [(k, _describe(f.default, (), depth + 1)) for k, f in sorted(fields.items())]
        return _stable(f"class {value.__module__}.{value.__qualname__} {members} {defaults} "
                       f"{_describe(getattr(value, '_field_defaults', None), (), depth + 1)}")
    kind = f"{type(value).__module__}.{type(value).__qualname__}"
    if protocol_array(value):  # a Dask array: shape, dtype and chunking, never its graph
        return _stable(f"{kind} {protocol_array_key(value)[1:]!r}")
    if callable(value):
        name = getattr(value, "__qualname__", None) or getattr(value, "__name__", "")
        return _stable(f"{kind} {getattr(value, '__module__', '')}.{name}")
    return kind


def _environment(fn):
    """What each name ``fn`` uses (globals, closure cells, builtins) is bound to now, and each
    name used by the functions of its module that it names, in turn (``cfgc.C`` read by a
    helper): srcad inlines such helpers (``passes.binding``) and decides on what they read."""
    names = code_names(fn.__code__)
    todo, seen = [names], {id(fn.__code__)}
    while todo:
        for name in sorted(todo.pop()):
            helper = fn.__globals__.get(name)
            if isinstance(helper, types.FunctionType) and helper.__globals__ is fn.__globals__ \
                    and id(helper.__code__) not in seen:
                seen.add(id(helper.__code__))
                more = code_names(helper.__code__) - names
                names |= more
                todo.append(more)
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    builtins = fn.__globals__.get("__builtins__", {})
    builtins = vars(builtins) if isinstance(builtins, types.ModuleType) else builtins
    lines = []
    for name in sorted(names | set(cells)):
        if name in cells:
            try:
                value = cells[name].cell_contents
            except ValueError:  # an empty cell
                lines.append(f"{name}: empty cell")
                continue
        elif name in fn.__globals__:
            value = fn.__globals__[name]
        elif name in builtins:
            value = builtins[name]
        else:
            continue  # an attribute name, or unbound
        lines.append(f"{name}: {_describe(value, names)}")
    return lines


def _srcad_fingerprint():
    """A hash of srcad's own source files (the pipeline and the rules that come with it)."""
    if "srcad" not in _fingerprints:
        root = os.path.dirname(os.path.abspath(__file__))
        h = hashlib.sha256()
        for folder, dirs, files in sorted(os.walk(root)):
            dirs.sort()
            for name in sorted(f for f in files if f.endswith(".py")):
                with open(os.path.join(folder, name), "rb") as f:
                    h.update(name.encode() + b"\0" + f.read())
        _fingerprints["srcad"] = h.hexdigest()
    return _fingerprints["srcad"]


def _rules_fingerprint():
    """A hash of the rule tables (users register rules of their own). srcad's optional rule
    modules (SciPy's) are left out: their sources are in ``_srcad_fingerprint``, and which of
    them a process has loaded so far does not change what srcad generates (a lookup loads the
    module that could hold its rule before it concludes anything)."""
    from . import optional_rules, registry

    tables = (("vjp", registry.VJP), ("jvp", registry.JVP), ("non-differentiable", registry.NONDIFFERENTIABLE),
              ("method", registry.METHODS), ("attribute", registry.ATTRIBUTES), ("", registry.NONDIFF_METHODS),
              ("", registry.NONDIFF_ATTRIBUTES))
    sizes = tuple(len(t) for _, t in tables)
    if _fingerprints.get("rules", (None,))[0] != sizes:
        h = hashlib.sha256()
        for what, table in tables:
            entries = table.items() if isinstance(table, dict) else ((k, None) for k in table)
            for line in sorted(_stable(f"{registry.describe(k)} -> {_describe_rule(v)}") for k, v in entries
                               if (what, k) not in optional_rules.OPTIONAL_ENTRIES):
                h.update(line.encode() + b"\n")
        _fingerprints["rules"] = (sizes, h.hexdigest())
    return _fingerprints["rules"][1]


def _describe_rule(value):
    fn = getattr(value, "fn", None)  # a registry.Rule: its template function
    if isinstance(fn, types.FunctionType):
        name = f"{fn.__module__}.{fn.__qualname__}"
        return name if fn.__module__.startswith(__package__ + ".") else f"{name} {_code_digest(fn.__code__)}"
    return _stable(_describe(value, ())) if not isinstance(value, str) else value


def key_material(fn, key):
    """Everything the code generated for ``fn`` under the in-memory cache's ``key`` depends on.

    ``key`` is ``(fn.__code__, wrt, container parameters, specialisation)``; all but the
    code object (described here by its contents) go into the material as they are.
    """
    import inspect
    import tokenize

    from . import __version__
    from .codegen import Generated

    code = fn.__code__
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError, SyntaxError, tokenize.TokenError):  # (capture says why, if it is read)
        source = ""
    return "\n".join([
        FORMAT,
        f"srcad {__version__} {_srcad_fingerprint()}",
        f"python {sys.version} {sys.implementation.cache_tag}",
        f"numpy {np.__version__}",
        f"scipy {_version('scipy')}",
        f"generated fields {[f.name for f in dataclasses.fields(Generated)]}",
        f"function {fn.__module__}.{fn.__qualname__} in {code.co_filename}:{code.co_firstlineno}",
        f"code {_code_digest(code)}",
        f"wrt, containers, specialisation {key[1:]!r}",
        f"rules {_rules_fingerprint()}",
        "environment:", *_environment(fn),
        "source:", source,
    ])


def _version(package):
    """The version of ``package`` if this process has imported it (reading never imports)."""
    module = sys.modules.get(package)
    return getattr(module, "__version__", "?") if module is not None else "not imported"


# ---- generated code to text and back

def _reference(obj):
    """``(module, qualname)`` under which ``obj`` itself can be imported again, or None."""
    if isinstance(obj, types.ModuleType):
        return (obj.__name__, "")
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    try:
        found = _resolve(module, qualname)
    except Exception:  # anything an import can raise: then it is not cacheable
        return None
    return (module, qualname) if found is obj else None


def _resolve(module, qualname):
    """The object at ``module.qualname`` among modules already imported: an entry names
    modules, and reading it must never import (run) one. The one exception is srcad's own
    optional rule modules (SciPy's, from a fixed list), which srcad loads on demand: one that
    generated code's helpers live in is loaded as a lookup would load it."""
    from . import optional_rules

    optional = module[len(optional_rules.__package__) + len(".rules."):] if module.startswith(
        f"{optional_rules.__package__}.rules.") else None
    if optional in optional_rules.ALL_SCIPY_RULE_MODULES and "scipy" in sys.modules:
        optional_rules.load_rule_modules([optional])
    value = sys.modules[module]
    for part in filter(None, qualname.split(".")):
        value = getattr(value, part)
    return value


def _resolved_now(fn, described):
    """``(path, object)`` for each name path the entry's code was resolved through, if each
    still denotes an object described the same way (``cfg.act`` is still ``numpy.tanh``)."""
    from .guards import _MISSING, _follow, _scope_value

    resolved = []
    for path, description in described:
        path = tuple(path)
        obj = _follow(_scope_value(fn, path[0]), path[1:])
        if obj is _MISSING or _describe(obj, ()) != description:
            return None
        resolved.append((path, obj))
    return resolved


def load_generated(fn, key):
    """The ``codegen.Generated`` cached for ``fn`` under the compile-cache ``key``, or None."""
    if directory() is None:
        return None
    payload = load(key_material(fn, key))
    if payload is None:
        return None
    from .codegen import Generated

    try:
        fields = json.loads(payload)
        closure = {name: _resolve(module, qualname) for name, (module, qualname) in fields.pop("closure").items()}
        resolved = _resolved_now(fn, fields.pop("resolved"))
        found = facts.now(fields.pop("facts"), _describe)
        if resolved is None or found is None:  # made for other bindings of a path, or other module state
            return None
        return Generated(closure=closure, resolved=resolved, facts=found, **fields)
    except Exception:  # an entry of another layout, or a helper that moved: transform afresh
        return None


def store_generated(fn, key, generated):
    """Cache ``generated`` for ``fn`` if every object it closes over can be imported again."""
    if directory() is None:
        return False
    generated.ensure_pair()  # stored whole: a process that loads it makes nothing
    closure = {}
    for name, obj in generated.closure.items():
        reference = _reference(obj)
        if reference is None:
            return False
        closure[name] = reference
    fields = {f.name: getattr(generated, f.name) for f in dataclasses.fields(generated)
              if isinstance(getattr(generated, f.name), str) and f.name != "filename"}
    fields["closure"] = closure
    fields["resolved"] = [[list(path), _describe(obj, ())] for path, obj in generated.resolved]
    fields["facts"] = facts.describe(generated.facts, _describe)
    if fields["facts"] is None:
        return False
    return store(key_material(fn, key), json.dumps(fields, sort_keys=True))
