"""Where an argument updated in place may also be read (probe 20A): srcad updates a copy of it,
so every other way the code can reach the same memory must be found, or the program computes
with the old values where Python sees the new ones (value_and_grad's value 28 for Python's 56).
Each function doubles its argument in place and reads the same array another way; given that
array it must be refused, given a copy of its own it must agree with finite differences. Then
calls srcad runs as written on an argument (a helper filling a list of buffers, changing an
object's attribute): the caller's memory must not change, in either mode."""
import collections
import functools
import sys
import types
import weakref

import numpy as np
import pytest

import srcad
from srcad.errors import UnsupportedCaseError
from srcad.testing import check_grads, check_jvp

G = np.array([1.0, 2.0, 3.0])


class ClassAttribute:
    W = G


def class_attribute(x):
    x *= 2.0
    return np.sum(x * ClassAttribute.W)


class Registry:
    table = {"W": G}


def class_dict(x):
    x *= 2.0
    return np.sum(x * Registry.table["W"])


class Layer:
    def apply(self, x):
        return np.sum(x * G)


def method_of_an_argument(x, layer):
    x *= 2.0
    return layer.apply(x)


class Params:
    @property
    def W(self):
        return G


PARAMS = Params()


def property_reads_a_global(x):
    x *= 2.0
    return np.sum(x * PARAMS.W)


def _score(x, W=G):
    return np.sum(x * W)


def helper_default(x):
    x *= 2.0
    return _score(x)


def _weighted(x, W):
    return np.sum(x * W)


SCORE = functools.partial(_weighted, W=G)


def partial_holds_it(x):
    x *= 2.0
    return SCORE(x)


HISTORY = collections.deque([G])
PROXY = types.MappingProxyType({"W": G})
OBJECTS = np.empty(1, dtype=object)
OBJECTS[0] = G


def in_a_deque(x):
    x *= 2.0
    return np.sum(x * HISTORY[0])


def in_a_mapping_proxy(x):
    x *= 2.0
    return np.sum(x * PROXY["W"])


def in_an_object_array(x):
    x *= 2.0
    return np.sum(x * OBJECTS[0])


def by_reflection(x):
    x *= 2.0
    return np.sum(x * globals()["G"])


class _Holder:
    W = None


_LIVE = _Holder()
_LIVE.W = G
LIVE_PROXY = weakref.proxy(_LIVE)


def through_a_weak_proxy(x):
    x *= 2.0
    return np.sum(x * LIVE_PROXY.W)


ONE_ARGUMENT = [class_attribute, class_dict, property_reads_a_global, helper_default, partial_holds_it, in_a_deque,
                in_a_mapping_proxy, in_an_object_array, by_reflection, through_a_weak_proxy]


