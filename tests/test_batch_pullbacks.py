"""Batched pullbacks (srcad.batching, srcad/passes/batch.py): ``pullback.batched(V)`` equals
the stack of single pullbacks, batched or not; ``jacobian(mode="rev")`` equals forward mode
and central finite differences; programs off the allowlist fall back and stay right."""
import numpy as np
import pytest

import srcad
from srcad.batching import batched_backward
from test_corpus import CASES as CORPUS

rng = np.random.default_rng(7)
A = rng.standard_normal((4, 4))
B42 = rng.standard_normal((4, 2))


def vec(*shape):
    return rng.uniform(-1.0, 1.0, shape)


# ---- vector-valued programs ----------------------------------------------------------


def tanh_layer(x):
    return np.tanh(A @ x) * x


def broadcast_rows(x, b):
    return x * b - b / (x ** 2 + 2.0)  # x (4, 3) against b (3,): b's adjoint sums rows


def broadcast_up(x, M):
    return np.sin(x) + M * x  # x (3,) against M (2, 3)


def scalar_times_array(s, x):
    return s * x + s ** 2


def matmul_forms(x, W):
    return W @ x + x @ W.T + (x @ x) * x  # x (4,), W (4, 4)


def matrix_products(X, Y):
    return X @ Y - 2.0 * X.T @ X  # X, Y (3, 3)


def reductions(X):
    return np.sum(X, axis=0) * X.sum(axis=1)[0] + np.sum(X * X, axis=-1, keepdims=True)[1] + np.mean(X, axis=0)


def reduce_all(X):
    return np.sum(np.sin(X)) * X[0]


def reshapes(X):
    return np.reshape(X, (-1,)) * 2.0 + X.T.reshape(12)


def transposes(X):
    return np.transpose(np.tanh(X), (1, 0)) @ B42


def index_reads(x):
    return x[1:] * x[:-1] + x[0]


def index_new_axis(x):
    return np.sum(x[None, :] * A, axis=1)


def relu(x):
    return np.where(x > 0.0, x, 0.0) * 3.0


def loop_recurrence(x):
    h = x
    for _ in range(3):
        h = np.tanh(A @ h) + h
    return h


def loop_over_items(x):
    out = np.zeros(4)
    for i in range(4):
        out[i] = x[i] * x[(i + 1) % 4]
    return out


def branchy(x):
    if x[0] > 0:
        return np.exp(x) * 2.0
    return x ** 3


def two_outputs_of_two_args(x, y):
    return np.exp(x) * y + np.sin(y)


def float_argument(s, x):
    return np.cos(s * x)


def scaled_matrix(s, X):  # s's adjoint: np.vdot of two 2-d arrays, one of them batched
    return np.sum(np.tanh(s * X), axis=0)


VECTOR_PROGRAMS = [
    (tanh_layer, (vec(4),), 0),
    (broadcast_rows, (vec(4, 3), vec(3)), (0, 1)),
    (broadcast_up, (vec(3), vec(2, 3)), (0, 1)),
    (scalar_times_array, (0.7, vec(3)), (0, 1)),
    (matmul_forms, (vec(4), vec(4, 4)), (0, 1)),
    (matrix_products, (vec(3, 3), vec(3, 3)), (0, 1)),
    (reductions, (vec(3, 4),), 0),
    (reduce_all, (vec(3, 4),), 0),
    (reshapes, (vec(3, 4),), 0),
    (transposes, (vec(4, 3),), 0),
    (index_reads, (vec(5),), 0),
    (index_new_axis, (vec(4),), 0),
    (relu, (np.array([0.5, -0.3, 0.2, -0.9]),), 0),
    (loop_recurrence, (vec(4),), 0),
    (loop_over_items, (vec(4),), 0),
    (branchy, (np.array([0.3, 0.2, -0.1]),), 0),
    (branchy, (np.array([-0.3, 0.2, -0.1]),), 0),
    (two_outputs_of_two_args, (vec(3), vec(3)), (0, 1)),
    (float_argument, (0.4, vec(3)), (0, 1)),
    (scaled_matrix, (0.6, vec(3, 4)), (0, 1)),
]
ids = [f"{f.__name__}-{i}" for i, (f, _, _) in enumerate(VECTOR_PROGRAMS)]


