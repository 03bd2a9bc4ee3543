"""The dispatch fast path of ``Differentiable.adjoint`` (the last call's key, checked item by
item): a call whose arguments differ from the last one in class, shape, dtype, binding or
guarded globals must reach the code made for them, or the refusal the slow path gives.
Every answer is checked against central finite differences."""
import numpy as np
import pytest

import srcad
from srcad.errors import ArgumentError, CotangentError

RNG = np.random.default_rng(21)


def assert_vjp(f, args, v, grads, wrt=(0,), eps=1e-6):
    """``grads`` (one per ``wrt`` position) against ⟨v, central differences⟩ in a random direction."""
    grads = grads if isinstance(grads, tuple) else (grads,)
    for g, position in zip(grads, wrt):
        x = args[position]
        assert np.shape(g) == np.shape(x)
        u = RNG.standard_normal(np.shape(x)) if np.ndim(x) else float(RNG.standard_normal())

        def at(step):
            moved = list(args)
            moved[position] = np.asarray(x, dtype=np.float64) + step * u if np.ndim(x) else x + step * u
            return np.asarray(f(*moved), dtype=np.float64)

        numeric = np.sum(np.asarray(1.0 if v is None else v) * (at(eps) - at(-eps))) / (2 * eps)
        assert np.isclose(np.sum(np.asarray(g, np.float64) * u), numeric, rtol=1e-5, atol=1e-7)


def wave(x, y):
    return np.sin(x) * y + x * x


def energy(x):
    return np.sum(np.cos(x) * x)


ACTIVATION = np.sin


def activated(x):
    return ACTIVATION(x) * 2.0


def test_shape_changes_between_calls():
    d = srcad.differentiable(wave, wrt=(0, 1))
    for shape in [(3,), (3,), (4,), (2, 3), (3,), (4,)]:
        x, y, v = RNG.standard_normal(shape), RNG.standard_normal(shape), RNG.standard_normal(shape)
        assert_vjp(wave, (x, y), v, d.adjoint(x, y, v), wrt=(0, 1))


def test_dtype_changes_between_calls():
    d = srcad.differentiable(energy)
    x = RNG.standard_normal(5)
    for dtype in [np.float64, np.float32, np.float64, np.float32]:
        g = d.adjoint(x.astype(dtype))
        assert g.dtype == dtype
        assert_vjp(energy, (x,), None, g.astype(np.float64))


def test_an_array_reshaped_in_place_is_a_new_shape():
    d = srcad.differentiable(wave)
    x, y = RNG.standard_normal(6), RNG.standard_normal(6)
    d.adjoint(x, y, np.ones(6))
    x.shape = (2, 3)
    y.shape = (2, 3)
    v = RNG.standard_normal((2, 3))
    assert_vjp(wave, (x, y), v, d.adjoint(x, y, v))


def test_argument_class_changes_between_calls():
    d = srcad.differentiable(wave, wrt=(0, 1))
    calls = [(0.5, 2.0), (np.float64(0.5), 2.0), (np.array(0.5), 2.0), (0.5, np.array([1.0, 2.0])), (0.5, 2.0)]
    for x, y in calls:
        v = RNG.standard_normal(np.shape(wave(x, y))) if np.ndim(wave(x, y)) else 1.5
        grads = d.adjoint(x, y, v)
        assert_vjp(wave, (x, y), v, grads, wrt=(0, 1))


def test_refusals_still_come_after_a_fast_call():
    d = srcad.differentiable(energy)
    x = RNG.standard_normal(3)
    d.adjoint(x)
    d.adjoint(x)
    with pytest.raises(ArgumentError):
        d.adjoint(np.arange(3))  # an integer array where a derivative is asked
    with pytest.raises(ArgumentError):
        d.adjoint(x.astype(np.complex128))
    w = srcad.differentiable(wave)
    w.adjoint(x, x, np.ones(3))
    with pytest.raises(CotangentError):
        w.adjoint(x, x, np.ones(4))  # a cotangent of another shape than the output
    with pytest.raises(CotangentError):
        w.adjoint(x, x)  # no cotangent for an array output
    assert_vjp(wave, (x, x), np.ones(3), w.adjoint(x, x, np.ones(3).astype(np.int64)))


def test_keywords_and_positions_alternate():
    d = srcad.differentiable(wave, wrt=(0, 1))
    x, y, v = RNG.standard_normal(4), RNG.standard_normal(4), RNG.standard_normal(4)
    for grads in [d.adjoint(x, y, v), d.adjoint(x, y=y, v=v), d.adjoint(x, y, v), d.adjoint(y=y, x=x, v=v),
                  d.adjoint(x, y, v=v), d.adjoint(x, y, v)]:
        assert_vjp(wave, (x, y), v, grads, wrt=(0, 1))


