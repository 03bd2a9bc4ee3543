"""Source capture: from a live Python function to a gast ``FunctionDef`` with true line numbers
(``capture``), and source to read for a function that has a rule instead (``trampoline``)."""
import copy
import dataclasses
import functools
import inspect
import linecache
import os
import tokenize
import types

import gast
import numpy as np

from . import sourcemap
from .code_reading import nested_code
from .errors import SourceUnavailableError, SrcadSyntaxError, source_hint
from .indentation import dedent_code

GENERATED_FILENAME = "<srcad-generated "  # how the file name of generated code begins


@dataclasses.dataclass
class FunctionSource:
    """A parsed function and the environment its names resolve in."""

    fn: types.FunctionType
    node: gast.FunctionDef
    filename: str
    globals: dict
    closure: dict  # free variable name -> cell

    def is_generated(self):
        """Is this code srcad generated (an adjoint or pullback being differentiated again)?"""
        return self.filename.startswith(GENERATED_FILENAME)

    def is_srcads(self):
        """Is this code srcad's own: generated, or a rule's helper in its modules (whose integer
        arguments are axes and sizes, never values to treat as real)?"""
        return self.is_generated() or srcad_file(self.filename)

    def line(self, lineno):
        return linecache.getline(self.filename, lineno).rstrip("\n") if lineno else ""

    def syntax_error(self, message, node=None):
        """A ``SrcadSyntaxError`` at ``node``'s line. In generated code (a derivative being
        differentiated again) it is placed at the user's line that code differentiates, and
        names the generated line too."""
        lineno = getattr(node, "lineno", None)
        offset = getattr(node, "col_offset", None)
        located = sourcemap.user_line(self.filename, lineno) if lineno and self.is_generated() else None
        if located is None:
            return SrcadSyntaxError(message, self.filename, lineno, offset, self.line(lineno))
        user_file, user_lineno, function = located
        generated = f"{self.filename}:{lineno}: {self.line(lineno).strip()}"
        message = (f"{message}\n(while differentiating srcad's derivative of {function} again; "
                   f"the generated line is {generated})")
        user_text = linecache.getline(user_file, user_lineno).rstrip("\n")
        return SrcadSyntaxError(message, user_file, user_lineno, None, user_text)

    def lookup(self, name):
        """The object ``name`` denotes in the function's scope, or raise ``KeyError``."""
        if name in self.closure:
            try:
                return self.closure[name].cell_contents
            except ValueError:  # an empty cell: the outer variable is not assigned yet
                raise KeyError(name) from None
        if name in self.globals:
            return self.globals[name]
        builtins = self.globals.get("__builtins__", __builtins__)
        if isinstance(builtins, types.ModuleType):
            builtins = builtins.__dict__
        return builtins[name]


def unwrap(fn):
    """The plain Python function behind a srcad wrapper or bound method."""
    fn = getattr(fn, "__srcad_function__", fn)
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    return fn


def identifier(fn):
    """A name for code generated from ``fn`` that is a Python identifier (``lambda_`` for a lambda)."""
    name = fn.__name__
    return name if name.isidentifier() else "lambda_"


_API_FILES = {f"{name}.py" for name in ("api", "wrapper", "derivatives", "dispatch", "tracebacks")}


def srcad_api_function(fn):
    """Is ``fn`` a function of srcad's own API, by the file its code is in (a derivative it made
    carries the user's ``__module__``): its error boundary, a method of ``Differentiable``? Its
    rule helpers are not: srcad reads those."""
    if not isinstance(fn, types.FunctionType):
        return False
    filename = fn.__code__.co_filename
    return os.path.basename(filename) in _API_FILES and srcad_file(filename)  # (the cheap test first)


