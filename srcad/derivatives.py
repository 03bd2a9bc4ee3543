"""Forward mode and the Jacobians built from it and from ``srcad.api``: ``jvp`` and
``jacobian`` (the second derivatives are ``srcad.hessians``).

Arguments are passed as everywhere in srcad (see ``srcad.api``); ``wrt`` is checked when
the transform is made.
"""
import copy
import dataclasses
import math
import numbers
import types
from typing import Any, Callable, Literal, Optional, Sequence, TypeVar

import numpy as np

from .api import Differentiable, P, Wrt, _as_differentiable, _forward_target, chosen_wrt
from .arguments import check_arguments, check_callable, checked_cotangent, is_structure, signature, unbind, where
from .compile import compile_jvp
from .held_objects import object_classes
from .dispatch import generated_params, left_out_defaults, values_with_defaults
from .batch_runtime import Unbatchable
from .batching import batched_backward
from .errors import ArgumentError, CotangentError, UnsupportedCaseError, WrtError
from .passes.shape_values import arg_spec, argument_kinds
from .pytrees import is_node, leaves, rebuild
from .sharing import values_reached
from .source import capture
from .tracebacks import api_boundary
from .wrapper import made_by


R = TypeVar("R")


@api_boundary
def jvp(fun: Callable[..., R], primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[R, Any]:
    """``(y, y_dot)``: ``fun(*primals)`` and its directional derivative J·t, by forward mode.

    ``tangents`` has one entry per primal: an array (or number, list, dict) shaped like that
    argument, or None for an argument that is held constant. ``fun`` may itself be a gradient
    made by ``srcad.grad`` (then ``y_dot`` is a Hessian-vector product).

    Parameters:
        fun: the function (anything ``srcad.differentiable`` accepts, or a gradient made by
            ``srcad.grad``, or a library function srcad has a rule for).
        primals: the arguments, a tuple or list, by position.
        tangents: one per primal, shaped (and structured) like it, or ``None`` (a number
            for a 0-d array is taken as a 0-d array of its dtype; ``None`` for an item of a
            list, tuple, dict or record is a zero tangent there).

    Returns: ``(y, y_dot)``: ``y = fun(*primals)`` and J·t, shaped like ``y``.

    Raises: ``ValueError`` if ``tangents`` and ``primals`` differ in length; ``TypeError``
    for more primals than parameters; ``CotangentError`` for a tangent not shaped or laid out
    like its argument; ``ArgumentError`` for a primal or tangent srcad does
    not differentiate with (an integer argument that has a tangent, complex values, an
    ``np.matrix``); ``SourceUnavailableError``, ``SrcadSyntaxError``, ``NoRuleError`` for
    code srcad cannot differentiate.

    >>> import numpy as np, srcad
    >>> def f(x, scale):
    ...     return scale * x ** 2
    >>> srcad.jvp(f, (np.array([1.0, 2.0]), 3.0), (np.array([1.0, 0.0]), None))
    (array([ 3., 12.]), array([6., 0.]))
    """
    for what, given in (("primals", primals), ("tangents", tangents)):
        if not isinstance(given, (tuple, list)):  # (an array would pass its rows as the arguments)
            raise TypeError(f"jvp(fun, primals, tangents) takes the arguments and their tangents as tuples or lists, "
                            f"by position, and {what} is a {type(given).__name__}: jvp(f, (x,), (t,))")
    primals, tangents = tuple(primals), tuple(tangents)
    if len(tangents) != len(primals):
        raise ValueError(f"jvp needs one tangent per primal (None for a constant argument); got "
                         f"{len(primals)} primals and {len(tangents)} tangents")
    return jvp_with_keywords(fun, primals, tangents, {})


def jvp_with_keywords(fun, primals, tangents, keywords):
    """``jvp`` of a call that also passes ``keywords`` (held constant)."""
    check_callable(fun)
    fn, prefix, fixed = _forward_target(fun, primals, keywords)
    if not isinstance(fn, types.FunctionType):
        capture(fn)  # raises the error that says why srcad cannot read it
    primals, tangents = prefix + primals, (None,) * len(prefix) + tangents
    sig = _user_call(fun)[0]
    fixed = {**fixed, **keywords}
    if sig is not None and (not sig.simple or keywords):  # every parameter by position
        primals, tangents = sig.bind_tangents(primals, tangents, fixed)
        fixed = {}
    params = generated_params(fn)
    if len(primals) > len(params):
        raise TypeError(f"{fn.__qualname__} takes {len(params) - len(prefix)} arguments but jvp got "
                        f"{len(primals) - len(prefix)} primals")
    wrt = tuple(p for p, t in zip(params, tangents) if t is not None)
    check_arguments(where(fn), params, primals, wrt)
    containers = tuple(p for p, a in zip(params, primals) if is_structure(a))
    # the specs of the defaults left out too, as for vjp: a number default is rebound, not updated, by
    # `r /= ...`, and a loop over a vector argument binds numbers whatever the defaults are
    # (compile_jvp makes the code again where the shapes, the defaults' included, differ)
    values = primals if len(primals) == len(params) and not fixed else values_with_defaults(fn, params, primals, fixed)
    specs = None if values is None else {p: arg_spec(a) for p, a in zip(params, values)}
    arrays, numbers, keyed = argument_kinds(specs or {p: arg_spec(a) for p, a in zip(params, primals)})
    classes = object_classes(params, primals) + object_classes(*left_out_defaults(fn, params, primals, fixed))
    compiled = compile_jvp(fn, wrt, containers, classes=classes, arrays=arrays, numbers=numbers, keyed=keyed,
                           specs=specs)
    keywords = {compiled.tangent_params[p]: _tangent_like(checked_cotangent(t, where(fn), "tangent"), a, p, fn)
                for p, a, t in zip(params, primals, tangents) if t is not None}
    return compiled.bind(fn)[0](*primals, **fixed, **keywords)


def _tangent_like(t, primal, name, fn):
    """``t``, if it has the shape of the array or number ``primal`` (a tangent NumPy would
    broadcast is a different direction: refused, as ``vjp`` refuses such a cotangent); a
    number for a 0-d array becomes one of the array's float dtype, as the generated code
    reads the tangent the way it reads the argument (``a[()]``, ``a.item()``). Lists, tuples,
    dicts and records laid out like ``primal`` are read item by item, ``None`` for an item a
    zero tangent there (as ``None`` in a cotangent is); another layout is refused, naming it."""
    if t is None:  # (an item's: the argument's own None holds it constant and never comes here)
        return _zero_tangent(primal)
    if is_structure(primal) or is_structure(t):
        if t.__class__ is not primal.__class__ or _keys(t) != _keys(primal):
            raise CotangentError(f"{where(fn)}: the tangent of {name!r} is {_layout(t)} but the argument is "
                                 f"{_layout(primal)}; pass a tangent laid out like the argument (None for an item "
                                 "whose tangent is zero)")
        return _rebuilt(t, {k: _tangent_like(_item(t, k), _item(primal, k), _label(name, primal, k), fn)
                            for k in _keys(t)})
    if np.shape(t) != np.shape(primal):
        raise CotangentError(f"{where(fn)}: the tangent of {name!r} has shape {np.shape(t)} but the argument has "
                             f"shape {np.shape(primal)}; pass a tangent of the argument's shape")
    if primal.__class__ is np.ndarray and t.__class__ is not np.ndarray:
        return np.asarray(t, primal.dtype if primal.dtype.kind == "f" else np.float64)
    return t


def _zero_tangent(primal):
    """The zero tangent of ``primal`` (an item of a list, tuple, dict or record argument), laid out like it."""
    if is_structure(primal):
        return _rebuilt(primal, {k: _zero_tangent(_item(primal, k)) for k in _keys(primal)})
    if primal.__class__ is np.ndarray or isinstance(primal, np.generic):
        return np.zeros(np.shape(primal), primal.dtype if primal.dtype.kind == "f" else np.float64)
    return 0.0


def _keys(structure):
    """The positions, keys or field names of a list, tuple, dict or record."""
    if isinstance(structure, dict):
        return list(structure)
    if isinstance(structure, (list, tuple)):
        return list(range(len(structure)))
    return [f.name for f in dataclasses.fields(structure)]


def _item(structure, key):
    return structure[key] if isinstance(structure, (dict, list, tuple)) else getattr(structure, key)


def _label(name, structure, key):
    return f"{name}.{key}" if dataclasses.is_dataclass(structure) else f"{name}[{key!r}]"


def _rebuilt(template, items):
    """A structure of ``template``'s class holding ``items`` (key -> value)."""
    if isinstance(template, dict):
        return items
    if isinstance(template, (list, tuple)):
        values = [items[k] for k in range(len(template))]
        return template.__class__(*values) if hasattr(template, "_fields") else template.__class__(values)
    rebuilt = copy.copy(template)  # (a frozen record's fields too: the copy is the tangent's own)
    for key, value in items.items():
        object.__setattr__(rebuilt, key, value)
    return rebuilt


def _layout(value):
    """How a tangent or argument is laid out, for a message: a dict's keys, a sequence's length."""
    if isinstance(value, dict):
        return "a dict with keys [" + ", ".join(sorted(map(repr, value))) + "]"
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return f"a {value.__class__.__name__} of {len(value)} items"
    return "an array" if isinstance(value, np.ndarray) else f"an instance of {type(value).__name__}"


def _user_call(fun):
    """``(signature, prefix, fixed)`` of the user's function behind ``fun`` (for a gradient
    srcad made, of the function it differentiates): its signature (None where srcad cannot
    read it), the arguments bound in front of the caller's and a partial's keywords."""
    inner = getattr(fun, "__srcad_differentiable__", None)
    if inner is not None or isinstance(fun, Differentiable):
        made = inner or fun
        return made._sig, made._prefix, made._fixed
    fn, prefix, fixed, _ = unbind(fun)
    return (signature(fn) if isinstance(fn, types.FunctionType) else None), prefix, fixed


def by_position(fun, args, kwargs):
    """``(args, kwargs)`` of a call of ``jacobian(fun)``, ``hessian(fun)`` or ``hvp(fun)`` as
    they find the arguments they differentiate: by position (``Signature.split``)."""
    if not kwargs:
        return args, kwargs
    sig, prefix, fixed = _user_call(fun)
    if sig is None:
        raise ArgumentError(f"{where(fun)}: srcad cannot read this function's parameters, so it cannot tell "
                            f"which ones the keyword arguments {', '.join(kwargs)} are; pass them by position")
    positional, keywords = sig.split(prefix + args, kwargs, fixed)
    return positional[len(prefix):], keywords


def wrt_position(fun, args, kwargs, wrt):
    """The position among ``args`` of the one argument ``wrt`` denotes."""
    if isinstance(wrt, str):
        fn, prefix, _ = _forward_target(fun, args, kwargs)
        sig = _user_call(fun)[0]
        if sig is not None and not sig.simple and wrt not in sig.positional:  # keyword-only, *args, **kwargs
            raise WrtError(f"{sig.where}: wrt={wrt!r}: jacobian, hessian and hvp take the argument they "
                           "differentiate by position; use srcad.grad or srcad.vjp for this parameter")
        params = generated_params(fn)[len(prefix):]
        if wrt not in params:
            raise WrtError(f"{where(fn)}: wrt={wrt!r} is not a parameter (parameters: {', '.join(params)})")
        if params.index(wrt) >= len(args):  # left to its default, or after a parameter a partial fixes by keyword
            raise WrtError(f"{sig.where if sig else where(fn)}: wrt={wrt!r}: jacobian, hessian and hvp find it by "
                           "position: pass it in the call, and with a functools.partial, fix the parameters before it "
                           "by position")
        return params.index(wrt)
    if not -len(args) <= wrt < len(args):
        raise WrtError(f"wrt={wrt} but the function was given {len(args)} arguments")
    return wrt % len(args)


def wrt_positions(fun, args, kwargs, wrt):
    """``(positions, single)``: where the ``wrt`` arguments are among ``args``, and whether
    ``wrt`` named one argument (results unnested) rather than a tuple of them."""
    if isinstance(wrt, (tuple, list)):
        return [wrt_position(fun, args, kwargs, w) for w in wrt], False
    return [wrt_position(fun, args, kwargs, wrt)], True


def _float_dtype(x):
    """The dtype a derivative with respect to (or of) ``x`` has: its own if floating, else float64."""
    dtype = getattr(x, "dtype", None)
    return dtype if dtype is not None and dtype.kind == "f" else np.dtype(np.float64)


def _basis(shape, dtype):
    """The unit arrays of ``shape``, in C order."""
    size = int(np.prod(shape, dtype=np.int64))
    for k in range(size):
        e = np.zeros(size, dtype)
        e[k] = 1
        yield e.reshape(shape)


def _block(parts, y_leaf, x_leaf, axis):
    """One block of a Jacobian, shaped ``y_leaf.shape + x_leaf.shape``, from its rows
    (``axis=0``, reverse mode) or columns (``axis=-1``, forward mode)."""
    shape = np.shape(y_leaf) + np.shape(x_leaf)
    dtype = np.result_type(_float_dtype(y_leaf), _float_dtype(x_leaf))
    if not parts:
        return np.zeros(shape, dtype)
    return np.stack([np.asarray(p, dtype) for p in parts], axis=axis).reshape(shape)


def _assemble(y, inputs, blocks, single):
    """JAX's nesting: the output's structure, holding for each output leaf the tuple over
    ``wrt`` arguments (one argument: no tuple) of the argument's structure of blocks."""
    per_output = []
    for row in blocks:
        per_argument = tuple(rebuild(x, row[k]) if is_node(x) else row[k][0] for k, x in enumerate(inputs))
        per_output.append(per_argument[0] if single else per_argument)
    return rebuild(y, per_output) if is_node(y) else per_output[0]


@api_boundary
def jacobian(fun: Callable[P, Any], wrt: Optional[Wrt] = None, mode: Literal["rev", "fwd"] = "rev", *,
             argnums: Optional[Wrt] = None) -> Callable[P, Any]:
    """``jacobian(f)(*args)``: J of ``f`` with respect to argument ``wrt`` (or ``argnums``,
    JAX's spelling), shaped ``y.shape + x.shape``, in the dtype of ``y`` and ``x`` (float32
    stays float32).

    ``wrt`` may be a tuple: then a tuple of Jacobians, one per argument. Arguments and
    outputs may be structures (dicts, lists, tuples, named tuples, dataclasses): the
    result nests as JAX's does, the output's structure around the arguments'.
    ``mode="rev"`` runs ``f`` forward once and pulls back every basis cotangent of the output
    (cheap when outputs are few), in one batched call where the generated backward function
    batches (``srcad.batching``), one at a time otherwise; ``mode="fwd"`` pushes one basis
    tangent per input entry through ``jvp`` (cheap when inputs are few).

    Parameters:
        fun: the function.
        wrt: position(s) or name(s) of the argument(s); default ``0``.
        mode: ``"rev"`` (default) or ``"fwd"``.
        argnums: JAX's spelling of ``wrt``; give one of the two.

    Returns: a function of ``fun``'s arguments returning the Jacobian (keywords bind as for
    ``srcad.grad``; the ``wrt`` arguments are found by position, ``Signature.split``).

    Raises: ``ValueError`` for another ``mode``; ``WrtError`` for a bad ``wrt`` (at once,
    or when called for a name that only the call can check); ``ArgumentError`` (also for a
    call that does not bind) and the compile-time errors as ``srcad.vjp`` (``"rev"``) or
    ``srcad.jvp`` (``"fwd"``).

    >>> import numpy as np, srcad
    >>> def f(x):
    ...     return np.array([x[0] * x[1], np.sin(x[0])])
    >>> np.round(srcad.jacobian(f)(np.array([0.0, 2.0])), 3)
    array([[2., 0.],
           [1., 0.]])
    >>> np.allclose(srcad.jacobian(f, mode="fwd")(np.array([0.5, 2.0])), srcad.jacobian(f)(np.array([0.5, 2.0])))
    True
    """
    if mode not in ("rev", "fwd"):
        raise ValueError(f"mode must be 'rev' or 'fwd', not {mode!r}")
    wrt = chosen_wrt(wrt, argnums)
    reverse = _as_differentiable(fun, wrt)  # checks wrt now

    @api_boundary
    def jacobian_fn(*args: P.args, **kwargs: P.kwargs) -> Any:
        args, kwargs = by_position(fun, args, kwargs)
        positions, single = wrt_positions(fun, args, kwargs, wrt)
        inputs = [args[p] for p in positions]
        if mode == "rev":
            return reverse_jacobian(reverse, args, kwargs, inputs, single)
        return _forward_jacobian(fun, args, kwargs, positions, inputs, single)

    return made_by(jacobian_fn, "srcad.jacobian", reverse)


def reverse_jacobian(reverse, args, kwargs, inputs, single):
    functions, y, saved = reverse._forward_pass(*reverse._bind(args, kwargs))  # pulled back at once: no copy
    plain_inputs = not any(x.__class__ is not np.ndarray and is_node(x) for x in inputs)
    if y.__class__ is np.ndarray and y.dtype.kind == "f" and plain_inputs:
        rows = _identity_rows(functions, saved, y)
        if rows is not None:
            return _batched_blocks((rows,) if reverse._one_tuple else rows, y, inputs, single)
    pullback = reverse._pullback(functions, y, saved, batched=True)
    if not is_node(y) and plain_inputs:
        return _batched_jacobian(pullback, y, inputs, single)
    y_leaves = leaves(y)
    blocks = []
    for i, y_leaf in enumerate(y_leaves):
        rows = [[[] for _ in leaves(x)] for x in inputs]
        for e in _basis(np.shape(y_leaf), _float_dtype(y_leaf)):
            # None elsewhere in a structured output: a zero cotangent there
            grads = pullback(rebuild(y, [e if m == i else None for m in range(len(y_leaves))]) if is_node(y) else e)
            for k, g in enumerate((grads,) if single else grads):
                for j, g_leaf in enumerate(leaves(g)):
                    rows[k][j].append(g_leaf)
        blocks.append([[_block(rows[k][j], y_leaf, x_leaf, 0) for j, x_leaf in enumerate(leaves(x))]
                       for k, x in enumerate(inputs)])
    return _assemble(y, inputs, blocks, single)


_IDENTITIES = {}  # (size, dtype) -> a read-only identity: the batched backward never writes its cotangents


def _identity_rows(functions, saved, y):
    """The gradients of every entry of the float array ``y``, pulled back in one call of the
    batched backward function with the rows of an identity; None where it does not batch."""
    backward = batched_backward(functions)
    if backward is None:
        return None
    size = y.size
    basis = _IDENTITIES.get((size, y.dtype))
    if basis is None:
        basis = np.eye(size, dtype=y.dtype)
        basis.flags.writeable = False  # shared between calls: a write would fail, not corrupt
        if size <= 256:  # at most 512 KiB each
            _IDENTITIES[size, y.dtype] = basis
    try:
        return backward(saved, basis.reshape((size,) + y.shape))
    except Unbatchable:
        return None


def _batched_jacobian(pullback, y, inputs, single):
    """The rows of the Jacobian of an array output, all basis cotangents pulled back in one
    batched call (``srcad.batching``: one at a time where the adjoint does not batch)."""
    shape = np.shape(y)
    size = math.prod(shape)
    basis = np.eye(size, dtype=_float_dtype(y)).reshape((size,) + shape)
    return _batched_blocks(pullback.batched(basis), y, inputs, single)


def _batched_blocks(grads, y, inputs, single):
    """The Jacobian's blocks from the batched gradients: one per input (unnested for one)."""
    if single:
        return _batched_block(grads, y, inputs[0])
    return tuple(_batched_block(g, y, x) for g, x in zip(grads, inputs))


def _batched_block(rows, y, x):
    if not (rows.dtype.kind == "f" and rows.dtype == getattr(y, "dtype", None) == getattr(x, "dtype", None)):
        dtype = np.result_type(_float_dtype(y), _float_dtype(x))
        if rows.dtype != dtype:
            rows = rows.astype(dtype)
    return rows.reshape(np.shape(y) + np.shape(x))


def _forward_jacobian(fun, args, kwargs, positions, inputs, single):
    """One jvp per input entry, each from the same state of the random generators a run may
    draw from (``_random_states``: restored before every run but the first, so each draws the
    numbers one call of ``fun`` draws, and they end as one call leaves them); runs whose values
    still differ (a counter of yours) are refused: the columns would be the derivatives of
    different functions."""
    y, columns = None, {}
    reached = values_reached([getattr(fun, "__wrapped__", fun)])  # (grad(f): f)
    states = _random_states([*args, *kwargs.values()] + reached)
    for k, (p, x) in enumerate(zip(positions, inputs)):
        x_leaves = leaves(x)
        for j, x_leaf in enumerate(x_leaves):
            columns[k, j] = []
            for e in _basis(np.shape(x_leaf), _float_dtype(x_leaf)):
                tangent = [e if m == j else np.zeros(np.shape(other), _float_dtype(other))
                           for m, other in enumerate(x_leaves)]
                tangents = [None] * len(args)
                tangents[p] = rebuild(x, tangent) if is_node(x) else e
                if y is not None:
                    for restore, state in states:
                        restore(state)
                y_run, y_dot = jvp_with_keywords(fun, args, tuple(tangents), kwargs)
                if y is not None and not _same_values(y, y_run):
                    raise UnsupportedCaseError(
                        f"{where(fun)} gave different values on two runs with the same arguments (it changes "
                        "state it reads, such as a counter or a cache of yours, or draws random numbers srcad "
                        "does not see): a forward-mode Jacobian or Hessian runs it once per input entry, so its "
                        "columns would be the derivatives of different functions; use jacobian(f, mode='rev'), "
                        "or pass the state in as an argument")
                y = y_run
                columns[k, j].append(leaves(y_dot))
    if y is None:  # no argument has entries
        y = fun(*args, **kwargs)
    blocks = [[[_block([column[i] for column in columns[k, j]], y_leaf, x_leaf, -1)
                for j, x_leaf in enumerate(leaves(x))] for k, x in enumerate(inputs)]
              for i, y_leaf in enumerate(leaves(y))]
    return _assemble(y, inputs, blocks, single)


def _random_states(args, depth=3):
    """``[(restore, state)]`` of every random generator a run may draw from: NumPy's and
    Python's global ones, and the ``np.random.Generator``/``RandomState``/``random.Random``
    objects ``args`` hold (the arguments and what the function's code reads by name: in lists,
    tuples, dicts and your objects' attributes, ``depth`` levels down). Restoring a state rewinds the generator itself, so code that tells objects
    apart by identity still sees the caller's."""
    import random

    found, seen, todo = [], set(), [(a, 0) for a in args] + [(np.random.mtrand._rand, 0), (random._inst, 0)]
    while todo:
        value, level = todo.pop()
        if id(value) in seen or isinstance(value, (np.ndarray, numbers.Number, str, bytes, type(None))):
            continue
        seen.add(id(value))
        if isinstance(value, np.random.Generator):
            value = value.bit_generator
        if isinstance(value, np.random.BitGenerator):
            found.append((lambda state, g=value: setattr(g, "state", state), value.state))
        elif isinstance(value, np.random.RandomState):
            found.append((value.set_state, value.get_state()))
        elif isinstance(value, random.Random):
            found.append((value.setstate, value.getstate()))
        elif level < depth:
            items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else \
                getattr(value, "__dict__", {}).values() if not isinstance(value, type) else ()
            todo.extend((item, level + 1) for item in items)
    return found


def _same_values(a, b):
    """Do the two results hold equal values (NaN equal to NaN), item by item?"""
    a_leaves, b_leaves = leaves(a), leaves(b)
    return len(a_leaves) == len(b_leaves) and all(
        np.shape(u) == np.shape(w) and np.array_equal(u, w, equal_nan=np.asarray(u).dtype.kind in "fc")
        for u, w in zip(a_leaves, b_leaves))
