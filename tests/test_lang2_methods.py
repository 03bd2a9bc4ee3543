"""Methods calling methods (issue 10): ``self.step(x)`` inside a method of a class holding its
parameters is differentiated as ``C.step(self, x)`` (``C``: the class whose method calls it), and
``model.loss(x)`` on a global object as the method it is bound to. When the code runs, the
object must really call that function (no override in a subclass, no attribute shadowing it):
else a srcad error. Every mode against central finite differences."""
import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes

X = np.array([0.4, -0.7, 1.1])
RNG = np.random.default_rng(3)


class MLP:
    """Two layers; the loss calls forward, which calls layer twice."""

    def __init__(self, sizes):
        self.Ws = [RNG.standard_normal((m, n)) * 0.5 for n, m in zip(sizes[:-1], sizes[1:])]
        self.bs = [RNG.standard_normal(m) * 0.1 for m in sizes[1:]]
        self.cfg = {"act": "tanh", "reg": 0.01}

    def layer(self, h, i):
        return np.tanh(self.Ws[i] @ h + self.bs[i])

    def forward(self, x):
        h = x
        for i in range(len(self.Ws)):
            h = self.layer(h, i)
        return h

    def loss(self, x):
        out = self.forward(x)
        return np.sum(out ** 2) + self.cfg["reg"] * np.sum(x ** 2)


class Pendulum:
    """A simulation object: step is a method, run loops over it."""

    def __init__(self, g, length):
        self.g, self.length = g, length

    def rhs(self, state):
        return np.array([state[1], -self.g / self.length * np.sin(state[0])])

    def step(self, state, dt):
        k1 = self.rhs(state)
        k2 = self.rhs(state + dt * k1)
        return state + dt / 2 * (k1 + k2)

    def energy(self, state0):
        state = state0
        for _ in range(5):
            state = self.step(state, 0.05)
        return 0.5 * state[1] ** 2 + self.g / self.length * (1 - np.cos(state[0]))


class Scaled:
    def __init__(self, scale):
        self.scale = scale

    def inner(self, x):
        return np.sin(x) * self.scale

    def through_lambda(self, x):
        apply = lambda t: self.inner(t) * t  # noqa: E731  (self read from the method's scope)
        return np.sum(apply(x))

    @srcad.differentiable
    def decorated(self, x):
        return np.sum(self.inner(x) ** 2)


class Shifted(Scaled):
    """Inherits the caller; a method it reaches through self is found on the base class."""

    def total(self, x):
        return np.sum(self.inner(x)) + self.through_lambda(x)


class Overriding(Scaled):
    def inner(self, x):
        return np.cos(x)


MODEL = MLP([3, 4, 2])
PENDULUM = Pendulum(9.81, 1.5)


def global_model_loss(x):
    return MODEL.loss(x) * 2.0


def global_method_in_a_loop(x):
    total = 0.0
    for i in range(2):
        total = total + np.sum(MODEL.layer(x * (i + 1.0), 0))
    return total


def euler(f, state, dt):
    return state + dt * f(state)


def bound_method_passed_to_a_helper(state0):
    state = state0
    for _ in range(3):
        state = euler(PENDULUM.rhs, state, 0.1)
    return np.sum(state ** 2)


@pytest.mark.parametrize("fn, args", [
    (bound_method_passed_to_a_helper, (np.array([0.3, -0.2]),)),
    (MODEL.loss, (X,)),
    (MLP.loss, (MODEL, X)),
    (PENDULUM.energy, (np.array([0.3, -0.2]),)),
    (Scaled(1.5).through_lambda, (X,)),
    (Shifted(0.7).total, (X,)),
    (global_model_loss, (X,)),
    (global_method_in_a_loop, (X,)),
], ids=["passed_to_a_helper", "bound_method", "through_class", "simulation", "lambda", "inherited", "global_object", "global_in_loop"])
def test_a_method_calling_methods_through_self(fn, args):
    check_all_modes(fn, args, wrt=len(args) - 1)


def test_a_decorated_method_calling_another_through_self():
    obj = Scaled(1.5)
    check_all_modes(obj.decorated, (X,))
    np.testing.assert_allclose(obj.decorated.grad(X), srcad.grad(obj.decorated)(X))


def test_a_subclass_overriding_the_method_called_through_self_is_refused():
    with pytest.raises(srcad.UnsupportedCaseError, match=r"test_lang2_methods.py:\d+: self.inner\(...\) on this "
                                                         r"Overriding object calls Overriding.inner, not Scaled.inner"):
        srcad.grad(through_an_object_in_a_list)(X)


def test_a_global_object_of_a_subclass_is_compiled_for_its_class():
    """``OVERRIDING.through_lambda(x)`` runs Scaled.through_lambda on an Overriding: its
    ``self.inner`` is Overriding.inner, which the code is made for (it was refused)."""
    check_all_modes(through_a_global_object, (X,))
    np.testing.assert_allclose(srcad.grad(through_a_global_object)(X), np.cos(X) - np.sin(X) * X)  # Σ cos(x)·x


