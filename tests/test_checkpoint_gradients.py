"""srcad.checkpointed: a checkpointed loop's derivatives are those of the plain loop.

Each function is compared with its twin without ``srcad.checkpointed`` (the same arithmetic:
the gradient and both pullback calls must be equal), checked against central finite
differences in reverse mode (joint adjoint, pullback called twice) and forward mode, and at
second order (hvp, grad of grad) against the twin. Every case asserts that the adjoint really
is checkpointed (a loop whose values carry no derivative is an ordinary loop).
"""
import importlib.util
import inspect
import textwrap

import numpy as np
import pytest

import srcad
from srcad.pipeline import Options, transform
from srcad.testing import check_grads, check_jvp


def step(u, dt):
    return u + dt * np.tanh(u)


def time_stepping(u, dt):
    for t in srcad.checkpointed(range(12)):
        u = u + dt * np.sin(u) * (1.0 + 0.01 * t)
    return np.sum(u * u)


def calls_a_function(u, dt):
    for t in srcad.checkpointed(range(7), segment=3):
        u = step(u, dt)
    return np.sum(u ** 2)


def fills_a_trajectory(u):
    traj = np.zeros((6, u.shape[0]))
    for t in srcad.checkpointed(range(6)):
        u = np.sin(u) * 1.1
        traj[t] = u
    return np.sum(traj * traj)


def updates_elements(u):
    a = u * 1.0
    for t in srcad.checkpointed(range(6), segment=4):
        a[t % 3] = a[(t + 1) % 3] * np.sin(a[t % 3]) + 0.5
    return np.sum(a * a)


def appends_to_a_list(u):
    out = []
    for t in srcad.checkpointed(range(5), segment=2):
        u = np.cos(u) + u
        out.append(u * 2.0)
    return np.sum(np.stack(out) ** 2)


def pops_from_a_list(u):
    pending = [u * 1.0, u * 2.0, u * 3.0, u * 4.0]
    acc = u * 0.0
    for t in srcad.checkpointed(range(3), segment=2):
        top = pending.pop()
        acc = acc + np.sin(top) * acc + top
    return np.sum(acc) + np.sum(pending[0])


def scatter_adds(u):
    acc = np.zeros(3)
    for t in srcad.checkpointed(range(5), segment=2):
        u = np.sin(u)
        np.add.at(acc, [0, 1, 0], u[:3] * t)
    return np.sum(acc * acc) + np.sum(u)


def inner_loops(u):
    for i in range(3):
        for t in srcad.checkpointed(range(5), segment=2):
            for j in range(2):
                u = np.sin(u) + 0.1 * j
    return np.sum(u)


def nested_checkpoints(u):
    for i in srcad.checkpointed(range(4), segment=3):
        for t in srcad.checkpointed(range(5), segment=2):
            u = np.sin(u) * 1.01
    return np.sum(u)


def branches_and_continue(u, x):
    acc = 0.0
    w = x * 1.0
    for t in srcad.checkpointed(range(8)):
        if t % 3 == 0:
            w = np.sin(w) + u[0]
            continue
        acc = acc + np.sum(w * u)
        u = u * 0.9 + np.cos(w) * 0.1
    return acc + np.sum(w)


def while_inside(u):
    for t in srcad.checkpointed(range(4), segment=2):
        k = 0
        while k < t:
            u = np.sin(u)
            k = k + 1
    return np.sum(u)


def break_of_an_inner_loop(u):
    for t in srcad.checkpointed(range(5), segment=2):
        for j in range(4):
            if j > t:
                break
            u = np.sin(u) * 1.1
    return np.sum(u)


def read_after_the_loop(u):
    z = u * 2
    for t in srcad.checkpointed(range(5), segment=2):
        z = np.sin(z) * u
        tmp = z * z
    return np.sum(tmp) + np.sum(z * u)


def rebinds_a_value_read_before_the_loop(u):
    a = np.sin(u)
    y = a * a
    for t in srcad.checkpointed(range(5), segment=2):
        a = np.cos(u) * t
        u = u + a * 0.1
    return np.sum(y) + np.sum(u) + np.sum(a)


def sets_a_value_in_some_steps(u):
    last = u
    for t in srcad.checkpointed(range(7), segment=3):
        if t % 2 == 1:
            last = np.tanh(u) * t
        u = u * 0.8 + np.sin(last)
    return np.sum(u * last)


def range_set_by_an_outer_loop(u):
    for i in range(4):
        for t in srcad.checkpointed(range(i + 2), segment=2):
            u = np.sin(u) * (1.0 + 0.1 * i)
    return np.sum(u)