def test_a_one_tuple_wrt_gets_a_tuple_every_time():
    d = srcad.differentiable(wave, wrt=(0,))
    x, y, v = RNG.standard_normal(4), RNG.standard_normal(4), RNG.standard_normal(4)
    for _ in range(3):
        grads = d.adjoint(x, y, v)
        assert isinstance(grads, tuple) and len(grads) == 1
        assert_vjp(wave, (x, y), v, grads)


def test_a_rebound_global_reaches_new_code():
    global ACTIVATION
    d = srcad.differentiable(activated)
    x, v = RNG.standard_normal(3), RNG.standard_normal(3)
    try:
        assert_vjp(activated, (x,), v, d.adjoint(x, v))
        ACTIVATION = np.cos
        assert_vjp(activated, (x,), v, d.adjoint(x, v))
        assert_vjp(activated, (x,), v, d.adjoint(x, v))
    finally:
        ACTIVATION = np.sin
    assert_vjp(activated, (x,), v, d.adjoint(x, v))


class Scaled:
    def __init__(self, scale):
        self.scale = scale

    @srcad.differentiable
    def loss(self, x):
        return np.sum(np.sin(x) * self.scale)


def test_bound_methods_of_two_objects_alternate():
    a, b = Scaled(2.0), Scaled(-3.0)
    x = RNG.standard_normal(4)
    for obj in [a, b, a, a, b]:
        assert_vjp(lambda x: Scaled.loss.func(obj, x), (x,), None, obj.loss.adjoint(x))
    with pytest.raises(ArgumentError):  # unbound, wrt=0 is self: the bound calls' fast path is theirs
        Scaled.loss.adjoint(a, x)


def test_the_companion_follows_the_same_rules():
    companion = srcad.adjoint(wave, wrt=(0, 1))
    for shape, dtype in [((3,), np.float64), ((3,), np.float64), ((2,), np.float32), ((3,), np.float64)]:
        x, y = RNG.standard_normal(shape).astype(dtype), RNG.standard_normal(shape).astype(dtype)
        v = RNG.standard_normal(shape)
        grads = companion(x, y, v)
        assert grads[0].dtype == dtype
        assert_vjp(wave, (x.astype(np.float64), y.astype(np.float64)), v, grads, wrt=(0, 1))


def wave_cubed(x, y):
    return np.sin(x) * y + x * x * x


def test_wrappers_made_anew_in_a_loop_share_compiled_checks_not_their_objects():
    """``srcad.grad(f)(x)`` in a loop makes a new wrapper each time: the generated argument and
    guard checks are compiled once per text (not per wrapper), and each wrapper's checks still
    test its own key, guards and code (two functions of the same shapes, alternating)."""
    from srcad import dispatch

    x, y, v = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal(3)
    codes = None
    for f in [wave, wave_cubed, wave, wave_cubed]:
        for _ in range(2):
            assert_vjp(f, (x, y), v, srcad.adjoint(f, wrt=(0, 1))(x, y, v), wrt=(0, 1))
            assert_vjp(f, (x, y), None, srcad.grad(lambda a, b: np.sum(f(a, b)), wrt=(0, 1))(x, y), wrt=(0, 1))
        codes = codes or len(dispatch._TRAMPOLINE_CODES)  # after the first function's wrappers
    assert len(dispatch._TRAMPOLINE_CODES) == codes
    x2 = RNG.standard_normal(5)  # another key: the check made for it tests its shape
    assert_vjp(wave, (x2, x2), x2, srcad.adjoint(wave, wrt=(0, 1))(x2, x2, x2), wrt=(0, 1))
    assert_vjp(wave, (x, y), v, srcad.adjoint(wave, wrt=(0, 1))(x, y, v), wrt=(0, 1))


def test_new_wrappers_after_a_rebound_global_reach_new_code():
    """A new wrapper reuses the guards made for the last one only while they hold."""
    global ACTIVATION
    x, v = RNG.standard_normal(3), RNG.standard_normal(3)
    try:
        for activation in [np.sin, np.sin, np.cos, np.cos, np.tanh, np.sin]:
            ACTIVATION = activation
            assert_vjp(activated, (x,), v, srcad.adjoint(activated)(x, v))
            assert_vjp(activated, (x,), v, srcad.differentiable(activated).adjoint(x, v))
    finally:
        ACTIVATION = np.sin
