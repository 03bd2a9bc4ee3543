"""Rule templates are instantiated hygienically: a user's name never meets a template's.

``srcad.template`` substitutes a call's operand atoms into a rule template in one pass, and a
spliced atom is never visited again; template locals get fresh names and globals the names
the compiler reserved. The sweep below holds every registered vjp and jvp rule to that: each
rule is called at a site whose operands and result are named after the rule's own parameters
(each operand after another one), locals and globals (``np``, ``unbroadcast``...), and srcad's
generated names (``dx``, ``_t1``), and checked against finite differences.

The calls come from the per-rule tables of tests/test_rules_*.py; ``EXTRA_CALLS`` covers the
rules those tables do not call directly (builtins, operators, srcad's own run-time helpers).
"""
import builtins
import collections
import itertools
import keyword
import linecache
import math

import gast
import numpy as np
import pytest
import scipy.sparse
import scipy.spatial.distance

import srcad
from srcad import optional_rules, pytrees, registry, runtime, sharing
from srcad.rules import (builtin_rules, methods, records, numpy_core, numpy_decompositions, numpy_elementwise,
                         numpy_exponential, numpy_indexing, numpy_joining, numpy_linalg, numpy_order_statistics,
                         numpy_padding, numpy_products, numpy_reductions, numpy_reordering, numpy_shapes, numpy_spectral,
                         numpy_ufunc_scans, numpy_ufunc_segments, runtime_rules, scipy_sparse, scipy_spatial)
from srcad.testing import check_grads, check_jvp

import test_library_ndimage
import test_library_numpy
import test_library_scipy
import test_rules_scipy_35
import test_rules_elementwise
import test_rules_linalg
import test_rules_products
import test_rules_reductions
import test_rules_shapes
import test_rules_special
import test_rules_ufunc_methods

RNG = np.random.default_rng(11)


def R(*shape):
    return RNG.standard_normal(shape)


_A = R(3, 3)
_SINGULAR = (_A, np.linalg.svd(_A, compute_uv=False))  # a matrix and its singular values
_RUNNING = (_A[:2, :2].repeat(2, axis=1), np.maximum.accumulate(_A[:2, :2].repeat(2, axis=1), axis=1))  # with ties
_LOG_SCAN = (_A[:2], np.logaddexp2.accumulate(_A[:2], axis=1))
_SLICED = (_RUNNING[0], np.maximum.reduceat(_RUNNING[0], [0, 2, 1], axis=1))  # with ties


# ---- regression: the operand named like the template's result (issue 9) ---------------------

def mm(x, y):
    return np.einsum('ij,jk->ik', x, y)


def inner_tensordot(x, y):
    return np.sum(np.inner(x, y) ** 2) + np.sum(np.tensordot(y, x, 1) ** 2)


def test_einsum_operand_named_like_the_rule_result():
    """``einsum(y, subscripts, *operands)``: the user's ``y`` spliced through ``*operands`` was
    substituted again, by the call's result, so dx was computed with the output for y."""
    x, y = R(3, 3), R(3, 3)
    check_grads(mm, (x, y), wrt=(0, 1), modes=("rev",))
    check_jvp(mm, (x, y), wrt=(0, 1))


def test_hvp_through_inner_and_tensordot_with_square_operands():
    x, y, u = R(3, 3), R(3, 3), R(3, 3)
    eps = 1e-5
    gradient = srcad.grad(inner_tensordot)
    numeric = (gradient(x + eps * u, y) - gradient(x - eps * u, y)) / (2 * eps)
    np.testing.assert_allclose(srcad.hvp(inner_tensordot)(x, y, u), numeric, rtol=1e-5, atol=1e-7)


# ---- the calls: every table row of the per-rule tests, and the rules they leave out ----------

