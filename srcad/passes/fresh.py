"""Which calls return fresh memory: the allowlist behind ``passes.memory``.

Only what NumPy's documentation promises (and ``np.shares_memory`` confirms) is listed as
fresh; everything else may return a view of, or the very object passed as, an argument.
``np.diag``, ``np.linalg.matrix_power(a, 1)``, ``np.diff(a, n=0)`` and ``ndarray.conj()`` of a
real array can return a view or their argument: they are not listed; ``np.einsum`` is new memory
only given two or more operands (of one, ``'ii->i'`` or ``'ij->ji'`` is a view: ``new_array_call``).
What else ``passes.memory`` asks of a call is here too: whether it reads some arguments for
their shape only or changes none (what its options ask, ``out=``, ``copy=``, ``overwrite_*``:
``passes.call_options``).

>>> import numpy as np
>>> returns_new_array(np.concatenate), returns_new_array(np.reshape)
(True, False)
"""
import bisect
import builtins
import functools
import operator
import random
import sys
import types

import gast
import numpy as np

from .. import astutil as A
from .. import registry
from .. import runtime
from ..checkpointing import check_recomputed
from ..errors import check_list_slice, check_method, check_module, check_property, check_record_class
from ..held_objects import check_held_function
from ..sharing import check_unshared_arguments, check_unshared_item, check_unshared_store
from ..rules.builtin_rules import pick_grad
from ..runtime_stores import check_array_receiver
from ..rules.numpy_joining import unjoin
from .random_draws import DRAW_METHODS
from ..rules.numpy_products import einsum_grad


def _numpy(*names):
    found = set()
    for name in names:
        obj = np
        for part in name.split("."):
            obj = getattr(obj, part, None)
        if obj is not None:
            found.add(obj)
    return found


# Functions whose result is a new array (never a view of an argument).
FRESH_FUNCTIONS = _numpy(
    "array", "copy", "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like",
    "eye", "identity", "arange", "linspace", "logspace", "geomspace", "tri", "tril", "triu", "vander",
    "meshgrid", "indices", "concatenate", "stack", "vstack", "hstack", "dstack", "column_stack", "block",
    "append", "insert", "delete", "repeat", "tile", "pad", "roll", "kron", "outer", "inner", "cross",
    "dot", "vdot", "matmul", "tensordot", "trace", "sum", "prod", "mean", "std", "var", "max", "min",
    "amax", "amin", "argmax", "argmin", "all", "any", "cumsum", "cumprod", "nansum", "nanprod", "nanmean",
    "nanstd", "nanvar", "nanmax", "nanmin", "median", "average", "ptp", "count_nonzero", "where", "clip",
    "round", "around", "sort", "argsort", "nonzero", "flatnonzero", "argwhere", "take", "choose", "select",
    "piecewise", "interp", "searchsorted", "unique", "bincount", "cov", "corrcoef", "convolve",
    "correlate", "isclose", "allclose", "array_equal", "nan_to_num", "polyval", "trapezoid", "trapz",
    "triu_indices", "tril_indices", "diag_indices", "triu_indices_from", "tril_indices_from", "diag_indices_from",
    "unravel_index", "linalg.inv", "linalg.solve", "linalg.det",
    "linalg.slogdet", "linalg.norm", "linalg.cholesky", "linalg.qr", "linalg.svd", "linalg.eigh",
    "linalg.eigvalsh", "linalg.eig", "linalg.eigvals", "linalg.pinv", "linalg.lstsq", "linalg.multi_dot",
    "fft.fft", "fft.ifft", "fft.rfft", "fft.irfft", "fft.fft2", "fft.ifft2", "fft.fftn", "fft.ifftn",
) | {builtins.abs, builtins.round, builtins.sum, builtins.pow, builtins.len, builtins.int, builtins.float,
     builtins.complex, builtins.bool, builtins.str, builtins.range, builtins.isinstance, builtins.divmod,
     # srcad's own helpers, which code srcad generates (and differentiates again) calls
     runtime.zeros_like, runtime.none_items, runtime.copy_grad, runtime.extremum_grad, runtime.shape_of, runtime.stored_adjoint,
     runtime.full_of, runtime.padded, runtime.diagonal_positions, runtime.along_axis_positions, runtime.shuffle_order} | DRAW_METHODS  # (rng.normal(...))
