"""Lists of objects and functions made in the function and iterated by a ``for`` loop
(``layers = [Dense(W1, 0.0), Dense(W2, 1.0)]``, ``fs = [lambda z: ..., np.sin]``): unrolled,
one copy of the body per item (``srcad/passes/local_lists.py``). Every mode against central
finite differences, second order, inputs unchanged; where the list or the loop variable could
be something else when read (the list mutated, aliased, returned; the variable read after the
loop or by a closure, late binding; a ``break``), refused as before, at the user's line."""
import numpy as np
import pytest

import srcad
from lang_checks import check_unchanged, refused
from srcad.testing import check_grads

RNG = np.random.default_rng(192)
X = RNG.standard_normal((2, 3))
W1 = RNG.standard_normal((3, 3)) / 2
W2 = RNG.standard_normal((3, 3)) / 2
LOCAL = "is a local variable, so srcad cannot tell which function it holds"


class Dense:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def __call__(self, x):
        return np.tanh(x @ self.W + self.b)


class Scale:
    def __init__(self, W):
        self.W = W

    def forward(self, x):
        return np.sin(x @ self.W)

    def __call__(self, x):
        return self.forward(x) * 2.0


class Counter:
    def __init__(self, W):
        self.W = W
        self.calls = 0.0

    def __call__(self, x):
        self.calls = self.calls + 1.0
        return np.tanh(x @ self.W) * self.calls


def cubic(z):
    return z * np.cos(z)


def net_display(x, W1, W2):
    layers = [Dense(W1, 0.0), Dense(W2, 1.0)]
    for layer in layers:
        x = layer(x)
    return np.sum(x ** 2)


def net_lambdas(x, W1, W2):
    fs = [lambda z: np.tanh(z @ W1), lambda z: np.sin(z @ W2)]
    for f in fs:
        x = f(x)
    return np.sum(x ** 2)


def net_functions(x, W1, W2):
    def g(z):
        return np.tanh(z @ W1)
    fs = (g, np.sin, cubic, lambda z: z @ W2)
    for f in fs:
        x = f(x)
    return np.sum(x ** 2)


def net_classes(x, W1, W2):  # items of different classes
    layers = [Scale(W1), Dense(W2, 0.5), Scale(W1 * W2)]
    for layer in layers:
        x = layer(x)
    return np.sum(x ** 2)


def net_twice(x, W1, W2):  # iterated twice, once per step of an outer loop: the same objects each time
    layers = [Counter(W1), Counter(W2)]
    for step in range(2):
        for layer in layers:
            x = layer(x) + 0.1 * step
    for layer in layers:
        x = x * layer.calls
    return np.sum(x ** 2)


def net_late_weights(x, W1, W2):  # a lambda reads W1 when called (late binding), as Python does
    fs = [lambda z: np.tanh(z @ W1), np.cos]
    W1 = W1 * 3.0
    for f in fs:
        x = f(x)
    return np.sum(x ** 2)


def net_else_return(x, W1, W2):
    layers = [Dense(W1, 0.0), Dense(W2, 1.0)]
    total = 0.0
    for layer in layers:
        x = layer(x)
        if np.sum(x) > 100.0:
            return np.sum(x)
        total = total + np.sum(x ** 2)
    else:
        total = total * 2.0
    return total


def attributes_set(x, W1, W2):  # an item's attribute set, in its copy of the body
    layers = [Dense(W1, 0.0), Dense(W2, 1.0)]
    for layer in layers:
        layer.W = layer.W * 2.0
        x = layer(x)
    return np.sum(x ** 2)


@pytest.mark.parametrize("f", [net_display, net_lambdas, net_functions, net_classes, net_twice, net_late_weights,
                               net_else_return, attributes_set])
@pytest.mark.parametrize("wrt", [0, 1])
def test_unrolled_in_every_mode(f, wrt):
    check_unchanged(f, X, W1, W2, wrt=wrt, value=True)


def test_empty_list_runs_nothing():
    def f(x, W1, W2):
        fs = []
        for g in fs:
            x = g(x)
        return np.sum(np.sin(x @ W1))
    check_unchanged(f, X, W1, W2, value=True)


