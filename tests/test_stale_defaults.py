"""The derivative of the code that runs now (probe 13A): a helper srcad inlines takes the default
values Python bound when its ``def`` ran, as they are when the call runs; a rule registered after
a first gradient applies; the persistent cache tells apart files that differ only in defaults,
parameter kinds, record defaults or a partial's arguments. Checked against finite differences."""
import importlib
import sys
import textwrap

import numpy as np
import pytest

import srcad
from srcad.extend import register_vjp
from srcad.testing import check_grads, check_jvp

X = np.array([0.4, 1.3])


def finite_differences(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


def assert_gradient(f, x=X):
    np.testing.assert_allclose(srcad.grad(f)(x), finite_differences(f, x), rtol=1e-6, atol=1e-8)


SCALE = 2.0


def apply_scaled(fn, b, k=SCALE):  # k is 2.0, whatever SCALE is later: Python evaluated it once
    return k * fn(b)


def uses_scaled(x):
    return np.sum(apply_scaled(np.sin, x))


def apply_weighted(fn, b, w=np.array([1.0, 2.0])):
    return w * fn(b)


def uses_weighted(x):
    return np.sum(apply_weighted(np.sin, x))


def apply_keyword(fn, b, *, k=2.0):
    return k * fn(b)


def uses_keyword(x):
    return np.sum(apply_keyword(np.sin, x))


def make_apply(scale):
    def apply(fn, b, k=scale):  # no closure: scale is evaluated where make_apply runs
        return k * fn(b)
    return apply


apply_made = make_apply(3.0)


def uses_made(x):
    return np.sum(apply_made(np.cos, x))


def test_an_inlined_helper_reads_its_defaults_as_python_bound_them(monkeypatch):
    monkeypatch.setitem(globals(), "SCALE", 5.0)  # rebound after the def: the default stays 2.0
    assert_gradient(uses_scaled)
    assert_gradient(uses_made)  # 'scale' is no global of this module: it was a NameError
    check_grads(uses_made, (X,))


def test_defaults_rebound_or_changed_in_place_after_a_gradient(monkeypatch):
    assert_gradient(uses_scaled)
    monkeypatch.setattr(apply_scaled, "__defaults__", (5.0,))
    assert_gradient(uses_scaled)
    assert_gradient(uses_weighted)
    apply_weighted.__defaults__[0][:] = [5.0, 7.0]  # the default array itself, changed in place
    try:
        assert_gradient(uses_weighted)
    finally:
        apply_weighted.__defaults__[0][:] = [1.0, 2.0]
    assert_gradient(uses_keyword)
    monkeypatch.setitem(apply_keyword.__kwdefaults__, "k", 5.0)  # the same dict, changed in place
    assert_gradient(uses_keyword)
    check_grads(uses_keyword, (X,))


def scaled(x, *, a=2.0):
    return np.sum(a * x ** 2)


def test_keyword_only_defaults_of_the_function_changed_in_place(monkeypatch):
    assert_gradient(scaled)
    monkeypatch.setitem(scaled.__kwdefaults__, "a", 5.0)
    assert_gradient(scaled)
    value, pullback = srcad.vjp(scaled, X)
    assert value == pytest.approx(scaled(X))
    np.testing.assert_allclose(pullback(1.0), finite_differences(scaled, X), rtol=1e-6)


def apply_fn(b, fn=np.sin):
    return fn(b)


def uses_fn_default(x):
    return np.sum(apply_fn(x) * x)


def test_a_function_default_that_is_no_longer_what_its_def_names_is_refused(monkeypatch):
    assert_gradient(uses_fn_default)
    monkeypatch.setattr(apply_fn, "__defaults__", (np.cos,))
    with pytest.raises(srcad.SrcadSyntaxError, match="holds another function now; pass it explicitly"):
        srcad.grad(uses_fn_default)(X)


def clipped(z):
    return np.clip(z, -1.0, 1.0)


def uses_clipped(x):
    return np.sum(clipped(x) * 3.0)


def test_a_rule_registered_after_a_first_gradient_applies():
    x = np.array([0.4, 1.3])
    np.testing.assert_allclose(srcad.grad(uses_clipped)(x), [3.0, 0.0])  # from clip's source
    assert srcad.jvp(uses_clipped, (x,), (np.ones(2),))[1] == pytest.approx(3.0)

    @register_vjp(clipped)
    def clipped_vjp(y, z):
        d[z] += d[y]  # noqa: F821 (a template) straight through: the rule, not the source

    np.testing.assert_allclose(srcad.grad(uses_clipped)(x), [3.0, 3.0])
    with pytest.raises(srcad.SrcadSyntaxError, match="custom vjp rule but no forward-mode rule"):
        srcad.jvp(uses_clipped, (x,), (np.ones(2),))  # forward mode sees the rule too


# ---- the persistent cache: files edited between processes (importlib.reload stands for one)

MODULE = """
import functools
from collections import namedtuple
import numpy as np

def apply(fn, b, k={k}):
    return k * fn(b)

def apply_kw(fn, b, *, k={k}):
    return k * fn(b)

def apply_fn(b, fn={fn}):
    return fn(b)

def spread({spread}):
    return fn(b[0])

Pair = namedtuple("Pair", "a scale", defaults=[{k}])

def g(b, c, e=1.0):
    return np.cos(b) * c * e

scaled = functools.partial(g, {partial})

def f1(x):
    return np.sum(apply(np.sin, x))

def f2(x):
    return np.sum(apply_kw(np.sin, x))

def f3(x):
    return np.sum(apply_fn(x))

def f4(x):
    return np.sum(spread(np.sin, x) * x)

def f5(x):
    p = Pair(x)
    return np.sum(np.sin(p.a) * p.scale)

def f6(x):
    return np.sum(scaled(x))
"""


@pytest.mark.parametrize("edit", [dict(k="5.0"), dict(fn="np.cos"), dict(spread="fn, b"), dict(partial="2.0, 3.0")],
                         ids=lambda e: next(iter(e)))
def test_an_edited_file_is_not_served_from_the_persistent_cache(tmp_path, monkeypatch, edit):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv("SRCAD_CACHE_DIR", str(cache))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    path = tmp_path / "edited_model.py"
    first = dict(k="2.0", fn="np.sin", spread="fn, *b", partial="2.0")
    path.write_text(textwrap.dedent(MODULE.format(**first)))
    import edited_model

    try:
        names = ("f1", "f2", "f3", "f4", "f5", "f6")
        x = np.array([0.4, 1.3, -0.7])
        for name in names:
            srcad.grad(getattr(edited_model, name))(x)
        path.write_text(textwrap.dedent(MODULE.format(**{**first, **edit})))
        importlib.reload(edited_model)
        for name in names:
            assert_gradient(getattr(edited_model, name), x)
    finally:
        sys.modules.pop("edited_model", None)


# ---- what a derivative was made from, and what the code calls

def loss_of(x, scale=1.0):
    return np.sum(np.sin(x) * scale)


class Model:
    def __call__(self, x):
        return np.sum(np.sin(x))


def test_a_derivative_refuses_once_what_it_was_made_from_changed(monkeypatch):
    p = __import__("functools").partial(loss_of, scale=2.0)
    g = srcad.grad(p)
    np.testing.assert_allclose(g(X), 2.0 * np.cos(X))
    p.keywords["scale"] = 5.0  # the partial's keywords dict, changed in place
    with pytest.raises(srcad.ArgumentError, match="has changed since"):
        g(X)
    np.testing.assert_allclose(srcad.grad(p)(X), 5.0 * np.cos(X))  # made again: right
    m = Model()
    gm = srcad.grad(m)
    np.testing.assert_allclose(gm(X), np.cos(X))
    monkeypatch.setattr(Model, "__call__", lambda self, x: np.sum(np.cos(x)))
    with pytest.raises(srcad.ArgumentError, match="has changed since"):
        gm(X)


def scaled_by(k):
    def decorate(fn):
        @__import__("functools").wraps(fn)
        def wrapper(*args, **kwargs):
            return k * fn(*args, **kwargs)
        return wrapper
    return decorate


@scaled_by(3.0)
def tripled(z):
    return np.sin(z)


def uses_tripled(x):
    return np.sum(tripled(x))


def test_a_decorated_helper_is_refused_in_every_mode_not_read_through_its_wrapped_function():
    """Its parameters were read from ``__wrapped__`` (a bare ValueError), and forward mode gave
    a zero tangent: the values packed into the wrapper's ``*args`` carried no derivative."""
    for call in (lambda: srcad.grad(uses_tripled)(X), lambda: srcad.jvp(uses_tripled, (X,), (np.ones(2),)),
                 lambda: srcad.hessian(uses_tripled)(X)):
        with pytest.raises(srcad.SrcadSyntaxError, match=r"into the \*args or \*\*kwargs of tripled"):
            call()


class Layer:
    def __init__(self, w):
        self.w = w

    def forward(self, z):
        return np.tanh(self.w * z)


class SlottedNet:
    __slots__ = ("first",)

    def __init__(self, layer):
        self.first = layer


def slotted_loss(net, x):
    return np.sum(net.first.forward(x))


def test_objects_held_in_slots_are_resolved_like_attributes():
    net = SlottedNet(Layer(2.0))
    check_grads(slotted_loss, (net, X), wrt=1)
    np.testing.assert_allclose(srcad.grad(slotted_loss, wrt=1)(net, X), 2.0 * (1 - np.tanh(2.0 * X) ** 2))


Pair = __import__("collections").namedtuple("Pair", "a scale", defaults=[2.0])


def uses_pair(x):
    p = Pair(x)
    return np.sum(np.sin(p.a) * p.scale)


def test_record_defaults_rebound_after_a_gradient(monkeypatch):
    assert_gradient(uses_pair)
    monkeypatch.setattr(Pair.__new__, "__defaults__", (5.0,))  # the namedtuple-defaults idiom
    assert_gradient(uses_pair)


class Wide:
    def __init__(self, layer):
        self.layer = layer

    def fwd(self, b):
        return self.layer.forward(b) * 2.0


model = Wide(Layer(1.5))


def loss_with(net, x):
    return np.sum(net.fwd(x))


def uses_global_model(x):
    return loss_with(model, x)


def test_a_global_object_passed_to_a_helper(monkeypatch):
    """Refused as a method without a rule (probe 13A); the code is made for the object and
    the objects it holds, so replacing one of them is seen."""
    assert_gradient(uses_global_model)
    check_grads(uses_global_model, (X,), modes=("rev",))
    check_jvp(uses_global_model, (X,))
    monkeypatch.setattr(model, "layer", Layer(-0.5))
    assert_gradient(uses_global_model)
    monkeypatch.setitem(globals(), "model", Wide(Layer(3.0)))
    assert_gradient(uses_global_model)


# ---- probe 14A: the forms the first fixes missed

def apply_angle(b, *, k=0.0):
    return np.arctan2(k, b)  # -0.0 and 0.0 differ here: ±π for b < 0


def uses_angle(x):
    return np.sum(apply_angle(x) * x)


def pick(b, *, at=(1,)):
    return b[at]


def uses_pick(x):
    return np.sum(pick(x) * x)


class Activation:
    def __init__(self, a):
        self.a = a

    def act(self, t):
        return np.sin(self.a * t)


ACTIVATION = Activation(1.5)


def apply_act(b, act=ACTIVATION.act):  # a bound method: a new object at every read, the same method
    return np.sum(act(b))


def uses_act(x):
    return apply_act(x)


WEIGHTS = np.array([1.0, -2.0])


@srcad.differentiable
def weighted(b, *, w=WEIGHTS):  # a derivative srcad made, holding an array default
    return np.sum(np.sin(b) * w)


def uses_weighted_derivative(x):
    return weighted(x)


def test_defaults_held_as_objects_literals_by_type_and_text(monkeypatch):
    x = np.array([-0.4, -1.3])
    assert_gradient(uses_angle, x)
    monkeypatch.setitem(apply_angle.__kwdefaults__, "k", -0.0)
    assert_gradient(uses_angle, x)
    monkeypatch.setitem(pick.__kwdefaults__, "at", (True,))  # x[(True,)] is all of x, x[(1,)] one item
    assert_gradient(uses_pick, x)
    assert_gradient(uses_act)
    check_jvp(uses_act, (X,))
    assert_gradient(uses_weighted_derivative)
    check_jvp(uses_weighted_derivative, (X,))


class StaticCall:
    __call__ = staticmethod(lambda x: np.sum(np.sin(x)))


class PartialCall:
    def scaled(self, x, k):
        return np.sum(np.sin(x) * k)

    __call__ = __import__("functools").partialmethod(scaled, k=2.0)


class OtherCall:
    def __call__(self, x):
        return np.sum(np.cos(x))


class Keywords(__import__("functools").partial):
    pass


def test_callable_objects_of_every_kind_and_their_changes():
    np.testing.assert_allclose(srcad.grad(StaticCall())(X), np.cos(X))
    np.testing.assert_allclose(srcad.grad(PartialCall())(X), 2.0 * np.cos(X))
    m = Model()
    g = srcad.grad(m)
    np.testing.assert_allclose(g(X), np.cos(X))
    m.__class__ = OtherCall  # what calling m runs now
    with pytest.raises(srcad.ArgumentError, match="has changed since"):
        g(X)
    q = Keywords(loss_of, scale=2.0)
    gq = srcad.grad(q)
    gq(X)
    q.keywords["scale"] = 3.0
    with pytest.raises(srcad.ArgumentError, match="has changed since"):
        gq(X)


LIBRARY = """
import numpy as np

def hk(x, *, p=2.0):
    return np.sin(x ** p)
"""


def test_a_compiled_helper_called_without_its_keyword_only_default(tmp_path, monkeypatch):
    """It was called without it (a TypeError in generated code); the caller passes the object
    the helper holds, and a change of it recompiles the caller."""
    (tmp_path / "kw_library.py").write_text(LIBRARY)
    monkeypatch.syspath_prepend(str(tmp_path))
    import kw_library

    def f(x):
        return np.sum(kw_library.hk(x))

    try:
        x = np.array([0.3, 0.7, 1.1])
        assert_gradient(f, x)
        check_jvp(f, (x,))
        monkeypatch.setitem(kw_library.hk.__kwdefaults__, "p", 3.0)
        assert_gradient(f, x)
        check_jvp(f, (x,))
    finally:
        sys.modules.pop("kw_library", None)


@srcad.custom_vjp
def capped(x, cap=float("inf")):  # a default whose repr is no literal
    return np.sum(np.minimum(x, cap) ** 2)


@capped.defvjp
def capped_vjp(y, x, cap=float("inf")):
    d[x] += d[y] * 2 * x * (x < cap)  # noqa: F821 (a template)


def test_a_custom_rule_with_an_infinite_default():
    """Differentiated itself, it is called through generated glue that wrote ``cap=inf``."""
    np.testing.assert_allclose(srcad.grad(capped)(X), 2 * X)


def test_srcad_own_api_is_not_read_as_code_to_differentiate():
    """jvp of srcad.adjoint(f) said wrapper.py 'was edited after the module was imported' (probe 14A)."""
    with pytest.raises(srcad.SourceUnavailableError, match="srcad's own API"):
        srcad.jvp(srcad.adjoint(loss_of), (X, 1.0), (np.ones(2), 0.0))
