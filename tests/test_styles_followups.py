"""Follow-ups of the styles corpora (test_realistic_styles_2, test_local_lists,
test_objects_in_lists), written as other projects write code: ``max``/``min`` of lists (a
lexicographic pick, as a beam search ranks candidates), a loss method that caches a value on
``self`` (refused at its line with what to write), a decorator library's
``functools.wraps(fn)(lambda *a: ...)`` (refused saying a def wrapper is what srcad follows).
Derivatives against central finite differences (``check_grads``: reverse and forward, and
second order for scalar functions); refusals by message and line."""
import functools
import linecache

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads

RNG = np.random.default_rng(203)
X = RNG.standard_normal((4, 3))
W = RNG.standard_normal((3, 3)) / 2


def best_candidate(x):  # ranks two [score, tie-break] candidates as lists, Python's order
    first = [np.sum(np.tanh(x)), np.sum(x ** 2)]
    second = [np.sum(np.sin(x)), np.sum(x ** 3)]
    top = max(first, second)
    low = min(second, first)
    return top[0] * 2.0 + top[1] + low[0] * low[1]


def best_of_three(x):  # three lists, the middle one chosen for X
    a = [np.sum(x) - 100.0, np.sum(x * x)]
    b = [np.sum(x) + 100.0, np.sum(np.cos(x))]
    c = [np.sum(x), np.sum(x)]
    picked = max(a, b, c)
    return picked[0] + 3.0 * picked[1]


@pytest.mark.parametrize("f", [best_candidate, best_of_three])
def test_max_and_min_of_lists_in_every_mode(f):
    assert srcad.grad(f)(X).shape == X.shape
    check_grads(f, (X,), modes=["rev", "fwd"])
    check_grads(f, (X,), order=2)


def test_max_of_lists_value_is_pythons():
    value, _ = srcad.vjp(best_candidate, X)
    assert np.allclose(value, best_candidate(X))


class Regressor:
    """A scikit-learn-style model whose loss keeps its last predictions for a later report."""

    def __init__(self, W):
        self.W = W
        self.predictions_ = None

    def loss(self, x):
        h = np.tanh(x @ self.W)
        self.predictions_ = h
        return np.mean(h ** 2)


def _refusal(call, line_text, message):
    with pytest.raises(srcad.SrcadSyntaxError) as info:
        call()
    err = info.value
    assert message in str(err), str(err)
    assert err.filename == __file__
    assert line_text in linecache.getline(err.filename, err.lineno)
    return str(err)


def test_a_loss_that_caches_on_self_is_refused_with_what_to_write():
    model = Regressor(W)
    message = _refusal(lambda: srcad.grad(model.loss)(X), "self.predictions_ = h", "self.predictions_ = ...")
    assert "has_aux=True" in message and "compute it outside" in message


def test_a_loss_that_caches_on_an_argument_model_is_refused_alike():
    def objective(model, x):
        return model.loss(x)
    _refusal(lambda: srcad.grad(objective, wrt=1)(Regressor(W), X), "self.predictions_ = h",
             "return the value instead")


class LazyRegressor(Regressor):
    def __init__(self, W):  # predictions_ made by the first loss only
        self.W = W


def test_a_loss_that_caches_on_an_object_made_here_is_refused_alike():
    def objective(W, x):
        return LazyRegressor(W).loss(x)
    with pytest.raises(srcad.SrcadError) as info:
        srcad.grad(objective)(W, X)
    message = str(info.value)
    assert "loss sets self.predictions_, which its __init__ does not set" in message and "has_aux=True" in message
    assert f"{__file__}:{objective.__code__.co_firstlineno + 1}:" in str(info.value)  # the call's line


def test_the_advice_works():  # what the message says to write: the value returned as aux
    class Fixed(Regressor):
        def loss_and_predictions(self, x):
            h = np.tanh(x @ self.W)
            return np.mean(h ** 2), h

    model = Fixed(W)
    gradient, predictions = srcad.grad(model.loss_and_predictions, has_aux=True)(X)
    assert np.allclose(predictions, np.tanh(X @ W))
    check_grads(lambda x: model.loss_and_predictions(x)[0], (X,), modes=["rev", "fwd"])