@pytest.mark.parametrize("f", ONE_ARGUMENT + [method_of_an_argument], ids=lambda f: f.__name__)
def test_an_argument_the_code_reaches_another_way_is_refused(f):
    args = (G,) if f is not method_of_an_argument else (G, Layer())
    with pytest.raises(UnsupportedCaseError, match="shares memory with it here"):
        srcad.value_and_grad(f)(*args)
    with pytest.raises(UnsupportedCaseError, match="shares memory with it here"):
        srcad.jvp(f, args, (np.ones(3),) + (None,) * (len(args) - 1))
    np.testing.assert_array_equal(G, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("f", ONE_ARGUMENT, ids=lambda f: f.__name__)
def test_given_an_array_of_its_own_it_is_differentiated(f):
    x = np.array([0.5, -1.0, 2.0])
    check_grads(f, (x,), modes=("rev",))
    check_jvp(f, (x,))


@pytest.mark.parametrize("sparse_loaded", [True, False])  # (True first: once loaded, it stays)
def test_a_weak_proxy_whose_object_is_gone_is_not_followed(sparse_loaded):
    if sparse_loaded:  # srcad's sparse operands look at the globals' types only once SciPy's sparse is loaded
        pytest.importorskip("scipy.sparse")

    def make():
        class Listener:
            pass
        gone = Listener()
        return weakref.proxy(gone)

    namespace = {"np": np, "LISTENER": make(), "VERBOSE": False}
    # the function must be in a file srcad can read: this module's, with a global bound for it
    f = types.FunctionType(_reads_a_dead_proxy.__code__, {**_reads_a_dead_proxy.__globals__, **namespace})
    value, g = srcad.value_and_grad(f, wrt=1)(np.ones(3), np.arange(3.0))
    assert value == pytest.approx(6.0)
    np.testing.assert_allclose(g, [2.0, 2.0, 2.0])


def _reads_a_dead_proxy(x, y):
    x *= 2.0
    if VERBOSE:  # noqa: F821 (bound by the test)
        print(LISTENER)  # noqa: F821
    return np.sum(x * y)


def test_a_module_attribute_is_read_without_running_the_modules_getattr(tmp_path, monkeypatch):
    (tmp_path / "lazy_settings.py").write_text(
        "scale = 2.0\n"
        "def __getattr__(name):\n"
        "    raise RuntimeError('srcad asked the module for ' + name)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import lazy_settings

    namespace = dict(_scaled_by_a_module.__globals__, settings=lazy_settings)
    f = types.FunctionType(_scaled_by_a_module.__code__, namespace)
    value, g = srcad.value_and_grad(f)(np.arange(3.0))
    assert value == pytest.approx(20.0)
    np.testing.assert_allclose(g, [0.0, 8.0, 16.0])
    sys.modules.pop("lazy_settings", None)


def _scaled_by_a_module(x):
    x *= settings.scale  # noqa: F821 (bound by the test)
    return np.sum(x ** 2)


# ---- calls srcad runs as written change the memory they are given: never the caller's


def _reset(buffers):
    for b in buffers:
        b.fill(1.0)


def buffers_reset(x, buffers):
    _reset(buffers)
    return np.sum(x * buffers[0])


def _shuffle(data):
    np.random.default_rng(0).shuffle(data["order"])


def shuffled(x, data):
    _shuffle(data)
    return np.sum(x * data["order"])


class Sim:
    def __init__(self):
        self.buf = np.array([1.0, 2.0, 3.0])


def _advance(sim):
    sim.buf[:] = sim.buf * 0.5


def advanced(x, sim):
    _advance(sim)
    return x * sim.buf


class Model:
    def __init__(self):
        self.W = np.ones((2, 2))

    def decay(self, rate):
        self.W *= 1.0 - rate

    def loss(self, x):
        self.decay(0.5)
        return np.sum(x @ self.W)


def decayed(x, model):
    return model.loss(x)


def _fresh(case):
    return {"buffers": lambda: [np.zeros(3), np.zeros(3)], "data": lambda: {"order": np.arange(3.0)},
            "sim": Sim, "model": Model}[case]()


@pytest.mark.parametrize("f, held", [(buffers_reset, "buffers"), (shuffled, "data"), (advanced, "sim"),
                                     (decayed, "model")], ids=["list", "dict", "object", "method"])
def test_what_a_call_changes_is_a_copy_of_the_callers(f, held):
    x = np.array([[0.5, -1.0]]) if held == "model" else np.array([0.5, -1.0, 2.0])
    expected = f(x, _fresh(held))  # Python, on memory of its own
    for run in (lambda h: srcad.vjp(f, x, h)[0], lambda h: srcad.jvp(f, (x, h), (np.ones_like(x), None))[0],
                lambda h: srcad.jacobian(f, mode="fwd")(x, h) @ np.ones(x.size) if f is advanced else 0.0):
        given = _fresh(held)
        kept = repr(vars(given) if held in ("sim", "model") else given)
        run(given)
        assert repr(vars(given) if held in ("sim", "model") else given) == kept
    np.testing.assert_allclose(srcad.vjp(f, x, _fresh(held))[0], expected)
    # the derivative against finite differences, each evaluation on fresh memory
    direction = np.random.default_rng(1).normal(size=x.shape)
    out = srcad.jvp(f, (x, _fresh(held)), (direction, None))[1]
    eps = 1e-6
    fd = (f(x + eps * direction, _fresh(held)) - f(x - eps * direction, _fresh(held))) / (2 * eps)
    np.testing.assert_allclose(out, fd, rtol=1e-6, atol=1e-9)


def test_the_forward_mode_jacobian_runs_the_helper_on_fresh_memory_for_every_column():
    # probe 20A: each column ran _advance again on the caller's already halved Sim
    np.testing.assert_allclose(np.diag(srcad.jacobian(advanced, mode="fwd")(np.ones(3), Sim())), [0.5, 1.0, 1.5])


# ---- a dict of parameters updated key by key (probe 18A bug_07, 20A)


def sgd(params, lr):
    for k in params:
        params[k] -= lr * 2.0 * params[k]
    return np.sum(params["a"] ** 2) + np.sum(params["b"] ** 2)


def sgd_listed_keys(params, lr):
    for k in list(params.keys()):
        params[k] -= lr * params[k] ** 2
    return np.sum(params["a"] ** 2) * np.sum(params["b"])


@pytest.mark.parametrize("f", [sgd, sgd_listed_keys])
def test_a_dict_updated_key_by_key_is_differentiated(f):
    params = {"a": np.array([1.0, 2.0]), "b": np.array([3.0])}
    check_grads(f, (params, 0.1), modes=("rev",))
    check_jvp(f, (params, 0.1))
    np.testing.assert_array_equal(params["a"], [1.0, 2.0])


# ---- probe 20C: the check's own false refusals, crashes and holes


class Gain:
    table = {"scale": 1.0}  # what the class holds, all its objects share: not a sharing of theirs
    __slots__ = ("W",)

    def __init__(self, W):
        self.W = W

    def decay(self, rate):
        self.W *= rate

    def eval(self):  # a method named like a builtin that reads globals by name
        return self


def two_of_a_class(x, enc, dec):
    enc.eval().decay(0.9)
    return np.sum(np.tanh(x @ enc.W) @ dec.W)


def test_objects_of_one_class_are_not_taken_for_sharing_what_the_class_holds():
    x = np.array([[0.3, -0.2]])
    for _ in range(2):  # (the second call: copy.deepcopy has left __slotnames__ on the class)
        enc, dec = Gain(np.eye(2) * 0.5), Gain(np.ones((2, 1)))
        check_grads(two_of_a_class, (x, enc, dec))
        np.testing.assert_array_equal(enc.W, np.eye(2) * 0.5)


class Clock:
    def __init__(self):
        self.t = 0.0


class World:
    def __init__(self, clock):
        self.clock = clock


def _tick(clock):
    clock.t += 2.5


def ticks(x, clock, world):
    _tick(clock)
    return np.sum(x * world.clock.t)


class Field:
    def __init__(self):
        self.W = np.ones(3)

    def __deepcopy__(self, memo):  # a copy that keeps the array
        new = Field.__new__(Field)
        new.W = self.W
        return new


class Locked:
    def __init__(self):
        import threading
        self.lock = threading.Lock()
        self.W = np.ones(2)


def _halve(model):
    model.W *= 0.5


def halved(x, model):
    _halve(model)
    return np.sum(x * model.W)


class Uncopyable:
    def __init__(self):
        self.W = np.ones(2)

    def __deepcopy__(self, memo):
        raise TypeError("this object is not to be copied")


def reads_locked(x, model):
    return np.sum(x * model.W)


def test_what_a_deep_copy_cannot_separate_is_refused():
    x = np.array([1.0, 2.0])
    clock = Clock()  # one object, reached through two arguments: the copy would leave the other behind
    with pytest.raises(UnsupportedCaseError, match="'world' shares memory with it here"):
        srcad.value_and_grad(ticks)(x, clock, World(clock))
    check_grads(ticks, (x, Clock(), World(Clock())))
    field = Field()
    with pytest.raises(UnsupportedCaseError, match="still shares memory"):
        srcad.grad(halved)(np.ones(3), field)
    np.testing.assert_array_equal(field.W, np.ones(3))
    with pytest.raises(UnsupportedCaseError, match="copy.deepcopy cannot copy it"):
        srcad.grad(halved)(x, Uncopyable())
    locked = Locked()  # a library's object inside (a lock) is shared, as Python shares it; W is copied
    np.testing.assert_allclose(srcad.grad(halved)(x, locked), 0.5 * np.ones(2))
    np.testing.assert_array_equal(locked.W, np.ones(2))
    check_grads(reads_locked, (x, Locked()))


def test_a_helper_changing_an_object_is_differentiated_again():
    x = np.array([0.3, -0.7, 1.1])
    eps = 1e-5
    numeric = np.array([(srcad.grad(advanced_total)(x + eps * e, Sim()) - srcad.grad(advanced_total)(x - eps * e, Sim()))
                        / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(srcad.hessian(advanced_total)(x, Sim()), numeric, rtol=1e-5, atol=1e-8)


def advanced_total(x, sim):
    _advance(sim)
    return np.sum(np.sin(x) * sim.buf * x)


class Checkpoints(collections.abc.Mapping):
    """A mapping that loads its entries when read: the check must not read them."""

    def __init__(self):
        self.loads = 0

    def __getitem__(self, key):
        self.loads += 1
        raise FileNotFoundError(key)

    def __iter__(self):
        return iter(["a", "b"])

    def __len__(self):
        return 2


CHECKPOINTS = Checkpoints()


def reads_a_lazy_mapping(x):
    x *= 2.0
    return np.sum(x) * len(CHECKPOINTS)


class Head:
    def __init__(self, W):
        self.W = W


HEAD = Head(G)
HEAD_REF = weakref.ref(HEAD)


def through_a_weak_reference(x):
    x *= 2.0
    return np.sum(x * HEAD_REF().W)


def test_the_check_runs_no_code_of_yours_and_follows_weak_references():
    check_grads(reads_a_lazy_mapping, (np.array([0.5, 1.0]),))
    assert CHECKPOINTS.loads == 0
    with pytest.raises(UnsupportedCaseError, match="'HEAD_REF' shares memory with it here"):
        srcad.grad(through_a_weak_reference)(G)


class Reordered(dict):
    def __iter__(self):
        return iter(sorted(dict.keys(self), reverse=True))


def layers(params, x):
    for k in params:
        x = np.tanh(params[k] * x)
    return np.sum(x)


def test_a_dict_subclass_read_its_own_way_is_refused_where_differentiated():
    params = Reordered(a=np.array([0.5, 1.0]), b=np.array([2.0, -1.0]))
    with pytest.raises(srcad.errors.ArgumentError, match="its own __iter__"):
        srcad.grad(layers)(params, np.ones(2))
    check_grads(layers, (params, np.array([0.3, 0.2])), wrt=1)


def noisy(x, rng):
    rng.random()  # a call for its effect on an argument srcad does not know
    return np.sum(x * rng.normal(size=3))


def logged(x, logger):
    logger.debug("step")
    return np.sum(x ** 2)


def test_a_librarys_object_is_used_as_python_uses_it():
    # probe 20D: a random generator given as an argument was deep-copied (the caller's stream
    # never advanced: the same noise at every step), a logger refused as "still shares memory"
    import logging

    x = np.array([0.5, -1.0, 2.0])
    mine, theirs = np.random.default_rng(7), np.random.default_rng(7)
    for _ in range(3):
        np.testing.assert_allclose(srcad.grad(noisy)(x, mine), (theirs.random(), theirs.normal(size=3))[1])
    np.testing.assert_allclose(srcad.grad(logged)(x, logging.getLogger("srcad-test")), 2 * x)