# SciPy's functions whose result is new memory (srcad imports no SciPy: they are looked up once
# SciPy's module is imported, ``returns_new_array``)
_SCIPY_FRESH = ("special.softmax", "special.log_softmax", "special.logsumexp", "linalg.expm")
_scipy_fresh = {}  # name -> the function, once found
# srcad's sparse products and solve (``rules.scipy_sparse``, loaded only where a sparse value
# exists): each returns the new array of SciPy's product or solve
_SPARSE_RULES = ("sparse_left_product", "sparse_right_product", "sparse_solve")


def returns_new_array(obj):
    """Is ``obj`` a function whose result never shares memory with its arguments
    (``FRESH_FUNCTIONS``, SciPy's ``_SCIPY_FRESH``, or srcad's ``_SPARSE_RULES``)?"""
    if is_in(obj, FRESH_FUNCTIONS):
        return True
    sparse_rules = sys.modules.get("srcad.rules.scipy_sparse")
    if sparse_rules is not None and any(obj is getattr(sparse_rules, name, None) for name in _SPARSE_RULES):
        return True
    if len(_scipy_fresh) < len(_SCIPY_FRESH) and (getattr(obj, "__module__", None) or "").startswith("scipy"):
        for name in _SCIPY_FRESH:
            module, attr = name.rsplit(".", 1)
            found = getattr(sys.modules.get("scipy." + module), attr, None)
            if found is not None:
                _scipy_fresh[name] = found
    return any(obj is f for f in _scipy_fresh.values())


def new_array_call(obj, call):
    """Is ``call`` (of ``obj``) one whose result never shares memory with its arguments, whatever
    they are: a call of a function ``returns_new_array`` lists, or ``np.einsum`` of a literal
    subscripts string and two or more operands (NumPy makes a new array of a contraction of
    several operands, optimized or not; of one operand it returns a view where it can: ``'ii->i'``).
    Its options (``out=``, ``copy=``) are ``call_options``' to judge."""
    if returns_new_array(obj):
        return True
    return obj is np.einsum and len(call.args) >= 3 and isinstance(call.args[0], gast.Constant) and isinstance(
        call.args[0].value, str) and not any(isinstance(a, gast.Starred) for a in call.args)


# srcad's helpers that return (a reduction of) some of their arguments, never the others:
# ``unbroadcast(g, x)`` (and ``rule_adjoint(g, x, ...)``) is ``g`` or a sum of it, and never shares ``x``.
# ``add_grads(a, b)`` is ``a``, ``b``, a new sum, or a new list or dict of such items;
# ``cotangent(v, y)`` is ``v``, a reshape of it, a new list of its items, or new ones;
# ``into_dtype_of(g, target)`` is ``g`` or new zeros, ``in_place_result(new, old)`` ``new`` or its
# cast; ``finish(g, x)`` is ``g``, a reshape or sum
# of it, or new (zeros, a copy), never ``x`` (whose shape and type it reads).
RETURNS_ARGUMENTS = {runtime.unbroadcast: (0,), runtime.rule_adjoint: (0,), runtime.grad_buffer: (0,), runtime.stacked_grad: (0,),
                     runtime.into_dtype_of: (0,), runtime.finish: (0,), runtime.finish_tangent: (0,),
                     runtime.in_place_result: (0,),
                     runtime.add_grads: (0, 1), runtime.cotangent: (0,), runtime.cotangent_items: (0,),
                     runtime.rule_tangent: (0,)}
# srcad's helpers whose result is a new list of views of their first argument (splitting an adjoint).
LISTS_OF_VIEWS = {runtime.unstack, unjoin}
# srcad's helpers splitting an adjoint ``g`` (their first argument) over the items of their
# second, the adjoints of builtin ``sum`` and ``max``/``min``: a new list whose items are ``g`` or
# new (sums of it, zeros), or, for an array, an array; mapped to whether that array may be a view
# of ``g`` (``sum_grad`` broadcasts it; ``pick_grad`` writes it into new zeros).
SPLITS_OVER_ITEMS = {runtime.sum_grad: True, pick_grad: False}
# Functions whose result is an array (never a list) that may share its first argument's memory.
ARRAY_VIEWS = _numpy("broadcast_to") | {
    runtime.cotangent_like}  # ``v`` checked against an array output's known shape: v itself, or its reshape
