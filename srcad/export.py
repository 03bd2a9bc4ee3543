"""Standalone export: a function's adjoint as one module that needs NumPy and nothing of srcad.

``export_source(f, wrt)`` writes a module defining ``f_adjoint(<params>, v=None)`` with the
contract of ``srcad.differentiable(f, wrt=wrt).adjoint`` (arguments and cotangent checked
the same way). Every name the generated code reads is resolved now and written into the
module, from an allowlist:

- modules of NumPy, SciPy and a few pure standard-library modules: an ``import``;
- functions and classes importable from them: a ``from ... import``;
- srcad's runtime helpers (``srcad/runtime_*.py``, rule modules, errors, argument checks) and
  plain module-level functions of the user's that the code calls without differentiating
  them: their source, read with ``inspect`` (the user's checked to be the code that runs);
- the adjoints of user helpers the function calls: their generated forward/backward pair;
- numbers, strings, tuples/lists/dicts of them and arrays of up to ``MAX_EMBEDDED`` entries:
  a literal, as they are at export time.

Anything else (an object of a user class, a big array, a closure, a module outside the
allowlist) is refused with an ``ExportError`` naming the function and the name. Names are
kept where they do not collide, else suffixed with ``_`` (deterministically): the output is
the same for the same source.

The code exported is srcad's generic adjoint, the one it uses once a function has been
called with many shapes: shape decisions are made at run time, so any argument shape works.
"""
import builtins
import keyword
import sys
import textwrap
import types

import numpy as np

from .arguments import check_arguments, checked_cotangent, where
from .compile import compile_function
from .dispatch import generated_params
from .errors import CotangentError, ExportError
from .export_entry import check_layout, default_literal, file_line, public_function, shown_parameters, split_call
from .export_imports import LIBRARIES, STANDARD, from_import_line, import_line, import_path, import_rank, submodules
from .export_text import LITERAL_TYPES, MAX_EMBEDDED, Unwritable, literal, parse, source_text, splice, unbound_names
from .extend import custom_vjp
from .guards import _CalleeFunction
from .passes.fast_forms import FAST_FORMS
from .naming import identifier
from .source import capture
from .source_check import check_source_is_code
from .wrapper import Differentiable, _Nested

_SRCAD_SOURCES = ("srcad.runtime_adjoints", "srcad.runtime_boundary", "srcad.runtime_derivatives",
                  "srcad.checkpointing", "srcad.errors", "srcad.sharing", "srcad.code_reading", "srcad.arguments", "srcad.export_entry", "srcad.extend",
                  "srcad.rules.", "srcad.pytrees", "srcad.protocol")
_SRCAD = sys.modules[__package__]
_NUMPY_OF_FAST_FORM = {id(form): fn for fn, (_, form) in FAST_FORMS.items()}  # padded -> np.pad
_RESERVED = ("__all__", "__doc__", "__name__", "__file__", "__builtins__")


class _GeneratedCode:
    """One generated function of ``compiled`` (0 joint, 1 forward, 2 backward) for ``fn``."""

    def __init__(self, fn, compiled, index):
        self.fn, self.compiled, self.index = fn, compiled, index


def target_function(target, wrt=None):
    """``(d, fn)``: the ``Differentiable`` for ``target`` (its own ``wrt`` unless ``wrt`` is
    given) and the Python function whose code is differentiated."""
    if isinstance(target, Differentiable) and wrt is None:
        d = target
    else:
        d = Differentiable(target, 0 if wrt is None else wrt)
    if d._prefix or d._fixed:
        raise ExportError(f"{d._where}: a bound method or functools.partial holds values the export cannot "
                          "write down; export the plain function (its values become arguments)")
    fn = d._source_function(())
    if not isinstance(fn, types.FunctionType):
        capture(fn)  # raises the error that says why srcad cannot read it
    return d, fn


