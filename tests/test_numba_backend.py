"""backend="numba": compiled adjoints of loop-heavy scalar programs equal the NumPy backend's
and finite differences, in the joint adjoint and in the pullback called twice; what numba
cannot compile falls back ("auto") or is refused at the user's line ("numba").

numba compiles for seconds per function: few programs, each differentiable made once per
module and reused.
"""
import sys

import numpy as np
import pytest

pytest.importorskip("numba")

import srcad  # noqa: E402
from srcad.backends.numba_backend import BackendCompileError  # noqa: E402

sys.path.insert(0, __import__("os").path.dirname(__file__))
from benchmark_programs import benchmark_module  # noqa: E402
from test_control_jumps import helper_with_loop_jumps  # noqa: E402

rng = np.random.default_rng(5)


benchmarks = benchmark_module("numba_loops")
soft_dtw = benchmarks.soft_dtw


def lorenz(s, sigma, rho, beta):
    return np.array([sigma * (s[1] - s[0]), s[0] * (rho - s[2]) - s[1], s[0] * s[1] - beta * s[2]])


def rk4(s0, params, h, steps):
    s = s0
    for t in range(steps):
        k1 = lorenz(s, params[0], params[1], params[2])
        k2 = lorenz(s + 0.5 * h * k1, params[0], params[1], params[2])
        k3 = lorenz(s + 0.5 * h * k2, params[0], params[1], params[2])
        k4 = lorenz(s + h * k3, params[0], params[1], params[2])
        s = s + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return np.sum(s * s)


def relax(u, kappa):  # a scalar parameter times a 2-d state: its adjoint is np.vdot of 2-d arrays
    for t in range(3):
        u = u + kappa * np.sin(u)
    return np.sum(u * u)


def first_of_ties(x):
    """min's derivative goes to the first minimal argument: ``is`` in its rule, which numba
    would compile to False (a zero gradient) if it were not lowered."""
    s = 0.0
    for i in range(x.shape[0] - 1):
        s = s + min(x[i], x[i + 1], 0.5) * x[i]
    return s


def einsum_loss(x):
    return np.einsum("i,i->", x, x)


def mixed_products(A, x, w):
    s = 0.0
    for i in range(3):
        B = np.linalg.inv(A + 2.0 * np.eye(2))  # a shape srcad leaves to run time: its products branch on ndim
        y = B @ x
        z = x @ B.T
        s = s + y @ z + np.log(np.linalg.det(B @ B.T))
        x = np.tanh(y) * w
    return s


def finite_differences(f, args, wrt, eps=1e-6, directions=2, seed=0):
    """(direction, directional derivative) pairs by central differences over ``wrt``."""
    r = np.random.default_rng(seed)
    out = []
    for _ in range(directions):
        u = {k: r.standard_normal(np.shape(args[k])) for k in wrt}

        def at(t):
            moved = list(args)
            for k in wrt:
                moved[k] = args[k] + t * u[k]
            return f(*moved)

        out.append((u, (at(eps) - at(-eps)) / (2 * eps)))
    return out


def check(f, args, wrt, compiled_grads):
    numpy_grads = srcad.grad(f, wrt=wrt)(*args)
    for a, b in zip(compiled_grads, numpy_grads):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    for u, numeric in finite_differences(f, args, wrt):
        analytic = sum(np.vdot(g, u[k]) for g, k in zip(compiled_grads, wrt))
        assert abs(analytic - numeric) <= 1e-6 + 1e-5 * abs(numeric)


def is_compiled(d):
    (joint, forward, backward), = d._bound.values()
    return getattr(joint, "compiled", False)  # the NumPy function itself when lowering refused