def mutated(x, W1, W2):
    layers = [Dense(W1, 0.0)]
    layers.append(Dense(W2, 1.0))
    for layer in layers:
        x = layer(x)
    return np.sum(x ** 2)


def aliased(x, W1, W2):
    layers = [Dense(W1, 0.0), Dense(W2, 1.0)]
    same = layers
    same[0] = Dense(W2, 0.0)
    for layer in layers:
        x = layer(x)
    return np.sum(x ** 2)


def item_set(x, W1, W2):
    layers = [Dense(W1, 0.0), Dense(W2, 1.0)]
    layers[1] = Scale(W1)
    for layer in layers:
        x = layer(x)
    return np.sum(x ** 2)


def read_after(x, W1, W2):
    layers = [Dense(W1, 0.0), Dense(W2, 1.0)]
    for layer in layers:
        x = layer(x)
    return np.sum(layer(x) ** 2)


def late_closures(x, W1, W2):  # every closure calls the last item, as Python's late binding does
    fs = [lambda z: np.tanh(z @ W1), lambda z: np.sin(z @ W2)]
    gs = []
    for f in fs:
        gs.append(lambda z: f(z))
    for g in gs:
        x = g(x)
    return np.sum(x ** 2)


def with_break(x, W1, W2):
    layers = [Dense(W1, 0.0), Dense(W2, 1.0)]
    for layer in layers:
        x = layer(x)
        if np.sum(x) > 0.0:
            break
    return np.sum(x ** 2)


def defines(x, W1, W2):
    layers = [Dense(W1, 0.0), Dense(W2, 1.0)]
    for layer in layers:
        def twice(z):
            return 2.0 * z
        x = twice(layer(x))
    return np.sum(x ** 2)


def passed_on(x, W1, W2):
    layers = [Counter(W1), Counter(W2)]
    outs = []
    for layer in layers:
        x = layer(x)
        outs.append(layer)
    return np.sum(x ** 2) + outs[0].calls


def made_after(x, W1, W2):
    for layer in layers:  # noqa: F821 (bound below: Python raises UnboundLocalError)
        x = layer(x)
    layers = [Dense(W1, 0.0)]
    return np.sum(x ** 2)


def lambdas_of_loop_variable(x, Ws):  # late binding: each lambda reads the comprehension's last W
    fs = [lambda z: np.tanh(z @ W) for W in Ws]
    for f in fs:
        x = f(x)
    return np.sum(x ** 2)


@pytest.mark.parametrize("f, line", [(mutated, "x = layer(x)"), (aliased, "x = layer(x)"),
                                     (item_set, "x = layer(x)"), (read_after, "layer(x)"),
                                     (late_closures, "x = g(x)"), (with_break, "x = layer(x)"),
                                     (defines, "x = twice(layer(x))"),
                                     (passed_on, "x = layer(x)")])
def test_left_as_it_was_is_refused(f, line):
    refused(f, X, W1, W2, line_text=line, message=LOCAL)


class Hooked:
    def __init__(self, W):
        self.W = W

    def __getattr__(self, name):  # srcad keeps no such object's attributes in names
        return 0.0

    def __call__(self, x):
        return np.tanh(x @ self.W)


def hooked(x, W1, W2):
    layers = [Hooked(W1), Hooked(W2)]
    for layer in layers:
        x = layer(x)
    return np.sum(x ** 2)


def test_an_item_srcad_cannot_lower_is_refused_by_the_loop_name():
    refused(hooked, X, W1, W2, line_text="x = layer(x)", message="'layer' " + LOCAL)


def test_loop_before_the_list_is_refused():
    refused(made_after, X, W1, W2, line_text="x = layer(x)", message=LOCAL)


def test_lambdas_made_by_a_comprehension_are_refused():
    refused(lambdas_of_loop_variable, X, [W1, W2], line_text="x = f(x)", message=LOCAL)


def test_late_closures_run_as_python():  # what the refusal protects: Python calls the last item twice
    fs = [lambda z: np.tanh(z @ W1), lambda z: np.sin(z @ W2)]
    assert np.allclose(late_closures(X, W1, W2), np.sum(np.sin(np.sin(X @ W2) @ W2) ** 2))
    assert not np.allclose(late_closures(X, W1, W2), np.sum(fs[1](fs[0](X)) ** 2))


