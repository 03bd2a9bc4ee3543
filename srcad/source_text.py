"""Functions whose source the caller gives: ``srcad.differentiable(fn, source=text)``.

Python keeps a function's code, not its text: srcad reads the text back through
``linecache``. A function typed at the interactive prompt (before 3.13), made by ``exec`` or
defined in ``python -c`` has none of its own (``<string>`` is every such string's name).
``function_with_source(fn, text)`` gives it one: the same code object but for its file name,
under which ``text`` is registered. ``text`` must compile to ``fn``'s code (compared as
``source_check`` compares a file's source with the code that runs): the code that runs is the
code that is differentiated.

>>> namespace = {}
>>> exec("def cube(x):\\n    return x ** 3\\n", namespace)
>>> cube = function_with_source(namespace["cube"], "def cube(x):\\n    return x ** 3\\n")
>>> cube(2.0), cube.__code__.co_filename.startswith("<srcad-source ")
(8.0, True)
"""
import inspect
import itertools
import linecache
import types
import weakref

from .errors import ArgumentError
from .indentation import dedent_code, indent_code
from .source_check import FUTURE_FLAGS, same_code

_counter = itertools.count(1)


def function_with_source(fn, text):
    """``fn`` made again from ``text``, its source: the same code object but for its file name,
    under which ``text`` is registered with ``linecache`` while the code lives (inside a def
    that binds its free variables, for a closure). Refused unless ``text`` compiles to exactly
    ``fn``'s code."""
    if not isinstance(fn, types.FunctionType):
        raise ArgumentError(f"source= is for a plain Python function; {fn!r} is a {type(fn).__name__}")
    target = fn.__code__
    text = dedent_code(text)
    filename = f"<srcad-source {fn.__module__}.{fn.__qualname__} #{next(_counter)}>"
    prefix = ""
    if target.co_freevars:  # a closure: its free variables must be free in the text's code too
        text = f"def __srcad_outer__({', '.join(target.co_freevars)}):\n" + indent_code(text, "    ")
        prefix = "__srcad_outer__.<locals>."
    try:
        module = compile(text, filename, "exec", flags=target.co_flags & FUTURE_FLAGS, dont_inherit=True)
    except SyntaxError as exc:
        raise ArgumentError(f"{fn.__qualname__}: the source given does not compile ({exc.msg})") from None
    found = [c for c in _code_objects(module) if _same_signature(c, target) and same_code(
        c, target, (getattr(c, "co_qualname", prefix + c.co_name), getattr(target, "co_qualname", fn.__qualname__)),
        fn.__name__ == "<lambda>")]
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



def _same_signature(a, b):
    """The same name, parameters and kind of function (the instructions are compared apart)."""
    return (a.co_name == b.co_name and a.co_argcount == b.co_argcount and a.co_posonlyargcount == b.co_posonlyargcount
            and a.co_kwonlyargcount == b.co_kwonlyargcount and not (a.co_flags ^ b.co_flags) & ~inspect.CO_NESTED)