def unreachable_loop_after_a_loop(u):
    for t in range(2):
        u = np.sin(u)
    return np.sum(u)
    for t in srcad.checkpointed(range(3)):
        u = np.cos(u)


def two_loops_one_state(u):
    for t in srcad.checkpointed(range(4), segment=3):
        u = np.sin(u) + u
    for t in srcad.checkpointed(range(6)):
        u = np.cos(u) * u
    return np.sum(u)


def scalar_state(x):
    y = x
    for t in srcad.checkpointed(range(20)):
        y = y * 0.9 + np.sin(y) * x
    return y


def dict_state(p, n):
    s = {"u": p["u"] * 1.0, "c": 0.0}
    for t in srcad.checkpointed(range(n), segment=2):
        s = {"u": np.sin(s["u"]) * p["w"], "c": s["c"] + np.sum(s["u"])}
    return s["c"] + np.sum(s["u"])


def backwards_range(u):
    for t in srcad.checkpointed(range(10, 0, -3)):
        u = np.sin(u) * t
    return np.sum(u)


def rebinds_the_loop_variable(u):
    for t in srcad.checkpointed(range(5), segment=2):
        t = t * 2
        u = np.sin(u) + t
    return np.sum(u)


def inside_a_region(u, flag):
    if flag:
        with np.errstate(all="ignore"):
            for t in srcad.checkpointed(range(5), segment=2):
                u = np.log(np.exp(u) + 1.0)
    return np.sum(u)


def segment_from_argument(u, n, k):
    for t in srcad.checkpointed(range(n), segment=k):
        u = u + 0.1 * np.tanh(u * t)
    return np.sum(u * u)


def checkpointed_callee(u):
    return np.sum(segment_from_argument(u, 7, 2) * 3.0) + np.sum(u)


U = np.linspace(0.2, 1.0, 4)
CASES = [
    (time_stepping, (U, 0.1)),
    (calls_a_function, (U, 0.1)),
    (fills_a_trajectory, (U,)),
    (updates_elements, (U,)),
    (appends_to_a_list, (U,)),
    (pops_from_a_list, (U,)),
    (scatter_adds, (U,)),
    (inner_loops, (U,)),
    (nested_checkpoints, (U,)),
    (branches_and_continue, (U, np.linspace(-1.0, 1.0, 4))),
    (while_inside, (U,)),
    (break_of_an_inner_loop, (U,)),
    (read_after_the_loop, (U,)),
    (rebinds_a_value_read_before_the_loop, (U,)),
    (sets_a_value_in_some_steps, (U,)),
    (range_set_by_an_outer_loop, (U,)),
    (two_loops_one_state, (U,)),
    (scalar_state, (0.7,)),
    (dict_state, ({"u": np.linspace(0.0, 1.0, 3), "w": 1.1}, 5)),
    (backwards_range, (U,)),
    (rebinds_the_loop_variable, (U,)),
    (inside_a_region, (U, True)),
    (segment_from_argument, (U, 0, None)),
    (segment_from_argument, (U, 1, None)),
    (segment_from_argument, (U, 9, 1)),
    (segment_from_argument, (U, 9, 4)),
    (segment_from_argument, (U, 9, 9)),
    (segment_from_argument, (U, 9, 50)),
]
IDS = [f"{f.__name__}-{i}" for i, (f, _) in enumerate(CASES)]

_TWINS = {}


def plain_twin(fn, tmp_path_factory):
    """``fn`` with ``srcad.checkpointed(...)`` replaced by a function returning its range: the
    same loop, the same arithmetic, no checkpointing."""
    if fn not in _TWINS:
        text = textwrap.dedent(inspect.getsource(fn)).replace("srcad.checkpointed(", "uncheckpointed(")
        path = tmp_path_factory.mktemp("twins") / f"twin_{fn.__name__}.py"
        path.write_text("def uncheckpointed(steps, segment=None):\n    return steps\n\n\n" + text)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for name, value in globals().items():  # the helpers it calls, np, srcad
            module.__dict__.setdefault(name, value)
        _TWINS[fn] = getattr(module, fn.__name__)
    return _TWINS[fn]


def assert_same(a, b, exact=True):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_same(a[k], b[k], exact)
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y, exact)
    elif exact:
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fn, args", CASES, ids=IDS)
def test_the_adjoint_is_checkpointed(fn, args):
    assert "checkpoint_segments" in transform(fn, Options(wrt=(0,))).joint_source