# Functions whose result, given an array, is that array, a view of it, or a new array of its values
# (given a list or a dict it may be an object array holding their items: then they share those).
VIEWS_OF_ARRAYS = _numpy("asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "reshape", "ravel",
                         "squeeze", "transpose", "swapaxes", "moveaxis", "expand_dims", "diagonal", "flip", "fliplr",
                         "flipud", "rot90", "real", "imag")
# Methods of an array whose result is an array that may share the array's memory.
ARRAY_VIEW_METHODS = {"reshape", "ravel", "squeeze", "transpose", "swapaxes", "view", "diagonal", "conj",
                      "conjugate"}
# srcad's helpers (which code srcad generates, and differentiates again, calls) whose result is
# an array or a number, never a list: it may share its arguments' memory but holds no items;
# with the positions of the only arguments it may share, where known (None: any of them).
# ``sum_to_reduced(g, x, ...)`` and ``expand_reduced(g, x, ...)`` are ``g``, a view of it or new
# (``x`` gives a shape), ``transpose_back(g, axes)`` a view of ``g``; ``einsum_grad(g, position,
# subscripts, *operands)`` (the rules') contracts ``g`` with the other operands, a new array, or,
# with no other operand, is a view of ``g`` (the operand's own shape read only).
ARRAY_RESULTS = {runtime.sum_to_reduced: (0,), runtime.expand_reduced: (0,), runtime.transpose_back: (0,),
                 einsum_grad: (0,),
                 runtime.matmul_dx: None, runtime.matmul_dy: None, runtime.prod_grad: None,
                 runtime.trace_grad: None}
# Indices that are arrays: indexing with them copies (advanced indexing).
INDEX_ARRAY_FUNCTIONS = _numpy("argsort", "argpartition", "nonzero", "flatnonzero", "argwhere", "arange", "where",
                               "diag_indices",
                               "diag_indices_from", "tril_indices", "triu_indices", "tril_indices_from",
                               "triu_indices_from") | {runtime.diagonal_positions, runtime.along_axis_positions,
                                                       runtime.shuffle_order}
# (not np.unravel_index: of one flat index it gives a tuple of integers, a basic index: a view)
# Methods whose result is new memory (the copy of a list or dict is shallow: its items are shared).
FRESH_METHODS = {"copy", "sum", "prod", "mean", "std", "var", "max", "min", "ptp", "argmax", "argmin",
                  "argsort", "all", "any", "cumsum", "cumprod", "dot", "trace", "round", "clip", "flatten",
                  "tolist", "item", "astype", "nonzero", "repeat", "take", "compress", "searchsorted",
                  "tobytes", "count", "index"}
SHALLOW_COPIES = {"copy"}
# New containers whose items are the arguments' items (or the arguments themselves).
CONTAINER_BUILDERS = {builtins.list, builtins.tuple, builtins.dict, builtins.zip, builtins.enumerate,
                       builtins.sorted, builtins.reversed, builtins.set, builtins.frozenset}
# Builtins that, given a dict, return a new container of its keys (``sorted(d)``, ``list(d)``).
KEY_LISTS = (builtins.list, builtins.tuple, builtins.sorted, builtins.set, builtins.frozenset)
# Attributes that describe an array without sharing its memory.
PLAIN_ATTRIBUTES = {"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides"}
# Methods that change their receiver: a call for its effect updates it in place.
MUTATING_METHODS = {"sort", "fill", "resize", "put", "itemset", "partition", "setfield", "extend", "insert",
                     "remove", "pop", "clear", "reverse", "update", "setdefault", "popitem", "add", "discard"}
NO_EFFECT = {builtins.print, check_recomputed, runtime.check_copyto, runtime.check_fill, runtime.check_updated_array, runtime.real_constant,
             runtime.numeric_constant, runtime.read_again, runtime.inexact_result, runtime.numba_refuses,
             runtime.check_integer_range, runtime.check_python_float, check_method, check_property, check_module,
             check_record_class, check_held_function,
             check_list_slice, check_unshared_item, check_unshared_store, check_unshared_arguments, check_array_receiver}


