"""Round 26 probes: a user rule's update summed to its operand's shape, custom_vjp on methods,
static and class methods called through self, the receiver of a method check renamed when a
helper is inlined, rules reading closure variables, a library call with no rule."""
import numpy as np
import pytest
import scipy.stats as st

import srcad
from srcad.testing import check_grads

X = np.array([0.3, -1.1, 0.8])


@srcad.custom_vjp
def scaled_sq(x, s):
    return s * x ** 2


@scaled_sq.defvjp
def scaled_sq_vjp(y, x, s):
    d[x] += d[y] * 2.0 * s * x
    d[s] += d[y] * y / s  # the result's shape for a scalar s, no unbroadcast


def with_other_use(s, x):
    return np.sum(scaled_sq(x, s)) + s ** 2


def alone(s, x):
    return np.sum(scaled_sq(x, s))


def test_rule_update_is_summed_to_a_scalar_operand():
    assert np.isclose(srcad.grad(with_other_use)(1.3, X), np.sum(X ** 2) + 2 * 1.3)
    check_grads(with_other_use, (1.3, X), wrt=(0, 1))


def test_rule_update_of_a_scalar_at_second_order():
    assert abs(srcad.grad(srcad.grad(alone))(1.3, X)) < 1e-12
    assert abs(srcad.hessian(alone)(1.3, X)) < 1e-12


@srcad.custom_vjp
def scaled_sq_unbroadcast(x, s):
    return s * x ** 2


@scaled_sq_unbroadcast.defvjp
def scaled_sq_unbroadcast_vjp(y, x, s):
    d[x] += d[y] * 2.0 * s * x
    d[s] += srcad.runtime.unbroadcast(d[y] * x ** 2, s)


def test_control_rule_that_unbroadcasts_itself():
    def f(s, x):
        return np.sum(scaled_sq_unbroadcast(x, s)) + s ** 2

    assert np.isclose(srcad.grad(f)(1.3, X), np.sum(X ** 2) + 2 * 1.3)


class Layer:
    def __init__(self, a):
        self.a = a

    @srcad.custom_vjp
    def apply(self, x):
        return self.a * x ** 2

    def loss(self, x):
        return np.sum(self.apply(x))


@Layer.apply.defvjp
def layer_apply_vjp(y, self, x):
    d[x] += d[y] * 100.0 * x  # not the body's derivative: shows that the rule is used


LAYER = Layer(3.0)


def test_custom_vjp_method_binds_its_object():
    assert np.allclose(Layer(3.0).apply(X), 3.0 * X ** 2)


@pytest.mark.parametrize("fn, args", [
    (lambda x, m: np.sum(m.apply(x)), (X, LAYER)),
    (lambda x: np.sum(LAYER.apply(x)), (X,)),
    (lambda x: LAYER.loss(x), (X,)),
    (lambda x: np.sum(Layer.apply(LAYER, x)), (X,)),
])
def test_custom_vjp_method_keeps_its_rule(fn, args):
    assert np.allclose(srcad.grad(fn)(*args), 100.0 * X)


class Model:
    def __init__(self, r):
        self.r = r

    def inner(self, x):
        return x * self.r

    def outer(self, x, *, p=2):
        return np.sum(self.inner(x) ** p)


MODEL = Model(2.0)


class Book:
    def inner(self, x):
        return x * 100.0

    def value(self, x):
        return MODEL.outer(x)


BOOK = Book()


@pytest.mark.parametrize("fn, args", [
    (lambda x: MODEL.outer(x), (np.array([1.0, 2.0]),)),
    (lambda m, x: m.outer(x, p=2), (MODEL, np.array([1.0, 2.0]))),
    (lambda x: BOOK.value(x), (np.array([1.0, 2.0]),)),
])
def test_keyword_only_method_calling_a_method_of_self(fn, args):
    got = srcad.grad(fn, wrt=len(args) - 1)(*args)
    assert np.allclose(got, 8 * args[-1])


class Energies:
    k = 2.0

    def __init__(self, h):
        self.h = h

    @staticmethod
    def quadratic(y):
        return np.sum(y ** 2)

    @classmethod
    def scaled(cls, y):
        return cls.k * np.sum(y ** 2)

    def loss(self, y):
        return self.quadratic(y * self.h) + self.scaled(y)


class MoreEnergies(Energies):
    k = 5.0


Y = np.array([1.0, 2.0])


@pytest.mark.parametrize("obj, k", [(Energies(2.0), 2.0), (MoreEnergies(2.0), 5.0)])
def test_static_and_class_methods_through_self(obj, k):
    assert np.allclose(srcad.grad(lambda y, m: m.loss(y))(Y, obj), 8 * Y + 2 * k * Y)


@pytest.mark.parametrize("name", ["quadratic", "scaled"])
def test_static_or_class_method_replaced_on_the_object_is_refused(name):
    obj = Energies(2.0)

    def f(y):
        return obj.loss(y)

    assert np.allclose(srcad.grad(f)(Y), 8 * Y + 4 * Y)
    setattr(obj, name, lambda y: np.sum(y ** 4))
    with pytest.raises(srcad.UnsupportedCaseError, match=rf"self\.{name}\(\.\.\.\) on this Energies object calls"):
        srcad.grad(f)(Y)


def make_wave(k):
    @srcad.custom_vjp
    def wave(x):
        return np.sin(k * x)

    @wave.defvjp
    def wave_vjp(y, x):
        d[x] += d[y] * k * np.cos(k * x)

    def set_k(value):
        nonlocal k
        k = value

    return wave, set_k


def test_rule_reads_a_closure_variable_and_is_guarded_on_it():
    wave2, set_k = make_wave(2.0)
    wave3, _ = make_wave(3.0)

    def loss(x):
        return np.sum(wave2(x)) + np.sum(wave3(x))

    g = srcad.grad(loss)
    assert np.allclose(g(X), 2 * np.cos(2 * X) + 3 * np.cos(3 * X))
    set_k(5.0)
    assert np.allclose(g(X), 5 * np.cos(5 * X) + 3 * np.cos(3 * X))
    check_grads(loss, (X,))


def test_rule_with_an_unknown_name_says_what_to_do():
    @srcad.custom_vjp
    def f(x):
        return x * 2.0

    @f.defvjp
    def f_vjp(y, x):
        d[x] += d[y] * not_defined_anywhere  # noqa: F821

    with pytest.raises(srcad.SrcadError, match="uses unknown name 'not_defined_anywhere'.*define it at module level"):
        srcad.grad(lambda x: np.sum(f(x)))(X)


@pytest.mark.parametrize("local", [True, False])
def test_library_call_without_rule_on_a_local_array(local):
    def f(lam, x):
        k = np.arange(4)
        return np.sum(st.poisson.logsf(k, lam) * x)

    def g(lam, x):
        return np.sum(st.poisson.logsf(np.array([0, 1, 2, 3]), lam) * x)

    with pytest.raises(srcad.NoRuleError, match=r"st\.poisson\.logsf\(\.\.\.\) has no derivative rule") as info:
        srcad.grad(f if local else g)(1.7, np.array([0.3, 1.1, 0.8, 2.1]))
    assert "'a'" not in str(info.value)
