"""Functional updates of records (``passes.records.record_replace``): ``dataclasses.replace(s,
x=e)`` and ``s._replace(x=e)`` where srcad knows ``s``'s class are the construction
``State(e, s.v)``, differentiated as such: in the function, in a helper a loop calls, on an
argument. Every mode against central finite differences; where the class is not known, or
the call is not one Python runs, refused with what to do."""
import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes
from srcad.testing import check_grads

X = np.array([0.3, -0.4, 0.9])
V = np.array([0.5, 0.2, -0.7])


@dataclasses.dataclass
class State:
    x: np.ndarray
    v: np.ndarray

    def energy(self):
        return 0.5 * np.sum(self.v ** 2) - np.sum(np.cos(self.x))


class Particle(NamedTuple):
    x: np.ndarray
    v: np.ndarray


@dataclasses.dataclass(frozen=True)
class Frozen:
    w: np.ndarray
    scale: float = 2.0


@dataclasses.dataclass
class Outer:
    inner: State
    k: np.ndarray


@dataclasses.dataclass
class Cleaned:
    w: np.ndarray

    def __post_init__(self):
        self.w = np.abs(self.w)


class SubState(State):
    pass


def step(s, dt):
    a = -np.sin(s.x)
    return dataclasses.replace(s, x=s.x + dt * s.v, v=s.v + dt * a)


def simulate(x0):
    s = State(x0, 0.5 * x0)
    for _ in range(5):
        s = step(s, 0.1)
    return np.sum(s.x ** 2) + np.sum(s.v * s.x)


def drift(p, dt):
    return p._replace(x=p.x + dt * np.tanh(p.v))


def named_tuple_simulate(x0):
    p = Particle(x0, x0 ** 2)
    for _ in range(4):
        p = drift(p, 0.2)
    return np.sum(p.x * p.v)


def in_the_function(x):
    s = State(x, np.sin(x))
    t = dataclasses.replace(s, v=s.v * s.x)  # one field given: x is read off s
    u = dataclasses.replace(t, x=np.exp(t.v))  # t's class: that of s, which it replaces
    return np.sum(u.x * u.v) + np.sum(t.x)


def named_tuple_in_the_function(x):
    p = Particle(x, 2.0 * x)
    q = p._replace(v=p.v * p.x)
    return np.sum(q.x * q.v ** 2)


def frozen_record(x):
    f = Frozen(x)
    g = dataclasses.replace(f, w=f.w * f.scale, scale=3.0)
    return np.sum(g.w ** 2) * g.scale


def nested(x):
    o = Outer(State(x, 2.0 * x), x ** 2)
    p = dataclasses.replace(o, inner=State(o.inner.x, o.inner.v * o.k))
    return np.sum(p.inner.v * p.inner.x)


def nested_loss(o, x):
    inner = dataclasses.replace(o.inner, v=o.inner.v * x)  # the argument's held record: its class is known
    p = dataclasses.replace(o, inner=inner, k=o.k * x)
    return np.sum(p.inner.v * p.inner.x * p.k)


def kick(s, *, dt):  # keyword-only: inlined where it is called
    return dataclasses.replace(s, v=s.v - dt * np.sin(s.x))


def inlined_helpers(x):
    def drift_local(p, dt):
        return p._replace(x=p.x + dt * p.v)

    s = State(x, x ** 2)
    p = Particle(np.cos(x), x)
    for _ in range(3):
        s = kick(s, dt=0.1)
        p = drift_local(p, 0.2)
    return np.sum(s.v * s.x) + np.sum(p.x ** 2)


def rebound_with_method(x):
    s = State(x, 0.3 * x)
    for _ in range(3):
        s = step(s, 0.2)
    return s.energy()  # the name is rebound, to what step returns: checked to stay a State


@pytest.mark.parametrize("fn", [simulate, named_tuple_simulate, in_the_function, named_tuple_in_the_function,
                                frozen_record, nested, inlined_helpers, rebound_with_method],
                         ids=["helper_in_loop", "named_tuple_helper_in_loop", "in_the_function", "named_tuple",
                              "frozen", "nested", "inlined_helpers", "method_of_rebound"])
def test_replace_is_differentiated_as_the_construction(fn):
    check_all_modes(fn, (X,))