def traced(fn):  # a decorator library's one-liner
    return functools.wraps(fn)(lambda *args: fn(*args))


@traced
def energy(x):
    return np.sum(np.sin(x) ** 2)


def total_energy(x):
    return energy(x) * 2.0


def traced_def(fn):  # what the message says to write
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@traced_def
def energy_def(x):
    return np.sum(np.sin(x) ** 2)


def total_energy_def(x):
    return energy_def(x) * 2.0


def test_a_lambda_wrapper_is_refused_saying_what_to_write():
    message = _refusal(lambda: srcad.grad(total_energy)(X), "return energy(x) * 2.0", "a lambda a decorator made")
    assert "def wrapper(*args, **kwargs): return f(*args, **kwargs)" in message
    assert "does more than" not in message  # it does no more: the old message said so


def test_the_def_wrapper_works():
    check_grads(total_energy_def, (X,), modes=["rev", "fwd"])
    check_grads(total_energy_def, (X,), order=2)


class Linear:
    """A PyTorch-style layer: weight and bias, called on a batch."""

    def __init__(self, weight, bias=0.0):
        self.weight, self.bias = weight, bias

    def __call__(self, x):
        return x @ self.weight + self.bias


W2 = RNG.standard_normal((3, 3)) / 2


def residual_stack(x, W, W2):  # the index scales each block, as a depth-scaled residual net does
    blocks = [Linear(W), Linear(W2, 0.5), Linear(W * W2)]
    for i, block in enumerate(blocks):
        x = x + np.tanh(block(x)) / (i + 1.0)
    return np.mean(x ** 2)


def sequential_with_lambdas(x, W, W2):  # a Keras-style Sequential of layers and activations
    model = [Linear(W), np.tanh, Linear(W2), lambda z: z * np.exp(-z * z)]
    for depth, layer in enumerate(model):
        x = layer(x)
        if depth % 2 == 1:
            x = x * 0.9
    return np.sum(x ** 2)


def _in_every_mode(f, wrt):
    """The value, and the derivatives in both modes and at second order, against finite differences."""
    value, _ = srcad.vjp(f, X, W, W2, wrt=wrt)
    assert np.allclose(value, f(X, W, W2))
    check_grads(f, (X, W, W2), wrt=wrt, modes=["rev", "fwd"])
    check_grads(f, (X, W, W2), wrt=wrt, order=2)


@pytest.mark.parametrize("f", [residual_stack, sequential_with_lambdas])
@pytest.mark.parametrize("wrt", [0, 1])
def test_enumerate_over_a_local_list_in_every_mode(f, wrt):
    _in_every_mode(f, wrt)


def index_read_after(x, W, W2):  # Python's i after the loop is the last index: left as it was
    blocks = [Linear(W), Linear(W2)]
    for i, block in enumerate(blocks):
        x = np.tanh(block(x))
    return np.sum(x ** 2) * i


def index_rebound(x, W, W2):
    blocks = [Linear(W), Linear(W2)]
    for i, block in enumerate(blocks):
        i = i + 1
        x = np.tanh(block(x)) * i
    return np.sum(x ** 2)


def counted_from_one(x, W, W2):  # enumerate's start: not unrolled (refused as before)
    blocks = [Linear(W), Linear(W2)]
    for i, block in enumerate(blocks, 1):
        x = np.tanh(block(x)) * i
    return np.sum(x ** 2)


@pytest.mark.parametrize("f", [index_read_after, index_rebound, counted_from_one])
def test_enumerate_where_the_index_is_not_only_read_in_the_body_is_refused(f):
    _refusal(lambda: srcad.grad(f)(X, W, W2), "block(x)", "'block' is a local variable")


def indexed_layers(x, W, W2):  # the C-style loop over indices, the head taken as layers[-1]
    layers = [Linear(W), Linear(W2, 0.25), Linear(W * 0.5)]
    for i in range(len(layers)):
        x = np.tanh(layers[i](x)) + 0.1 * i
    return np.sum(layers[-1](x) ** 2) + np.sum(layers[0].weight * W2)


def encoder_decoder(x, W, W2):  # items read by position, no loop
    parts = (Linear(W), lambda z: np.sin(z) * 2.0, Linear(W2))
    encoded = parts[1](parts[0](x))
    return np.mean(parts[2](encoded) ** 2) + np.mean(parts[-3](x))


