"""Differentiating with respect to structures of arrays (JAX's pytrees): named tuples,
dataclasses (frozen or not) and nested dicts, lists and tuples give gradients of the same
structure. Every derivative is checked against finite differences, in the joint adjoint,
the vjp pullback (called twice), forward mode and at second order."""
import collections
import dataclasses

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

rng = np.random.default_rng(7)
Dense = collections.namedtuple("Dense", "w b")


@dataclasses.dataclass(frozen=True)
class FrozenLayer:
    w: np.ndarray
    b: np.ndarray


@dataclasses.dataclass
class Model:
    layers: list
    scale: float

    def __post_init__(self):  # a gradient is not a model: srcad builds it without running this
        if self.scale <= 0:
            raise ValueError("a model's scale is positive")


X = rng.standard_normal((5, 3))


def dense(p, x):
    return np.sum(np.tanh(x @ p.w + p.b) ** 2)


def dense_unpacked(p, x):
    w, b = p
    return np.sum(np.tanh(x @ w + p[1] * b) ** 2)


def mlp(m, x):
    h = x
    for layer in m.layers:
        h = np.tanh(h @ layer.w + layer.b)
    return m.scale * np.sum(h ** 2)


def nested(params, x):
    first = params["first"]
    h = np.tanh(x @ first.w + first.b)
    out = params["rest"][0]["w"]
    return np.sum((h @ out) ** 2) + params["rest"][1][0] * np.sum(h)


def make_dense():
    return Dense(rng.standard_normal((3, 4)), rng.standard_normal(4))


def make_model():
    return Model([FrozenLayer(rng.standard_normal((3, 4)), rng.standard_normal(4)),
                  FrozenLayer(rng.standard_normal((4, 2)), rng.standard_normal(2))], 1.5)


def make_nested():
    return {"first": Dense(rng.standard_normal((3, 4)), rng.standard_normal(4)),
            "rest": [{"w": rng.standard_normal((4, 2))}, (0.7,)]}


CASES = [(dense, make_dense), (dense_unpacked, make_dense), (mlp, make_model), (nested, make_nested)]


def _same_structure(g, x):
    assert type(g) is type(x)
    if dataclasses.is_dataclass(x):
        for f in dataclasses.fields(x):
            _same_structure(getattr(g, f.name), getattr(x, f.name))
    elif isinstance(x, dict):
        assert list(g) == list(x)
        for k in x:
            _same_structure(g[k], x[k])
    elif isinstance(x, (list, tuple)):
        assert len(g) == len(x)
        for a, b in zip(g, x):
            _same_structure(a, b)
    elif isinstance(x, np.ndarray):
        assert g.shape == x.shape and g.dtype == x.dtype


