"""The explicit list of functions whose values carry no derivative: constructors, index
and shape queries, comparisons and predicates. Their results pass through; no adjoint
flows into their arguments. Anything not listed here and without a rule is an error.

Only functions whose float results are piecewise constant in every argument belong here; one
with a derivative in some float argument (``np.linspace``'s endpoints, ``np.histogram``'s
weights) has a rule, or a refusal in ``refusals.py`` when that argument is differentiated."""
import builtins
import math

import numpy as np

from ..checkpointing import check_recomputed
from ..errors import check_list_slice, check_method, check_module, check_property, check_record_class, missing_name
from ..held_objects import check_held_function
from ..sharing import check_unshared_arguments, check_unshared_item, check_unshared_store
from ..passes.random_draws import DRAW_METHODS
from ..registry import register_nondifferentiable
from ..runtime_stores import (along_axis_positions, check_array_receiver, check_copyto, check_fill, check_updated_array,
                              diagonal_positions, shuffle_order)

_numpy = [
    "zeros", "ones", "empty", "eye", "identity",
    "zeros_like", "ones_like", "empty_like", "argmax", "argmin", "argsort", "argwhere",
    "argpartition", "nanargmax", "nanargmin",
    "nonzero", "flatnonzero", "shape", "ndim", "size", "isnan", "isfinite", "isinf", "isclose", "allclose",
    "array_equal", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
    "logical_or", "logical_not", "logical_xor", "all", "any", "count_nonzero", "searchsorted", "digitize",
    "result_type", "dtype", "iscomplexobj", "isrealobj", "isscalar", "indices", "mgrid",
    "ogrid", "tri", "diag_indices", "tril_indices", "triu_indices", "diag_indices_from", "tril_indices_from",
    "triu_indices_from", "mask_indices", "unravel_index", "ravel_multi_index",
    "broadcast_shapes", "floor_divide", "lexsort", "issubdtype",
    "sign", "floor", "ceil", "trunc", "rint", "fix", "signbit",
]
register_nondifferentiable(*(getattr(np, name) for name in _numpy if hasattr(np, name)))
register_nondifferentiable(
    np.random.default_rng, np.random.rand, np.random.randn,
    np.random.randint, np.random.seed, np.random.random,
    reason="random numbers do not depend on the arguments",
)
# a generator's draws (``passes.random_draws``; one given a value with a derivative is refused there)
register_nondifferentiable(*DRAW_METHODS, reason="random numbers carry no derivative")
register_nondifferentiable(
    builtins.len, builtins.range, builtins.int, builtins.bool, builtins.isinstance, builtins.type,
    builtins.print, builtins.str, builtins.repr, builtins.round,
    builtins.hasattr, builtins.id, builtins.hash, builtins.any, builtins.all,
    math.floor, math.ceil, math.trunc, math.isnan, math.isinf, math.isfinite, math.isclose, math.factorial, math.comb, math.perm, math.gcd,
)
# generated code's check that a method srcad resolved through a class is what Python calls
register_nondifferentiable(check_method, reason="it only checks which function a method is")
register_nondifferentiable(check_property, reason="it only checks which getter a property is")
register_nondifferentiable(check_held_function, reason="it only checks which function an attribute holds")
register_nondifferentiable(check_module, reason="it only checks which module a parameter holds")
register_nondifferentiable(check_record_class, reason="it only checks which class a record is")
register_nondifferentiable(check_list_slice, reason="it only checks that a list keeps its length")
register_nondifferentiable(check_unshared_item, check_unshared_store, check_unshared_arguments,
                           reason="it only checks that an updated item is no other item's array")
register_nondifferentiable(check_recomputed, reason="it only checks a checkpointed loop's recomputed segment")
register_nondifferentiable(diagonal_positions, along_axis_positions, reason="it computes positions")
register_nondifferentiable(shuffle_order, reason="it draws an order of rows (a random draw)")
register_nondifferentiable(check_copyto, reason="it only checks that np.copyto could cast its source")
register_nondifferentiable(check_fill, reason="it only checks that a.fill(v) is the store a[...] = v")
register_nondifferentiable(check_updated_array, reason="it only checks that a helper updates an array in place")
register_nondifferentiable(check_array_receiver, reason="it only checks that a method's receiver is an array")
register_nondifferentiable(missing_name, reason="it raises: the name it stands for did not exist")
