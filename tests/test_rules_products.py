"""Product rules (srcad/rules/numpy_products.py, and matmul) against finite differences."""
import warnings

import numpy as np
import pytest

import srcad
from srcad import registry
from srcad.testing import check_grads, check_jvp
from test_rules_shapes import check_call_jvp, wrt_all

RNG = np.random.default_rng(2)


def R(*shape):
    return RNG.standard_normal(shape)


def f_dot(a, b):
    return np.dot(a, b)


def f_method_dot(a, b):
    return a.dot(b)


def f_matmul(a, b):
    return a @ b


def f_np_matmul(a, b):
    return np.matmul(a, b)


def f_inner(a, b):
    return np.inner(a, b)


def f_outer(a, b):
    return np.outer(a, b)


def f_tensordot(a, b):
    return np.tensordot(a, b)


def f_tensordot_1(a, b):
    return np.tensordot(a, b, 1)


def f_tensordot_pairs(a, b):
    return np.tensordot(a, b, axes=([0, 2], [2, -3]))


def f_tensordot_pair_ints(a, b):
    return np.tensordot(a, b, axes=(1, 0))


def f_tensordot_0(a, b):
    return np.tensordot(a, b, 0)


def f_einsum_matmul(a, b):
    return np.einsum("ij,jk->ik", a, b)


def f_einsum_implicit(a, b):
    return np.einsum("ij,kj", a, b)


def f_einsum_implicit_mixed_case(a, b):
    return np.einsum("Cb,bA", a, b)


def f_einsum_trace(a):
    return np.einsum("ii->", a)


def f_einsum_trace_implicit(a):
    return np.einsum("ii", a)


def f_einsum_diagonal(a):
    return np.einsum("ii->i", a) * 2.0


def f_einsum_batched_diagonal(a):
    return np.einsum("bii->bi", a)


def f_einsum_ellipsis(a, b):
    return np.einsum("...ij,...jk->...ik", a, b)


def f_einsum_ellipsis_broadcast(a, b):
    return np.einsum("...i,...i->...", a, b)


def f_einsum_ellipsis_implicit(a, b):
    return np.einsum("...j,jk", a, b)


def f_einsum_three(a, b, c):
    return np.einsum("ij,jk,kl->il", a, b, c)


def f_einsum_four_sum(a, b, c, d):
    return np.einsum("i,ij,jk,k->", a, b, c, d)


def f_einsum_outer_sum(a, b):
    return np.einsum("ij,k->k", a, b)


def f_einsum_same_operand(a):
    return np.einsum("i,i->", a, a)


def f_einsum_size_one(a, b):
    return np.einsum("ij,ij->ij", a, b)


def f_einsum_sublists(a, b):
    return np.einsum(a, [0, 1], b, [1, 2], [0, 2])


def f_einsum_sublists_ellipsis(a, b):
    return np.einsum(a, [Ellipsis, 1], b, [1])


def f_einsum_optimize(a, b, c):
    return np.einsum("ab,bc,cd", a, b, c, optimize=True)


def f_kron(a, b):
    return np.kron(a, b)


def f_cross(a, b):
    return np.cross(a, b)


def f_cross_axes(a, b):
    return np.cross(a, b, axisa=0, axisb=-1, axisc=0)


def f_cross_axis(a, b):
    return np.cross(a, b, axis=0)


def f_vdot(a, b):
    return np.vdot(a, b)


def f_convolve(a, b):
    return np.convolve(a, b)


def f_convolve_same(a, b):
    return np.convolve(a, b, mode="same")


def f_convolve_valid(a, b):
    return np.convolve(a, b, "valid")


def f_correlate(a, b):
    return np.correlate(a, b)


def f_correlate_same(a, b):
    return np.correlate(a, b, mode="same")


def f_correlate_full(a, b):
    return np.correlate(a, b, "full")