def own_api_error(fn):
    """Why ``fn``, a function of srcad's own API (``srcad_api_function``), is not differentiated,
    naming the user's function: that of the ``Differentiable`` a derivative srcad made carries
    (``__srcad_made__``, ``wrapper.made_by``), or a method of a ``srcad.differentiable`` belongs to."""
    at = what = None
    made = getattr(fn, "__srcad_made__", None)
    owner = getattr(fn, "__self__", None)
    if made is not None:
        at, what = made[1]._where, f"{made[0]}({made[1]._description()})"
    elif hasattr(owner, "_description"):  # f.grad, f.adjoint of a srcad.differentiable f
        at, what = owner._where, f"{owner._description()}.{fn.__name__}"
    return SourceUnavailableError(
        f"{at + ': ' if at else ''}{what or getattr(fn, '__qualname__', repr(fn))} is srcad's own API, not code "
        "srcad differentiates. Of the derivatives srcad makes, only the gradient srcad.grad(f) is differentiated "
        "again: srcad.grad(srcad.grad(f)) of a scalar, to any order, and srcad.jacobian, jvp and vjp of "
        "srcad.grad(f) (srcad.hessian and hvp are those); else differentiate f itself. For a third derivative, "
        "differentiate a function of yours that calls srcad.grad(f): with def along(x, u): return "
        "np.sum(srcad.grad(f)(x) * u), srcad.hessian(along)(x, u)[j, k] is the sum over i of "
        "u[i] * d3f/dx[i]dx[j]dx[k]")


def capture(fn):
    """Read and parse ``fn``'s own source; line numbers point into the user's file.

    The source is that of ``fn``'s code object: a function wrapped by another decorator
    (``functools.wraps``) reads as the wrapper that runs, never as the function it wraps.
    A lambda is cut out of its file exactly, by the positions of its code.

    >>> import numpy as np
    >>> square = lambda t: t ** 2
    >>> capture(square).node.name
    'lambda_'
    """
    given, fn = fn, unwrap(fn)
    if not isinstance(fn, types.FunctionType):
        raise SourceUnavailableError(
            f"srcad can only read Python functions; {fn!r} is a {type(fn).__name__}. "
            "Register a rule for it with srcad.extend.register_vjp instead."
        )
    if srcad_api_function(fn):
        raise own_api_error(given)
    code = fn.__code__
    filename = code.co_filename
    first = code.co_firstlineno
    try:
        lines, start = inspect.findsource(code)  # its own code: never a __wrapped__ function's
        module = None if fn.__name__ == "<lambda>" else _parsed_by_positions(code, lines, start)
        if module is None:
            lines = inspect.getblock(lines[start:])  # (inspect.getsourcelines: it tokenizes the whole def)
    except (tokenize.TokenError, SyntaxError) as exc:  # the text at its line does not tokenize
        raise SourceUnavailableError(
            f"{filename}:{first}: the source of {fn.__qualname__!r} does not parse ({exc.args[0]}); define it "
            f"with a plain def statement.{source_hint(fn)}{_edited(fn)}") from None
    except (OSError, TypeError) as exc:
        raise SourceUnavailableError(
            f"{filename}:{first}: cannot read the source of {fn.__qualname__!r} "
            f"({exc}). srcad transforms source code, so the function must be defined in a file "
            "(not typed at the interactive prompt or built with exec): put it in a module, pass "
            f"its text as srcad.differentiable({fn.__name__}, source=text) and differentiate that, "
            "or give srcad a rule for it with srcad.extend.register_vjp."
        ) from None
    if fn.__name__ == "<lambda>":
        node = _lambda_node(fn, filename)
    else:
        try:
            module = module or _parse(lines, first)
        except SyntaxError as exc:
            raise SourceUnavailableError(
                f"{filename}:{first}: the source of {fn.__qualname__!r} does not parse on its "
                f"own ({exc.msg}); define it with a plain def statement.{source_hint(fn)}{_edited(fn)}"
            ) from None
        node = module.body[0]
        if isinstance(node, gast.AsyncFunctionDef):
            raise SrcadSyntaxError("srcad does not support async functions", filename, node.lineno,
                                   node.col_offset, linecache.getline(filename, node.lineno))
        if not isinstance(node, gast.FunctionDef):
            raise SourceUnavailableError(
                f"{filename}:{first}: expected a def statement for {fn.__qualname__!r}.{source_hint(fn)}{_edited(fn)}"
            )
        if node.name != code.co_name:
            raise SourceUnavailableError(
                f"{filename}:{first}: the source found for {fn.__qualname__!r} defines {node.name!r}; "
                f"define the function with a plain def statement.{source_hint(fn)}{_edited(fn)}")
    node.decorator_list = []
    closure = dict(zip(code.co_freevars, fn.__closure__ or ()))
    return FunctionSource(fn, node, filename, fn.__globals__, closure)


