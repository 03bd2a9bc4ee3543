"""Objects made in the function the way application code makes them: a dataclass whose
``__post_init__`` derives attributes from its fields, and an object made only to call a method
on it (``Ridge(w).loss(x)``, ``Layer(w)(x)``, a record's method). Lowered by
``passes.local_objects`` (``local_classes``), every mode against central finite differences,
inputs unchanged; where the generated ``__init__`` would not be the function srcad runs (a
``default_factory``, an ``InitVar``, a field's name read in ``__post_init__``), refused at the
user's line, saying what to change."""
import dataclasses
import typing

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes
from srcad import SrcadError
from srcad.testing import check_grads

RNG = np.random.default_rng(3434)
W = RNG.standard_normal(3) * 0.5
X = RNG.standard_normal((4, 3))
Y = RNG.standard_normal(4)
lam = 0.25  # a module name a field is also called: __post_init__ reading it would be captured


@dataclasses.dataclass
class Ridge:
    W: np.ndarray
    lam: float = 0.1

    def __post_init__(self):
        self.scale = 1.0 / self.W.shape[0]
        self.W2 = self.W * self.W

    def loss(self, X, y):
        r = X @ self.W - y
        return self.scale * np.sum(r ** 2) + self.lam * np.sum(self.W2)


@dataclasses.dataclass
class Plain:  # a record: no __post_init__
    W: np.ndarray
    shift: float = 0.5

    def predict(self, X):
        return np.tanh(X @ self.W + self.shift)


class Layer:
    def __init__(self, w, gain=2.0):
        self.w = w
        self.gain = gain

    def __call__(self, x):
        return self.gain * np.sin(x @ self.w)

    def loss(self, x, y):
        return np.sum((self(x) - y) ** 2)


class Point(typing.NamedTuple):
    p: np.ndarray
    q: float

    def energy(self):
        return 0.5 * np.sum(self.p ** 2) + self.q


def ridge_keyword(w, x, y):
    model = Ridge(w, lam=0.05)
    return model.loss(x, y)


def ridge_default(w, x, y):
    model = Ridge(w)
    return model.loss(x, y) * 2.0


def ridge_in_a_loop(w, x, y):
    total = 0.0
    for k in range(3):
        model = Ridge(w * (1.0 + 0.1 * k), 0.01 * k)
        total = total + model.loss(x, y)
    return total


def temporary_ridge(w, x, y):
    return Ridge(w, 0.2).loss(x, y)


def temporary_record(w, x, y):
    p = Plain(w).predict(x)
    return np.sum((p - y) ** 2)


def temporary_called(w, x, y):
    z = Layer(w)(x)
    fit = Layer(w, 0.5).loss(x, y)
    return np.sum(z * y) + fit


def temporary_named_tuple(w, x, y):
    return Point(w * 2.0, float(np.sum(y))).energy()


def temporary_beside_a_local(w, x, y):
    ridge = np.sum(w)  # the name a temporary Ridge would take: it takes another
    fit = Ridge(w, 0.3).loss(x, y)
    return fit + ridge ** 2


CASES = [ridge_keyword, ridge_default, ridge_in_a_loop, temporary_ridge, temporary_record, temporary_called,
         temporary_named_tuple, temporary_beside_a_local]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_every_mode_matches_finite_differences(fn):
    w, x, y = W.copy(), X.copy(), Y.copy()
    check_all_modes(fn, (w, x, y), wrt=0)
    check_grads(fn, (w, x, y), wrt=(0, 1))
    assert np.array_equal(w, W) and np.array_equal(x, X) and np.array_equal(y, Y)


def test_gradient_is_the_fields_derivative():
    """2 scale Xᵀ(Xw - y) + 2 lam w, with lam the keyword given and scale from __post_init__."""
    g = srcad.grad(ridge_keyword)(W, X, Y)
    expected = 2.0 / 3 * X.T @ (X @ W - Y) + 2 * 0.05 * W
    np.testing.assert_allclose(g, expected, rtol=1e-12)


@dataclasses.dataclass
class Factory:
    W: np.ndarray
    bias: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(4))

    def __post_init__(self):
        self.total = self.bias.sum()

    def out(self, X):
        return np.sum(X @ self.W) + self.total


@dataclasses.dataclass
class WithInitVar:
    W: np.ndarray
    scale: dataclasses.InitVar[float] = 1.0

    def __post_init__(self, scale):
        self.V = self.W * scale

    def out(self, X):
        return np.sum(X @ self.V)


@dataclasses.dataclass
class ReadsAGlobal:
    W: np.ndarray
    lam: float = 1.0

    def __post_init__(self):
        self.penalty = lam * np.sum(self.W ** 2)  # the module's lam, not the field

    def out(self, X):
        return np.sum(X @ self.W) + self.penalty


def with_factory(w, x):
    m = Factory(w)
    return m.out(x)


def with_init_var(w, x):
    m = WithInitVar(w, 2.0)
    return m.out(x)


def reads_a_global(w, x):
    m = ReadsAGlobal(w, 3.0)
    return m.out(x)


@pytest.mark.parametrize("fn, says", [
    (with_factory, "default of its field 'bias' is not a literal"),
    (with_init_var, "InitVar"),
    (reads_a_global, "uses the name 'lam', which is also a field's"),
])
def test_a_dataclass_init_that_is_not_that_function_is_refused(fn, says):
    with pytest.raises(SrcadError) as info:
        srcad.grad(fn)(W, X)
    message = str(info.value)
    assert says in message and "test_local_objects_34.py" in message
    assert fn(W, X) == fn(W, X)  # (the program itself runs)


def made_inside_an_expression(w, x, y):
    return np.sum(y) + Ridge(w, 0.3).loss(x, y)


def test_an_object_made_inside_an_expression_is_refused_saying_name_it():
    """Named first, ``Ridge(w, 0.3)`` would run before ``np.sum(y)``: srcad leaves it, and asks."""
    for mode in (srcad.grad(made_inside_an_expression), lambda *a: srcad.jvp(made_inside_an_expression, a,
                                                                              (W, None, None))):
        with pytest.raises(SrcadError) as info:
            mode(W, X, Y)
        assert "name it first (obj = Ridge(...))" in str(info.value)
        assert "test_local_objects_34.py:" in str(info.value)


class Holder:
    def __init__(self, a):
        self.a = a

    def copy(self):  # not a copy: the array itself
        return self.a


def updates_what_a_method_returned(x):
    w = Holder(x).copy()
    w[0] = 1.0
    return np.sum(w * 2.0)


def test_advice_for_a_copy_method_of_yours_speaks_of_the_call_written():
    """Lowered, ``Holder(x).copy()`` is srcad's function of the object's attributes: the advice
    names the call the user wrote and a copy that is one (np.array), not srcad's function."""
    with pytest.raises(SrcadError) as info:
        srcad.grad(updates_what_a_method_returned)(W.copy())
    message = str(info.value)
    assert "'w = np.array(Holder(x).copy(...))'" in message and "test_local_objects_34.py:" in message
    assert "_holder" not in message
