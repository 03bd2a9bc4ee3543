"""Operators on values srcad does not type (probe 22): an attribute of an object, an item of a
container, a helper's result. srcad's rules for ``*``, ``+``, ``@``... are those of numbers
and arrays; such a value that is really an object with its own operators (a schedule, a
linear operator, an ``np.matrix``) got them anyway, and the rule called the object's method
again on the cotangent: a plausible wrong gradient. Such a value is now checked where it is
made to be a number or an array (refused at the user's line otherwise), or refused when the
code is made where its class is known then (an attribute of an argument's object)."""
import numpy as np
import pytest

import srcad
from srcad import SrcadSyntaxError, UnsupportedCaseError
from srcad.testing import check_grads, check_jvp
from test_operator_objects import Schedule  # each use advances it

X = np.array([0.5, 1.2])
M = np.array([[1.0, 2.0], [0.0, 3.0]])


class Operator:
    __array_ufunc__ = None  # an array times it calls its __rmul__, as for a linear operator's class

    def __init__(self, matrix):
        self.matrix = matrix

    def __mul__(self, x):
        return self.matrix @ x

    __rmul__ = __mul__


class Model:
    def __init__(self, scale):
        self.scale = scale

    def loss(self, x):
        y = self.scale * x
        return np.sum(y * y)


def test_an_operator_on_an_attribute_of_an_arguments_object_is_refused_when_the_code_is_made():
    # before: [1.32, 3.432] for [1.21, 2.904] (the schedule advanced again on the cotangent)
    with pytest.raises(SrcadSyntaxError, match="'self.scale' is an object of your class Schedule") as info:
        srcad.grad(Model(Schedule()).loss)(X)
    assert info.value.filename == __file__


class Config:
    pass


CFG = Config()
CFG.scale = Schedule()


def by_global_attribute(x):
    y = CFG.scale * x
    return np.sum(y * y)


def by_parameter_item(x, params):
    y = params["scale"] * x
    return np.sum(y * y)


def make_operator():
    return Operator(M)


def by_helper_result(x):
    op = make_operator()  # srcad runs the helper as written: its result's type is not known
    y = op * x
    return np.sum(y * np.array([1.0, 2.0]))


class Stages:
    def __init__(self, stages):
        self.stages = stages

    def loss(self, x):
        for s in self.stages:
            x = s * x
        return np.sum(x * x)


class MatrixHolder:
    def __init__(self, matrix):
        self.matrix = matrix

    def loss(self, x):
        return np.sum(self.matrix * x)  # for an np.matrix, * is a matrix product


@pytest.mark.parametrize("f,args,text,kind", [
    (by_global_attribute, (), "'CFG.scale'", "Schedule"),
    (by_parameter_item, ({"scale": Schedule()},), "'params['scale']'", "Schedule"),
    (by_helper_result, (), "'make_operator()'", "Operator"),
    (Stages([Schedule(), Schedule()]).loss, (), "'s' (an item of self.stages)", "Schedule"),
    (MatrixHolder(np.asmatrix(M)).loss, (), "'self.matrix'", "numpy.matrix"),
])
def test_an_operator_on_a_value_srcad_does_not_type_is_refused_when_it_runs(f, args, text, kind):
    # before: wrong gradients (the schedule's method called on the cotangent, M @ v for M.T @ v,
    # an np.matrix product differentiated as an elementwise one)
    x = np.array([[0.5, 1.2], [-0.3, 0.7]]) if kind == "numpy.matrix" else X
    for differentiate in (lambda: srcad.grad(f)(x, *args), lambda: srcad.jvp(f, (x,) + args, (np.ones_like(x),) + (
            None,) * len(args))):
        with pytest.raises(UnsupportedCaseError) as info:
            differentiate()
        message = str(info.value)
        assert message.startswith(f"{__file__}:") and f"{text} is a " in message and kind in message
        assert "convert it before the operation (np.asarray(...) or float(...))" in message


def by_ufunc(x, params):
    return np.sum(np.multiply(params["scale"], x) ** 2)