def loss(state, x):
    for _ in range(3):
        state = step(state, 0.1)
    moved = dataclasses.replace(state, v=state.v * x)
    return np.sum(moved.v ** 2) + np.sum(moved.x * x)


def aliased_loss(state, x):
    s = state  # the argument's class, under another name
    for _ in range(2):
        s = step(s, 0.1)
    return np.sum(dataclasses.replace(s, v=s.v * x).v ** 2)


def particle_loss(p, x):
    q = p._replace(v=p.v + x)
    return np.sum(q.v * q.x)


def test_a_record_given_as_an_argument():
    check_all_modes(loss, (State(X, V), X), wrt=1)
    check_all_modes(particle_loss, (Particle(X, V), X), wrt=1)
    check_all_modes(nested_loss, (Outer(State(X, V), X ** 2), X), wrt=1)
    check_all_modes(aliased_loss, (State(X, V), X), wrt=1)
    g = srcad.grad(loss)(State(X, V), X)  # the record itself: its gradient by field
    eps = 1e-6
    for field in ("x", "v"):
        u = np.array([0.4, -0.1, 0.8])
        moved = [loss(dataclasses.replace(State(X, V), **{field: getattr(State(X, V), field) + t * eps * u}), X)
                 for t in (1, -1)]
        np.testing.assert_allclose(np.vdot(getattr(g, field) if isinstance(g, State) else g[field], u),
                                   (moved[0] - moved[1]) / (2 * eps), rtol=1e-6)