def _float_arrays(args):
    return tuple(i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f")


def _positive(*shape):
    return RNG.uniform(0.5, 2.0, shape)


Record = collections.namedtuple("Record", "w")  # a named tuple whose field is read by attribute
Pair = collections.namedtuple("Pair", "w b")  # a record built from its fields (passes.records)

#: (key, args, keyword arguments, the operands that move, the expression: None for a call)
EXTRA_CALLS = [
    # list(zip(...)) is the list of its tuples (passes.functional): differentiated, with hostile names
    (builtins.zip, [R(3), R(3)], {}, (0, 1), "list({fn}({0}, {1}))"),
    (gast.Add, [R(2, 3), R(3)], {}, (0, 1), "{0} + {1}"),
    (gast.Sub, [R(2, 3), R(3)], {}, (0, 1), "{0} - {1}"),
    (gast.Mult, [R(2, 3), R(3)], {}, (0, 1), "{0} * {1}"),
    (gast.Div, [R(2, 3), _positive(3)], {}, (0, 1), "{0} / {1}"),
    (gast.Pow, [_positive(2, 3), R(3)], {}, (0, 1), "{0} ** {1}"),
    (gast.MatMult, [R(2, 3), R(3, 4)], {}, (0, 1), "{0} @ {1}"),
    (gast.USub, [R(3)], {}, (0,), "-{0}"),
    (gast.UAdd, [R(3)], {}, (0,), "+{0}"),
    (gast.Mod, [_positive(3) * 3, _positive(3)], {}, (0, 1), "{0} % {1}"),
    (builtins.sum, [[R(3), R(3)]], {}, (0,), None),
    (math.fsum, [R(3)], {}, (0,), None),
    (builtins.abs, [R(3)], {}, (0,), None),
    (builtins.float, [0.7], {}, (0,), None),
    (builtins.max, [0.3, 0.9], {}, (0, 1), None),
    (builtins.min, [0.3, 0.9], {}, (0, 1), None),
    (builtins.list, [R(3)], {}, (0,), None),
    (builtins.tuple, [R(3)], {}, (0,), None),
    (builtins.dict, [R(3)], {}, (0,), "{fn}({{'a': {0}}})['a']"),
    (builtins.reversed, [R(3)], {}, (0,), "list({fn}({0}))"),
    (np.ndarray.item, [R(3), 1], {}, (0,), None),
    (np.ndarray.tolist, [R(3)], {}, (0,), None),
    (np.asanyarray, [R(2, 3)], {}, (0,), None),
    (np.ascontiguousarray, [R(2, 3)], {}, (0,), None),
    (np.asfortranarray, [R(2, 3)], {}, (0,), None),
    (np.float64, [R(2, 3)], {}, (0,), None),
    (np.float64, [0.7], {}, (0,), None),
    (np.bincount, [np.array([0, 1, 1, 3])], {"weights": R(4)}, ("weights",), None),
    (np.full, [(2, 3), 0.7], {}, (1,), None),
    (np.full_like, [R(2, 3), 0.7], {}, (1,), None),
    (numpy_products.einsum_grad, [R(2, 4), 0, "ij,jk->ik", R(2, 3), R(3, 4)], {}, (0, 3, 4), None),
    (numpy_products.dot_grad, [R(2, 4), R(2, 3), R(3, 4), 0], {}, (0, 1, 2), None),
    (numpy_exponential.logistic_weight, [R(3), R(3)], {}, (0, 1), None),
    (np.r_.__getitem__, [(R(3), 0.5, R(2, 1).ravel())], {}, (0,), None),
    (np.c_.__getitem__, [(R(3), R(3, 2))], {}, (0,), None),
    (numpy_joining.index_concat_grad, [R(4, 3), (R(4), R(4, 2)), np.c_], {}, (0,), None),
    (numpy_joining.index_concat_tangent, [[R(2), R(3)], (R(2), R(3)), np.r_], {}, (0,), None),
    (np.linspace, [0.3, R(3)], {"num": 4, "axis": -1}, (0, 1), None),
    (numpy_shapes.linspace_grad, [R(3, 4), R(3), R(3, 4), 4, True, -1, "stop"], {}, (0,), None),
    (numpy_shapes.linspace_tangent, [R(3), R(3, 4), 4, False, 1, "start"], {}, (0,), None),
    (numpy_reordering.tile_grad, [R(4, 3), R(2, 3), (2, 1)], {}, (0,), None),
    (numpy_reordering.repeat_grad, [R(2, 6), R(2, 3), 2, 1], {}, (0,), None),
    (numpy_reordering.reorder_grad, [R(2, 3), np.array([[3.0, 1, 2], [0, 5, 4]]), np.array([[1.0, 2, 3], [0, 4, 5]]), 1],
     {}, (0,), None),
    (numpy_shapes.array_grad, [R(2, 2), [[0.5, 1.5], [2.5, 3.5]], R(2, 2)], {}, (0,), None),
    (numpy_shapes.array_tangent, [[[0.1, -0.2], [0.3, 0.4]], [[0.5, 1.5], [2.5, 3.5]], R(2, 2)], {}, (0,), None),
    (numpy_joining.unjoin, [R(3, 3), [R(2, 3), R(3)], np.atleast_2d, 0], {}, (0,), None),
    (numpy_joining.block_grad, [R(3, 3), [[R(2, 2), R(2, 1)], [R(1, 2), 0.5]]], {}, (0,), None),
    (numpy_indexing.diff_grad, [R(5), R(5), 1, -1, R(1), None, "a"], {}, (0,), None),
    (numpy_indexing.ediff1d_grad, [R(8), R(2, 3), R(2), 0.5, "ary"], {}, (0,), None),
    (numpy_indexing.ediff1d_tangent, [R(2), R(2, 3), R(2), 0.5, "to_end"], {}, (0,), None),
    (numpy_padding.pad_grad, [R(7), 2, "reflect", "even"], {}, (0,), None),
    (numpy_padding.pad_tangent, [R(5), 2, "reflect", "even"], {}, (0,), None),
    (numpy_indexing.diff_tangent, [R(5), R(5), 1, -1, R(1), None, "a"], {}, (0,), None),
    (numpy_padding.pad_grad, [R(4, 5), ((1, 1), (0, 2)), "constant", "even"], {}, (0,), None),
    (numpy_padding.pad_grad, [R(5, 6), (1, 2), "wrap", "even"], {}, (0,), None),
    (numpy_padding.weighted_pad_grad, [R(6, 5), R(3, 4), ((1, 2), (0, 1)), "median", None, "even"], {}, (0,), None),
    (numpy_padding.weighted_pad_tangent, [R(3, 4), R(3, 4), 2, "reflect", None, "odd"], {}, (0,), None),
    (numpy_indexing.sliding_window_grad, [R(3, 2), (4,), 2, None], {}, (0,), None),
    (numpy_indexing.diagonal_grad, [R(2), R(3, 3), 1, 0, 1], {}, (0,), None),
    (numpy_indexing.take_grad, [R(4), R(2, 3), [0, 5, 5, 1], None, "raise"], {}, (0,), None),
    (numpy_indexing.take_along_axis_grad, [R(3, 2), R(3, 4), np.array([[0, 2], [1, 1], [3, 0]]), 1], {}, (0,), None),
    (numpy_products.convolve_grad, [R(5), R(3), R(3), "full", 1], {}, (0, 1), None),
    (numpy_products.correlate_grad, [R(5), R(2), R(5), "same", 1], {}, (0, 1), None),
    (numpy_reductions.cumprod_grad, [R(2, 4), R(2, 4), 1], {}, (0, 1), None),
    (numpy_reductions.cumprod_tangent, [R(2, 4), R(2, 4), 1], {}, (0, 1), None),
    (numpy_reductions.cumprod_grad_along, [R(2, 4), R(2, 4), R(2, 4), 1], {}, (0, 1, 2), None),
    (numpy_linalg.matrix_power_grad, [R(3, 3), R(3, 3) * 0.5, 3], {}, (0, 1), None),
    (numpy_decompositions.svd_grad, [R(3), _SINGULAR[1], _SINGULAR[0], True, False, False], {}, (0,), None),
    (numpy_products.kron_grad, [R(6), R(3), R(2), 0], {}, (0, 2), None),
    (scipy_spatial.pair_matrix, [R(3), 3], {}, (0,), None),
    (scipy.spatial.distance.squareform, [R(3)], {}, (0,), None),
    (scipy_spatial.squareform_transpose, [R(3, 3), 1], {}, (0,), None),
    (scipy_sparse.sparse_left_product, [scipy.sparse.csr_array(R(3, 4)), R(4, 2)], {}, (1,), None),
    (scipy_sparse.sparse_right_product, [R(3), scipy.sparse.csc_matrix(R(3, 4))], {}, (0,), None),
    (scipy_sparse.sparse_solve, [scipy.sparse.csc_array(R(3, 3) + 4 * np.eye(3)), R(3, 2)], {}, (1,), None),
    (numpy_products.cross_grad, [R(4, 3), R(4, 3), R(3), -1, -1, -1, None, 1], {}, (0, 1), None),
    (numpy_joining.split_grad, [[R(2), R(0), R(3)], R(4), [2, 1], 0], {}, (0,), None),
    (runtime.as_real, [R(3)], {}, (0,), None),
    (runtime.copy_value, [R(3)], {}, (0,), None),
    (sharing.copy_for_calls, [[R(3), R(2)], "here: "], {}, (0,), "{fn}({0}, {1})[1]"),
    (runtime.copy_grad, [R(3)], {}, (0,), None),
    (runtime.grad_buffer, [R(3)], {}, (0,), None),
    (runtime.container_grad, [R(2, 3), [R(3), R(3)]], {}, (0,), None),
    (runtime.stacked_grad, [[R(3), R(3)], R(2, 3)], {}, (0,), None),
    (runtime.cotangent, [R(3), R(3)], {}, (0,), None),
    (runtime.cotangent_items, [R(3), R(3)], {}, (0,), None),
    (runtime.cotangent_like, [R(2, 3), (2, 3), "float64"], {}, (0,), None),
    (runtime.finish, [R(3), R(3), True], {}, (0,), None),
    (runtime.stored_adjoint, [R(4), (np.array([0, 2, 2]),), R(3)], {}, (0,), None),
    (runtime.finish_tangent, [R(3), R(3), True], {}, (0,), None),
    (runtime.add_grads, [R(3), R(3)], {}, (0, 1), None),
    (runtime.tangent_or_zero, [R(3), R(3), R(3)], {}, (0,), None),
    (runtime.rule_tangent, [R(3), R(3), "rule"], {}, (0,), None),
    (runtime.unbroadcast, [R(2, 3), R(3)], {}, (0,), None),
    (runtime.rule_adjoint, [R(2, 3), R(3), "rule", ((2, 3),), ()], {}, (0,), None),
    (runtime.into_dtype_of, [R(3), R(3)], {}, (0,), None),
    (runtime.into_dtype_of, [R(3), np.arange(3)], {}, (0,), None),
    (runtime.in_place_result, [R(3), R(3)], {}, (0,), None),
    (runtime.in_place_result, [R(3), R(3).astype(np.float32)], {}, (0,), None),
    (runtime.in_place_cast, [R(3), R(3).astype(np.float32)], {}, (0,), None),
    (runtime.sum_to_reduced, [R(3), R(2, 3), 0, False], {}, (0,), None),
    (runtime.expand_reduced, [R(3), R(2, 3), 0, False], {}, (0,), None),
    (runtime.extremum_grad, [R(3), np.array([[1.0, 2, 3], [0, 5, 3]]), np.array([1.0, 5, 3]), 0, False], {},
     (0,), None),
    (runtime.prod_grad, [R(3), R(2, 3), 0, False], {}, (0, 1), None),
    (runtime_rules.prod_hvp, [R(2, 3), R(2, 3), 0], {}, (0, 1), None),
    (runtime.matmul_dx, [R(2, 4), R(2, 3), R(3, 4)], {}, (0, 1, 2), None),
    (runtime.matmul_dy, [R(2, 4), R(2, 3), R(3, 4)], {}, (0, 1, 2), None),
    (runtime.unstack, [R(2, 3)], {}, (0,), None),
    (runtime.sum_grad, [R(3), R(2, 3)], {}, (0,), None),
    (runtime.full_of, [(2, 3), 0.7], {}, (1,), None),
    (runtime.transpose_back, [R(3, 2), (1, 0)], {}, (0,), None),
    (runtime.concat_grad, [R(5), [R(2), R(3)], 0], {}, (0,), None),
    (runtime.trace_grad, [0.7, R(3, 3)], {}, (0,), None),
    (runtime.scatter_add, [R(4), [0, 1, 1], R(3)], {}, (0, 2), "{fn}({0}, {1}, {2})"),
    (builtin_rules.pick_grad, [0.7, [0.2, 0.9], 0.9], {}, (0,), None),
    (builtin_rules.list_grad, [[0.5, 0.7], R(2)], {}, (0,), None),
    (builtin_rules.reversed_grad, [R(3), R(3)], {}, (0,), None),
    (builtin_rules.dict_grad, [{"a": R(3)}, {"a": R(3)}], {}, (0,), None),
    *([(np.matrix_transpose, [R(2, 3, 4)], {}, (0,), None)] if hasattr(np, "matrix_transpose") else []),
    (methods.cast_like, [R(3), R(3), R(3)], {}, (0,), None),
    (records.field, [Record(R(3)), "w"], {}, (0,), None),
    (pytrees.field_grad, [R(3), Record(R(3)), "w"], {}, (0,), None),
    (pytrees.field_tangent, [[R(3)], Record(R(3)), "w"], {}, (0,), None),
    (records.new_record, [Pair, (R(3), R(2))], {}, (1,), None),
    (numpy_order_statistics.quantile_grad, [R(2, 3), R(4, 3), [0.2, 0.7], 0, "linear", False, 1.0, False], {}, (0,), None),
    (numpy_order_statistics.quantile_tangent, [R(4, 3), R(4, 3), [0.2, 0.7], 0, "hazen", True, 1.0, True], {}, (0,), None),
    (records.record_grad, [[R(3), R(2)], Pair(R(3), R(2))], {}, (0,), None),
    (numpy_ufunc_scans.running_extremum_grad, [R(2, 4), _RUNNING[0], _RUNNING[1], 1], {}, (0,), None),
    (numpy_ufunc_scans.running_extremum_tangent, [R(2, 4), _RUNNING[0], _RUNNING[1], 1], {}, (0,), None),
    (numpy_ufunc_scans.log_scan_grad, [R(2, 3), _LOG_SCAN[0], _LOG_SCAN[1], 1, numpy_ufunc_scans.LN2], {},
     (0, 1, 2), None),
    (numpy_ufunc_scans.log_scan_tangent, [R(2, 3), _LOG_SCAN[0], _LOG_SCAN[1], -1, 1.0], {}, (0, 1, 2), None),
    (numpy_ufunc_segments.segment_sum_grad, [R(2, 3), R(2, 4), [0, 2, 1], 1], {}, (0,), None),
    (numpy_ufunc_segments.segment_extremum_grad, [R(2, 3), _SLICED[0], _SLICED[1], [0, 2, 1], 1], {}, (0,), None),
    (numpy_ufunc_segments.segment_extremum_tangent, [R(2, 4), _SLICED[0], _SLICED[1], [0, 2, 1], -1], {}, (0,), None),
    (records.record_tangent, [[R(3), R(2)], Pair(R(3), R(2))], {}, (0,), None),
]


#: srcad differentiates real values only (np.real/np.imag of a complex value are refused), so
#: finite differences cannot check ``complex``; its vjp template is float's, swept above. The
#: helpers of complex intermediates (second order through an FFT) take complex values only:
#: tests/test_second_order_library_23.py checks them through the functions that call them
NOT_SWEPT = {builtins.complex, numpy_core.unit_phase, numpy_elementwise.imag_cotangent}


#: calls srcad refuses (srcad/rules/refusals.py): the refusal, too, must survive hostile names
REFUSED_CALLS = [
    (np.logspace, [0.3, 1.2], {"num": 4, "base": 2.0}, (0, 1), None),
    (np.geomspace, [0.3, 1.2], {"num": 4}, (1,), None),
    (np.arange, [0.3, 2.0, 0.5], {}, (0,), None),
    (np.histogram, [R(5)], {"bins": 3, "weights": R(5)}, ("weights",), None),
    (np.unique, [R(4)], {}, (0,), None),
    (np.heaviside, [np.array([0.0, 1.0]), R(2)], {}, (1,), None),
    (builtins.sorted, [R(3)], {}, (0,), None),
    (builtins.divmod, [1.7, 0.3], {}, (0,), None),
    (builtins.set, [R(3)], {}, (0,), "sum({fn}({0}))"),
    (builtins.frozenset, [R(3)], {}, (0,), "sum({fn}({0}))"),
    (builtins.enumerate, [R(3)], {}, (0,), "list({fn}({0}))"),
    (np.random.normal, [0.3, 1.2], {}, (0, 1), None),
    (np.random.uniform, [0.3, 1.2], {}, (0, 1), None),
    (builtins.slice, [0.3, 1.2, 0.5], {}, (0,), None),
    (numpy_spectral.eigvals_grad, [R(3), _A, np.linalg.eigvals(_A)], {}, (0,), None),  # second order of eigvals
    (numpy_spectral.eigvals_tangent, [R(3, 3), _A, np.linalg.eigvals(_A)], {}, (0,), "abs({fn}({0}, {1}, {2}))"),
]


def table_calls():
    """(key, args, keyword arguments, the operands that move, expression) from the rule tables."""
    rng = np.random.default_rng(7)
    reductions = test_rules_reductions
    calls = [(*row, None) for row in test_rules_elementwise.rule_calls()]
    calls += [(*row, None) for row in test_rules_shapes.JVP_CASES]
    calls += [(f, a, k, _float_arrays(a), None) for f, a, k in test_rules_products.JVP_CASES]
    calls += [(f, a, k, _float_arrays(a), None) for _, f, a, k in test_rules_linalg.JVP_CASES]
    calls += [(f, a, k, tuple(range(len(a))) + tuple(n for n, v in k.items() if isinstance(v, np.ndarray)), None)
              for _, f, a, k in test_rules_special.JVP_CASES]
    calls += [(key, [reductions.sample(rng, dom, (2, 3))], kw, (0,), None) for key, kw, _, dom in reductions.WHOLE]
    calls += [(key, [reductions.sample(rng, dom, shape)], kw, (0,), None)
              for key, kw, _, shape, dom in reductions.AXES]
    calls += [(key, [test_rules_ufunc_methods.sample(rng, dom, shape)], kw, (0,), None)
              for key, kw, _, shape, dom in test_rules_ufunc_methods.ROWS]
    calls += test_library_numpy.HYGIENE_CALLS + test_library_scipy.HYGIENE_CALLS + test_library_ndimage.HYGIENE_CALLS
    calls += test_rules_scipy_35.HYGIENE_CALLS
    return calls + EXTRA_CALLS + REFUSED_CALLS + test_rules_scipy_35.REFUSED_CALLS


def first_call_per_key():
    seen, out = set(), []
    for call in table_calls():
        if id(call[0]) not in seen:
            seen.add(id(call[0]))
            out.append(call)
    return out


CALLS = first_call_per_key()


def _own_rule(key):
    rule = registry.VJP.get(key) or registry.JVP.get(key)
    # (not a doctest's rule: srcad's docstrings register examples under their module's name)
    return rule is not None and rule.fn.__module__.startswith("srcad.") and \
        not rule.fn.__code__.co_filename.startswith("<doctest")


def test_every_registered_rule_is_swept():
    """Every template srcad registers is instantiated by the sweep (aliases such as ``float`` and
    ``complex`` share one template; hygiene is a property of the template)."""
    optional_rules.load_optional_rules()
    swept = {id(table[call[0]].fn) for call in CALLS for table in (registry.VJP, registry.JVP) if call[0] in table}
    missing = [registry.describe(key) for table in (registry.VJP, registry.JVP) for key in table
               if _own_rule(key) and id(table[key].fn) not in swept and key not in NOT_SWEPT]
    assert not missing, f"rules without a call in the hygiene sweep: {sorted(set(missing))}"


# ---- hostile names --------------------------------------------------------------------------

#: names srcad generates itself (docs/generated-code.md), hostile as user names too
GENERATED = ["dx", "x_dot", "_t1", "_x_stack", "d", "t", "np"]


def hostile_names(key):
    """The rule templates' own names: result and parameters first (so that operand i is named
    after the template's parameter i - 1), then locals, globals and srcad's generated names."""
    names = []
    for table in (registry.VJP, registry.JVP):
        rule = table.get(key)
        if rule is not None:
            names += [rule.result] + [p.name for p in rule.params] + list(rule.locals) + sorted(rule.globals)
    names += GENERATED
    return [n for n in dict.fromkeys(names) if n.isidentifier() and not keyword.iskeyword(n)]


_PROGRAMS = itertools.count()


def program(key, args, kwargs, wrt, expression, names):
    """``result = key(*args, **kwargs)`` written with hostile names: the moving operands are the
    function's parameters, the other non-literal operands module globals, all named from
    ``names`` in order, and the result takes the next free name."""
    pool = iter(names)
    namespace = {"function_under_test": key}
    params, values = [], []

    def operand(position, value):
        if position not in wrt and test_rules_shapes._is_literal(value):
            return repr(value)
        name = next(pool)
        if position in wrt:
            params.append(name)
            values.append(value)
        else:
            namespace[name] = value
        return name

    atoms = [operand(i, a) for i, a in enumerate(args)]
    keywords = [f"{k}={operand(k, v)}" for k, v in kwargs.items()]
    result = next(pool)
    if expression is None:
        expression = "{fn}(" + ", ".join(["{%d}" % i for i in range(len(atoms))] + keywords) + ")"
    body = f"    {result} = {expression.format(*atoms, fn='function_under_test')}\n"
    if key is runtime.scatter_add:  # an in-place helper: the result is its buffer, a copy of the input
        body = f"    {atoms[0]} = {atoms[0]} * 1.0\n    {body.strip()}\n    {result} = {atoms[0]}\n"
    text = f"def swept({', '.join(params)}):\n{body}    return {result}\n"
    filename = f"<hygiene sweep {next(_PROGRAMS)} of {registry.describe(key)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    exec(compile(text, filename, "exec"), namespace)
    return namespace["swept"], values, text


def _tolerances(args, kwargs):
    low = any(getattr(v, "dtype", None) == np.float32 or v is np.float32 for v in list(args) + list(kwargs.values()))
    return dict(eps=1e-3, rtol=1e-3, atol=1e-5) if low else dict(rtol=1e-4, atol=1e-6)


def _label(call):
    return registry.describe(call[0]).replace("numpy.", "np.").replace("srcad.", "")


@pytest.mark.parametrize("order", ["params-first", "globals-first"])
@pytest.mark.parametrize("call", CALLS, ids=[_label(c) for c in CALLS])
def test_rule_at_a_site_named_like_its_template(call, order):
    key, args, kwargs, wrt, expression = call
    names = hostile_names(key)
    if order == "globals-first":
        names = names[::-1]
    fun, values, text = program(key, args, kwargs, wrt, expression, names)
    positions = tuple(range(len(values))) if len(values) > 1 else 0
    tolerances = _tolerances(args, kwargs)
    if any(c[0] is key for c in REFUSED_CALLS + test_rules_scipy_35.REFUSED_CALLS):
        for check in (check_grads, check_jvp):
            with pytest.raises(srcad.SrcadSyntaxError, match="srcad does not differentiate"):
                check(fun, values, wrt=positions, directions=1)
        return
    if registry.VJP.get(key) is not None:
        check_grads(fun, values, wrt=positions, directions=1, mode="joint", **tolerances)
    if registry.JVP.get(key) is not None:
        check_jvp(fun, values, wrt=positions, directions=1, **tolerances)