def check_compiled_pair(f, args, wrt, d):
    """``d.vjp`` (``d`` made with ``backend="numba"``) runs a compiled forward/backward pair whose
    value and pullback equal the NumPy backend's."""
    value, pullback = d.vjp(*args)
    (_, forward, backward), = d._bound.values()
    assert getattr(forward, "compiled", False) and getattr(backward, "compiled", False)
    expected_value, expected_pullback = srcad.vjp(f, *args, wrt=wrt)
    assert value == pytest.approx(expected_value, rel=1e-12)
    got, expected = pullback(1.5), expected_pullback(1.5)
    for a, b in zip(got if isinstance(got, tuple) else (got,), expected if isinstance(expected, tuple) else (expected,)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


PROGRAMS = {
    "kalman": (benchmarks.kalman, lambda: benchmarks.kalman_args(steps=3), (0, 1, 2)),
    "mixed_products": (mixed_products, lambda: (np.array([[0.9, 0.2], [-0.3, 0.7]]), np.array([0.4, -0.8]),
                                                np.array([1.1, 0.6])), (0, 1, 2)),
    "soft_dtw": (soft_dtw, lambda: (rng.standard_normal(5), rng.standard_normal(4), 0.5), (0, 1)),
    "rk4": (rk4, lambda: (np.array([1.0, 1.2, 0.9]), np.array([10.0, 28.0, 8.0 / 3.0]), 0.01, 4), (0, 1)),
    "relax": (relax, lambda: (rng.standard_normal((3, 4)), 0.3), (0, 1)),
    "first_of_ties": (first_of_ties, lambda: (np.array([0.3, 0.45, 0.9, 0.2, 0.35, 0.7]),), (0,)),  # no tie: FD
    "helper_with_loop_jumps": (helper_with_loop_jumps, lambda: (rng.uniform(0.2, 1.0, 3),), (0,)),
}


@pytest.fixture(scope="module", params=sorted(PROGRAMS))
def program(request):
    f, make_args, wrt = PROGRAMS[request.param]
    return f, make_args(), wrt, srcad.differentiable(f, wrt=wrt, backend="numba")


def test_joint_adjoint_equals_numpy_and_finite_differences(program):
    f, args, wrt, d = program
    check(f, args, wrt, d.grad(*args))
    assert is_compiled(d)


def test_pullback_called_twice_equals_the_joint_adjoint(program):
    f, args, wrt, d = program
    y, pullback = d.vjp(*args)
    assert y == pytest.approx(f(*args), rel=1e-12)
    first, again = pullback(), pullback(2.0)
    check(f, args, wrt, first)
    for a, b in zip(first, again):
        np.testing.assert_allclose(2.0 * a, b, rtol=1e-12)


def test_a_loop_that_never_runs():
    d = srcad.differentiable(rk4, wrt=(0, 1), backend="numba")
    s0, params = np.array([1.0, 2.0, 3.0]), np.array([10.0, 28.0, 2.0])
    value, (ds0, dparams) = d.value_and_grad(s0, params, 0.01, 0)
    assert value == 14.0
    np.testing.assert_array_equal(ds0, 2.0 * s0)
    np.testing.assert_array_equal(dparams, np.zeros(3))


def test_min_ties_get_the_gradient_where_python_gives_it():
    x = np.array([0.3, 0.3, 0.9, 0.2, 0.2, 0.7])
    compiled = srcad.grad(first_of_ties, backend="numba")(x)
    np.testing.assert_array_equal(compiled, srcad.grad(first_of_ties)(x))
    assert compiled[0] != 0.0 and compiled[3] != 0.0


def elif_returns_saving(x):
    m = np.max(x)
    if m < 0:
        return -np.sum(x * x)
    elif m > 1:
        return 2.0 * np.sum(x)  # (np.sum(x) saved in the elif only, under a condition bound there)
    return np.sum(x ** 3)


def test_auto_runs_numpy_where_numba_cannot_and_numba_refuses_at_the_users_line():
    x = rng.uniform(0.2, 1.0, 5)
    d = srcad.differentiable(elif_returns_saving, backend="auto")
    np.testing.assert_array_equal(d.grad(x), srcad.grad(elif_returns_saving)(x))
    assert not is_compiled(d)
    with pytest.raises(BackendCompileError, match=r"test_numba_backend\.py:\d+: backend='numba' cannot compile.*"
                                                   r"None on some paths"):
        srcad.grad(elif_returns_saving, backend="numba")(x)


def test_a_call_numba_cannot_type_falls_back_or_is_named():
    x = rng.standard_normal(4)
    d = srcad.differentiable(einsum_loss, backend="auto")
    np.testing.assert_allclose(d.grad(x), 2.0 * x)
    assert not is_compiled(d)
    line = einsum_loss.__code__.co_firstlineno + 1
    with pytest.raises(BackendCompileError, match=rf"test_numba_backend\.py:{line}: backend='numba' cannot compile"):
        srcad.grad(einsum_loss, backend="numba")(x)


SCALE = 2.0
WEIGHTS = np.array([1.0, 2.0])


def reads_a_global_number(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + SCALE * x[i] * x[i]
    return s


def reads_a_global_array(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + WEIGHTS[i] * x[i] * x[i]
    return s


def test_a_global_numba_froze_is_seen_when_rebound(monkeypatch):
    x = np.array([1.0, 2.0])
    g = srcad.grad(reads_a_global_number, backend="numba")
    np.testing.assert_array_equal(g(x), 4.0 * x)
    monkeypatch.setitem(globals(), "SCALE", 3.0)
    np.testing.assert_array_equal(g(x), 6.0 * x)


def test_a_global_array_numba_would_freeze_is_not_compiled():
    x = np.array([1.0, 2.0])
    d = srcad.differentiable(reads_a_global_array, backend="auto")
    np.testing.assert_array_equal(d.grad(x), 2.0 * WEIGHTS * x)
    assert not is_compiled(d)
    with pytest.raises(BackendCompileError, match="reads 'WEIGHTS', a ndarray that compiled code would freeze"):
        srcad.grad(reads_a_global_array, backend="numba")(x)


def cube_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] ** 3
    return s


def test_a_gradient_compiled_by_numba_is_differentiated_again_from_its_numpy_source():
    x, u = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, -1.0])
    gradient = srcad.grad(cube_sum, backend="numba")
    np.testing.assert_allclose(gradient(x), 3.0 * x ** 2)
    value, tangent = srcad.jvp(gradient, (x,), (u,))
    np.testing.assert_allclose(value, 3.0 * x ** 2)
    np.testing.assert_allclose(tangent, 6.0 * x * u)