def generic_adjoint(target, wrt=None, containers=()):
    """``(d, fn, compiled)``: srcad's generic (unspecialised) adjoint of ``target``."""
    d, fn = target_function(target, wrt)
    params = generated_params(fn)
    unknown = [c for c in containers if c not in params]
    if unknown:
        raise ExportError(f"{d._where}: --containers names {', '.join(unknown)}, which "
                          f"{'is not a parameter' if len(unknown) == 1 else 'are not parameters'} "
                          f"(parameters: {', '.join(params)})")
    names = d._names if d._names is not None else params[:1]
    return d, fn, compile_function(fn, names, tuple(c for c in params if c in containers))


def callees(compiled):
    """``[(fn, compiled)]``: the user functions whose adjoints ``compiled``'s code calls,
    directly or through each other, in the order the code first names them."""
    found, stack = [], [compiled]
    while stack:
        current = stack.pop(0)
        for obj in current.generated.closure.values():
            if isinstance(obj, _CalleeFunction) and all(obj.guard.compiled is not c for _, c in found):
                found.append((obj.guard.fn(), obj.guard.compiled))
                stack.append(obj.guard.compiled)
    return found


def export_source(target, wrt=None, containers=(), name=None):
    """The text of a module defining ``<name>_adjoint`` for ``target`` (see module doc);
    ``name`` is the function's own name unless given (a lambda's variable, say)."""
    d, fn, compiled = generic_adjoint(target, wrt, containers)
    exporter = _Exporter(fn, where(_origin(d)[0]))
    return exporter.module(d, compiled, containers, identifier(name or compiled.generated.name))


# ---- the module being written ---------------------------------------------------------------


class _Piece:
    """One top-level statement of the exported module and the names it binds at run time."""

    def __init__(self, section, text, loads_at_definition=()):
        self.section, self.text = section, text
        self.loads_at_definition = set(loads_at_definition)  # module-level names read when it runs


