"""Red team of the round's new acceptances (helper 182): a record's field set in a finally after
the record is returned, an alternative constructor rebound or given other defaults after the
code was compiled."""
import collections
import dataclasses

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes, refused
from srcad.testing import check_grads


@dataclasses.dataclass
class Params:
    w: np.ndarray
    b: float = 0.5


def returned_then_set_in_finally(x):
    p = Params(x, 2.0)
    try:
        return p
    finally:
        p.w = x * 3.0  # runs after the return: the record returned has this w


def through_finally(x):
    return np.sum(returned_then_set_in_finally(x).w)


X = np.array([0.3, -0.5, 0.8])


def a_field_returned_then_set_in_finally(x):
    p = Params(x, 2.0)
    try:
        return np.sum(p.w ** 2)  # the value is made before the finally runs
    finally:
        p.w = x * 3.0


def test_a_record_returned_inside_a_try_with_a_finally_is_refused():
    refused(through_finally, X.copy(), line_text="p.w = x * 3.0",
            message="returns it inside a try whose finally runs after the return")
    check_all_modes(a_field_returned_then_set_in_finally, (X.copy(),))


class Model:
    def __init__(self, w, k=1.0):
        self.w = w
        self.k = k

    @classmethod
    def from_params(cls, w, k=3.0):
        v = w * 2.0
        return cls(v, k=k)

    @classmethod
    def from_sines(cls, w, k=3.0):
        return cls(np.sin(w), k=k)

    def loss(self, x):
        return np.sum(self.w * x) * self.k


def built_by_class_method(x):
    m = Model.from_params(x)
    return m.loss(x)


def test_a_class_method_rebound_after_compiling_compiles_anew():
    gradient = srcad.grad(built_by_class_method)
    gradient(X.copy())
    original = Model.__dict__["from_params"]
    Model.from_params = Model.__dict__["from_sines"]
    try:
        assert srcad.value_and_grad(built_by_class_method)(X.copy())[0] == pytest.approx(built_by_class_method(X))
        check_all_modes(built_by_class_method, (X.copy(),))
    finally:
        Model.from_params = original


def test_a_class_method_given_other_defaults_compiles_with_them():
    gradient = srcad.grad(built_by_class_method)
    gradient(X.copy())
    function = Model.__dict__["from_params"].__func__
    function.__defaults__ = (7.0,)  # not what its source says
    try:
        assert srcad.value_and_grad(built_by_class_method)(X.copy())[0] == pytest.approx(built_by_class_method(X))
        check_all_modes(built_by_class_method, (X.copy(),))
    finally:
        function.__defaults__ = (3.0,)


SCALES = np.array([2.0, 3.0, 4.0])


@srcad.custom_vjp
def scaled_by_default(x, s=SCALES):
    return x * s


@scaled_by_default.defvjp
def scaled_by_default_vjp(y, x, s=1.0):  # a literal for the function's array: not what ran
    d[x] += d[y] * s


def leaves_out_an_array_default(x):
    return np.sum(scaled_by_default(x) ** 2)


def passes_it(x):
    return np.sum(scaled_by_default(x, SCALES) ** 2)


def test_a_rule_for_a_call_leaving_out_a_default_that_is_no_literal_is_refused():
    refused(leaves_out_an_array_default, X.copy(), line_text="scaled_by_default(x) ** 2",
            message="leaves out 's', whose default in the function is not a literal")
    check_grads(passes_it, (X.copy(),))  # (a vjp rule only: reverse mode)


class Pair(collections.namedtuple("Pair", "w b")):
    def loss(self, x):
        return np.sum(self.w * x) + self.b


PAIR = Pair(np.array([1.0, 2.0, 3.0]), 1.0)
PAIR_LOSS = PAIR.loss


def call_a_named_tuples_stored_method(x):
    return PAIR_LOSS(x) ** 2


def test_a_stored_method_of_a_named_tuple_is_differentiated():
    # (its attributes are read when compiling: tuple.__getattribute__ runs no code of yours)
    check_all_modes(call_a_named_tuples_stored_method, (X.copy(),))


class Base:
    def __init__(self, w):
        self.w = w

    def loss(self, x):
        return np.sum(self.w * x)


class Doubled(Base):
    def __init__(self, w):
        super().__init__(w * 2.0)


def made_here(x):
    m = Base(x * 3.0)
    return m.loss(x)


def made_here_through_super(x):
    m = Doubled(x)
    return m.loss(x)


def _cubed_loss(self, x):
    return np.sum(self.w * x ** 3)


def _init_times_seven(self, w):
    self.w = w * 7.0


def _init_times_seven_with_k(self, w, k=1.0):
    self.w = w * 7.0
    self.k = k


@pytest.mark.parametrize("f, name, new", [
    (made_here, "__init__", _init_times_seven),
    (made_here, "loss", _cubed_loss),
    (made_here_through_super, "__init__", _init_times_seven),  # (reached by super(): Base's own)
    (made_here_through_super, "loss", _cubed_loss),
    (built_by_class_method, "__init__", _init_times_seven_with_k),
])
def test_a_method_of_a_local_objects_class_rebound_after_compiling_compiles_anew(f, name, new):
    cls = Model if f is built_by_class_method else Base
    srcad.grad(f)(X.copy())
    original = vars(cls)[name]
    setattr(cls, name, new)
    try:
        assert srcad.value_and_grad(f)(X.copy())[0] == pytest.approx(f(X.copy()))
        check_grads(f, (X.copy(),))
    finally:
        setattr(cls, name, original)