def test_a_foreign_item_is_refused_as_before():
    def f(x, W1, W2):
        fs = [np.sin, srcad]
        for g in fs:
            x = g(x)
        return np.sum(x)
    with pytest.raises(srcad.SrcadError, match=r"x = g\(x\)"):  # at the loop's line, as srcad(x) written there
        srcad.grad(f)(X, W1, W2)


WS = [W1, W2, RNG.standard_normal((3, 3)) / 2]
BS = [RNG.standard_normal(3), np.full(3, 0.5), RNG.standard_normal(3)]


def net_comprehension(x, Ws, bs):
    layers = [Dense(W, b) for W, b in zip(Ws, bs)]
    for layer in layers:
        x = layer(x)
    return np.sum(x ** 2)


def net_comprehension_names(x, Ws, bs):  # the function's own W is not the comprehension's
    W = Ws[0] * 2.0
    layers = [Scale(W) for W in Ws]
    for layer in layers:
        x = layer(x) + bs[0]
        if np.sum(x) > 100.0:
            break
    return np.sum((x @ W) ** 2) + np.sum(layer.W)


def net_comprehension_grows(x, Ws, bs):  # the body growing Ws: the list is read whole before it
    layers = [Dense(W, 0.0) for W in Ws]
    for layer in layers:
        x = layer(x)
        Ws.append(Ws[0])
    return np.sum(x ** 2)


def stacked(x, Wst, bs):  # the weights as one array, for the checks' random directions; a helper's comprehension
    return net_comprehension(x, [Wst[0], Wst[1], Wst[2]], bs) + net_comprehension_names(x, [Wst[2], Wst[0]], bs)


@pytest.mark.parametrize("f", [net_comprehension, net_comprehension_names])
def test_comprehension_in_every_mode(f):
    check_unchanged(f, X, WS, BS, value=True)
    check_grads(f, (X, WS, BS), wrt=1)


def test_comprehension_weights_in_every_mode():
    check_unchanged(stacked, X, np.stack(WS), BS, wrt=1, value=True)


def test_comprehension_whose_loop_grows_the_list_is_refused():  # srcad's check of in-place updates refuses it
    with pytest.raises(srcad.SrcadSyntaxError, match="in-place update of 'Ws'"):
        srcad.grad(net_comprehension_grows)(X, list(WS), BS)


def test_comprehension_over_an_empty_list():
    check_unchanged(net_comprehension, X, [], [], value=True)


class Doubled:
    def __init__(self, W):
        self.W = W * 2.0  # computes: left as before

    def __call__(self, x):
        return np.tanh(x @ self.W)


class Logged:
    log = []

    def __init__(self, W):
        self.W = W

    @property
    def W(self):
        return self._W

    @W.setter
    def W(self, value):  # runs code when the object is made: Python makes them all before the loop
        Logged.log.append(len(Logged.log))
        self._W = value

    def __call__(self, x):
        return np.tanh(x @ self.W)


def with_setter(x, Ws, bs):
    layers = [Logged(W) for W in Ws]
    for layer in layers:
        x = layer(x)
    return np.sum(x ** 2)


def filtered(x, Ws, bs):
    layers = [Dense(W, b) for W, b in zip(Ws, bs) if b is not None]
    for layer in layers:
        x = layer(x)
    return np.sum(x ** 2)


def computed(x, Ws, bs):
    layers = [Doubled(W) for W in Ws]
    for layer in layers:
        x = layer(x)
    return np.sum(x ** 2)


def iterated_twice(x, Ws, bs):
    layers = [Dense(W, b) for W, b in zip(Ws, bs)]
    for layer in layers:
        x = layer(x)
    for layer in layers:
        x = layer(x)
    return np.sum(x ** 2)


def apart(x, Ws, bs):
    layers = [Dense(W, b) for W, b in zip(Ws, bs)]
    x = x * 2.0
    for layer in layers:
        x = layer(x)
    return np.sum(x ** 2)


@pytest.mark.parametrize("f", [filtered, computed, iterated_twice, apart, with_setter])
def test_other_comprehensions_are_refused(f):
    refused(f, X, WS, BS, line_text="x = layer(x)", message=LOCAL)