class _Exporter:
    """The module being written for the adjoint of ``fn`` (``where``: the user's function, for messages)."""

    def __init__(self, fn, where_):
        self.fn, self.where = fn, where_
        self.bound = {name: ("reserved",) for name in _RESERVED}  # module-level name -> what it is
        self.names = {}  # what -> its module-level names
        self.pieces = {}  # module-level name -> _Piece
        self.embedded = []  # names of the user's values written as literals

    # -- resolving the names a piece of code reads

    def add(self, section, text, resolve, context, defaults=None, name=None):
        """Add the top-level statement ``text`` (renamed ``name`` if given; its defaults
        written as the literals ``defaults``): every module-level name it reads is looked up
        with ``resolve`` and bound in the module, renamed in ``text`` where needed. Returns
        the final text and the module-level names it reads when it runs."""
        try:
            parsed = parse(text)
        except Unwritable as exc:
            raise ExportError(f"{context}: cannot export {exc}") from None
        edits = [(parsed.name_span, name)] if name is not None else []
        if defaults is not None:
            edits += _default_edits(parsed, defaults, context)
        at_definition = set()
        for read, span, in_body, chain, first_attribute in parsed.reads:
            try:
                obj = resolve(read)
            except KeyError:
                raise ExportError(f"{context}: cannot export: the name {read!r} is not defined") from None
            written = read
            if obj is _SRCAD and chain:  # srcad.stop_gradient(x): the function itself, under its name
                read, span, obj, chain = chain[0], first_attribute, getattr(obj, chain[0], None), chain[1:]
            bound = self.reference(obj, read, parsed.names, context, section)
            for module in submodules(obj, chain):
                self.reference(module, module.__name__.rsplit(".", 1)[-1], frozenset(), context, section)
            if bound != written:
                edits.append((span, bound))
            if not in_body:
                at_definition.add(bound)
        return splice(text, edits), at_definition

    def reference(self, obj, name, avoid, context, section):
        """The module-level name under which code that calls it ``name`` (and has the local
        names ``avoid``) reads ``obj``; ``obj`` is written into the module the first time
        (a value srcad's helpers read among them, any other value among the user's)."""
        what, make = self._classify(obj, name, context, "srcad" if section == "srcad" else "constants")
        existing = self.names.get(what, [])
        for candidate in [name] + existing:
            if candidate in existing and (candidate == name or candidate not in avoid):
                return candidate
        # srcad's internal names (a trampoline's __srcad_target__) read as what they stand for
        candidate = identifier(getattr(obj, "__name__", "target")) if name.startswith("__srcad") else name
        while candidate in self.bound or (candidate != name and candidate in avoid) or _keyword_like(candidate):
            candidate += "_"
        self.bound[candidate] = what
        self.names.setdefault(what, []).append(candidate)
        self.pieces[candidate] = None  # placeholder: what it needs may refer back to it
        self.pieces[candidate] = make(candidate, existing[0] if existing else None)
        return candidate

    def _classify(self, obj, name, context, section):
        """``(what, make)``: a key for ``obj`` and ``make(name, existing)`` building its piece."""
        if isinstance(obj, _CalleeFunction):
            obj = _GeneratedCode(obj.guard.fn(), obj.guard.compiled, obj.index)
        if isinstance(obj, _GeneratedCode):
            return ("generated", id(obj.compiled), obj.index), lambda n, e: self._generated(obj, n, e)
        obj = _NUMPY_OF_FAST_FORM.get(id(obj), obj)  # (srcad's equal form of a NumPy function: the function)
        if isinstance(obj, types.ModuleType):
            if obj.__name__.split(".")[0] in LIBRARIES or obj.__name__ in STANDARD:
                return ("module", obj.__name__), lambda n, e: _Piece("imports", import_line(obj.__name__, n))
            raise ExportError(f"{context}: cannot export: the code uses the module {obj.__name__} (as {name!r}); "
                              f"an exported module imports only {', '.join(LIBRARIES)} and the standard library")
        simple = getattr(obj, "__name__", None)
        if isinstance(simple, str) and getattr(builtins, simple, None) is obj:
            return ("builtin", simple), lambda n, e: self._builtin(simple, n)
        inner = getattr(obj, "__srcad_function__", None)
        if isinstance(inner, types.FunctionType) and (
                type(obj) is custom_vjp or (isinstance(obj, Differentiable) and not obj.args and not obj.keywords)):
            return self._classify(inner, name, context, section)  # calling it calls the function unchanged
        if not isinstance(obj, (np.ndarray, np.generic, np.dtype)) and not isinstance(obj, LITERAL_TYPES):
            path = import_path(obj)
            if path is not None:
                return ("import",) + path, lambda n, e: _Piece("imports", from_import_line(*path, n))
            if isinstance(obj, (types.FunctionType, type)):
                self._check_readable(obj, name, context)
                return ("source", id(obj)), lambda n, e: self._source(obj, n, e)
        leaves = {}
        try:
            text = literal(obj, leaves)
        except Unwritable as exc:
            raise ExportError(f"{context}: cannot export: {name!r} is {exc}; an exported module can hold "
                              "numbers, strings, containers of them, arrays of up to "
                              f"{MAX_EMBEDDED} entries, NumPy/SciPy objects and plain functions: pass it as an "
                              "argument instead") from None
        if text in leaves:  # no literal at all, only a name for the object itself
            raise ExportError(f"{context}: cannot export: {name!r} is a {type(obj).__module__}."
                              f"{type(obj).__qualname__}, which the exported module cannot import or write down: "
                              "pass it as an argument, or call a function defined with def")
        what = ("constant", text, tuple(map(id, leaves.values())))
        return what, lambda n, e: self._constant(text, leaves, n, section)

    # -- the pieces

    def _generated(self, code, name, existing):
        if existing is not None:
            return _Piece("generated", f"{name} = {existing}\n", {existing})
        fn, generated = code.fn, code.compiled.generated
        if code.index:
            generated.ensure_pair()  # reverse mode makes the forward/backward pair when first needed
        text = (generated.joint_source, generated.forward_source, generated.backward_source)[code.index]
        defaults = code.compiled.defaults(fn, code.index)
        cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))

        def resolve(n):
            if n in cells:
                try:
                    return cells[n].cell_contents
                except ValueError:
                    raise KeyError(n) from None
            if n in generated.closure:
                return generated.closure[n]
            return _global(fn, n)

        context = self.where if fn is self.fn else f"{self.where} (calls {where(fn)})"
        text, _ = self.add("generated", text, resolve, context, (defaults, {}), name)
        return _Piece("generated", text)

    def _builtin(self, original, name):
        if name == original:
            return _Piece("imports", "")
        text, loads = self.add("srcad", f"{name} = builtins.{original}\n", {"builtins": builtins}.__getitem__, "")
        return _Piece("srcad", text, loads)

    def _check_readable(self, obj, name, context):
        module = getattr(obj, "__module__", "") or ""
        if module == "srcad" or module.startswith("srcad."):
            if not any(module == m or (m.endswith(".") and module.startswith(m)) for m in _SRCAD_SOURCES):
                raise ExportError(f"{context}: cannot export: the code calls {module}.{obj.__qualname__} (as "
                                  f"{name!r}), which needs srcad itself; export the function it differentiates, or "
                                  "call that function instead")
        elif isinstance(obj, type):
            raise ExportError(f"{context}: cannot export: the code uses the class {module}.{obj.__qualname__} (as "
                              f"{name!r}); an exported module defines no classes of the user's")
        if obj.__qualname__ != obj.__name__ or obj.__name__ == "<lambda>":
            raise ExportError(f"{context}: cannot export: the code calls {obj.__qualname__} (as {name!r}), which "
                              "is not defined at the top level of its module; define it there with a def")
        if isinstance(obj, types.FunctionType):
            if obj.__closure__:
                raise ExportError(f"{where(obj)}: cannot export {obj.__qualname__}: it reads variables of an "
                                  "enclosing function; make them parameters or module-level values")
            if not module.startswith("srcad."):
                check_source_is_code(capture(obj))  # the file's text is the code that runs

    def _source(self, obj, name, existing):
        section = "srcad" if obj.__module__.startswith("srcad.") else "user"
        if existing is not None:
            return _Piece(section, f"{name} = {existing}\n", {existing})
        text = source_text(obj)
        if isinstance(obj, types.FunctionType):
            resolve, defaults = (lambda n: _global(obj, n)), (obj.__defaults__ or (), obj.__kwdefaults__ or {})
        else:
            module = vars(sys.modules[obj.__module__])
            resolve, defaults = (lambda n: module[n] if n in module else vars(builtins)[n]), None
        context = self.where + (f" (srcad's {obj.__name__})" if section == "srcad" else f" (calls {where(obj)})")
        text, loads = self.add(section, text, resolve, context, defaults, name)
        return _Piece(section, text, loads)

    def _constant(self, text, leaves, name, section):
        if section == "constants":
            self.embedded.append(name)
        text, loads = self.add(section, f"{name} = {text}\n", lambda n: leaves[n] if n in leaves else vars(builtins)[n],
                               self.where)
        return _Piece(section, text, loads)

    # -- the module

    def module(self, d, compiled, containers, base):
        from . import __version__

        fn = self.fn
        origin, label = _origin(d)
        params = list(d._sig.names) if d._sig is not None else list(generated_params(fn))
        public = f"{base}_adjoint"
        self.bound[public] = ("public",)
        joint = self.reference(_GeneratedCode(fn, compiled, 0), f"_{public}", set(params), self.where, "public")
        names = d._names if d._names is not None else params[:1]
        code = compiled.codes[0]
        cotangent = code.co_varnames[code.co_argcount + code.co_kwonlyargcount - 1]  # the generated joint's
        text = public_function(public, joint, origin, label, params, names, containers, d._one_tuple, cotangent)
        glue = {"check_arguments": check_arguments, "checked_cotangent": checked_cotangent,
                "check_layout": check_layout, "split_call": split_call, "CotangentError": CotangentError,
                joint: _GeneratedCode(fn, compiled, 0)}
        public_text, _ = self.add("public", text, lambda n: glue[n] if n in glue else vars(builtins)[n], self.where)
        wrt_text = ", ".join(names)
        embedded = f" Values it reads from its module ({', '.join(self.embedded)}) are written below as they " \
                   "were at export time." if self.embedded else ""
        doc = (f'"""The adjoint of {label} ({file_line(origin)}) with respect to {wrt_text}; '
               f"exported by srcad {__version__}.\n\n"
               + textwrap.fill(
                   f"{public}({', '.join(shown_parameters(origin, params))}, v=None) computes vᵀJ as "
                   f"srcad.differentiable({base}, wrt={_wrt_repr(names)})"
                   f".adjoint does: the same arguments, checks and errors; v may be left out when the output is "
                   f"a scalar (then it is the gradient). This is srcad's generic adjoint: shapes are decided at "
                   f"run time, so arguments of any shape work.{embedded} It needs NumPy (and SciPy where the "
                   f"function uses it), not srcad: the srcad helpers it calls are copied below (Apache-2.0). "
                   f"Generated code: export again rather than edit.", 92) + '\n"""\n')
        # values last: a value may hold functions (a dict of them), and nothing else reads one when defined
        sections = {"imports": [], "public": [public_text], "generated": [], "user": [], "srcad": [], "constants": []}
        order = _definition_order(self.pieces)
        for name in order:
            piece = self.pieces[name]
            if piece.text:
                sections[piece.section].append(piece.text)
        imports = sorted(set(sections.pop("imports")), key=lambda line: (import_rank(line), not line.startswith(
            "import "), line))
        imports = [line if k == 0 or import_rank(line) == import_rank(imports[k - 1]) else "\n" + line
                   for k, line in enumerate(imports)]
        headers = {"public": "", "generated": "# ---- generated by srcad\n\n",
                   "user": "# ---- your functions the code calls without differentiating them, from their source\n\n",
                   "constants": "# ---- values the code reads, as they were when exported\n\n",
                   "srcad": f"# ---- srcad {__version__}'s helpers the code calls (Apache-2.0)\n\n"}
        out = [doc, "".join(imports), f"\n__all__ = [{public!r}]\n"]
        for section, texts in sections.items():
            if texts:
                out.append("\n\n" + headers[section] + "\n\n".join(t.rstrip("\n") + "\n" for t in texts))
        text = "".join(out)
        unbound = unbound_names(text)  # every name resolved, or it is srcad's bug: refuse rather than write it
        if unbound:
            raise ExportError(f"{self.where}: cannot export: the module written would not define "
                              f"{', '.join(sorted(unbound))}; please report this as a srcad bug")
        return text


