"""The compiler pipeline: one list of stages, run in order.

    capture -> resolve_calls -> normalize -> check_aliasing -> activity -> reverse -> simplify
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
from .passes.normalize import normalize
from .passes.record_values import record_values
from .passes.resolve_calls import resolve_calls
from .passes.reverse import reverse
from .passes.simplify import simplify
from .source import capture


@dataclasses.dataclass(frozen=True)
class Options:
    wrt: tuple = (0,)  # parameter names or indices
    container_params: tuple = ()  # parameters that hold lists, tuples or dicts
    debug: bool = False


def _stages(source, wrt, options, module):
    """The pipeline. Each stage takes the tree and returns the next one."""
    return [
        ("resolve_calls", lambda node: resolve_calls(node, source)),
        ("normalize", lambda node: normalize(node, source)),
        ("check_aliasing", lambda node: check_aliasing(node, source)),
        ("activity", lambda node: activity(node, source, wrt, options.container_params)),
        ("reverse", lambda node: reverse(node, source, wrt, module.ref, module.callee)),
        ("simplify", simplify),
        ("record_values", lambda node: record_values(node, module.ref)),
    ]


def param_names(fn_node, wrt):
    params = [a.id for a in fn_node.args.args]
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


def transform(fn, options=Options(), module=None):
    """Run the pipeline on ``fn``; returns a ``codegen.Generated`` (sources and functions)."""
    from .compile import Module

    debug = options.debug or os.environ.get("SRCAD_DEBUG") == "1"
    source = capture(fn)
    node = source.node
    if node.args.vararg or node.args.kwarg or node.args.kwonlyargs or node.args.posonlyargs:
        raise source.syntax_error(
            "srcad differentiates functions with plain positional parameters; "
            "*args, **kwargs, keyword-only and positional-only parameters are not supported", node)
    wrt = param_names(node, options.wrt)
    module = module or Module(source)
    if debug:
        print(f"# ---- capture\n{A.to_source(node)}")
    for name, stage in _stages(source, wrt, options, module):
        node = stage(node)
        if debug:
            print(f"# ---- {name}\n{A.to_source(node)}")
    generated = codegen(node, source, module)
    if debug:
        print(f"# ---- codegen\n{generated.module_source}")
    return generated