# Library functions that write into an argument even when their result is assigned.
LIBRARY_MUTATORS = _numpy("copyto", "put", "put_along_axis", "place", "putmask", "fill_diagonal", "random.shuffle")
_PURE_LIBRARIES = {"numpy", "math", "builtins", "scipy", "operator", "srcad"}


def known_pure(obj):
    """Does calling ``obj`` leave its arguments as they were? Known only for the libraries
    srcad has rules for (less their few in-place functions); a function of yours declared
    without derivative (``register_nondifferentiable``) may change them."""
    return of_a_library(obj) and not _object_effect(obj)


def of_a_library(obj):
    """Is ``obj`` NumPy's, SciPy's, the standard library's (``math``, ``operator``, builtins) or
    srcad's: a library srcad has rules for, never a function of yours?"""
    return module_of(obj).split(".")[0] in _PURE_LIBRARIES


# operator's functions that change their first argument: operator.setitem, operator.iadd, ...
_OPERATOR_UPDATES = {operator.setitem, operator.delitem} | {
    getattr(operator, name) for name in dir(operator)
    if name.startswith("i") and (hasattr(operator, name[1:]) or hasattr(operator, name[1:] + "_"))}
# Objects whose bound methods return new memory or what they are given, never memory they keep:
# random draws (``np.random.normal`` is a method of NumPy's global ``RandomState``, ``random.random``
# of Python's), a ufunc's ``reduce`` or ``outer``
_FRESH_RECEIVERS = (np.random.RandomState, np.random.Generator, random.Random, np.ufunc)
NUMPY_FUNCTION = type(np.atleast_2d)  # NumPy's functions that dispatch to other array libraries
_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, np.ufunc, NUMPY_FUNCTION, type)
_SCOPE_READERS = {builtins.globals, builtins.locals, builtins.vars}  # they return a module's dict
# The standard library's functions in C that only read their arguments (``functools.reduce``
# calls the function it is given, which ``may_change_arguments`` asks about too)
_LIBRARY_READERS = {bisect.bisect_left, bisect.bisect_right, functools.reduce}


def leaves_arguments(obj):
    """Does a call of ``obj`` surely leave its arguments as they were, its result assigned or not?
    A function or type of the libraries srcad has rules for (``known_pure``), or of ``operator``
    but for its in-place ones; a method of theirs bound to an array, list, dict or set, or a
    random draw; not any other callable object (``functools.partial``, a ``methodcaller``), nor
    ``rng.shuffle``, ``heapq.heapify``, a function of yours srcad does not read."""
    owner = getattr(obj, "__self__", None)
    if owner is not None and not isinstance(owner, types.ModuleType):  # a bound method
        if getattr(obj, "__name__", None) == "__getitem__" and module_of(type(owner)).split(".")[0] == "numpy":
            return True  # np.ogrid[0:3], np.r_[...], np.s_[...]: NumPy's index tricks only read their keys
        return (isinstance(owner, _FRESH_RECEIVERS + _BUILTIN_CONTAINERS) and known_pure(obj)
                and getattr(obj, "__name__", None) != "shuffle")
    if _distribution(obj):  # norm(mu, s): freezing reads its parameters
        return True
    if not isinstance(obj, _FUNCTIONS) or is_in(obj, _OPERATOR_UPDATES):
        return False
    return known_pure(obj) or module_of(obj) == "_operator" or is_in(obj, _LIBRARY_READERS)


def _distribution(obj):
    """Is ``obj`` one of ``scipy.stats``'s distributions (``stats.norm``)?"""
    stats = sys.modules.get("scipy.stats")
    return stats is not None and isinstance(obj, stats.rv_continuous | stats.rv_discrete) and (
        module_of(type(obj)).startswith("scipy.stats"))


def may_change_arguments(obj):
    """May a call of ``obj`` (its result assigned or not) change its arguments in place? Not a
    type, a function srcad has a rule for, a Python function (srcad reads it: what it updates is
    its summary's), nor one known to leave them (``leaves_arguments``); any other callable may
    (``operator.setitem``, ``heapq.heappush``, a ``functools.partial``). Not what is no callable."""
    return callable(obj) and not (
        isinstance(obj, type) or isinstance(getattr(obj, "__srcad_function__", obj), types.FunctionType)
        or registry.lookup(registry.VJP, obj) or registry.lookup(registry.JVP, obj) or leaves_arguments(obj))