@pytest.mark.parametrize("f", [indexed_layers, encoder_decoder])
@pytest.mark.parametrize("wrt", [0, 1])
def test_items_read_by_position_in_every_mode(f, wrt):
    _in_every_mode(f, wrt)


def past_the_end(x, W, W2):  # Python raises IndexError: left as it was
    layers = [Linear(W), Linear(W2)]
    return np.sum(layers[2](x) ** 2)


def index_of_another_range(x, W, W2):  # range(2), not range(len(layers)): i is not known to fit
    layers = [Linear(W), Linear(W2)]
    for i in range(2):
        x = np.tanh(layers[i](x))
    return np.sum(x ** 2)


def item_replaced(x, W, W2):  # the list changed: its items are not what it was made with
    layers = [Linear(W), Linear(W2)]
    layers[0] = Linear(W2)
    for i in range(len(layers)):
        x = np.tanh(layers[i](x))
    return np.sum(x ** 2)


def length_read_otherwise(x, W, W2):
    layers = [Linear(W), Linear(W2)]
    for i in range(len(layers)):
        x = np.tanh(layers[i](x)) * len(layers)
    return np.sum(x ** 2)


@pytest.mark.parametrize("f", [past_the_end, index_of_another_range, item_replaced, length_read_otherwise])
def test_items_read_otherwise_are_refused(f):
    _refusal(lambda: srcad.grad(f)(X, W, W2), "layers[", "srcad cannot tell which function this call calls")


class Hooked(Linear):
    def __getattr__(self, name):  # srcad keeps no such object's attributes in names
        return 0.0


def hooked_head(x, W, W2):
    layers = [Hooked(W), Hooked(W2)]
    return np.sum(layers[1](x) ** 2)


def test_an_item_read_by_position_srcad_cannot_lower_is_named_by_its_position():
    _refusal(lambda: srcad.grad(hooked_head)(X, W, W2), "layers[1](x)", "'layers[1]' is a local variable")


def gated_blocks(x, W, W2, gates):  # zip with an argument's list: as long as the shorter, as in Python
    blocks = [Linear(W), Linear(W2, 0.5), Linear(W * W2)]
    for block, gate in zip(blocks, gates):
        x = x + gate * np.tanh(block(x))
    return np.mean(x ** 2)


def named_blocks(x, W, W2, gates):  # three iterables, the list first; the others' names stay loop variables
    blocks = [Linear(W), lambda z: np.sin(z @ W2)]
    total = 0.0
    for block, gate, row in zip(blocks, gates, x):
        h = np.tanh(block(x)) * gate
        total = total + np.sum(h ** 2) + np.sum(row) * gate
    return total + gate


@pytest.mark.parametrize("gates", [[0.5, 2.0, -1.0], [0.5, 2.0], [0.25, 1.0, 2.0, 3.0]])
@pytest.mark.parametrize("f", [gated_blocks, named_blocks])
@pytest.mark.parametrize("wrt", [0, 1])
def test_zip_of_a_local_list_in_every_mode(f, gates, wrt):
    value, _ = srcad.vjp(f, X, W, W2, gates, wrt=wrt)
    assert np.allclose(value, f(X, W, W2, gates))
    check_grads(f, (X, W, W2, gates), wrt=wrt, modes=["rev", "fwd"])
    check_grads(f, (X, W, W2, gates), wrt=wrt, order=2)


def zipped_strictly(x, W, W2, gates):  # strict=True raises where the lengths differ: left as it was
    blocks = [Linear(W), Linear(W2)]
    for block, gate in zip(blocks, gates, strict=True):
        x = gate * np.tanh(block(x))
    return np.sum(x ** 2)


def block_read_after(x, W, W2, gates):
    blocks = [Linear(W), Linear(W2)]
    for block, gate in zip(blocks, gates):
        x = gate * np.tanh(block(x))
    return np.sum(block(x) ** 2)


@pytest.mark.parametrize("f", [zipped_strictly, block_read_after])
def test_zip_where_python_could_differ_is_refused(f):
    _refusal(lambda: srcad.grad(f)(X, W, W2, [1.0, 2.0]), "block(x)", "'block' is a local variable")