def batches(fun, args, wrt):
    """Does the backward function of ``fun`` at ``args`` batch (else: rows one at a time)?"""
    d = srcad.differentiable(fun, wrt=wrt)
    d.vjp(*args)
    return batched_backward(d._functions(args)) is not None


def stacked(pullback, V, y):
    """The single pullbacks of every row of V, stacked leaf by leaf."""
    rows = [pullback(srcad.pytrees.rebuild(V, [None if p is None else p[i] for p in srcad.pytrees.leaves(V)])
                     if srcad.pytrees.is_node(y) else V[i]) for i in range(len(srcad.pytrees.leaves(V)[0]))]
    return srcad.pytrees.rebuild(rows[0], [np.stack([srcad.pytrees.leaves(r)[k] for r in rows])
                                          for k in range(len(srcad.pytrees.leaves(rows[0])))])


def batch_of_cotangents(y, size=3):
    if srcad.pytrees.is_node(y):
        return srcad.pytrees.rebuild(y, [rng.standard_normal((size,) + np.shape(leaf))
                                         for leaf in srcad.pytrees.leaves(y)])
    return rng.standard_normal((size,) + np.shape(y))


def assert_same(got, expected):
    got_leaves, expected_leaves = srcad.pytrees.leaves(got), srcad.pytrees.leaves(expected)
    assert len(got_leaves) == len(expected_leaves)
    for g, e in zip(got_leaves, expected_leaves):
        assert np.shape(g) == np.shape(e)
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


def numeric_jacobian(fun, args, position, eps=1e-6):
    x = np.asarray(args[position], dtype=float)
    columns = []
    for k in range(x.size):
        step = np.zeros(x.size)
        step[k] = eps
        step = step.reshape(x.shape)
        plus = list(args)
        minus = list(args)
        plus[position] = x + step if x.ndim else float(x + step)
        minus[position] = x - step if x.ndim else float(x - step)
        columns.append((np.asarray(fun(*plus)) - np.asarray(fun(*minus))) / (2 * eps))
    y_shape = np.shape(fun(*args))
    return np.stack(columns, axis=-1).reshape(y_shape + x.shape)


# ---- pullback.batched equals the stack of single pullbacks ----------------------------


@pytest.mark.parametrize("fun,args,wrt", VECTOR_PROGRAMS, ids=ids)
def test_batched_pullback_equals_stacked_pullbacks(fun, args, wrt):
    y, pullback = srcad.vjp(fun, *args, wrt=wrt)
    V = batch_of_cotangents(y)
    kept = V.copy()
    got = pullback.batched(V)
    assert_same(got, stacked(pullback, V, y))
    np.testing.assert_array_equal(V, kept)  # the caller's cotangents are never written
    for g in srcad.pytrees.leaves(got):
        assert not np.shares_memory(g, V)


@pytest.mark.parametrize("fun,args,wrt", CORPUS, ids=[f"{f.__name__}-{i}" for i, (f, _, _) in enumerate(CORPUS)])
def test_corpus_batched_pullback_equals_stacked_pullbacks(fun, args, wrt):
    y, pullback = srcad.vjp(fun, *args, wrt=wrt)
    V = batch_of_cotangents(y)
    assert_same(pullback.batched(V), stacked(pullback, V, y))
    assert_same(pullback.batched(V), stacked(pullback, V, y))  # called again: the saved values are intact


BATCHING = ["tanh_layer", "broadcast_rows", "broadcast_up", "scalar_times_array", "matmul_forms", "matrix_products",
            "reductions", "reduce_all", "reshapes", "transposes", "index_reads", "index_new_axis", "relu",
            "loop_recurrence", "loop_over_items", "branchy", "two_outputs_of_two_args", "float_argument",
            "scaled_matrix"]