def test_forward_mode_jacobian_of_a_replaced_record():
    def positions(x):
        s = State(x, np.cos(x))
        for _ in range(3):
            s = step(s, 0.1)
        return s.x

    forward = srcad.jacobian(positions, mode="fwd")(X)
    reverse = srcad.jacobian(positions)(X)
    eps = 1e-6
    numeric = np.stack([(positions(X + eps * e) - positions(X - eps * e)) / (2 * eps) for e in np.eye(3)], axis=1)
    np.testing.assert_allclose(forward, numeric, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(reverse, numeric, rtol=1e-6, atol=1e-9)


def test_hessian_of_a_replaced_record():
    def small(x):
        s = State(x, x ** 2)
        s = dataclasses.replace(s, v=np.sin(s.v) * s.x)
        return np.sum(s.v * s.x)

    h = srcad.hessian(small)(X)
    eps = 1e-5
    gradient = srcad.grad(small)
    numeric = np.stack([(gradient(X + eps * e) - gradient(X - eps * e)) / (2 * eps) for e in np.eye(3)], axis=1)
    np.testing.assert_allclose(h, numeric, rtol=1e-5, atol=1e-8)


def subclass_loss(state, x):
    return np.sum(step(state, 0.1).x * x)


def test_the_class_is_the_arguments_own():
    """A subclass's record is one of its own class (the code is compiled for it), never built as
    the base class."""
    check_all_modes(subclass_loss, (SubState(X, V), X), wrt=1, second=False)
    y = srcad.vjp(lambda s: step(s, 0.1), SubState(X, V))[0]
    assert type(y) is SubState and type(step(SubState(X, V), 0.1)) is SubState


def becomes_a_particle(s, dt):
    return Particle(s.x, s.v)


def changes_class(x):
    s = State(x, x)
    for _ in range(2):
        s = becomes_a_particle(s, 0.1)
    return np.sum(s.x)


def test_a_rebound_record_changing_class_is_no_record_srcad_knows():
    """``becomes_a_particle`` returns another class: ``s`` is then no record of a class srcad
    assumes (and ``p = to_array(p)`` keeps working as before ``replace`` was lowered)."""
    assert np.allclose(srcad.grad(changes_class)(X), 1.0)
    check_grads(changes_class, (X,))
    check_grads(flattened, (X,))


def to_array(p):
    return np.concatenate([p.x, p.v])


def flattened(x):
    p = State(x * 1.0, x * 2.0)
    p = to_array(p)
    return np.sum(p ** 2)


MAKER = State


def rebuilt(s, dt):
    return MAKER(s.x + dt * s.v, s.v)


def rebuilt_then_replaced(x):
    s = State(x, x * 0.5)
    for _ in range(2):
        s = rebuilt(s, 0.1)
        s = dataclasses.replace(s, v=s.v * np.cos(s.x))
    return np.sum(s.x * s.v)


def test_a_helper_returning_another_class_after_a_change_is_refused():
    global MAKER
    check_grads(rebuilt_then_replaced, (X,))
    MAKER = Particle  # Python: dataclasses.replace of a Particle raises TypeError
    try:
        with pytest.raises(srcad.SrcadError):
            srcad.grad(rebuilt_then_replaced)(X)
    finally:
        MAKER = State
    check_grads(rebuilt_then_replaced, (X,))


def unknown_class(items, x):
    s = items[0]
    return np.sum(dataclasses.replace(s, x=x).x)


def unknown_field(x):
    s = State(x, x)
    return np.sum(dataclasses.replace(s, z=x).x)


def unknown_tuple_field(x):
    p = Particle(x, x)
    return np.sum(p._replace(z=x).x)


def positional(x):
    s = State(x, x)
    return np.sum(dataclasses.replace(s, x).x)


def replace_of_a_named_tuple(x):
    p = Particle(x, x)
    return np.sum(dataclasses.replace(p, x=x).x)


def post_init_replaced(c, x):
    return np.sum(dataclasses.replace(c, w=x).w)


def unknown_tuple(items, x):
    return np.sum(items[0]._replace(x=x).x)


def test_refusals_say_why():
    state = State(X, V)
    with pytest.raises(srcad.SrcadSyntaxError, match=r"srcad lowers dataclasses.replace\(s, \.\.\.\) only where "
                                                     r"it knows s's class: .*does not know the class"):
        srcad.grad(unknown_class, wrt=1)([state], X)
    with pytest.raises(srcad.SrcadSyntaxError, match=r"State has no field 'z' \(its fields: x, v\); "
                                                     r"dataclasses.replace\(s, \.\.\.\) with it raises TypeError"):
        srcad.grad(unknown_field)(X)
    with pytest.raises(srcad.SrcadSyntaxError, match=r"Particle has no field 'z'.*raises ValueError"):
        srcad.grad(unknown_tuple_field)(X)
    with pytest.raises(srcad.SrcadSyntaxError, match=r"with the record as its one positional argument"):
        srcad.grad(positional)(X)
    with pytest.raises(srcad.SrcadSyntaxError, match=r"'p' is a Particle, not a dataclass"):
        srcad.grad(replace_of_a_named_tuple)(X)
    with pytest.raises(srcad.SrcadSyntaxError, match=r"Cleaned has a __post_init__"):
        srcad.grad(post_init_replaced, wrt=1)(Cleaned(X), X)
    with pytest.raises(srcad.NoRuleError, match=r"srcad lowers s._replace\(\.\.\.\) only where it knows"):
        srcad.grad(unknown_tuple, wrt=1)([Particle(X, V)], X)


def test_the_plain_constructions_keep_working():
    """Controls: a record rebound by a helper that builds it (no replace), and a named tuple's
    _replace where nothing is differentiated through it."""
    def rebuilt(x):
        s = State(x, x)
        for _ in range(2):
            s = State(s.x * s.v, s.v)
        return np.sum(s.x)

    check_all_modes(rebuilt, (X,))

    def constant_record(x, p):
        q = p._replace(x=2.0)
        return np.sum(x * q.x)

    np.testing.assert_allclose(srcad.grad(constant_record)(X, Particle(1.0, 1.0)), np.full(3, 2.0))


def step_through_a_local(s, dt):
    moved = dataclasses.replace(s, x=s.x + dt * s.v)
    if dt > 0.5:
        moved = State(moved.x, moved.v * 0.5)
    return moved


def through_a_local(x):
    s = State(x, x * 0.5)
    for _ in range(3):
        s = step_through_a_local(s, 0.2)
        s = dataclasses.replace(s, v=s.v - 0.1 * np.sin(s.x))
    return np.sum(s.x ** 2 + s.v)


def test_a_helper_returning_a_local_bound_to_a_replacement():
    """``moved = dataclasses.replace(s, ...)``; ``return moved``: still ``s``'s class."""
    check_all_modes(through_a_local, (X,), wrt=0)
