"""backend="numba" on loops whose adjoint is None on some paths, refused before this stop: the
reverse of ``if x[i] > m: m = x[i]`` (a running max, a Viterbi-style max, a value kept in one
branch only) resets the adjoint ``dm = None`` and tests ``dm is not None`` before reading it,
which numba cannot type. Each such name now gets a flag equal to ``dm is not None``
(``passes.numba_none_flags``); a read the lowering cannot prove holds Python's value stays refused.

Each compiled gradient (joint adjoint, and the forward/backward pair through ``vjp``) equals the
NumPy backend's and finite differences in random directions.
"""
import math

import gast
import numpy as np
import pytest

import srcad
from srcad import astutil as A
from srcad.passes.numba_lowering import NotLowerable, lower_for_numba


def lse_loop(x):
    m = -np.inf
    for i in range(len(x)):
        if x[i] > m:
            m = x[i]
    s = 0.0
    for i in range(len(x)):
        s += math.exp(x[i] - m)
    return m + math.log(s)


def viterbi_max(x, w):
    best = x[0] * w
    for i in range(1, x.shape[0]):
        c = best * 0.9 + x[i]
        if c < x[i] * w:
            c = x[i] * w
        best = c
    return best


def running_min_scaled(x, c):
    lo = x[0]
    for i in range(1, x.shape[0]):
        t = x[i] * c
        if t < lo:
            lo = t
    return lo * lo


def last_positive(x):
    last = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            last = x[i] * x[i]
    return last + x[0]


def state_reset(x, A):
    h = np.zeros(A.shape[0])
    for t in range(x.shape[0]):
        h = np.tanh(A @ h + x[t])
        if x[t] > 1.0:
            h = np.zeros(A.shape[0])
    return np.sum(h ** 2)


def row_of_max(X):
    m = X[0]
    for t in range(1, X.shape[0]):
        if X[t, 0] > m[0]:
            m = X[t]
    return np.sum(m * m)


def running_max_sum(x):
    m = -np.inf
    s = 0.0
    for i in range(len(x)):
        if x[i] > m:
            m = x[i]
        s += m
    return s


def logistic_tail(r, x0):
    x = x0
    total = 0.0
    for n in range(30):
        x = r * x * (1 - x)
        if n < 5:
            continue
        total += x
        if total > 100.0:
            break
    return total


def running_max_from_first(x, c):
    m = x[0]
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] * c > m:
            m = x[i] * c
        s += m * m
    return s


rng = np.random.default_rng(2803)
PROGRAMS = {
    "lse_loop": (lse_loop, lambda: (rng.standard_normal(9),), (0,)),
    "viterbi_max": (viterbi_max, lambda: (rng.standard_normal(9), 1.3), (0, 1)),
    "running_min_scaled": (running_min_scaled, lambda: (rng.standard_normal(9), 0.7), (0, 1)),
    "last_positive": (last_positive, lambda: (rng.standard_normal(9),), (0,)),
    "state_reset": (state_reset, lambda: (np.array([0.3, 1.4, -0.2, 0.8, 1.2, 0.1]),
                                          0.3 * rng.standard_normal((3, 3))), (0, 1)),
    "row_of_max": (row_of_max, lambda: (rng.standard_normal((6, 3)),), (0,)),
    # the reverse of ``s += m`` adds into dm with add_grads, reset in the same loop (refused before)
    "running_max_sum": (running_max_sum, lambda: (rng.standard_normal(9),), (0,)),
    "running_max_from_first": (running_max_from_first, lambda: (rng.standard_normal(9), 1.2), (0, 1)),
    # finish(dx0, x0) of an adjoint no path may have reached (probe 29)
    "logistic_tail": (logistic_tail, lambda: (3.3, float(rng.uniform(0.2, 0.8))), (0, 1)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiled_gradient_equals_numpy_and_finite_differences(name):
    pytest.importorskip("numba")
    from test_numba_backend import check, is_compiled

    f, make_args, wrt = PROGRAMS[name]
    args = make_args()
    d = srcad.differentiable(f, wrt=wrt, backend="numba")
    grads = d.grad(*args)
    assert is_compiled(d)
    check(f, args, wrt, grads if isinstance(grads, tuple) else (grads,))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiled_pair_equals_numpy(name):
    pytest.importorskip("numba")
    from test_numba_backend import check_compiled_pair

    f, make_args, wrt = PROGRAMS[name]
    args = make_args()
    d = srcad.differentiable(f, wrt=wrt, backend="numba")
    check_compiled_pair(f, args, wrt, d)


def lowered(src, resolve=None):
    return A.to_source(lower_for_numba(gast.parse(src).body[0], resolve=resolve))


def runtime_names(name):
    return {"add_grads": srcad.runtime.add_grads, "finish": srcad.runtime.finish}.get(name)


def test_a_helper_given_an_adjoint_that_may_be_none_is_given_none_on_that_path():
    out = lowered("def f(x, c):\n    d = None\n    for i in range(3):\n        d = add_grads(d, x * c)\n"
                  "        if c > i:\n            d = None\n    return finish(d, x)\n", runtime_names)
    assert ("if not _d_set:\n            d = add_grads(None, x * c)\n            _d_set = d is not None\n"
            "        else:\n            d = add_grads(d, x * c)\n") in out
    assert "if not _d_set:\n        return finish(None, x)\n    else:\n        return finish(d, x)" in out
    # a name called add_grads that is not srcad's keeps the refusal
    with pytest.raises(NotLowerable, match="None on some paths"):
        lowered("def f(x, c):\n    d = None\n    for i in range(3):\n        d = add_grads(d, x * c)\n"
                "        if c > i:\n            d = None\n    return d is not None\n", lambda name: None)


def test_two_adjoints_that_may_be_none_split_a_statement_four_ways():
    out = lowered("def f(x, c):\n    d = None\n    e = None\n    for i in range(3):\n        if c > i:\n"
                  "            d = x\n            e = x\n        g = add_grads(d, e)\n    return g\n", runtime_names)
    for call in ("add_grads(None, None)", "add_grads(None, e)", "add_grads(d, None)", "add_grads(d, e)"):
        assert out.count(call) == 1


def test_a_read_other_than_by_such_a_helper_is_still_refused():
    with pytest.raises(NotLowerable, match="None on some paths") as info:
        lowered("def f(x, c):\n    d = None\n    for i in range(3):\n        if c > i:\n            d = x\n"
                "        g = add_grads(x, d * c)\n    return g\n", runtime_names)
    assert info.value.node.lineno == 6


@pytest.mark.parametrize("src, where", [
    ("def f(x, c):\n    d = None\n    if c:\n        d = x\n    return d\n", 5),
    ("def f(x, c):\n    d = x\n    for i in range(3):\n        y = add_grads(d, x)\n        d = None\n"
     "    return y\n", 4),
    ("def f(x, c):\n    d = None\n    if c:\n        d = x\n    d += x\n    return d\n", 5),
    ("def f(x, c):\n    d = None\n    for d in x:\n        pass\n    return d\n", 3),
])
def test_a_read_that_may_see_none_is_refused_where_it_is(src, where):
    with pytest.raises(NotLowerable, match="None on some paths") as info:
        lowered(src)
    assert info.value.node.lineno == where