def _parse(lines, first):
    """The module of the def ``lines`` (dedented), its line numbers those of the file where
    the def begins at line ``first``."""
    text = dedent_code("".join(lines))
    module = gast.parse("\n" * (first - 1) + text)  # (no tree walk to renumber)
    if "except" in text:  # gast gives ``except E as e``'s name no line; renumbered, it had line first - 1
        for node in gast.walk(module):
            if isinstance(node, gast.ExceptHandler) and node.name is not None and not hasattr(node.name, "lineno"):
                node.name.lineno = node.name.end_lineno = first - 1
    return module


def _parsed_by_positions(code, lines, start):
    """The parsed def of ``code`` (``_parse``), read off the file's ``lines`` from ``start`` to
    the last line its instructions cover, where that is provably the block ``inspect.getblock``
    finds (which tokenizes it, in pure Python: most of reading a long function): those lines
    parse as one def, whose body begins on a line of its own, and the next line of code after
    them is indented no deeper than the def (a comment or blank line between is not code).
    None where any of that does not hold (a decorator, tabs, a body on the def's line): the
    caller then asks ``inspect``."""
    last = _last_line(code)
    indent = _indentation(lines[start]) if start == code.co_firstlineno - 1 and start < len(lines) else None
    if last is None or indent is None or last <= start or not lines[start][indent:].startswith("def "):
        return None
    for line in lines[last:]:
        text = line.strip()
        if text and not text.startswith("#"):
            if _indentation(line) is None or _indentation(line) > indent:
                return None
            break
    try:
        module = _parse(lines[start:last], code.co_firstlineno)
    except SyntaxError:
        return None
    if len(module.body) != 1 or not isinstance(module.body[0], gast.FunctionDef):
        return None
    node, head = module.body[0], module.body[0].body[0]
    if node.end_lineno != last or _indentation(lines[head.lineno - 1]) != indent + head.col_offset:
        return None  # (a body on the def's line)
    return module


def _indentation(line):
    """The number of spaces ``line`` begins with, or None if it begins with another blank (a tab)."""
    text = line.lstrip()
    width = len(line) - len(text)
    return width if line[:width] == " " * width else None


def _last_line(code):
    """The last line of the file that ``code``'s instructions, or those of code nested in it,
    cover (None if none does, or before Python 3.11, whose code keeps no instruction's end
    line: the caller then asks ``inspect``)."""
    if not hasattr(code, "co_positions"):
        return None
    ends = [end for c in nested_code(code) for _, end, _, _ in c.co_positions() if end is not None]
    return max(ends, default=None)


def _edited(fn):
    """The other cause of source that does not match: a file edited after its module was imported."""
    if fn.__code__.co_filename.startswith("<"):
        return ""
    return (" If the file was edited after its module was imported, the function that runs is no longer there: "
            "reload the module (importlib.reload, or restart) before differentiating it.")


_TRAMPOLINES = {}  # function with a rule -> the trampoline that calls it


def trampoline(target):
    """A small Python function that calls ``target`` (which has a rule), for srcad to read."""
    fn = _TRAMPOLINES.get(target)
    if fn is None:
        params, call = _trampoline_params(target)
        name = getattr(target, "__name__", "custom")
        text = f"def {name}({', '.join(params)}):\n    return __srcad_target__({', '.join(call)})\n"
        filename = f"<srcad-trampoline {name}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
        namespace = {"__srcad_target__": target}
        exec(compile(text, filename, "exec"), namespace)
        fn = _TRAMPOLINES[target] = namespace[name]
    return fn


_NOT_LITERALS = ("inf", "-inf", "nan")


