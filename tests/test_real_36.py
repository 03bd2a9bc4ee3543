"""Programs in the styles of users' own code (helper round 176): fields set on a record built
in the function, modules imported inside the function."""
import dataclasses

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes, refused


@dataclasses.dataclass
class Params:
    w: np.ndarray
    b: float = 0.5


@dataclasses.dataclass(frozen=True)
class Frozen:
    w: float


def set_field(x):
    p = Params(np.ones(3), 2.0)
    p.w = x * 2.0
    return np.sum(p.w * p.b)


def set_in_loop(x):
    p = Params(x, 0.1)
    for _ in range(3):
        p.w = np.tanh(p.w) + p.b * x  # the value read first, then set
        p.b = p.b + np.sum(p.w) * 0.1
    return np.sum(p.w ** 2) + p.b


def set_then_return(x):
    p = Params(np.zeros(3))
    if np.sum(x) > 0:
        p.w = np.sin(x)
    else:
        p.w = np.cos(x)
    p.b = np.sum(x)
    return np.sum(p.w * p.b)


def aliased(x):
    p = Params(np.zeros(3))
    q = p
    p.w = x
    return np.sum(q.w)


def augmented(x):
    p = Params(np.zeros(3))
    p.w += x
    return np.sum(p.w)


def frozen(x):
    p = Frozen(1.0)
    p.w = x
    return p.w


def not_a_field(x):
    p = Params(np.zeros(3))
    p.extra = x
    return np.sum(p.extra)


X = np.array([0.3, -0.5, 0.8])


@pytest.mark.parametrize("f", [set_field, set_in_loop, set_then_return])
def test_a_field_set_on_a_record_built_here(f):
    check_all_modes(f, (X.copy(),))


def built(x):
    p = Params(x)
    p.b = np.sum(x ** 2)
    return p  # (read whole only by the return)


def through_a_helper(x):
    q = built(np.sin(x))
    return np.sum(q.w) * q.b


def test_a_record_set_then_returned_by_a_helper():
    check_all_modes(through_a_helper, (X.copy(),))


@pytest.mark.parametrize("f, line, message", [
    (aliased, "p.w = x", "used otherwise than by reading its fields"),
    (augmented, "p.w += x", "write p.w = p.w + ... instead"),
    (frozen, "p.w = x", "is frozen"),
    (not_a_field, "p.extra = x", "'extra' is no field of Params"),
])
def test_a_field_store_other_names_may_see_is_refused(f, line, message):
    refused(f, X.copy() if f is not frozen else 0.3, line_text=line, message=message)


def imported_alias(x):
    import numpy as np2
    return np2.sum(np2.sin(x) * np2.exp(x))


def imported_same_name(x):
    import numpy as np
    return np.sum(np.tanh(x) ** 2)


def imported_math(x):
    import math  # (this module does not import math)
    return math.sin(x) * 2.0


@pytest.mark.parametrize("f", [imported_alias, imported_same_name])
def test_a_module_imported_in_the_function_that_a_global_holds(f):
    check_all_modes(f, (X.copy(),))


def test_a_module_no_global_holds_is_refused_saying_where_to_import_it():
    refused(imported_math, 0.4, line_text="return math.sin(x)", message="import it at the top of the module")


class Accumulator:
    def __init__(self, s):
        self.s = s
        self.n = 0

    def step(self, x):
        self.s = self.s * 0.5 + x
        self.n = self.n + 1
        return np.sum(self.s ** 2)

    def twice(self, x):
        return 2.0 * self.step(np.sin(x)) + 1.0  # (inside an expression in a method)


def step_in_expression(x):
    a = Accumulator(np.ones(3))
    y = 2 * a.step(x) + 1
    return y * a.n + np.sum(a.s)


def step_in_call_and_test(x):
    a = Accumulator(x)
    total = np.tanh(a.step(x * 0.3))
    if a.step(x) > 0.5:
        total = total + np.sum(a.s)
    return total + a.twice(x)


def step_in_return(x):
    a = Accumulator(x)
    return np.log(1.0 + a.step(x)) * a.n


def step_after_a_literal_and_a_module_attribute(x):
    a = Accumulator(x)
    return -1 * np.pi * a.step(x) + a.n


def attribute_read_first(x):
    a = Accumulator(x)
    return np.sum(a.s) * a.step(x)  # a.s is read before step changes it


def maybe_run(x, flag=True):
    a = Accumulator(x)
    return flag and a.step(x)


def another_objects_attribute_first(x):
    b = Accumulator(x)
    a = Accumulator(x)
    b.step(x)
    return np.sum(b.s) * a.step(x)  # (b's attribute, read first: refused, as an attribute of a local name)


@pytest.mark.parametrize("f", [step_in_expression, step_in_call_and_test, step_in_return,
                               step_after_a_literal_and_a_module_attribute])
def test_a_method_setting_attributes_called_first_in_an_expression(f):
    check_all_modes(f, (X.copy(),))