def test_a_ufunc_on_a_value_srcad_does_not_type_is_refused():
    # before: the schedule ran per item of an object array, and again on the cotangent
    with pytest.raises(UnsupportedCaseError, match=r"'params\['scale'\]' is a .*Schedule"):
        srcad.grad(by_ufunc)(X, {"scale": Schedule()})


# ---- controls: numbers and arrays where srcad does not type them ----------------------------

class Layer:
    def __init__(self, rng):
        self.W = rng.standard_normal((2, 2))
        self.b = rng.standard_normal(2)
        self.lr = 0.3
        self.steps = 2
        self.gain = np.float32(1.5)
        self.dtype = "float64"
        self.shape = (2, 1)
        self.layers = [(rng.standard_normal((2, 2)), "tanh"), (rng.standard_normal((2, 2)), "identity")]

    def loss(self, x):
        h = np.tanh(self.W @ x + self.b) * self.lr * self.steps * self.gain
        for W, activation in self.layers:
            h = W @ h
            if activation == "tanh":
                h = np.tanh(h)
        h = np.reshape(h.astype(self.dtype), self.shape) * CFG_NUMBERS.scale
        return np.sum(h ** 2) + params_and_helpers(x, {"W": self.W, "k": 2.0})


class Numbers:
    scale = 0.5


CFG_NUMBERS = Numbers()


def table(n):
    return np.arange(float(n))


def params_and_helpers(x, params):
    t = table(2)  # a helper run as written, returning an array
    return np.sum(params["W"] @ x * params["k"] - t * x)


def test_numbers_and_arrays_where_srcad_does_not_type_them_are_differentiated():
    model = Layer(np.random.default_rng(0))
    check_grads(model.loss, (X,), modes=("rev",))
    check_jvp(model.loss, (X,))
    check_grads(params_and_helpers, (X, {"W": M, "k": 3}))



GLOBAL_MATRIX = np.asmatrix(M)


def by_global_matrix(x):
    return np.sum(GLOBAL_MATRIX * x)


def test_an_operator_on_a_global_ndarray_subclass_is_refused_when_the_code_is_made():
    # before: [[1, 5], [1, 5]] for [[1, 1], [5, 5]] (the matrix product differentiated elementwise)
    with pytest.raises(SrcadSyntaxError, match="'GLOBAL_MATRIX' is a numpy.matrix") as info:
        srcad.grad(by_global_matrix)(np.array([[0.5, 1.2], [-0.3, 0.7]]))
    assert info.value.filename == __file__


# ---- probe 22B: a parameter's default left out, a global list's items, objects in a list ----

class Squarer:
    __array_ufunc__ = None  # ndarray * Squarer calls Squarer.__rmul__

    def __mul__(self, other):
        return other * other

    __rmul__ = __mul__


SQUARER = Squarer()
SQUARERS = [Squarer()]
ARRAYS = [np.array([1.0, -2.0]), np.array([0.5, 3.0])]


def scaled_by_a_default(x, w=SQUARER):
    return np.sum(w * x)


def summed_over_a_global_list(x):
    t = 0.0
    for item in SQUARERS:
        t = t + np.sum(item * x)
    return t


def summed_over_global_arrays(x):
    t = 0.0
    for a in ARRAYS:
        t = t + np.sum(a * x ** 2)
    return t


class Box:
    def __init__(self, a):
        self.a = a


def attribute_of_an_object_in_a_list(x):
    z = np.array([2.0, -1.0])
    boxes = [z * 1.0, Box(z)]
    return np.sum(boxes[1].a * x) + np.sum(boxes[0] * x ** 2)


def default_array(x, w=np.array([2.0, -1.0]), c=0.5):
    return np.sum(w * x * c)


@pytest.mark.parametrize("f, text", [(scaled_by_a_default, "the argument 'w'"),
                                     (summed_over_a_global_list, "'item' (an item of SQUARERS)")],
                         ids=["default_left_out", "global_list_items"])