def keeps_no_memory(obj):
    """Does a call of ``obj`` return new memory or memory of what it is given, never memory it
    keeps? Known only for the functions and types of the libraries srcad has rules for (and
    ``operator``'s), and the random draws and ufunc methods of ``_FRESH_RECEIVERS``; not for any
    other callable object or bound method (an ``lru_cache``'d function, ``CACHE.get``,
    ``BUF.view``, a ``functools.partial``, a ``weakref``, a classmethod returning ``cls.buf``),
    nor a class of yours, which may return or hold a module's array."""
    owner = getattr(obj, "__self__", None)
    if owner is not None and not isinstance(owner, types.ModuleType):  # (a distribution's scipy.stats.norm.pdf)
        return isinstance(owner, _FRESH_RECEIVERS) or module_of(type(owner)).startswith("scipy.stats")
    if not isinstance(obj, _FUNCTIONS) or is_in(obj, _SCOPE_READERS):
        return False
    return module_of(obj).split(".")[0] in _PURE_LIBRARIES | {"_operator", "time"}


def module_of(obj):
    """The name of the module ``obj`` (or, for a bound method of a C type, its type) comes from:
    ``"numpy.random"``, ``"builtins"``; ``""`` if none."""
    return getattr(obj, "__module__", None) or getattr(type(obj), "__module__", None) or ""


# Logging calls only read (format) their arguments.
_LOGGING_METHODS = {"debug", "info", "warning", "warn", "error", "critical", "exception", "log"}
# Methods of a container that store their arguments in it.
STORING_METHODS = {"append", "extend", "insert", "add", "update", "appendleft", "extendleft"}


# Of those, the ones that answer something (the others answer None).
_ANSWERING_METHODS = {"pop", "setdefault", "popitem"}
_BUILTIN_CONTAINERS = (list, dict, set, np.ndarray)


def effect_call(callee):
    """Is a call of ``callee`` made for its effect on an argument or its receiver (an in-place
    method of a list, dict, set or array, NumPy's ``copyto``, a ufunc's ``.at``)? Returns
    ``"none"`` if its result is None, ``"value"`` if it answers something (``L.pop()``),
    ``"special"`` for an update spelled as a special method (``z.__setitem__(i, v)``), else
    False."""
    if callee.kind == "method":
        return _method_effect(callee.name)
    return _object_effect(callee.obj) if callee.kind == "object" else False


def updates_first_argument(obj):
    """Does ``obj`` write into its first argument (``np.copyto``, a ufunc's ``.at``)?"""
    return is_in(obj, LIBRARY_MUTATORS) or (getattr(obj, "__name__", None) == "at"
                                            and isinstance(getattr(obj, "__self__", None), np.ufunc))


def _object_effect(obj):
    if updates_first_argument(obj):
        return "none"
    owner = getattr(obj, "__objclass__", None) or type(getattr(obj, "__self__", None))
    if owner not in _BUILTIN_CONTAINERS:  # list.sort, np.ndarray.fill, a bound L.append
        return False
    return _method_effect(getattr(obj, "__name__", ""))


def _method_effect(name):
    if name in _SPECIAL_MUTATORS or (name.startswith("__i") and name.endswith("__") and name[3:-2] in _OPERATORS):
        return "special"
    if name not in MUTATING_METHODS | STORING_METHODS:
        return False
    return "value" if name in _ANSWERING_METHODS else "none"


# z.__setitem__(i, v), z.__iadd__(v): an update written as a call (``"special"`` above)
_SPECIAL_MUTATORS = {"__setitem__", "__delitem__", "__setattr__", "__delattr__"}
_OPERATORS = {"add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift", "and", "xor",
              "or"}


def effect_targets(s):
    """The names the call made for its effect at ``s`` (an ``Expr``) changes in place: the
    receiver of an in-place method (``w.sort()``), the first argument of ``np.copyto`` or a
    ufunc's ``.at``."""
    call = s.value if isinstance(s, gast.Expr) else None
    callee = A.anno(call, "callee") if isinstance(call, gast.Call) else None
    if callee is None or not effect_call(callee):
        return set()
    if callee.kind == "method" and isinstance(call.func, gast.Attribute) and isinstance(call.func.value, gast.Name):
        return {call.func.value.id}
    if callee.kind == "object" and updates_first_argument(callee.obj) and call.args and isinstance(call.args[0], gast.Name):
        return {call.args[0].id}
    return set()