@pytest.mark.parametrize("f", [attribute_read_first, maybe_run, another_objects_attribute_first])
def test_a_method_setting_attributes_after_what_it_changes_is_refused(f):
    with pytest.raises(srcad.SrcadError, match=r"inside an expression after something else it may change or that "
                                                r"may not run it \(line \d+\); call it as a statement of its own"):
        srcad.grad(f)(X.copy())


class Model:
    def __init__(self, W, scale=1.0):
        self.W = W
        self.scale = scale

    @classmethod
    def from_params(cls, W, k=2.0):
        doubled = W * k  # (statements before the construction)
        return cls(doubled, scale=np.sum(W) * 0.1)

    @classmethod
    def identity(cls, n):
        return cls(np.eye(n))

    def scaled(self, k):
        return type(self)(self.W * k, self.scale)

    def out(self, x):
        return self.scale * np.sum(np.tanh(x @ self.W))


class Wide(Model):
    def out(self, x):
        return np.sum(np.sin(x @ self.W)) + self.scale


W0 = np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.4], [0.0, 0.2, 0.6]])


def from_params(x):
    m = Model.from_params(W0 + np.outer(x, x))
    return m.out(x)


def subclass_from_params(x):
    m = Wide.from_params(W0 * np.sum(x), k=3.0)  # cls is Wide there
    e = Model.identity(3)
    return m.out(x) + e.out(x)


def copied_by_type_of_self(x):
    m = Model(W0).scaled(3.0)
    return m.out(x)


@pytest.mark.parametrize("f", [from_params, subclass_from_params])
def test_an_object_made_by_a_class_method_returning_cls(f):
    check_all_modes(f, (X.copy(),))


def test_an_object_a_method_makes_by_type_of_self_is_refused_naming_the_form_that_works():
    with pytest.raises(srcad.SrcadError, match=r"make it with obj = ClassName\(\.\.\.\) there"):
        srcad.grad(copied_by_type_of_self)(X.copy())

    def written_so(x):
        m = Model(W0 * 3.0, 1.0)  # the form the message names
        return m.out(x)
    assert written_so(X) == pytest.approx(copied_by_type_of_self(X))
    check_all_modes(written_so, (X.copy(),))


def relu_like(z):
    return np.where(z > 0, z, 0.1 * z)


class Layer:
    def __init__(self, W, act=np.tanh):
        self.W = W
        self.act = act

    def __call__(self, h):
        return self.act(h @ self.W)


class Stack:
    def __init__(self, Ws, act=np.tanh):
        self.layers = [Layer(W, act) for W in Ws]

    def __call__(self, x):
        h = x
        for layer in self.layers:
            h = layer(h)
        return np.sum(h ** 2)


WS = [np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.4], [0.0, 0.2, 0.6]]), np.ones((3, 3)) * 0.3]
STACK = Stack(WS)
H = np.array([0.4, -0.7, 0.9])  # (no layer's input at relu_like's kink)


def loss_of(x, net):
    return net(x)


def loss_of_module_stack(x):
    return STACK(x) + 1.0


def loss_of_stack_made_here(x):
    net = Stack(WS)
    return net(x)


@pytest.mark.parametrize("act", [np.tanh, np.sin, relu_like])
def test_a_function_every_layer_of_a_list_holds(act):
    net = Stack(WS, act)
    check_all_modes(lambda x: loss_of(x, net), (H.copy(),), second=False)  # (second order: below)


def test_second_order_through_a_function_layers_of_a_list_hold_is_refused_not_guessed():
    net = Stack(WS)
    with pytest.raises(srcad.SrcadError, match="cannot differentiate its own derivative"):
        srcad.hvp(lambda x: loss_of(x, net))(H.copy(), H.copy())


def test_a_function_every_layer_of_a_module_list_holds():
    check_all_modes(loss_of_module_stack, (H.copy(),), second=False)


def test_layers_holding_other_functions_compile_anew_or_are_refused():
    net = Stack(WS)
    grad = srcad.grad(loss_of)
    g_tanh = grad(H.copy(), net)
    for layer in net.layers:
        layer.act = np.sin  # every layer: compiled anew for np.sin
    g_sin = grad(H.copy(), net)
    check_all_modes(lambda x: loss_of(x, net), (H.copy(),), second=False)
    assert not np.allclose(g_tanh, g_sin)
    net.layers[1].act = np.cos  # the layers differ: never the derivative of one for the other
    with pytest.raises(srcad.SrcadError, match="no derivative rule for the method .act()"):
        grad(H.copy(), net)


def test_a_module_list_whose_layer_is_given_another_function_is_refused_when_it_runs():
    grad = srcad.grad(loss_of_module_stack)
    grad(H.copy())
    old = STACK.layers[0].act
    STACK.layers[0].act = np.sin
    try:
        with pytest.raises(srcad.SrcadError,
                           match=r"no derivative rule for the method \.act\(\)|made this code for numpy.tanh"):
            grad(H.copy())
    finally:
        STACK.layers[0].act = old


def test_a_stack_made_in_the_function_is_refused_saying_to_pass_it():
    with pytest.raises(srcad.SrcadError, match="pass the model, made outside, as an argument"):
        srcad.grad(loss_of_stack_made_here)(H.copy())
