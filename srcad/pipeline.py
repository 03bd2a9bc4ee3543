"""The compiler pipeline: one list of stages, run in order.

    capture -> resolve_calls -> normalize -> eliminate_common_subexpressions -> check_aliasing -> activity -> infer_shapes -> reverse -> simplify
            -> record_values -> codegen -> compile (and cache)

``Options(debug=True)`` (or the environment variable ``SRCAD_DEBUG=1``) prints the
source after every stage.
"""
import dataclasses
import itertools
import linecache
import os
import textwrap
import types

from . import astutil as A
from .codegen import codegen
from .errors import SrcadError
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
from .source import capture, unwrap


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
    ]


def _forward_stages(source, wrt, options, module):
    """The forward-mode pipeline: the same front end, then the tangent transform."""
    return _front_end(source, wrt, options) + [
        ("forward", lambda node: forward(node, source, wrt, module.ref)),
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
    wrt = param_names(node, options.wrt)
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


def transform_jvp(fn, options=Options()):
    """Run the forward-mode pipeline on ``fn``; returns a ``GeneratedJVP``."""
    node, source, module = _run(fn, options, _forward_stages)
    text = A.to_source(node)
    names = sorted(set(module.closure) | set(source.closure))
    factory = (f"def __srcad_factory__({', '.join(names)}):\n" + textwrap.indent(text, "    ")
               + f"\n    return {node.name}\n")
    return GeneratedJVP(node.name, text, factory, dict(module.closure), A.anno(node, "tangent_params"))


class CompiledJVP:
    """The compiled ``f_jvp`` of one function: bind it to a function instance to run it."""

    def __init__(self, generated, code):
        self.generated = generated
        self.code = code
        self.tangent_params = generated.tangent_params
        self._bound = {}  # id(fn) -> (fn, f_jvp)

    def bind(self, fn):
        """``f_jvp`` closing over ``fn``'s own cells (the same function object for the same ``fn``)."""
        fn = unwrap(fn)
        hit = self._bound.get(id(fn))
        if hit is not None and hit[0] is fn:
            return hit[1]
        user_cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
        cells = {name: types.CellType(obj) for name, obj in self.generated.closure.items()}
        closure = tuple(user_cells[n] if n in user_cells else cells[n] for n in self.code.co_freevars)
        jvp_fn = types.FunctionType(self.code, fn.__globals__, self.code.co_name, fn.__defaults__, closure)
        self._bound[id(fn)] = (fn, jvp_fn)
        return jvp_fn


_jvp_counter = itertools.count(1)
_JVP_CACHE = {}  # (code, wrt, containers) -> CompiledJVP
_JVP_IN_PROGRESS = set()


def compile_jvp(fn, wrt, container_params=(), caller=None):
    """Transform and compile the jvp of ``fn`` for ``wrt`` (parameter names); cached.

    ``caller`` is ``(source, node)`` of a call site, for the error on recursion.
    """
    fn = unwrap(fn)
    key = (fn.__code__, tuple(wrt), tuple(container_params))
    compiled = _JVP_CACHE.get(key)
    if compiled is not None:
        return compiled
    if key in _JVP_IN_PROGRESS:
        message = (f"{fn.__name__} calls itself (directly or through other functions); srcad does not "
                   "differentiate recursion. Write it as a loop, or give it a rule with srcad.extend.register_jvp")
        if caller is not None:
            raise caller[0].syntax_error(message, caller[1])
        raise SrcadError(message)
    _JVP_IN_PROGRESS.add(key)
    try:
        generated = transform_jvp(fn, Options(wrt=tuple(wrt), container_params=tuple(container_params)))
    finally:
        _JVP_IN_PROGRESS.discard(key)
    filename = f"<srcad-generated {fn.__module__}.{fn.__qualname__} jvp #{next(_jvp_counter)}>"
    text = generated.module_source
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    factory = next(c for c in compile(text, filename, "exec").co_consts if isinstance(c, types.CodeType))
    code = next(c for c in factory.co_consts if isinstance(c, types.CodeType) and c.co_name == generated.name)
    compiled = CompiledJVP(generated, code)
    _JVP_CACHE[key] = compiled
    return compiled
