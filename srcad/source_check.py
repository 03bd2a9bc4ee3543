"""The capture stage's checks of a function's source, before any pass reads it.

``check_source_is_code(source)`` returns only where the parsed function compiles to the code
that runs (``fn.__code__``, nested code objects included); otherwise it raises a
``SourceUnavailableError`` naming the file and line (a file edited after its module was
imported), so srcad never differentiates text that does not run. ``check_parameters(source)``
leaves the function's parameters plain positional ones, in the order Python lists them.
``same_code`` (with ``FUTURE_FLAGS``) is the comparison ``source_text`` (``source=``) makes too.

The pipeline runs both on the function it differentiates; passes that read a callee's source
(to inline it, infer its shapes, follow a pass-through wrapper) and rule templates check it
here too. This module sits below the pipeline and the passes that import it: of the passes it
imports only ``module_aliases``, which ``check_parameters`` runs first.

>>> from srcad.source import capture
>>> def f(x, *rest, scale=2.0, **named):
...     return x * scale
>>> source = capture(f)
>>> check_source_is_code(source)  # the text is the code that runs: no error
>>> check_parameters(source)
>>> [a.id for a in source.node.args.args]
['x', 'rest', 'scale', 'named']
"""
import ast
import dis
import types

import gast

from . import astutil as A
from .code_reading import code_names, nested_code
from .errors import SourceUnavailableError, source_hint
from .passes.module_aliases import read_module_aliases


FUTURE_FLAGS = 0x1FE0000  # the __future__ compiler flags a code object carries in co_flags


def check_source_is_code(source):
    """Refuse to differentiate source that is not what ``fn.__code__`` was compiled from.

    The parsed function is compiled again, in a scope with the same free variables (and
    class, for name mangling), and its code compared with the running code, nested code
    objects included: a file edited after its module was imported fails here instead of
    giving the gradient of code that does not run.
    """
    fn = source.fn
    code = fn.__code__
    wrapper, wrapped_qualname = _wrapped(source.node, code, fn.__qualname__, _imported_names(fn))
    try:
        compiled = compile(wrapper, code.co_filename, "exec", flags=code.co_flags & FUTURE_FLAGS, dont_inherit=True)
    except SyntaxError:
        compiled = None
    found = _find_code(compiled, source.node.name) if compiled is not None else None
    # before 3.11 code objects have no co_qualname
    qualnames = (getattr(found, "co_qualname", wrapped_qualname), getattr(code, "co_qualname", fn.__qualname__))
    if found is None or not same_code(found, code, qualnames, fn.__name__ == "<lambda>"):
        where = f"{code.co_filename}:{code.co_firstlineno}: the source of {fn.__qualname__!r} in this file is not the code that runs"
        if _rewritten_by_pytest(code):
            raise SourceUnavailableError(
                f"{where}: pytest rewrote its assert statements (assertion rewriting, done to test files, "
                "conftest.py and files named on pytest's command line); srcad differentiates source, so define the "
                "function in a module pytest does not rewrite, or run pytest with --assert=plain")
        raise SourceUnavailableError(
            f"{where} (the file was edited after the module was imported); srcad differentiates "
            f"source, so reload the module (importlib.reload, or restart) before differentiating it.{source_hint(fn)}")


def _rewritten_by_pytest(code):
    """Does ``code`` (or code nested in it) hold the names pytest's assertion rewriting makes
    (``@py_assert1``, ``@pytest_ar``: not identifiers, so no source writes them)?"""
    return any(name.startswith("@py") for c in nested_code(code) for name in c.co_varnames + c.co_names)


def _imported_names(fn):
    """The global names ``fn`` (and code nested in it) reads that hold modules: bound by
    ``import``, most likely, which changes how CPython 3.11+ compiles a call of their
    attributes (``_instructions``)."""
    names = code_names(fn.__code__)
    # (type(), not isinstance: a weak proxy whose object is gone raises on its __class__)
    return sorted(n for n in names if issubclass(type(fn.__globals__.get(n)), types.ModuleType))