VJP_CASES = [
    ("dot-vectors", f_dot, [R(3), R(3)]),
    ("dot-matrix-vector", f_dot, [R(2, 3), R(3)]),
    ("dot-vector-matrix", f_dot, [R(3), R(3, 2)]),
    ("dot-matrices", f_dot, [R(2, 3), R(3, 4)]),
    ("dot-scalar", f_dot, [1.5, R(2, 3)]),
    ("dot-3d-2d", f_dot, [R(2, 3, 4), R(4, 2)]),
    ("dot-2d-3d", f_dot, [R(2, 3), R(2, 3, 4)]),
    ("dot-3d-vector", f_dot, [R(2, 3, 4), R(4)]),
    ("ndarray.dot", f_method_dot, [R(2, 3), R(3, 2)]),
    ("matmul", f_matmul, [R(2, 3), R(3, 4)]),
    ("matmul-vector-matrix", f_matmul, [R(3), R(3, 4)]),
    ("matmul-matrix-vector", f_matmul, [R(2, 3), R(3)]),
    ("matmul-batched", f_matmul, [R(2, 3, 4), R(2, 4, 2)]),
    ("matmul-broadcast", f_np_matmul, [R(2, 1, 3, 4), R(3, 4, 2)]),
    ("matmul-batched-vector", f_np_matmul, [R(4), R(2, 4, 3)]),
    ("inner", f_inner, [R(3), R(3)]),
    ("inner-nd", f_inner, [R(2, 3), R(4, 3)]),
    ("inner-scalar", f_inner, [0.5, R(2, 3)]),
    ("outer", f_outer, [R(3), R(4)]),
    ("outer-flattens", f_outer, [R(2, 2), R(3)]),
    ("tensordot", f_tensordot, [R(2, 3, 4), R(3, 4, 2)]),
    ("tensordot-1", f_tensordot_1, [R(2, 3), R(3, 4)]),
    ("tensordot-pairs", f_tensordot_pairs, [R(2, 3, 4), R(4, 5, 2)]),
    ("tensordot-pair-of-ints", f_tensordot_pair_ints, [R(2, 3), R(3, 2)]),
    ("tensordot-0", f_tensordot_0, [R(2), R(3)]),
    ("einsum-matmul", f_einsum_matmul, [R(2, 3), R(3, 4)]),
    ("einsum-implicit", f_einsum_implicit, [R(2, 3), R(4, 3)]),
    ("einsum-implicit-mixed-case", f_einsum_implicit_mixed_case, [R(2, 3), R(3, 4)]),
    ("einsum-trace", f_einsum_trace, [R(3, 3)]),
    ("einsum-trace-implicit", f_einsum_trace_implicit, [R(3, 3)]),
    ("einsum-diagonal", f_einsum_diagonal, [R(3, 3)]),
    ("einsum-batched-diagonal", f_einsum_batched_diagonal, [R(2, 3, 3)]),
    ("einsum-ellipsis", f_einsum_ellipsis, [R(2, 2, 3), R(3, 4)]),
    ("einsum-ellipsis-broadcast", f_einsum_ellipsis_broadcast, [R(1, 4), R(3, 4)]),
    ("einsum-ellipsis-implicit", f_einsum_ellipsis_implicit, [R(2, 3), R(3, 2)]),
    ("einsum-three", f_einsum_three, [R(2, 3), R(3, 4), R(4, 2)]),
    ("einsum-four-to-scalar", f_einsum_four_sum, [R(2), R(2, 3), R(3, 2), R(2)]),
    ("einsum-summed-away", f_einsum_outer_sum, [R(2, 3), R(4)]),
    ("einsum-same-operand-twice", f_einsum_same_operand, [R(4)]),
    ("einsum-size-one-broadcast", f_einsum_size_one, [R(1, 4), R(3, 4)]),
    ("einsum-sublists", f_einsum_sublists, [R(2, 3), R(3, 4)]),
    ("einsum-sublists-ellipsis", f_einsum_sublists_ellipsis, [R(2, 3), R(3)]),
    ("einsum-optimize", f_einsum_optimize, [R(2, 3), R(3, 4), R(4, 2)]),
    ("kron", f_kron, [R(2, 3), R(3, 2)]),
    ("kron-vectors", f_kron, [R(2), R(3)]),
    ("kron-mixed-ndim", f_kron, [R(3), R(2, 2)]),
    ("cross", f_cross, [R(3), R(3)]),
    ("cross-broadcast", f_cross, [R(4, 3), R(3)]),
    ("cross-axes", f_cross_axes, [R(3, 2), R(2, 3)]),
    ("cross-axis", f_cross_axis, [R(3, 2), R(3, 2)]),
    ("vdot", f_vdot, [R(2, 3), R(6)]),
    ("convolve", f_convolve, [R(5), R(3)]),
    ("convolve-short-first", f_convolve, [R(2), R(4)]),
    ("convolve-same", f_convolve_same, [R(5), R(4)]),
    ("convolve-same-short-first", f_convolve_same, [R(3), R(6)]),
    ("convolve-valid", f_convolve_valid, [R(6), R(3)]),
    ("convolve-valid-short-first", f_convolve_valid, [R(2), R(5)]),
    ("correlate", f_correlate, [R(6), R(3)]),
    ("correlate-short-first", f_correlate, [R(2), R(5)]),
    ("correlate-same", f_correlate_same, [R(5), R(4)]),
    ("correlate-same-short-even-first", f_correlate_same, [R(4), R(7)]),
    ("correlate-same-short-odd-first", f_correlate_same, [R(3), R(6)]),
    ("correlate-full", f_correlate_full, [R(5), R(3)]),
    ("correlate-full-short-first", f_correlate_full, [R(2), R(4)]),
]


@pytest.mark.parametrize("name, fun, args", VJP_CASES, ids=[c[0] for c in VJP_CASES])
def test_vjp(name, fun, args):
    check_grads(fun, args, wrt=wrt_all(args))


