"""The compiler pipeline: one list of stages, run in order.

    capture -> resolve_calls -> normalize -> eliminate_common_subexpressions -> check_aliasing -> activity -> infer_shapes -> reverse -> simplify
            -> record_values -> codegen -> compile (and cache)

``Options(debug=True)`` (or the environment variable ``SRCAD_DEBUG=1``) prints the
source after every stage.
"""
import dataclasses
import os

from . import astutil as A
from .codegen import codegen
from .passes.activity import activity
from .passes.aliasing import check_aliasing
from .passes.cse import eliminate_common_subexpressions
from .passes.forward import forward
from .passes.normalize import normalize
from .passes.record_values import record_values
from .passes.resolve_calls import resolve_calls
from .passes.reverse import reverse
from .passes.shapes import infer_shapes
from .passes.simplify import simplify
from .source import capture


@dataclasses.dataclass(frozen=True)
class Options:
    wrt: tuple = (0,)  # parameter names or indices
    container_params: tuple = ()  # parameters that hold lists, tuples or dicts
    specs: object = None  # parameter -> passes.shapes.arg_spec, to specialise on shapes
    debug: bool = False


def _front_end(source, wrt, options):
    """The stages both modes share: from source to A-normal form with activity."""
    return [
        ("resolve_calls", lambda node: resolve_calls(node, source)),
        ("normalize", lambda node: normalize(node, source)),
        ("eliminate_common_subexpressions", eliminate_common_subexpressions),
        ("check_aliasing", lambda node: check_aliasing(node, source)),
        ("activity", lambda node: activity(node, source, wrt, options.container_params)),
    ]


def _stages(source, wrt, options, module):
    """The reverse-mode pipeline. Each stage takes the tree and returns the next one."""
    return _front_end(source, wrt, options) + [
        ("infer_shapes", lambda node: infer_shapes(node, options.specs or {})),
        ("reverse", lambda node: reverse(node, source, wrt, module.ref, module.callee)),
        ("simplify", simplify),
        ("record_values", lambda node: record_values(node, module.ref)),
        ("bind_builtins", module.bind_builtins),
    ]


def _forward_stages(source, wrt, options, module):
    """The forward-mode pipeline: the same front end, then the tangent transform."""
    return _front_end(source, wrt, options) + [
        ("forward", lambda node: forward(node, source, wrt, module.ref, module.jvp_callee)),
        ("bind_builtins", module.bind_builtins),
    ]


def param_names(params, wrt):
    """``wrt`` (indices or names) as parameter names."""
    params = list(params)
    names = []
    for w in wrt:
        if isinstance(w, int):
            if not -len(params) <= w < len(params):
                raise IndexError(f"wrt={w} but the function has {len(params)} parameters")
            names.append(params[w])
        elif w in params:
            names.append(w)
        else:
            raise ValueError(f"wrt={w!r} is not a parameter of the function (parameters: {params})")
    return tuple(names)


def _run(fn, options, stages, module=None):
    """Capture ``fn`` and run ``stages`` on it; returns (tree, source, module)."""
    from .compile import Module

    debug = options.debug or os.environ.get("SRCAD_DEBUG") == "1"
    source = capture(fn)
    node = source.node
    if node.args.vararg or node.args.kwarg or node.args.kwonlyargs or node.args.posonlyargs:
        raise source.syntax_error(
            "srcad differentiates functions with plain positional parameters; "
            "*args, **kwargs, keyword-only and positional-only parameters are not supported", node)
    wrt = param_names([a.id for a in node.args.args], options.wrt)
    module = module or Module(source)
    if debug:
        print(f"# ---- capture\n{A.to_source(node)}")
    for name, stage in stages(source, wrt, options, module):
        node = stage(node)
        if debug:
            print(f"# ---- {name}\n{A.to_source(node)}")
    return node, source, module


def transform(fn, options=Options(), module=None):
    """Run the pipeline on ``fn``; returns a ``codegen.Generated`` (sources and functions)."""
    node, source, module = _run(fn, options, _stages, module)
    generated = codegen(node, source, module)
    if options.debug or os.environ.get("SRCAD_DEBUG") == "1":
        print(f"# ---- codegen\n{generated.module_source}")
    return generated


# ---- forward mode ----------------------------------------------------------------------


@dataclasses.dataclass
class GeneratedJVP:
    name: str  # the generated function's name, ``f_jvp``
    source: str  # its source text
    module_source: str  # the factory that closes it over ``closure``
    closure: dict  # name -> object the generated function uses
    tangent_params: dict  # parameter name -> name of its tangent parameter
    inherited: list  # guards of the user functions it calls
    resolved: list  # (name path, object) the compiler resolved in the user's scope
    filename: str = ""


def transform_jvp(fn, options=Options()):
    """Run the forward-mode pipeline on ``fn``; returns a ``GeneratedJVP``."""
    node, source, module = _run(fn, options, _forward_stages)
    text = A.to_source(node)
    factory = module.factory([text], [node.name])
    return GeneratedJVP(node.name, text, factory, dict(module.closure), A.anno(node, "tangent_params"),
                        list(module.inherited), module.resolved())