def _definition_order(pieces):
    """Names in the order added, except that a piece comes after what it reads when it runs
    (a class after its bases, a constant after the names inside it)."""
    done, order = set(), []

    def visit(name, trail):
        if name in done or name in trail:
            return
        for dependency in sorted(pieces[name].loads_at_definition):
            if dependency in pieces:
                visit(dependency, trail | {name})
        done.add(name)
        order.append(name)

    for name in list(pieces):
        visit(name, frozenset())
    return order


def _origin(d):
    """``(function, label)``: the user's function behind ``d`` (through gradients made by
    ``srcad.grad``), for names, defaults and messages, and what ``d`` differentiates."""
    label = ""
    while isinstance(d, _Nested):
        d, label = d._inner, label + "the gradient of "
    return d.func, label + d.func.__qualname__


# ---- small helpers ------------------------------------------------------------------------


def _keyword_like(name):
    return keyword.iskeyword(name) or keyword.issoftkeyword(name)


def _wrt_repr(names):
    return repr(names[0]) if len(names) == 1 else repr(tuple(names))


def _global(fn, name):
    """What the global ``name`` denotes for ``fn`` (its module, then builtins)."""
    if name in fn.__globals__:
        return fn.__globals__[name]
    found = fn.__globals__.get("__builtins__", builtins)
    return (vars(found) if isinstance(found, types.ModuleType) else found)[name]


def _default_edits(parsed, defaults, context):
    """Edits writing a def's default values as literals of the values the function really has
    (``defaults``: positional tuple, keyword-only dict): its source may name globals."""
    positional, keyword_only = defaults
    if len(parsed.defaults) != len(positional):
        raise ExportError(f"{context}: cannot export: its defaults do not match its source")
    edits = [(span, default_literal(value, context)) for span, value in zip(parsed.defaults, positional)]
    return edits + [(span, default_literal(keyword_only[arg], context)) for arg, span in parsed.keyword_defaults]