@pytest.mark.parametrize("name, fun, args", VJP_CASES, ids=[c[0] for c in VJP_CASES])
def test_forward_mode(name, fun, args):
    check_jvp(fun, args, wrt_all(args))


def test_cross_of_2_vectors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # NumPy 2.0-2.4 deprecate 2-vectors
        for args in ([R(4, 2), R(2)], [R(2), R(3)]):
            try:
                f_cross(*args)
            except ValueError:  # NumPy 2.5 refuses them: so does the differentiated code
                with pytest.raises(ValueError):
                    srcad.grad(lambda a, b: f_cross(a, b).sum())(*args)
                continue
            check_grads(f_cross, args, wrt=(0, 1))


def test_einsum_adjoint_of_only_the_second_operand():
    a, b = R(2, 3), R(3, 4)

    def f(b):
        return np.einsum("ij,jk->ik", a, b)

    check_grads(f, [b], wrt=0)


def f32_products(a, b):
    return np.einsum("ij,jk", a, b) + np.dot(a, b) + np.kron(a[:, :1], b[:1])


def test_float32_gradients_stay_float32():
    a, b = R(2, 3).astype(np.float32), R(3, 2).astype(np.float32)
    grads = check_grads(f32_products, [a, b], wrt=(0, 1), eps=1e-3, rtol=2e-3, atol=1e-4)
    assert all(g.dtype == np.float32 for g in grads)


JVP_CASES = [
    (np.dot, [R(2, 3, 4), R(4, 2)], {}),
    (np.dot, [R(3), R(3)], {}),
    (np.matmul, [R(2, 1, 3, 4), R(3, 4, 2)], {}),
    (np.inner, [R(2, 3), R(4, 3)], {}),
    (np.outer, [R(2, 2), R(3)], {}),
    (np.tensordot, [R(2, 3, 4), R(4, 5, 2)], {"axes": ([0, 2], [2, 0])}),
    (np.tensordot, [R(2, 3), R(3, 4)], {"axes": 1}),
    (np.einsum, ["ij,jk,kl->il", R(2, 3), R(3, 4), R(4, 2)], {}),
    (np.einsum, ["ii", R(3, 3)], {}),
    (np.einsum, ["...i,...i", R(1, 4), R(3, 4)], {}),
    (np.einsum, [R(2, 3), [0, 1], R(3, 4), [1, 2], [0, 2]], {}),
    (np.kron, [R(3), R(2, 2)], {}),
    (np.cross, [R(4, 3), R(3)], {}),
    (np.cross, [R(3, 2), R(3, 2)], {"axis": 0}),
    (np.vdot, [R(2, 3), R(6)], {}),
    (np.convolve, [R(5), R(3)], {}),
    (np.convolve, [R(3), R(5)], {"mode": "same"}),
    (np.convolve, [R(6), R(2)], {"mode": "valid"}),
    (np.correlate, [R(6), R(2)], {}),
    (np.correlate, [R(4), R(7)], {"mode": "same"}),
    (np.correlate, [R(3), R(5)], {"mode": "full"}),
]


def _jvp_id(case):
    function, args, kwargs = case
    return registry.describe(function).replace("numpy.", "") + "".join(f"-{k}" for k in kwargs)


@pytest.mark.parametrize("function, args, kwargs", JVP_CASES, ids=[_jvp_id(c) for c in JVP_CASES])
def test_jvp(function, args, kwargs):
    wrt = tuple(i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f")
    check_call_jvp(function, args, wrt, kwargs)


# ---- second order: the generated adjoints call dot_grad and einsum_grad ---------------------

M23, M33 = R(3, 2), R(3, 3)

def h_dot_nd(a):
    return np.sum(np.sin(np.dot(a, M23)))


def h_dot_2d(a):
    return np.sum(np.dot(a, a.T) ** 2)


def h_einsum(a):
    return np.einsum("ij,jk,ki->", a, a, M33)


def h_einsum_sublists(a):
    return np.sum(np.einsum(a, [0, 1], a, [1, 2]) ** 2)


def h_correlate_same(a):  # a short even first operand: NumPy centres 'same' unlike np.convolve
    return np.sum(np.correlate(a[0, :2], a[1] ** 2, "same") ** 2)


def h_correlate_valid(a):
    return np.sum(np.sin(np.correlate(a[0], a[1, :2] * a[0, 1:3])))


@pytest.mark.parametrize("fun, shape", [(h_dot_nd, (2, 2, 3)), (h_dot_2d, (2, 3)), (h_einsum, (3, 3)),
                                        (h_einsum_sublists, (3, 3)), (h_correlate_same, (2, 5)),
                                        (h_correlate_valid, (2, 5))],
                         ids=["dot-nd", "dot-2d", "einsum", "einsum-sublists", "correlate-same", "correlate-valid"])
def test_second_order(fun, shape):
    # forward over reverse, as srcad.hessian does: Hessian-vector products against differences of the gradient
    check_jvp(srcad.grad(fun), [R(*shape)], eps=1e-5, rtol=1e-5, atol=1e-6)
