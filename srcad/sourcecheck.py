"""Is this text the code that runs? The source srcad reads must compile to the function's own code.

Python keeps a function's code, not its text: srcad reads the text back from the file (through
``linecache``) and differentiates that. The text can be another program's: the file was edited
after the module was imported, or several pieces of code share one file name (``exec``'d
strings and ``python -c`` are all ``<string>``; before 3.13 the interactive prompt keeps no text
at all). ``check`` compiles the text the function was read from and refuses unless one of the
code objects it makes runs exactly the function's instructions on the same names and constants
(line numbers aside), so a stale or borrowed text is an error, never a wrong derivative.

``function_with_source(fn, text)`` is the way out for a function with no text of its own: the
same code, registered under a file name of its own with the text given (behind
``srcad.differentiable(fn, source=text)``).

>>> namespace = {}
>>> exec("def cube(x):\\n    return x ** 3\\n", namespace)
>>> cube = function_with_source(namespace["cube"], "def cube(x):\\n    return x ** 3\\n")
>>> cube(2.0), cube.__code__.co_filename.startswith("<srcad-source ")
(8.0, True)
"""
import __future__
import functools
import inspect
import itertools
import linecache
import operator
import textwrap
import types
import weakref

from .errors import ArgumentError, SourceUnavailableError

_FUTURE_FLAGS = functools.reduce(operator.or_, (getattr(__future__, name).compiler_flag
                                                 for name in __future__.all_feature_names))
_COMPARED = ("co_code", "co_names", "co_varnames", "co_freevars", "co_cellvars", "co_argcount",
             "co_posonlyargcount", "co_kwonlyargcount", "co_name")
_IGNORED_FLAGS = inspect.CO_NESTED  # whether a def sits inside another changes no instruction
_counter = itertools.count(1)


def check(fn, filename):
    """Raise ``SourceUnavailableError`` unless the text of ``filename`` compiles to ``fn``'s code."""
    code = fn.__code__
    if any(_same_code(c, code) for c in _compiled(filename, "".join(linecache.getlines(filename, fn.__globals__)),
                                                  code.co_flags & _FUTURE_FLAGS)
           if c.co_firstlineno == code.co_firstlineno):
        return
    raise SourceUnavailableError(
        f"{filename}:{code.co_firstlineno}: the source srcad reads for {fn.__qualname__!r} is not the code "
        f"that runs (the file changed since it was loaded, or other code shares the file name {filename!r}); "
        f"reload its module, or pass its text: srcad.differentiable({fn.__name__}, source=text)")


@functools.lru_cache(maxsize=64)
def _compiled(filename, text, flags):
    """Every code object compiling ``text`` makes (one compilation per file text)."""
    try:
        module = compile(text, filename, "exec", flags=flags, dont_inherit=True)
    except (SyntaxError, ValueError):
        return ()
    return tuple(_code_objects(module))


def function_with_source(fn, text):
    """``fn`` made again from ``text``, its source: the same code object but for its file name,
    under which ``text`` is registered with ``linecache`` while the code lives (inside a def
    that binds its free variables, for a closure). Refused unless ``text`` compiles to exactly
    ``fn``'s code."""
    if not isinstance(fn, types.FunctionType):
        raise ArgumentError(f"source= is for a plain Python function; {fn!r} is a {type(fn).__name__}")
    target = fn.__code__
    text = textwrap.dedent(text)
    filename = f"<srcad-source {fn.__module__}.{fn.__qualname__} #{next(_counter)}>"
    if target.co_freevars:  # a closure: its free variables must be free in the text's code too
        text = f"def __srcad_outer__({', '.join(target.co_freevars)}):\n" + textwrap.indent(text, "    ")
    try:
        module = compile(text, filename, "exec", flags=target.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    except SyntaxError as exc:
        raise ArgumentError(f"{fn.__qualname__}: the source given does not compile ({exc.msg})") from None
    found = [c for c in _code_objects(module) if _same_code(c, target)]
    if not found:
        raise ArgumentError(f"{fn.__qualname__}: the source given does not define the code of this function "
                            "(no def or lambda in it compiles to the same code); pass the exact text it was "
                            "defined from")
    code = found[0]
    if hasattr(target, "co_qualname"):
        code = code.replace(co_qualname=target.co_qualname)
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    weakref.finalize(code, linecache.cache.pop, filename, None)
    new = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__, new.__module__, new.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
    new.__annotations__ = fn.__annotations__
    new.__dict__.update(fn.__dict__)
    return new


def _code_objects(code):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _code_objects(const)


def _same_code(a, b):
    """Do ``a`` and ``b`` run the same instructions on the same names and constants (line
    numbers and file names aside)?"""
    if (any(getattr(a, field) != getattr(b, field) for field in _COMPARED)
            or (a.co_flags ^ b.co_flags) & ~_IGNORED_FLAGS or len(a.co_consts) != len(b.co_consts)):
        return False
    for x, y in zip(a.co_consts, b.co_consts):
        if isinstance(x, types.CodeType) or isinstance(y, types.CodeType):
            if not (isinstance(x, types.CodeType) and isinstance(y, types.CodeType) and _same_code(x, y)):
                return False
        elif type(x) is not type(y) or repr(x) != repr(y):  # repr: -0.0 is not 0.0, nan is nan
            return False
    return True

