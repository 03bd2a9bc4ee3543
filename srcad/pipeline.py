"""The compiler pipeline: one list of stages, run in order.

    capture (+ source_check) -> [read_stacks_as_lists, in code srcad generated]
            -> resolve_calls (reading first module aliases, local objects and partials, dispatch tables) -> checkpoint_loops -> normalize -> eliminate_common_subexpressions
            -> activity -> sparse_operands -> check_aliasing -> ufunc_arrays -> check_complex -> check_operators -> infer_shapes
            -> fold_in_place_checks -> reverse
            -> drop_needless_copies -> simplify -> fold_negations
            -> record_values -> reuse_buffers -> batch_products -> array_stacks -> finish_checkpoints -> mark_integer_growth, scalar_arrays (numba)
            -> restore_regions -> fast_forms -> bind_builtins -> prove_finishes -> codegen -> compile (and cache)

``Options(debug=True)`` (or the environment variable ``SRCAD_DEBUG=1``) prints the
source after every stage.
"""
import dataclasses
import os
import types

import gast

from . import astutil as A
from . import registry, runtime
from .codegen import codegen
from .errors import SrcadError
from .facts import collecting
from .passes.activity import activity, returned_items
from .passes.checkpoint import checkpoint_loops
from .passes.checkpoint_adjoint import finish_checkpoints
from .passes.aliasing import check_aliasing
from .passes.memory_summaries import summaries_kept
from .passes.complex_values import check_complex
from .passes.operators import check_operators
from .passes.sparse_operands import sparse_operands
from .passes.cse import eliminate_common_subexpressions
from .passes.fast_forms import fast_forms
from .passes.proven_finish import prove_finishes
from .passes.forward import forward
from .passes.in_place import fold_in_place_checks
from .passes.integer_growth import mark_integer_growth
from .passes.needless_copies import drop_needless_copies
from .passes.negations import fold_negations
from .passes.normalize import normalize
from .passes.record_values import record_values
from .passes.regions import restore_regions
from .passes.resolve_calls import resolve_calls
from .passes.scalar_arrays import scalar_arrays
from .passes.reuse_buffers import reuse_buffers
from .passes.reverse import reverse
from .passes.array_arguments import ufunc_arrays
from .passes.array_stacks import array_stacks, as_lists
from .passes.batch_products import batch_products
from .passes.shapes import infer_shapes
from .passes.shape_values import argument_kinds
from .passes.simplify import simplify
from .passes.user_text import speaking_of_user_code
from .source import capture
from .source_check import check_parameters, check_source_is_code


@dataclasses.dataclass(frozen=True)
class Options:
    wrt: tuple = (0,)  # parameter names or indices
    container_params: tuple = ()  # parameters that hold lists, tuples or dicts
    # parameters every call site gives a constant (a literal, a shape, a global's value): what
    # is saved from them stays a constant where the pullback is differentiated again
    constant_params: tuple = ()
    specs: object = None  # parameter -> passes.shapes.arg_spec, to specialise on shapes
    param_classes: tuple = ()  # (parameter, class) of arguments of user classes: their methods resolve
    array_params: tuple = ()  # parameters given arrays or numbers, where ``specs`` does not say so
    number_params: tuple = ()  # of those, parameters given Python numbers (immutable)
    keyed_params: tuple = ()  # parameters given dicts whose keys are strings, where ``specs`` does not say so
    # small helpers of the module a loop calls are inlined (passes.binding). The numba backend
    # inlines only those returning an array of numbers, whose arrays then become scalars
    # (passes.scalar_arrays): a value stack there costs more per inlined value than one callee's tuple
    for_numba: bool = False
    debug: bool = False