@pytest.mark.parametrize("f, make", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradient_has_the_arguments_structure(f, make):
    params = make()
    g = check_grads(f, (params, X), v=1.0)  # joint and pullback (twice) against finite differences
    _same_structure(g, params)
    _same_structure(srcad.grad(f)(params, X), params)
    value, g2 = srcad.value_and_grad(f)(params, X)
    assert value == pytest.approx(f(params, X))
    for a, b in zip(srcad.pytrees.leaves(g2), srcad.pytrees.leaves(g)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("f, make", CASES, ids=[c[0].__name__ for c in CASES])
def test_forward_mode_along_a_structure(f, make):
    params = make()
    check_jvp(f, (params, X))


@pytest.mark.parametrize("f, make", CASES, ids=[c[0].__name__ for c in CASES])
def test_second_order_through_field_reads(f, make):
    params = make()
    # the gradient with respect to x, differentiated again along the parameters
    check_jvp(srcad.grad(f, argnums=1), (params, X))
    check_grads(lambda p, x: np.sum(srcad.grad(f, argnums=1)(p, x) ** 2), (params, X), v=1.0)


def test_the_gradient_of_a_dataclass_is_built_without_its_init():
    model = make_model()
    g = srcad.grad(lambda m, x: -mlp(m, x))(model, X)
    assert isinstance(g, Model) and isinstance(g.scale, float) and g.scale < 0  # __post_init__ would refuse it
    assert isinstance(g.layers[0], FrozenLayer)


def test_a_tangent_may_be_the_same_dataclass():
    model = make_model()
    direction = srcad.pytrees.rebuild(model, [rng.standard_normal(np.shape(v)) for v in srcad.pytrees.leaves(model)])
    _, tangent = srcad.jvp(mlp, (model, X), (direction, None))
    g = srcad.grad(mlp)(model, X)
    expected = sum(np.vdot(a, b) for a, b in zip(srcad.pytrees.leaves(g), srcad.pytrees.leaves(direction)))
    assert tangent == pytest.approx(expected, rel=1e-10)


@dataclasses.dataclass
class Weird:
    w: np.ndarray

    @property
    def doubled(self):
        return 2 * self.w


def reads_a_property(p):
    return np.sum(p.doubled ** 2)


def reads_a_property_of_an_item(ps):
    return np.sum(ps[0].doubled ** 2)


def test_a_property_is_read_through_its_getter_where_the_class_is_known():
    w = rng.standard_normal(3)
    np.testing.assert_allclose(srcad.grad(reads_a_property)(Weird(w)).w, 8 * w)
    with pytest.raises(srcad.NoRuleError, match=r"the property \.doubled of a Weird it differentiates where srcad "
                                                r"cannot tell the object's class"):
        srcad.grad(reads_a_property_of_an_item)([Weird(w)])


def reads_array_attribute(x):
    return np.sum(x[1:].base * x)  # (.base: the array a view reads; .flat reads as np.ravel)


def test_an_array_attribute_without_a_rule_is_still_refused():
    with pytest.raises(srcad.NoRuleError, match=r"array attribute \.base; srcad.extend.register_attribute"):
        srcad.grad(reads_array_attribute)(np.ones((2, 2)))
    with pytest.raises(srcad.NoRuleError, match=r"array attribute \.base; srcad.extend.register_attribute"):
        srcad.jvp(reads_array_attribute, (np.ones((2, 2)),), (np.ones((2, 2)),))


def test_a_dataclass_holding_a_string_is_refused_like_a_dict_holding_one():
    @dataclasses.dataclass
    class Named:
        w: np.ndarray
        name: str

    with pytest.raises(srcad.ArgumentError, match="a Named holding a str"):
        srcad.grad(lambda p: np.sum(p.w))(Named(np.ones(2), "x"))


Shaped = collections.namedtuple("Shaped", "T size")


def test_a_field_named_like_an_array_attribute_is_refused():
    with pytest.raises(srcad.ArgumentError, match="field named 'T'.*rename the field"):
        srcad.grad(lambda p: np.sum(p.T * p.size))(Shaped(np.ones(2), np.ones(2)))


def test_a_vjp_snapshot_copies_dataclass_fields():
    model = make_model()
    y, pullback = srcad.vjp(mlp, model, X)
    before = srcad.pytrees.leaves(pullback(1.0))
    model.layers[0].w[...] = 0.0  # the caller changes its arrays after the forward pass
    for a, b in zip(srcad.pytrees.leaves(pullback(1.0)), before):
        np.testing.assert_array_equal(a, b)


def gradient_norm(p, x):
    g = srcad.grad(dense)(p, x)
    return np.sum(g.w ** 2) + np.sum(g.b ** 2)


def test_reverse_over_reverse_through_field_reads():
    check_grads(gradient_norm, (make_dense(), X), v=1.0)


def test_a_gradients_pullback_takes_the_dataclass_it_returns():
    # the gradient of a dataclass argument is that dataclass; differentiating the gradient function
    # again, its cotangent is one too (it met the dict srcad keeps by field: a TypeError)
    layer = FrozenLayer(rng.standard_normal(3), rng.standard_normal(5))
    gradient = srcad.grad(dense)
    (g, pullback) = srcad.vjp(gradient, layer, X)
    assert isinstance(g, FrozenLayer)
    w, b = rng.standard_normal(3), rng.standard_normal(5)
    by_dataclass = pullback(FrozenLayer(w, b))
    by_dict = pullback({"w": w, "b": b})
    np.testing.assert_allclose(by_dataclass.w, by_dict.w)
    _, tangent = srcad.jvp(gradient, (layer, X), (FrozenLayer(w, b), None))  # symmetric Hessian: the same
    np.testing.assert_allclose(by_dataclass.w, tangent.w, rtol=1e-10)
    np.testing.assert_allclose(by_dataclass.b, tangent.b, rtol=1e-10)
    with pytest.raises(srcad.CotangentError, match="pass v as a FrozenLayer or a dict by field"):
        pullback({"w": w})