def _trampoline_params(target):
    """Parameters (with literal defaults) to declare, and the arguments to pass on."""
    if isinstance(target, np.ufunc):
        names = [f"x{i + 1}" for i in range(target.nin)]
        return names, names
    params, call, skipped = [], [], False
    for p in inspect.signature(target).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name == "out" and p.default is None:  # (an output buffer: srcad refuses any out= passed on)
            skipped = True
            continue
        if p.default is p.empty:
            params.append(p.name)
        elif isinstance(p.default, (type(None), bool, int, float, str)) and repr(p.default) not in _NOT_LITERALS:
            params.append(f"{p.name}={p.default!r}")
        else:  # (inf, nan: a repr that is no literal) left to the function's own default
            skipped = True
            continue
        if skipped and p.kind == p.POSITIONAL_ONLY:  # (it cannot be passed past the one left out)
            params.pop()
            break
        # past a parameter left out, by keyword: by position it would land in that one's place
        call.append(f"{p.name}={p.name}" if p.kind == p.KEYWORD_ONLY or skipped else p.name)
    return params, call


def _lambda_node(fn, filename):
    """The lambda expression ``fn`` was made from, as a def named ``lambda_``.

    The whole file is parsed (so a lambda inside a multi-line expression is found too) and
    the lambda is the one on ``fn``'s first line, with its parameters, whose body holds the
    source positions of ``fn``'s instructions; the innermost if lambdas nest.
    """
    code = fn.__code__
    first = code.co_firstlineno
    module = _parsed_file(filename, "".join(linecache.getlines(filename, fn.__globals__)))
    params = code.co_varnames[: code.co_argcount]
    span = _code_span(code)
    found = []
    for node in gast.walk(module) if module is not None else ():
        if (isinstance(node, gast.Lambda) and node.lineno == first
                and tuple(a.id for a in node.args.args) == params
                and (span is None or _contains(node.body, span))):
            found.append(node)
    if span is not None and len(found) > 1:  # nested lambdas: the innermost holds the span
        found.sort(key=lambda n: (n.body.end_lineno - n.body.lineno, n.body.end_col_offset - n.body.col_offset))
        found = found[:1] if _contains(found[1].body, _node_span(found[0].body)) else found
    if len(found) != 1:
        why = ("several lambdas on the line take the same parameters" if found
               else "its file does not parse" if module is None else "no lambda on its line matches it")
        raise SourceUnavailableError(f"{filename}:{first}: cannot find the source of this lambda ({why}); "
                                     f"write it as a def.{source_hint(fn)}")
    lam = copy.deepcopy(found[0])  # (the parsed file is shared by every lambda in it)
    ret = gast.Return(value=lam.body)
    gast.copy_location(ret, lam.body)
    node = gast.FunctionDef(
        name="lambda_", args=lam.args, body=[ret], decorator_list=[], returns=None,
        type_comment=None, type_params=[],
    )
    return gast.copy_location(node, lam)


@functools.lru_cache(maxsize=8)
def _parsed_file(filename, text):
    """The file's module node (None where it does not parse), parsed once per text: every lambda
    captured from one file would parse the whole file again."""
    try:
        return gast.parse(text)
    except SyntaxError:
        return None


def _code_span(code):
    """((line, column), (end line, end column)) covering ``code``'s instructions, or None
    when Python keeps no column information (``-X no_debug_ranges``, before 3.11)."""
    positions = getattr(code, "co_positions", None)
    if positions is None:
        return None
    starts, ends = [], []
    for line, end_line, col, end_col in positions():
        if None in (line, end_line, col, end_col) or (line, col) == (end_line, end_col):
            continue  # no position, or a zero-width one (RESUME)
        starts.append((line, col))
        ends.append((end_line, end_col))
    return (min(starts), max(ends)) if starts else None


def _node_span(node):
    return (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)


def _contains(node, span):
    start, end = _node_span(node)
    return start <= span[0] and span[1] <= end


_SRCAD_DIRECTORY = os.path.dirname(os.path.realpath(__file__)) + os.sep


def srcad_file(filename):
    """Is ``filename`` one of srcad's own modules?"""
    return bool(filename) and os.path.realpath(filename).startswith(_SRCAD_DIRECTORY)