def _front_end(source, wrt, options, returned=None, module=None):
    """The stages both modes share: from source to A-normal form with activity. ``returned``
    answers ``activity`` what the items of a called function's result depend on (its
    ``returned_items``), read off the same stages run on that function. With the ``module``
    the code is made in, a sparse matrix's products are read as the rule module's calls before
    ``check_aliasing`` (whose refusal of ``S.dot(y)``, a method it cannot read, they are not)."""
    returned = returned or _returned_items(options)
    sparse = [] if module is None else [
        ("sparse_operands", lambda node: sparse_operands(node, source, module.ref, options.param_classes))]
    return [
        ("read_stacks_as_lists", lambda node: _stacks_as_lists(node, source)),
        ("resolve_calls", lambda node: resolve_calls(node, source, param_classes=options.param_classes)),
        ("checkpoint_loops", lambda node: checkpoint_loops(node, source)),
        ("normalize", lambda node: normalize(node, source, inline_loop_helpers="array results" if options.for_numba else "all")),
        ("eliminate_common_subexpressions", eliminate_common_subexpressions),
        # activity first: its refusals (pop with an index or a key) are the precise ones
        ("activity", lambda node: activity(node, source, wrt, options.container_params, options.constant_params,
                                           returned, _argument_kinds(options)[2])),
    ] + sparse + [
        ("check_aliasing", lambda node: check_aliasing(node, source, *_argument_kinds(options), specs=options.specs)),
    ]


def _stacks_as_lists(node, source):
    """Code srcad generated, differentiated again, with its indexed value stacks read as
    lists (``passes.array_stacks.as_lists``): it is differentiated as it was before that pass."""
    if source.is_generated():
        (node.body,) = as_lists([node.body], lambda name: _denotes(source, name, runtime.value_stack))
    return node


def _denotes(source, name, obj):
    try:
        return source.lookup(name) is obj
    except KeyError:
        return False


def _returned_items(options):
    """``returned_items`` of the functions of yours a function calls, each from its own front end
    (every parameter differentiated); None where not known (a rule, a function srcad cannot
    read, a recursive call). Memoised for one compilation: the callee's compilation, which
    guards what it reads, decides again for the next."""
    memo = {}

    def returned(obj):
        fn = getattr(obj, "__srcad_function__", obj)
        if (not isinstance(fn, types.FunctionType) or registry.lookup(registry.VJP, obj) is not None
                or registry.is_nondifferentiable(obj)):
            return None
        if id(fn) not in memo:
            memo[id(fn)] = (fn, None)  # a recursive call: not known
            memo[id(fn)] = (fn, _returned_by(fn, options, returned))
        return memo[id(fn)][1]

    return returned


def _returned_by(fn, options, returned):
    try:
        source = capture(fn)
        check_source_is_code(source)  # read off the code that runs (a file edited since: not known)
        node = source.node
        everything = tuple(a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs)
        for name, stage in _front_end(source, everything, Options(for_numba=options.for_numba), returned):
            node = stage(node)  # check_aliasing too: an update of a global through another name
    except Exception:  # (its own compilation says what is wrong with it)
        return None
    # what a function of yours it calls returns could change with that function, and nothing
    # would guard it here where the call carries no derivative (it is not compiled): not known
    if any(_yours(obj) for _, obj in A.anno(source.node, "resolved") or ()):
        return None
    return returned_items(node)


_LIBRARIES = {"numpy", "scipy", "math", "builtins", "operator", "functools", "srcad"}


def _yours(obj):
    """Is ``obj`` a function or class of the user's (not of a library srcad has rules for)?"""
    obj = getattr(obj, "__srcad_function__", obj)
    if not (isinstance(obj, (types.FunctionType, type)) or callable(obj) and hasattr(obj, "__dict__")):
        return False
    return (getattr(obj, "__module__", None) or "").split(".")[0] not in _LIBRARIES


def _argument_kinds(options):
    """``(arrays, numbers, keyed)``: the parameters the compiled code is only ever given arrays
    or numbers, of those Python numbers, and those given dicts whose keys are strings (its
    cache key says so)."""
    arrays, numbers, keyed = argument_kinds(options.specs or {})
    return (tuple(options.array_params) + arrays, tuple(options.number_params) + numbers,
            tuple(options.keyed_params) + keyed)