@pytest.mark.parametrize("fun,args,wrt", VECTOR_PROGRAMS, ids=ids)
def test_which_programs_batch(fun, args, wrt):
    """The allowlist covers these programs (a regression here is slower, not wrong)."""
    assert batches(fun, args, wrt) == (fun.__name__ in BATCHING)


# ---- jacobian(mode="rev") ----------------------------------------------------------


@pytest.mark.parametrize("fun,args,wrt", VECTOR_PROGRAMS, ids=ids)
def test_reverse_jacobian_equals_forward_and_finite_differences(fun, args, wrt):
    reverse = srcad.jacobian(fun, wrt)(*args)
    forward = srcad.jacobian(fun, wrt, mode="fwd")(*args)
    positions = (wrt,) if isinstance(wrt, int) else wrt
    for k, p in enumerate(positions):
        r = reverse if isinstance(wrt, int) else reverse[k]
        f = forward if isinstance(wrt, int) else forward[k]
        np.testing.assert_allclose(r, f, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(r, numeric_jacobian(fun, args, p), rtol=1e-5, atol=1e-7)


def float32_map(x):
    return np.tanh(x) * np.float32(2.0)


def test_reverse_jacobian_of_float32_map_is_float32():
    x = vec(3).astype(np.float32)
    assert batches(float32_map, (x,), 0)
    J = srcad.jacobian(float32_map)(x)
    assert J.dtype == np.float32
    np.testing.assert_allclose(J, np.diag(2 * (1 - np.tanh(x.astype(np.float64)) ** 2)), rtol=1e-5)


# ---- fallback: programs off the allowlist --------------------------------------------


def scatter(x):
    return x[np.array([0, 0, 2])] * 2.0  # an integer-array read: its adjoint scatters with np.add.at


def solve(M, b):
    return np.linalg.solve(M, b)


def contraction(X, w):
    return np.einsum("ij,j->i", X, w)


def running_sum(x):
    return np.cumsum(x) * x


def concatenated(X):
    return np.concatenate([np.sum(X, axis=0), X.sum(axis=1)])  # the pieces' adjoints are a list


def indexed_by_argument(x, idx):
    return x[idx] * 2.0 + x[0]


FALLBACK = [
    (solve, (vec(3, 3) + 3 * np.eye(3), vec(3)), (0, 1)),
    (contraction, (vec(3, 4), vec(4)), (0, 1)),
    (running_sum, (vec(4),), 0),
    (concatenated, (vec(3, 4),), 0),
]


@pytest.mark.parametrize("fun,args,wrt", FALLBACK, ids=[f.__name__ for f, _, _ in FALLBACK])
def test_programs_off_the_allowlist_fall_back_and_stay_right(fun, args, wrt):
    assert not batches(fun, args, wrt)
    y, pullback = srcad.vjp(fun, *args, wrt=wrt)
    V = batch_of_cotangents(y)
    assert_same(pullback.batched(V), stacked(pullback, V, y))
    reverse = srcad.jacobian(fun, wrt)(*args)
    forward = srcad.jacobian(fun, wrt, mode="fwd")(*args)
    assert_same(reverse, forward)


def test_a_scatter_at_an_array_index_falls_back_when_run():
    x = vec(3)
    assert batches(scatter, (x,), 0)  # np.add.at's statement is allowed; its array index is not, when run
    y, pullback = srcad.vjp(scatter, x)
    V = batch_of_cotangents(y)
    assert_same(pullback.batched(V), stacked(pullback, V, y))
    np.testing.assert_allclose(srcad.jacobian(scatter)(x), numeric_jacobian(scatter, (x,), 0), atol=1e-8)


def test_an_index_that_is_not_basic_when_run_falls_back():
    x = vec(4)
    # the same code batches for an integer index and falls back, when run, for an array index
    for idx in (2, np.array([1, 1, 3])):
        y, pullback = srcad.vjp(indexed_by_argument, x, idx)
        V = batch_of_cotangents(y)
        assert_same(pullback.batched(V), stacked(pullback, V, y))
        np.testing.assert_allclose(srcad.jacobian(indexed_by_argument)(x, idx),
                                   numeric_jacobian(indexed_by_argument, (x, idx), 0), rtol=1e-6, atol=1e-8)


def test_structured_outputs_fall_back_row_by_row():
    def pair(x):
        return np.sin(x), {"s": np.sum(x ** 2), "skip": x}

    x = vec(3)
    y, pullback = srcad.vjp(pair, x)
    V = (rng.standard_normal((2, 3)), {"s": rng.standard_normal(2), "skip": None})
    got = pullback.batched(V)
    expected = np.stack([pullback((V[0][i], {"s": V[1]["s"][i], "skip": None})) for i in range(2)])
    assert_same(got, expected)


# ---- the cotangents ------------------------------------------------------------------


def test_batched_cotangents_of_the_wrong_shape_are_refused():
    y, pullback = srcad.vjp(tanh_layer, vec(4))
    with pytest.raises(srcad.CotangentError, match=r"\(B,\) \+ \(4,\)"):
        pullback.batched(np.ones((3, 5)))
    with pytest.raises(srcad.CotangentError):
        pullback.batched(np.ones(4))


def test_integer_cotangents_count_as_float_and_identity_is_not_aliased():
    def identity(x):
        return x

    y, pullback = srcad.vjp(identity, vec(3))
    V = np.arange(6).reshape(2, 3)
    got = pullback.batched(V)
    np.testing.assert_array_equal(got, V)
    V = np.ones((2, 3))
    got = pullback.batched(V)
    assert not np.shares_memory(got, V)
    got[0, 0] = 5.0
    np.testing.assert_array_equal(V, np.ones((2, 3)))


def test_no_cotangents_give_empty_stacks():
    y, pullback = srcad.vjp(two_outputs_of_two_args, vec(3), vec(3), wrt=(0, 1))
    dx, dy = pullback.batched(np.zeros((0, 3)))
    assert dx.shape == (0, 3) and dy.shape == (0, 3)


# ---- second order ------------------------------------------------------------------


def energy(x):
    return np.sum(np.tanh(A @ x) * x) + 0.5 * np.sum(x ** 4)


def test_jacobian_of_the_gradient_is_the_hessian():
    x = vec(4)
    gradient = srcad.grad(energy)
    assert batches(gradient, (x,), 0)  # the adjoint of the generated adjoint batches too
    H_rev = srcad.jacobian(gradient)(x)  # reverse over reverse
    H_fwd = srcad.hessian(energy)(x)  # forward over reverse
    np.testing.assert_allclose(H_rev, H_fwd, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(H_rev, numeric_jacobian(gradient, (x,), 0), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(H_rev, H_rev.T, rtol=1e-10, atol=1e-12)


def looped_energy(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(np.sin(x[i] * x)) * 0.5
    return s


def test_reverse_over_reverse_with_a_loop():
    x = vec(4)
    gradient = srcad.grad(looped_energy)
    np.testing.assert_allclose(srcad.jacobian(gradient)(x), srcad.hessian(looped_energy)(x), rtol=1e-10, atol=1e-12)
    y, pullback = srcad.vjp(gradient, x)
    V = batch_of_cotangents(y)
    assert_same(pullback.batched(V), stacked(pullback, V, y))


def test_batched_pullback_of_a_gradient():
    x = vec(4)
    y, pullback = srcad.vjp(srcad.grad(energy), x)
    V = batch_of_cotangents(y)
    assert_same(pullback.batched(V), stacked(pullback, V, y))


def test_code_from_the_persistent_cache_batches(cache_dir, monkeypatch):
    from srcad import code_cache
    from srcad import compile as srcad_compile

    x = vec(4)
    y, pullback = srcad.vjp(tanh_layer, x)
    V = batch_of_cotangents(y)
    fresh = pullback.batched(V)
    monkeypatch.setattr(srcad_compile, "_CACHE", code_cache.CodeCache())  # as in a new process
    assert batches(tanh_layer, (x,), 0)
    y, pullback = srcad.vjp(tanh_layer, x)
    assert_same(pullback.batched(V), fresh)
    assert_same(fresh, stacked(pullback, V, y))


def closure_named_like_helpers():
    mul = batched_left = np.array([2.0, 3.0, 4.0])  # the names of batched helpers, unread by the adjoint

    def f(x):
        return np.sin(x) * 2.0 + x * len(mul) + x * len(batched_left)

    return f


def test_a_closure_variable_named_like_a_helper_does_not_replace_it():
    f = closure_named_like_helpers()
    x = vec(3)
    assert batches(f, (x,), 0)
    y, pullback = srcad.vjp(f, x)
    V = batch_of_cotangents(y)
    assert_same(pullback.batched(V), stacked(pullback, V, y))


def solve_energy(x):
    M = np.eye(3) * 3.0 + np.outer(x, x)
    return np.sum(np.linalg.solve(M, x) * x)


def sorted_energy(x):
    return np.sum(np.cumsum(x) ** 2 * x)


HESSIAN_PROGRAMS = [(energy, (vec(4),)), (looped_energy, (vec(4),)), (solve_energy, (vec(3),)),
                    (sorted_energy, (vec(4),))]


@pytest.mark.parametrize("fun,args", HESSIAN_PROGRAMS, ids=[f.__name__ for f, _ in HESSIAN_PROGRAMS])
def test_hessian_by_either_route_equals_forward_over_reverse(fun, args):
    """hessian takes reverse over reverse where the gradient's adjoint batches, forward over
    reverse otherwise: the same matrix, checked against finite differences of the gradient."""
    route = batches(srcad.grad(fun), args, 0)
    assert route == (fun is energy)  # looped_energy's second adjoint keeps a list of adjoints
    H = srcad.hessian(fun)(*args)
    np.testing.assert_allclose(H, srcad.jacobian(srcad.grad(fun), mode="fwd")(*args), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(H, numeric_jacobian(srcad.grad(fun), args, 0), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("fn, args", [(lambda a, x: a * x + a ** 2, (0.7, np.ones(3))),
                                      (lambda a, x: np.sum(x * a) * x, (np.array([0.5, 2.0, -1.0]), np.ones(3)))])
def test_an_empty_stack_of_cotangents_gives_empty_stacks_of_gradients(fn, args):
    y, pullback = srcad.vjp(fn, *args)
    got = pullback.batched(np.zeros((0,) + np.shape(y)))
    assert got.shape == (0,) + np.shape(args[0])
    assert got.shape[1:] == np.shape(pullback.batched(np.ones((2,) + np.shape(y)))[0])


XP = np.linspace(0.0, 1.0, 6)


def periodic_lookup(q):
    z = np.sin(q) * 2.0
    return np.interp(z, XP, np.cos(XP), period=1.0) * q


def test_a_refusal_in_the_batched_pullback_names_the_users_line():
    """The batched backward function is made from the pullback's parsed source, which drops its
    ``# line N:`` comments: they are put back, so a srcad error raised in it at run time (a rule's
    refusal) names the user's file and line, as ``grad`` and ``jacobian(mode="fwd")`` do."""
    line = periodic_lookup.__code__.co_firstlineno + 2
    for jacobian in (srcad.jacobian(periodic_lookup), srcad.jacobian(periodic_lookup, mode="fwd"),
                     lambda q: srcad.vjp(periodic_lookup, q)[1].batched(np.eye(3))):
        with pytest.raises(srcad.UnsupportedCaseError, match="np.interp with period") as info:
            jacobian(np.array([-0.3, 0.45, 0.55]))
        assert str(info.value).startswith(f"{__file__}:{line}: ")