def only_logs(obj):
    """Is calling ``obj`` logging (``logger.debug("%s", y)``, ``logging.info``), which reads its
    arguments only to format them? (A list's ``append`` on a global list is not: the function
    may read the list again, and a global carries no derivative.)"""
    import logging

    name = getattr(obj, "__name__", None)
    owner = getattr(obj, "__self__", None)
    if isinstance(owner, (logging.Logger, logging.LoggerAdapter)) or owner is logging:
        return name in _LOGGING_METHODS
    return getattr(obj, "__module__", None) == "logging" and name in _LOGGING_METHODS


def stores_in_a_global(obj):
    """Is ``obj`` a storing method bound to a list, dict or set (``HISTORY.append`` of a
    module's list): it changes that container only."""
    return isinstance(getattr(obj, "__self__", None), (list, dict, set)) and getattr(obj, "__name__", None) in \
        STORING_METHODS


def is_in(obj, group):
    try:
        return obj in group
    except TypeError:  # unhashable objects are in none of these sets
        return False


def is_ufunc(obj):
    return isinstance(obj, np.ufunc)


def observes_nothing(rhs):
    """A call whose rule reads nothing (constructors, index queries): it observes no values."""
    callee = A.anno(rhs, "callee") if isinstance(rhs, gast.Call) else None
    if callee is None:
        return False
    if callee.kind == "object":
        return registry.is_nondifferentiable(callee.obj)
    return callee.name in registry.NONDIFF_METHODS


# srcad's helpers that read these arguments for their shape and dtype only, which an in-place
# update cannot change (``finish(dx, x)`` after a helper restored a saved array in place)
SHAPE_ONLY_ARGUMENTS = {runtime.finish: (1,), runtime.finish_tangent: (1,), runtime.zeros_like: (0,)}
# ... and these, where they are arrays (a list's length and items may change in place): the
# adjoint code reads the value an adjoint has the shape of (``unbroadcast(g, _t2)`` after
# ``_t2 = M.T; M[:] = _t2``, which second order differentiates)
ARRAY_SHAPE_ARGUMENTS = {runtime.unbroadcast: (1,), runtime.rule_adjoint: (1,), runtime.stacked_grad: (1,), runtime.into_dtype_of: (1,)}


def value_reads(rhs, names, is_array=lambda name: False):
    """``names`` (those ``rhs`` reads) less the ones it reads only for a shape and dtype;
    ``is_array(name)``: is the name's value surely an array or a number?"""
    callee = A.anno(rhs, "callee") if isinstance(rhs, gast.Call) else None
    known = callee is not None and callee.kind == "object" and isinstance(callee.obj, types.FunctionType)
    positions = SHAPE_ONLY_ARGUMENTS.get(callee.obj, ()) if known else ()
    array_positions = ARRAY_SHAPE_ARGUMENTS.get(callee.obj, ()) if known else ()
    if not positions and not array_positions:
        return names
    shape_only = {arg.id for k, arg in enumerate(rhs.args) if isinstance(arg, gast.Name)
                  and (k in positions or k in array_positions and is_array(arg.id))}
    positions = set(positions) | set(array_positions)
    elsewhere = set()
    for k, arg in enumerate(rhs.args):
        if k not in positions:
            elsewhere |= A.names_read(arg)
    for kw in rhs.keywords:
        elsewhere |= A.names_read(kw.value)
    return {n for n in names if n not in shape_only or n in elsewhere}


def shape_query(rhs):
    """``x.shape`` and the like: an attribute that reads no values."""
    return isinstance(rhs, gast.Attribute) and rhs.attr in PLAIN_ATTRIBUTES


def scatter_add_target(call):
    """The buffer of ``np.add.at(buffer, index, values)`` (or srcad's ``scatter_add``), else None."""
    callee = A.anno(call, "callee")
    if callee is None or callee.kind != "object" or len(call.args) != 3 or call.keywords:
        return None
    try:
        is_add_at = callee.obj is runtime.scatter_add or callee.obj == np.add.at
    except Exception:  # objects whose == does not answer a bool
        return None
    return call.args[0] if is_add_at and isinstance(call.args[0], gast.Name) else None