@pytest.mark.parametrize("fn, args", CASES, ids=IDS)
def test_gradient_equals_the_plain_loop(fn, args, tmp_path_factory):
    twin = plain_twin(fn, tmp_path_factory)
    assert_same(srcad.grad(fn)(*args), srcad.grad(twin)(*args))
    y, pullback = srcad.vjp(fn, *args)
    y_twin, pullback_twin = srcad.vjp(twin, *args)
    assert_same(y, y_twin)
    expected = pullback_twin(1.0)
    assert_same(pullback(1.0), expected)
    assert_same(pullback(1.0), expected)  # the snapshots survive a first reverse sweep


@pytest.mark.parametrize("fn, args", CASES, ids=IDS)
def test_reverse_mode_against_finite_differences(fn, args):
    check_grads(fn, args)


@pytest.mark.parametrize("fn, args", CASES, ids=IDS)
def test_forward_mode_against_finite_differences(fn, args):
    check_jvp(fn, args)


@pytest.mark.parametrize("fn, args", [c for c in CASES if isinstance(c[1][0], np.ndarray)],
                         ids=[i for i, c in zip(IDS, CASES) if isinstance(c[1][0], np.ndarray)])
def test_hessian_vector_product_equals_the_plain_loop(fn, args, tmp_path_factory):
    twin = plain_twin(fn, tmp_path_factory)
    direction = np.cos(np.arange(args[0].size)).reshape(args[0].shape)
    assert_same(srcad.hvp(fn)(*args, direction), srcad.hvp(twin)(*args, direction), exact=False)


def test_grad_of_grad_equals_the_plain_loop(tmp_path_factory):
    twin = plain_twin(scalar_state, tmp_path_factory)
    second = srcad.grad(srcad.grad(scalar_state))(0.7)
    assert second == srcad.grad(srcad.grad(twin))(0.7)
    eps = 1e-5
    numeric = (srcad.grad(scalar_state)(0.7 + eps) - srcad.grad(scalar_state)(0.7 - eps)) / (2 * eps)
    np.testing.assert_allclose(second, numeric, rtol=1e-6)


def test_a_checkpointed_loop_in_dead_code_is_no_error():
    check_grads(unreachable_loop_after_a_loop, (U,))


def test_a_user_function_with_a_checkpointed_loop():
    check_grads(checkpointed_callee, (U,), modes=("rev",))
    check_jvp(checkpointed_callee, (U,))


def test_called_normally_it_is_the_plain_loop():
    assert srcad.checkpointed(range(3)) == range(3)
    assert time_stepping(U, 0.1) == plain_twin_value(U, 0.1)


def plain_twin_value(u, dt):
    for t in range(12):
        u = u + dt * np.sin(u) * (1.0 + 0.01 * t)
    return np.sum(u * u)


@pytest.mark.parametrize("segment", [0, -2, 1.5, True, "3"])
def test_a_segment_length_that_is_not_a_positive_integer(segment):
    with pytest.raises(ValueError, match="segment= must be a positive integer"):
        segment_from_argument(U, 4, segment)
    with pytest.raises(ValueError, match="segment= must be a positive integer"):
        srcad.grad(segment_from_argument)(U, 4, segment)


def test_called_normally_it_takes_only_a_range():
    with pytest.raises(TypeError, match="takes a range"):
        srcad.checkpointed([1, 2, 3])


def test_the_numba_backend_refuses_and_auto_falls_back():
    pytest.importorskip("numba")
    from srcad.backends.numba_backend import BackendCompileError

    with pytest.raises(BackendCompileError, match=r"checkpointed loop \(srcad.checkpointed\)") as info:
        srcad.grad(scalar_state, backend="numba")(0.7)
    assert f"{__file__}:" in str(info.value)
    assert srcad.grad(scalar_state, backend="auto")(0.7) == srcad.grad(scalar_state)(0.7)


def counts_without_derivatives(u, n):
    total = 0
    for t in srcad.checkpointed(range(n)):
        total = total + t * t
    return np.sum(u * total)


def test_a_loop_without_derivatives_is_an_ordinary_loop(tmp_path_factory):
    assert "checkpoint_segments" not in transform(counts_without_derivatives, Options(wrt=(0,))).joint_source
    check_grads(counts_without_derivatives, (U, 5))
    twin = plain_twin(counts_without_derivatives, tmp_path_factory)
    assert_same(srcad.grad(counts_without_derivatives)(U, 5), srcad.grad(twin)(U, 5))