def _wrapped(node, code, qualname, imported=()):
    """``node`` inside a function defining ``code``'s free variables (and its class), and the
    qualified name the function gets there. The module binds ``imported`` by ``import`` (it is
    only compiled): where the guess is right, the function compiles to the running code's
    very bytes, and ``same_code`` need not read instructions one by one."""
    body = [node]  # converted to a new ``ast`` tree below: the function's own tree is not changed
    parts = qualname.split(".")
    free = [v for v in code.co_freevars if v != "__class__"]
    # the function's reads of its own name, and a method's of its class's, stay global reads
    global_names = [name for name in (node.name,) if name not in free]
    local = "__srcad_outer__.<locals>."
    wrapped_qualname = (local if node.name in free else "") + node.name
    if len(parts) > 1 and parts[-2] != "<locals>":  # a method: mangling needs its class
        body = [gast.ClassDef(name=parts[-2], bases=[], keywords=[], body=body, decorator_list=[], type_params=[])]
        if parts[-2] not in free and parts[-2] != node.name:
            global_names.append(parts[-2])
        wrapped_qualname = ("" if parts[-2] in global_names else local) + f"{parts[-2]}.{node.name}"
    body = [A.assign(v, A.const(None)) for v in free] + body
    if global_names:
        body.insert(0, gast.Global(names=global_names))
    outer = gast.FunctionDef(
        name="__srcad_outer__", args=gast.arguments(args=[], posonlyargs=[], vararg=None, kwonlyargs=[],
                                                    kw_defaults=[], kwarg=None, defaults=[]),
        body=body, decorator_list=[], returns=None, type_comment=None, type_params=[])
    imports = [gast.Import(names=[gast.alias(name="__srcad_not_run__", asname=name)]) for name in imported]
    tree = A.to_ast(gast.Module(body=imports + [outer], type_ignores=[]))
    return ast.fix_missing_locations(tree), wrapped_qualname


def _find_code(code, name):
    return next((c for c in nested_code(code) if c.co_name == name and c is not code), None)


def _instructions(code):
    """``code``'s instructions with names for arguments and instruction numbers for jump
    targets. A call of an attribute of a name bound by ``import`` compiles differently
    (3.11: no LOAD_METHOD, NULL pushed apart), which the function compiled on its own cannot
    know: both read the same."""
    index, found = {}, []
    for i in dis.get_instructions(code):
        index[i.offset] = len(found)  # a skipped instruction stands for the next one
        if i.opname not in ("PUSH_NULL", "EXTENDED_ARG", "NOP"):  # layout: jump reach, line markers
            found.append(i)
    out = []
    for i in found:
        if i.opcode in dis.hasjrel or i.opcode in dis.hasjabs:
            arg = index.get(i.argval)
        elif i.opcode in dis.hasconst:
            arg = i.arg  # constants are compared on their own
        elif i.opname in ("LOAD_GLOBAL", "LOAD_ATTR", "LOAD_METHOD"):
            arg = i.argval
        else:
            arg = repr(i.argval)
        out.append(("LOAD_ATTR" if i.opname == "LOAD_METHOD" else i.opname, arg))
    return out


def same_code(a, b, qualnames, from_lambda=False):
    """Do two code objects do the same thing (bytecode, names, constants, nested code)?
    ``qualnames`` are the function's qualified names in ``a`` and ``b`` (they prefix those
    of the classes and functions it defines)."""
    if a.co_varnames != b.co_varnames or a.co_freevars != b.co_freevars or a.co_cellvars != b.co_cellvars:
        return False
    # the same bytes over the same names are the same instructions (constants are compared below)
    if (a.co_code != b.co_code or a.co_names != b.co_names) and _instructions(a) != _instructions(b):
        return False
    consts_a, consts_b = a.co_consts, b.co_consts
    if from_lambda:  # a def keeps a docstring slot that a lambda does not
        consts_a, consts_b = [c for c in consts_a if c is not None], [c for c in consts_b if c is not None]
    if len(consts_a) != len(consts_b):
        return False
    for x, y in zip(consts_a, consts_b):
        if isinstance(x, types.CodeType) and isinstance(y, types.CodeType):
            if not same_code(x, y, qualnames):
                return False
        elif isinstance(x, str) and qualnames[0] and x.startswith(qualnames[0] + "."):
            if qualnames[1] + x[len(qualnames[0]):] != y:
                return False
        elif type(x) is not type(y) or repr(x) != repr(y):
            return False
    return True


def check_parameters(source):
    """Make the parameters of the function plain positional ones, in the order Python lists
    them: positional-only and ordinary parameters, ``*args`` (a tuple), keyword-only ones,
    ``**kwargs`` (a dict). The generated code takes every argument so (the API binds a
    call's arguments to that order, defaults filled in)."""
    read_module_aliases(source.node, source)  # first: it reads the defaults dropped here (xp=np)
    args = source.node.args
    if args.vararg or args.kwarg or args.kwonlyargs:  # defaults are the API's to fill in
        flat = args.posonlyargs + args.args + [args.vararg] + args.kwonlyargs + [args.kwarg]
        args.args, args.defaults, args.posonlyargs = [a for a in flat if a is not None], [], []
        args.vararg = args.kwarg = None
        args.kwonlyargs, args.kw_defaults = [], []
    args.args, args.posonlyargs = args.posonlyargs + args.args, []