def _stages(source, wrt, options, module):
    """The reverse-mode pipeline. Each stage takes the tree and returns the next one."""
    return _front_end(source, wrt, options, module=module) + [
        ("ufunc_arrays", lambda node: ufunc_arrays(node, module.ref)),
        ("check_complex", lambda node: check_complex(node, source, module.ref, specs=options.specs)),
        ("check_operators", lambda node: check_operators(node, source, options.param_classes)),
        ("infer_shapes", lambda node: infer_shapes(node, options.specs or {})),
        ("fold_in_place_checks", fold_in_place_checks),
        ("reverse", lambda node: reverse(node, source, wrt, module.ref, module.callee)),
        ("drop_needless_copies", drop_needless_copies),
        ("simplify", simplify),
        ("fold_negations", fold_negations),
        ("record_values", lambda node: record_values(node, module.ref, restore_for_shapes=options.for_numba)),
        ("reuse_buffers", reuse_buffers),
        ("batch_products", (lambda node: node) if options.for_numba else lambda node: batch_products(node, module.ref)),
        ("array_stacks", (lambda node: node) if options.for_numba else lambda node: array_stacks(node, module.ref)),
        ("finish_checkpoints", lambda node: finish_checkpoints(node, module.ref)),
        ("mark_integer_growth", (lambda node: mark_integer_growth(node, source)) if options.for_numba
         else lambda node: node),
        ("scalar_arrays", scalar_arrays if options.for_numba else lambda node: node),
        ("restore_regions", lambda node: restore_regions(node, part="forward")),
        ("fast_forms", lambda node: fast_forms(node, module.ref)),
        ("bind_builtins", module.bind_builtins),
        ("prove_finishes", (lambda node: node) if options.for_numba else
         lambda node: prove_finishes(node, options.specs or {}, module.closure.get)),
    ]


def _forward_stages(source, wrt, options, module):
    """The forward-mode pipeline: the same front end, then the tangent transform."""
    return _front_end(source, wrt, options, module=module) + [
        ("ufunc_arrays", lambda node: ufunc_arrays(node, module.ref)),
        ("check_complex", lambda node: check_complex(node, source, module.ref, "fwd")),
        ("check_operators", lambda node: check_operators(node, source, options.param_classes)),
        # the shapes of what a function of yours is given, where the arguments' are known: its jvp
        # may need them (``compile_jvp``); not inferred otherwise (forward code holds for any shape)
        ("infer_shapes", lambda node: infer_shapes(node, options.specs) if options.specs and _calls_yours(node)
         else node),
        ("forward", lambda node: forward(node, source, wrt, module.ref, module.jvp_callee, _argument_kinds(options)[1])),
        ("restore_regions", restore_regions),
        ("fast_forms", lambda node: fast_forms(node, module.ref)),
        ("bind_builtins", module.bind_builtins),
    ]


def _calls_yours(node):
    """Does ``node`` call a function of yours srcad differentiates through its own code?"""
    from .passes.call_binding import user_function_call

    return any(isinstance(c, gast.Call) and user_function_call(A.anno(c, "callee")) for c in A.walk(node))


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
    check_source_is_code(source)
    check_parameters(source)
    wrt = param_names([a.id for a in node.args.args], options.wrt)
    module = module or Module(source)
    if debug:
        print(f"# ---- capture\n{A.to_source(node)}")
    for name, stage in stages(source, wrt, options, module):
        node = _in_user_terms(stage, node, source)
        if debug:
            print(f"# ---- {name}\n{A.to_source(node)}")
    return node, source, module


def _in_user_terms(stage, node, source):
    """``stage(node)``, whose refusals name no name srcad made (``speaking_of_user_code``)."""
    try:
        return stage(node)
    except SrcadError as error:
        speaking_of_user_code(error, node, source)  # (its message, in place)
        raise


def transform(fn, options=Options(), module=None):
    """Run the pipeline on ``fn``; returns a ``codegen.Generated`` (sources and functions)
    with the facts of module state it took as fixed (``srcad.facts``)."""
    with collecting() as found, summaries_kept():  # each function of yours is read once
        node, source, module = _run(fn, options, _stages, module)
        generated = codegen(node, source, module, for_numba=options.for_numba)
    generated.facts = found
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
    facts: list = dataclasses.field(default_factory=list)  # (scope, name path, object) it took as fixed
    shapes_proved: bool = False  # the code is right for the argument shapes it was made for only


def transform_jvp(fn, options=Options()):
    """Run the forward-mode pipeline on ``fn``; returns a ``GeneratedJVP``."""
    with collecting() as found, summaries_kept():
        node, source, module = _run(fn, options, _forward_stages)
    text = A.to_source(node)
    factory = module.factory([text], [node.name])
    return GeneratedJVP(node.name, text, factory, dict(module.closure), A.anno(node, "tangent_params"),
                        list(module.inherited), module.resolved(), facts=found,
                        shapes_proved=bool(A.anno(node, "shapes_proved")) or module.callee_shapes_proved)