def flattened_transpose_mask(values):
    reflected = values.T
    above = reflected.reshape(-1) > 0.27
    return np.where(above.sum() > 0.18, 0.54, 1.27) * np.sum(values ** 2)


def test_code_numba_compiles_but_cannot_run_falls_back_or_is_named():
    # numba's reshape of a transposed (not contiguous) array raises NotImplementedError when it
    # runs: "auto" runs NumPy's code instead, "numba" says so (fuzzer seed 112903339632)
    x = rng.standard_normal((4, 3))
    expected = srcad.grad(flattened_transpose_mask)(x)
    np.testing.assert_allclose(srcad.grad(flattened_transpose_mask, backend="auto")(x), expected, rtol=1e-12)
    with pytest.raises(BackendCompileError, match="cannot compile or run this adjoint on these arguments"):
        srcad.grad(flattened_transpose_mask, backend="numba")(x)


def masked_scaling(values, weights):
    scaled = values.reshape((4, 3)) * 1.0
    scaled[weights.T > 0.25] *= 1.2  # computed, not returned: the adjoint runs it all the same
    return 0.5 * np.sum(values ** 2)


def test_an_assertion_numba_fails_while_compiling_falls_back_or_is_named():
    # numba fails an assertion of its own compiling a 2-D boolean-mask update (fuzzer seed 113004344133)
    x, w = rng.standard_normal(12), rng.standard_normal((3, 4))
    expected = srcad.grad(masked_scaling)(x, w)
    np.testing.assert_allclose(srcad.grad(masked_scaling, backend="auto")(x, w), expected, rtol=1e-12)
    with pytest.raises(BackendCompileError, match="AssertionError in numba: an assertion of its own"):
        srcad.grad(masked_scaling, backend="numba")(x, w)
