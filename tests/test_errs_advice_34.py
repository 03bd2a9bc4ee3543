"""Refusals whose advice works. Instrumentation inside a function srcad differentiates (a call
counter, a log) is refused naming the user's line and saying what to write, and the spelling
it recommends runs as written, once per call, beside the right gradient; a model held in a
plain object, differentiated with respect to, is refused saying to make it a dataclass, and
that version's gradient matches finite differences."""
import dataclasses

import numpy as np
import pytest

import srcad
from srcad import ArgumentError, SrcadError
from srcad.testing import check_grads

count = 0
CALLS = [0]
LOG = {"n": 0}
HISTORY = []
X = np.array([0.3, -0.2, 0.5])


def counted_by_global(x):
    global count
    count += 1
    return np.sum(np.exp(-x ** 2))


def counted_in_a_list(x):
    CALLS[0] += 1
    return np.sum(np.exp(-x ** 2))


def counted_in_a_dict(x):
    LOG["n"] = LOG["n"] + 1
    return np.sum(np.exp(-x ** 2))


def made_as_a_generator(x):
    for v in x:
        yield np.sin(v)


def deletes(x):
    y = x * 2.0
    del y
    return np.sum(x)


@pytest.mark.parametrize("fn, says", [
    (counted_by_global, "count calls or keep a log, do it in a function of yours that calls the derivative"),
    (counted_in_a_list, "CALLS.append(srcad.stop_gradient(value))' runs as written); to count calls, count them in "
                        "a function of yours that calls the derivative"),
    (counted_in_a_dict, "LOG.update({'n': srcad.stop_gradient((LOG['n'] + 1))})"),
    (made_as_a_generator, "collect the values in a list and return it"),
    (deletes, "remove it, or build the list or dict without the item"),
], ids=lambda a: getattr(a, "__name__", "says"))
def test_refused_at_the_line_saying_what_to_write(fn, says):
    before = (count, list(CALLS), dict(LOG))
    with pytest.raises(SrcadError) as info:
        srcad.grad(fn)(X)
    message = str(info.value)
    assert says in message
    assert "test_errs_advice_34.py:" in message
    assert "copy first" not in message  # (the old advice for CALLS[0] += 1: a copy stored back is a store too)
    assert (count, list(CALLS), dict(LOG)) == before  # nothing ran


def logged(x):
    y = np.sum(np.exp(-x ** 2))
    HISTORY.append(srcad.stop_gradient(y))
    return y


def test_the_advised_log_runs_as_written_once_per_call():
    HISTORY.clear()
    g = srcad.grad(logged)(X)
    np.testing.assert_allclose(g, -2 * X * np.exp(-X ** 2), rtol=1e-12)
    assert len(HISTORY) == 1 and HISTORY[0] == pytest.approx(np.sum(np.exp(-X ** 2)))


def test_the_advised_counter_around_the_derivative():
    calls = [0]
    grad_f = srcad.grad(counted_plain)

    def counted(x):
        calls[0] += 1
        return grad_f(x)

    for _ in range(3):
        g = counted(X)
    assert calls[0] == 3
    np.testing.assert_allclose(g, -2 * X * np.exp(-X ** 2), rtol=1e-12)


def counted_plain(x):
    return np.sum(np.exp(-x ** 2))


class PlainLinear:
    def __init__(self, W, b):
        self.W = W
        self.b = b


@dataclasses.dataclass
class Linear:
    W: np.ndarray
    b: np.ndarray


@dataclasses.dataclass
class Stack:
    layers: list


def fit(model, x, y):
    h = x
    for layer in model.layers:
        h = np.tanh(h @ layer.W + layer.b)
    return np.mean((h - y) ** 2)


def plain_fit(layer, x, y):
    return np.mean((np.tanh(x @ layer.W + layer.b) - y) ** 2)


def test_a_model_in_a_plain_object_is_refused_saying_make_it_a_dataclass():
    rng = np.random.default_rng(34)
    x, y = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    with pytest.raises(ArgumentError) as info:
        srcad.grad(plain_fit, wrt=0)(PlainLinear(rng.standard_normal((3, 2)), rng.standard_normal(2)), x, y)
    assert "make PlainLinear a dataclass (@dataclasses.dataclass, its arrays as fields)" in str(info.value)
    model = Stack([Linear(rng.standard_normal((3, 4)), rng.standard_normal(4)),
                   Linear(rng.standard_normal((4, 2)), rng.standard_normal(2))])
    g = check_grads(fit, (model, x, y), wrt=0)  # the advised version
    assert isinstance(g, Stack) and isinstance(g.layers[1], Linear) and g.layers[1].W.shape == (4, 2)
