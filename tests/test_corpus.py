"""The corpus, each function checked against finite differences through both generated
forms: the joint adjoint and the split vjp (one forward pass, the pullback called twice)."""
import numpy as np
import pytest

import corpus as c
from srcad.testing import check_grads

rng = np.random.default_rng(42)


def vec(n, low=-1.0, high=1.0):
    return rng.uniform(low, high, n)


CASES = [
    (c.ops, (vec(3), vec(3)), (0, 1)),
    (c.broadcasting, (vec((4, 3)), vec(3)), (0, 1)),
    (c.scalar_math, (0.7, 0.3), (0, 1)),
    (c.numpy_core, (vec(5),), 0),
    (c.where_select, (vec(6),), 0),
    (c.reductions, (vec((4, 3)),), 0),
    (c.products, (vec((4, 3)), vec(3)), (0, 1)),
    (c.shapes, (vec((4, 3)),), 0),
    (c.indexing, (vec((4, 3)),), 0),
    (c.methods_attrs, (vec((4, 3)),), 0),
    (c.builtin_sum, (vec(4),), 0),
    (c.keywords_defaults, (vec((3, 2)),), 0),
    (c.globals_and_helpers, (vec(4),), 0),
    (c.closure_over_array, (vec(4),), 0),
    (c.integer_bookkeeping, (vec(6),), 0),
    (c.nondiff_values, (vec(3),), 0),
    (c.tuple_output, (vec(3),), 0),
    (c.unpacking, (vec(3),), 0),
    (c.branches, (np.array([0.5, -0.2, 0.3]),), 0),
    (c.branches, (np.array([-0.5, 0.2, 0.3]),), 0),
    (c.branches, (np.array([-0.5, -0.2, 0.3]),), 0),
    (c.boolean_ops, (np.array([0.5, 0.2, 0.3]),), 0),
    (c.boolean_ops, (np.array([-0.5, 0.2, -0.3]),), 0),
    (c.while_doubling, (np.array([0.3, -0.4, 0.5]),), 0),
    (c.for_range, (vec(5),), 0),
    (c.range_bounds, (vec(7),), 0),
    (c.nested_dependent_bounds, (vec((3, 4)),), 0),
    (c.slices_in_loop, (vec((2, 3, 4)),), 0),
    (c.subscript_updates, (vec(3),), 0),
    (c.max_tracking, (vec(8),), 0),
    (c.repeated_index, (vec(3),), 0),
    (c.loop_overwrite, (vec(4),), 0),
    (c.iterate_rows, (vec((4, 3)),), 0),
    (c.enumerate_zip, (vec(4), vec(4)), (0, 1)),
    (c.break_continue, (np.array([1.0, 5.0, 1.2, 1.5, 2.0]),), 0),
    (c.return_in_loop, (np.array([0.1, 0.2, 0.7, 0.9]),), 0),
    (c.return_in_loop, (np.array([0.1, 0.2, 0.3]),), 0),
    (c.in_place, (vec(4),), 0),
    (c.fill_buffer, (vec(3),), 0),
    (c.nested_def_closure_lambda, (vec(3),), 0),
    (c.list_comprehension, (vec(4),), 0),
    (c.dict_params, ({"W": vec((3, 2)), "b": vec(2)}, vec((4, 3))), 0),
    (c.list_params, ([vec((3, 3)), vec((3, 2))], vec((2, 3))), 0),
    (c.tuple_params, ((vec(3), vec(3)),), 0),
    (c.while_break_continue, (vec(3),), 0),
    (c.dict_output, (vec(3),), 0),
    (c.list_output, (vec(3),), 0),
    (c.add_at, (vec(3),), 0),
    (c.view_then_update, (vec((3, 4)),), 0),
    (c.nested_params, ({"layers": [{"W": vec((3, 4)), "s": 2.0}, {"W": vec(4), "s": 3.0}]},), 0),
    (c.unpacks_helper_result, (vec(4),), 0),
    (c.repeated_store, (vec(3), vec(3)), (0, 1)),
    (c.aug_repeated, (vec(4),), 0),
    (c.fancy_2d, (vec((3, 3)),), 0),
    (c.bool_read_write, (vec(4),), 0),
    (c.ellipsis_newaxis, (vec((2, 3, 4)),), 0),
    (c.slice_assign_loop, (vec(3),), 0),
]


@pytest.mark.parametrize("mode", ["joint", "split"])
@pytest.mark.parametrize("fun,args,wrt", CASES, ids=[f"{f.__name__}-{i}" for i, (f, _, _) in enumerate(CASES)])
def test_matches_finite_differences(fun, args, wrt, mode):
    check_grads(fun, args, wrt=wrt, mode=mode)


def test_float32_keeps_float32():
    from srcad import grad

    x = vec(4).astype(np.float32)
    g = grad(c.float32_function)(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 2 * (1 - np.tanh(x.astype(np.float64)) ** 2), rtol=1e-5)


def test_integer_argument_is_refused_where_differentiated():
    from srcad import ArgumentError, adjoint

    with pytest.raises(ArgumentError, match="integer .* pass 3.0"):
        adjoint(c.integer_argument, wrt=0)(3, np.ones(2), np.array([1.0, 2.0]))
    with pytest.raises(ArgumentError, match="dtype int64.*astype"):
        adjoint(c.integer_argument, wrt=1)(3, np.array([1, 2]), np.array([1.0, 2.0]))
    g = adjoint(c.integer_argument, wrt=0)(3.0, np.ones(2), np.array([1.0, 2.0]))
    assert isinstance(g, float) and g == 3.0
    g = adjoint(c.integer_argument, wrt=1)(3, np.array([1.0, 2.0]), np.array([1.0, 2.0]))  # n held constant
    np.testing.assert_array_equal(g, [3.0, 6.0])
