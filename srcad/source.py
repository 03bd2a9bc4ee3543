"""Source capture: from a live Python function to a gast ``FunctionDef`` with true line numbers."""
import dataclasses
import inspect
import linecache
import textwrap
import types

import gast

from .errors import SourceUnavailableError, SrcadSyntaxError

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

    def line(self, lineno):
        return linecache.getline(self.filename, lineno).rstrip("\n") if lineno else ""

    def syntax_error(self, message, node=None):
        lineno = getattr(node, "lineno", None)
        offset = getattr(node, "col_offset", None)
        return SrcadSyntaxError(message, self.filename, lineno, offset, self.line(lineno))

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


def capture(fn):
    """Read, dedent and parse ``fn``'s source; line numbers point into the user's file."""
    fn = unwrap(fn)
    if not isinstance(fn, types.FunctionType):
        raise SourceUnavailableError(
            f"srcad can only read Python functions; {fn!r} is a {type(fn).__name__}. "
            "Register a rule for it with srcad.extend.register_vjp instead."
        )
    code = fn.__code__
    filename = code.co_filename
    try:
        lines, _ = inspect.getsourcelines(code)  # its own code: never a __wrapped__ function's
    except (OSError, TypeError) as exc:
        raise SourceUnavailableError(
            f"{filename}:{code.co_firstlineno}: cannot read the source of {fn.__qualname__!r} "
            f"({exc}). srcad transforms source code, so the function must be defined in a file "
            "(not typed at the interactive prompt or built with exec); put it in a module, or "
            "give srcad a rule for it with srcad.extend.register_vjp."
        ) from None
    text = textwrap.dedent("".join(lines))
    first = code.co_firstlineno
    if fn.__name__ == "<lambda>":
        node = _lambda_node(fn, text, first, filename)
    else:
        try:
            module = gast.parse(text)
        except SyntaxError as exc:
            raise SourceUnavailableError(
                f"{filename}:{first}: the source of {fn.__qualname__!r} does not parse on its "
                f"own ({exc.msg}); define it with a plain def statement."
            ) from None
        node = module.body[0]
        if isinstance(node, gast.AsyncFunctionDef):
            gast.increment_lineno(node, first - 1)
            raise SrcadSyntaxError("srcad does not support async functions", filename, node.lineno,
                                   node.col_offset, linecache.getline(filename, node.lineno))
        if not isinstance(node, gast.FunctionDef):
            raise SourceUnavailableError(
                f"{filename}:{first}: expected a def statement for {fn.__qualname__!r}."
            )
        gast.increment_lineno(node, first - 1)
        if node.name != code.co_name:
            raise SourceUnavailableError(
                f"{filename}:{first}: the source found for {fn.__qualname__!r} defines {node.name!r}; "
                "define the function with a plain def statement.")
    node.decorator_list = []
    closure = dict(zip(code.co_freevars, fn.__closure__ or ()))
    return FunctionSource(fn, node, filename, fn.__globals__, closure)


def _lambda_node(fn, text, first, filename):
    """Find the one lambda in ``text`` whose parameters match ``fn``'s and make it a def."""
    try:
        module = gast.parse(text)
    except SyntaxError:
        # getsource gives the whole statement's first line; a lambda in a continued
        # expression cannot be cut out of it reliably.
        module = None
    params = fn.__code__.co_varnames[: fn.__code__.co_argcount]
    found = []
    if module is not None:
        gast.increment_lineno(module, first - 1)
        for node in gast.walk(module):
            if isinstance(node, gast.Lambda):
                names = tuple(a.id for a in node.args.args)
                if names == params:
                    found.append(node)
    if len(found) != 1:
        raise SourceUnavailableError(
            f"{filename}:{first}: cannot find the source of this lambda "
            f"({'several lambdas on the line take the same parameters' if found else 'its line does not parse alone'}); "
            "write it as a def."
        )
    lam = found[0]
    ret = gast.Return(value=lam.body)
    gast.copy_location(ret, lam.body)
    node = gast.FunctionDef(
        name="lambda_", args=lam.args, body=[ret], decorator_list=[], returns=None,
        type_comment=None, type_params=[],
    )
    return gast.copy_location(node, lam)