OVERRIDING = Overriding(2.0)
OBJECTS = [Overriding(2.0)]


def through_a_global_object(x):
    return OVERRIDING.through_lambda(x)  # Scaled.through_lambda on an Overriding: its self.inner is Overriding's


def through_an_object_in_a_list(x):
    obj = OBJECTS[0]  # a class known only when the code runs
    return Scaled.through_lambda(obj, x)


def through_the_base_class(obj, x):
    return Scaled.through_lambda(obj, x)  # compiled for the class of the object passed


def test_a_helper_given_an_object_calls_the_method_of_its_class():
    check_all_modes(through_the_base_class, (Overriding(2.0), X), wrt=1)
    np.testing.assert_allclose(srcad.grad(through_the_base_class, wrt=1)(Overriding(2.0), X),
                               srcad.grad(Overriding(2.0).through_lambda)(X), rtol=1e-12)


def test_the_method_of_the_bound_object_is_its_class_own():
    obj = Overriding(2.0)  # self is an argument here: its class is known when compiling
    check_all_modes(obj.through_lambda, (X,))
    np.testing.assert_allclose(srcad.grad(obj.through_lambda)(X), -np.sin(X) * X + np.cos(X), rtol=1e-12)


def test_an_attribute_shadowing_the_method_is_the_function_python_calls():
    obj = Scaled(2.0)
    obj.inner = lambda x: x * 3.0  # a function the object holds (passes.held_calls)
    np.testing.assert_allclose(srcad.grad(obj.through_lambda)(X), 6.0 * X, rtol=1e-12)
    check_all_modes(obj.through_lambda, (X,))
    del obj.inner
    check_all_modes(obj.through_lambda, (X,))  # the same object, the same compiled code, checked again


def test_redefining_the_method_on_the_class_recompiles(monkeypatch):
    obj = Scaled(1.0)
    before = srcad.grad(obj.through_lambda)(X)
    monkeypatch.setattr(Scaled, "inner", lambda self, x: x * x)
    after = srcad.grad(obj.through_lambda)(X)
    np.testing.assert_allclose(after, 3 * X ** 2, rtol=1e-12)
    assert not np.allclose(before, after)


class Model:
    """A model called as a function (PyTorch's style): ``model(x)`` runs ``__call__``."""

    def __init__(self):
        self.W = RNG.standard_normal((3, 3)) * 0.5

    def __call__(self, x):
        return np.sum(np.tanh(self.W @ x) ** 2)


def test_an_object_with_a_call_method_is_that_method_bound_to_it():
    model = Model()
    check_all_modes(model, (X,))
    g = srcad.grad(model)(X)
    np.testing.assert_allclose(g, srcad.grad(model.__call__)(X), rtol=1e-12)
    y, pullback = srcad.vjp(model, X)
    np.testing.assert_allclose(pullback(1.0), g, rtol=1e-12)
    assert np.shape(srcad.jacobian(model)(X)) == (3,)


class CallsForward:
    def __call__(self, x):
        return self.forward(x)


class TanhLayer(CallsForward):
    def forward(self, x):
        return np.tanh(x)


class SineLayer(CallsForward):
    def __init__(self, scale):
        self.scale = scale

    def forward(self, x):
        return np.sin(self.scale * x)


activation = TanhLayer()


def loss_through_a_called_object(x):
    return np.sum(activation(x) ** 2)


def test_a_global_object_called_like_a_function():
    """``activation(x)`` of a module-level layer whose base class's ``__call__`` forwards to
    ``self.forward`` was refused with NoRuleError naming an object repr (probe 10B); it is
    ``type(activation).__call__(activation, x)``, compiled for the object's class, and follows a
    rebinding of the global to an object of another class."""
    global activation
    from loop_checks import all_modes

    x = np.array([0.3, -0.5, 1.1])
    all_modes(loss_through_a_called_object, (x,))
    f = srcad.differentiable(loss_through_a_called_object)
    np.testing.assert_allclose(f.grad(x), 2 * np.tanh(x) * (1 - np.tanh(x) ** 2))
    saved = activation
    try:
        activation = SineLayer(2.0)
        np.testing.assert_allclose(f.grad(x), 2 * np.sin(2 * x) * np.cos(2 * x) * 2)
    finally:
        activation = saved


class Scaling(CallsForward):
    def __init__(self, a):
        self.a = a

    def forward(self, x):
        return self.a * x


class Wrapped(CallsForward):
    def __init__(self, inner):
        self.inner = inner

    def forward(self, x):
        return np.tanh(self.inner(x))


def module_loss(net, x):
    return np.sum(net(x) ** 2)


def test_a_base_class_call_reached_again_for_another_class_is_not_recursion():
    # probe 18A: CallsForward.__call__ for the Wrapped net calls it again for the Scaling it
    # holds; refused as "calls itself" (recursion was known by the code alone)
    net = Wrapped(Scaling(np.array([0.5, -1.0])))
    check_all_modes(module_loss, (net, X[:2]), wrt=1)
