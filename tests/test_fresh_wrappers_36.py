"""A derivative of a derivative made afresh at each call (``srcad.jvp(srcad.grad(f), ...)``,
``srcad.hessian(f)(x)`` inside a loop) compiles nothing after the first call, also where ``f``
calls helpers of its own: a new ``srcad.grad(f)`` binds the generated adjoint again, and the
helpers' generated functions it closes over are known by what they were bound from
(``guards._CalleeFunction``), not by their identity. Code is still made again for another
function, ``wrt``, a helper rebound or its defaults changed, a closure over other values.
Second derivatives are checked against central differences of ``f`` alone."""
import numpy as np
import pytest
import scipy.fft

import srcad

from lang_checks import made_by

RNG = np.random.default_rng(36)
X = np.linspace(0.1, 0.9, 6)
Y = np.linspace(1.0, 2.0, 6)


def spectrum(x):
    return scipy.fft.irfft(scipy.fft.rfft(x) * 0.5, n=x.shape[0])


def through_fft(x):
    return np.sum(np.sin(spectrum(x)) ** 2) + np.sum(x ** 3)


def squash(x, k=1.0):
    return np.tanh(k * x) * x


def smooth(x):
    return squash(x) + np.sin(x) ** 2


def through_chain(x):  # a helper calling a helper: reverse over reverse applies
    return np.sum(smooth(x) * x)


def two_args(x, y):
    return np.sum(np.cos(squash(x)) * y ** 2) + np.sum(smooth(y) * x)


def _hvp_fd(fun, args, position, u, w, h=1e-4):
    """wᵀ H u for argument ``position`` of ``fun``, from four values of ``fun`` alone."""
    def at(s, t):
        moved = list(args)
        moved[position] = args[position] + h * (s * u + t * w)
        return fun(*moved)
    return (at(1, 1) - at(1, -1) - at(-1, 1) + at(-1, -1)) / (4 * h * h)


U = np.cos(np.arange(6.0))

# (name, function, args, wrt position, H·U from a fresh wrapper at every call)
FORMS = [
    ("jvp(grad)", through_fft, (X,), 0, lambda f, a: srcad.jvp(srcad.grad(f), a, (U,))[1]),
    ("hvp", through_fft, (X,), 0, lambda f, a: srcad.hvp(f)(*a, U)),
    ("hessp", through_fft, (X,), 0, lambda f, a: srcad.hessp(f)(*a, U)),
    ("hessian", through_fft, (X,), 0, lambda f, a: srcad.hessian(f)(*a) @ U),
    ("jacobian(grad, fwd)", through_fft, (X,), 0, lambda f, a: srcad.jacobian(srcad.grad(f), mode="fwd")(*a) @ U),
    ("jvp(grad(differentiable))", through_fft, (X,), 0,
     lambda f, a: srcad.jvp(srcad.grad(srcad.differentiable(f)), a, (U,))[1]),
    ("hessian chain", through_chain, (X,), 0, lambda f, a: srcad.hessian(f)(*a) @ U),
    ("jacobian(grad) chain", through_chain, (X,), 0, lambda f, a: srcad.jacobian(srcad.grad(f))(*a) @ U),
    ("vjp(grad) chain", through_chain, (X,), 0, lambda f, a: srcad.vjp(srcad.grad(f), *a)[1](U)),
    ("adjoint(grad) chain", through_chain, (X,), 0, lambda f, a: srcad.adjoint(srcad.grad(f))(*a, U)),
    ("differentiable(grad).adjoint chain", through_chain, (X,), 0,
     lambda f, a: srcad.differentiable(srcad.grad(f)).adjoint(*a, U)),
    ("hvp chain", through_chain, (X,), 0, lambda f, a: srcad.hvp(f)(*a, U)),
    ("hvp wrt=0", two_args, (X, Y), 0, lambda f, a: srcad.hvp(f, wrt=0)(*a, U)),
    ("hvp wrt=1", two_args, (X, Y), 1, lambda f, a: srcad.hvp(f, wrt=1)(*a, U)),
    ("jvp(grad wrt=1)", two_args, (X, Y), 1, lambda f, a: srcad.jvp(srcad.grad(f, wrt=1), a, (None, U))[1]),
]
IDS = [form[0] for form in FORMS]


@pytest.mark.parametrize("name, fun, args, position, product", FORMS, ids=IDS)
def test_a_fresh_wrapper_compiles_nothing_after_the_first_call(name, fun, args, position, product):
    product(fun, args)
    assert made_by(lambda: product(fun, args)) == 0
    assert made_by(lambda: product(fun, tuple(a + 0.125 for a in args))) == 0


@pytest.mark.parametrize("name, fun, args, position, product", FORMS, ids=IDS)
def test_fresh_wrappers_agree_with_finite_differences(name, fun, args, position, product):
    for _ in range(3):  # the first wrapper compiles, the next ones reuse its code
        w = RNG.standard_normal(6)
        np.testing.assert_allclose(w @ product(fun, args), _hvp_fd(fun, args, position, U, w), rtol=1e-5, atol=1e-6)


def test_a_rebound_helper_recompiles(monkeypatch):
    product = FORMS[IDS.index("hessian chain")][4]
    product(through_chain, (X,))

    def steeper(x, k=1.0):
        return np.tanh(3.0 * k * x) * x ** 2

    monkeypatch.setitem(globals(), "squash", steeper)
    assert made_by(lambda: product(through_chain, (X,))) > 0
    w = RNG.standard_normal(6)
    np.testing.assert_allclose(w @ product(through_chain, (X,)), _hvp_fd(through_chain, (X,), 0, U, w),
                               rtol=1e-5, atol=1e-6)
    assert made_by(lambda: product(through_chain, (X,))) == 0


def test_changed_helper_defaults_recompile(monkeypatch):
    product = FORMS[IDS.index("hvp chain")][4]
    product(through_chain, (X,))
    monkeypatch.setattr(squash, "__defaults__", (2.5,))
    assert made_by(lambda: product(through_chain, (X,))) > 0
    w = RNG.standard_normal(6)
    np.testing.assert_allclose(w @ product(through_chain, (X,)), _hvp_fd(through_chain, (X,), 0, U, w),
                               rtol=1e-5, atol=1e-6)
    assert made_by(lambda: product(through_chain, (X,))) == 0


def test_another_function_of_the_same_helpers_gets_its_own_code():
    hvp = FORMS[IDS.index("hvp chain")][4]
    for fun in (through_chain, lambda x: np.sum(smooth(x) * np.cos(x))):
        w = RNG.standard_normal(6)
        np.testing.assert_allclose(w @ hvp(fun, (X,)), _hvp_fd(fun, (X,), 0, U, w), rtol=1e-5, atol=1e-6)


def _closing_over(scale):
    def inner(x):
        return np.tanh(scale * x) * x

    def outer(x):
        return np.sum(inner(x) ** 2)
    return outer


def test_closures_over_other_values_give_their_own_second_derivatives():
    for scale in (0.5, 2.0, 0.5):
        fun = _closing_over(scale)
        for product in (FORMS[IDS.index("hvp chain")][4], FORMS[IDS.index("hessian chain")][4],
                        FORMS[IDS.index("jvp(grad)")][4]):
            w = RNG.standard_normal(6)
            np.testing.assert_allclose(w @ product(fun, (X,)), _hvp_fd(fun, (X,), 0, U, w), rtol=1e-5, atol=1e-6)