def test_an_object_reached_by_a_default_or_a_global_lists_items_is_refused(f, text):
    f(X)  # Python runs it (with the object's own product)
    # (a default left out of the call is compiled for its class since round 25B: refused then)
    with pytest.raises((UnsupportedCaseError, SrcadSyntaxError),
                       match="is a .*Squarer, and an operator srcad differentiates reads it|an object of your class "
                             "Squarer, whose __mul__") as info:
        srcad.grad(f)(X)
    assert text in str(info.value) or "'w' is an object of your class" in str(info.value)
    with pytest.raises((UnsupportedCaseError, SrcadSyntaxError), match="Squarer"):
        srcad.jvp(f, (X,), (np.ones(2),))


@pytest.mark.parametrize("f", [summed_over_global_arrays, attribute_of_an_object_in_a_list, default_array])
def test_arrays_there_are_differentiated(f):
    # the checks pass arrays and numbers: the attribute of an object in a list is checked, not the object
    check_grads(f, (X,), modes=("rev",))
    check_jvp(f, (X,))


# ---- probe 22B: making the code ran a property of your object once more -----------------

class Stepping:
    """A schedule whose rate advances at each read."""

    def __init__(self):
        self.reads = 0

    @property
    def rate(self):
        self.reads += 1
        return float(self.reads)


STEPPING = Stepping()


def times_the_rate(x):
    return x * STEPPING.rate


def test_making_the_code_reads_no_property_of_yours():
    STEPPING.reads = 0
    g = srcad.grad(times_the_rate)(2.0)  # the first call makes the code
    assert STEPPING.reads == 1  # as Python's one call reads it
    assert g == 1.0
    assert srcad.grad(times_the_rate)(2.0) == 2.0  # the next read: 2.0, as Python's next call


def weighted_by_sorted_keys(x):
    d = {np.str_("b"): x[0], "a": x[1], "c": x[1] * x[0]}
    t = 0.0
    for j, (k, v) in enumerate(sorted(d.items())):
        t = t + v * (j + 1.0)
    return t


def test_a_numpy_string_among_what_a_value_is_built_from_is_no_operand():
    # probe 22B: np.str_ (a dict's key) was taken for an array of dtype <U1 reaching the product
    check_grads(weighted_by_sorted_keys, (X,))


# ---- probe 22C: the object under another name, inside what a call makes, as a number ----

import copy  # noqa: E402
import enum  # noqa: E402


class Half(float):
    """A number of yours whose product squares instead."""

    def __mul__(self, other):
        return other * other

    __rmul__ = __mul__


class Power(enum.IntEnum):
    SQUARE = 2


def aliased(x):
    k = SQUARER
    return np.sum(k * x)


def chosen(x, flag=True):
    k = SQUARER if flag else 1.0
    return np.sum(k * x)


def in_an_object_array(x):
    return np.sum(np.array([SQUARER, SQUARER]) * x)


def copied(x):
    return np.sum(copy.deepcopy(SQUARER) * x)


def by_a_number_of_yours(x, k=Half(2.0)):
    return np.sum(k * x)


def to_an_int_enum(x, p=Power.SQUARE):
    return np.sum(x ** p) + np.sum(x ** Power.SQUARE)


@pytest.mark.parametrize("f", [aliased, chosen, in_an_object_array, copied, by_a_number_of_yours])
def test_an_object_under_another_name_or_made_by_a_call_is_refused(f):
    f(X)  # Python runs it, with the object's own product
    with pytest.raises((UnsupportedCaseError, SrcadSyntaxError), match="and an operator srcad differentiates reads it|"
                                                                       "an object of your class Half, whose __mul__"):
        srcad.grad(f)(X)


def test_a_number_of_a_subclass_with_the_base_types_operators_is_differentiated():
    check_grads(to_an_int_enum, (X,), modes=("rev",))
    check_jvp(to_an_int_enum, (X,))


class Counting:
    """A descriptor of yours: each read counts."""

    reads = 0

    def __get__(self, obj, owner):
        Counting.reads += 1
        return 0.5


class WithDescriptor:
    rate = Counting()


def times_a_class_descriptor(x):
    return np.sum(x * WithDescriptor.rate)


def test_making_the_code_reads_no_descriptor_of_yours_off_a_class():
    Counting.reads = 0
    np.testing.assert_allclose(srcad.grad(times_a_class_descriptor)(X), [0.5, 0.5])
    assert Counting.reads == 1  # as Python's one call reads it
