"""srcad.checkpointed: a loop body that changes state the segment snapshots do not hold is
refused, at the user's line, with what to write instead (the reverse sweep recomputes each
segment from its snapshot; against any other state the recomputation runs wrong and repeats
the effect). What the snapshots do hold keeps working: its gradients are checked against
central finite differences in random directions."""
import inspect
import logging

import numpy as np
import pytest
import scipy.stats

import srcad
from srcad.errors import SrcadSyntaxError


# ---- refused: state the snapshots do not hold -------------------------------------------


def record(log, v):
    log.append(v)


def helper_appends_to_a_list(u):
    log = []
    for t in srcad.checkpointed(range(6)):
        u = u * (1.0 + 0.1 * len(log))
        record(log, 1.0)  # refused
    return u


def generator_draws(x0):
    rng = np.random.default_rng(42)
    x = x0
    for t in srcad.checkpointed(range(16)):
        x = x + 0.5 * x * rng.standard_normal()  # refused
    return x


def legacy_global_draws(x0):
    np.random.seed(5)
    x = x0
    for t in srcad.checkpointed(range(5)):
        x = x * (1 + 0.3 * np.random.randn())  # refused
    return x


class Counter:
    def __init__(self):
        self.n = 0

    def tick(self):
        self.n = self.n + 1
        return self.n


def counter_object(x0, cnt):
    x = x0
    for t in srcad.checkpointed(range(6)):
        x = x * (1.0 + 0.1 * cnt.tick())  # refused
    return x


def noisy(x):
    return x + 0.01 * np.random.standard_normal()


def helper_draws(x):
    for t in srcad.checkpointed(range(4)):
        x = noisy(x) * 1.1  # refused
    return x


HISTORY = []


def global_list_append(x):
    for t in srcad.checkpointed(range(4)):
        x = np.sin(x) * (1.0 + 0.1 * len(HISTORY))
        HISTORY.append(t)  # refused
    return x


def remember(v):
    kept = HISTORY
    kept.append(v)
    return v * 2.0


def helper_updates_a_global(x):
    for t in srcad.checkpointed(range(4)):
        x = remember(x) * (1.0 + 0.1 * len(HISTORY))  # refused
    return x


def iterator_in_the_body(x):
    steps = iter([0.1, 0.2, 0.3, 0.4])
    for t in srcad.checkpointed(range(4)):
        x = x * (1.0 + next(steps))  # refused
    return x


COUNTER = Counter()

REFUSED = [
    (helper_appends_to_a_list, (1.0,), "record(...) changes 'log' in place",
     "make the update in the loop itself (log.append(v)"),
    (generator_draws, (1.0,), "rng.standard_normal(...) draws random numbers", "draw the numbers before the loop"),
    (legacy_global_draws, (1.0,), "np.random.randn(...) draws random numbers", "draw the numbers before the loop"),
    (counter_object, (1.0, COUNTER), "stores the attribute .n", "before the loop"),
    (helper_draws, (1.0,), "noisy(...) reaches", "draw the numbers before the loop"),
    (global_list_append, (1.0,), "HISTORY.append(...) changes a list", "keep the value in a variable"),
    (helper_updates_a_global, (1.0,), "updates 'HISTORY', a global", "keep the value in a variable"),
    (iterator_in_the_body, (1.0,), "srcad runs next(...) as written", "before the loop"),
]


def refused_line(fn):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if "# refused" in line)


@pytest.mark.parametrize("fn, args, what, advice", REFUSED, ids=[c[0].__name__ for c in REFUSED])
@pytest.mark.parametrize("mode", ["grad", "vjp", "hvp"])
def test_refused_at_the_users_line(fn, args, what, advice, mode):
    with pytest.raises(SrcadSyntaxError) as info:
        if mode == "grad":
            srcad.grad(fn)(*args)
        elif mode == "vjp":
            srcad.vjp(fn, *args)
        else:
            srcad.hvp(fn)(*args, 1.0)
    err = info.value
    assert (err.filename, err.lineno) == (__file__, refused_line(fn))
    message = str(err)
    assert "srcad does not checkpoint this loop" in message
    assert what in message and advice.lower() in message.lower()
    assert "drop srcad.checkpointed" in message


# ---- refused: code of yours behind a name, an attribute, an index, a library (probe 21C) ----


class Ticker:
    def __init__(self):
        self.n = 0

    def item(self):  # named like ndarray.item, changes the object
        self.n += 1
        return 0.1 * self.n


def user_method_named_like_an_arrays(x, objs):
    c = objs[0]
    for t in srcad.checkpointed(range(6), segment=2):
        x = x * (1.0 + c.item())  # refused
    return x


class Schedule:
    def __init__(self):
        self.k = 0

    @property
    def rate(self):
        self.k += 1
        return 0.1 * self.k


def property_with_an_effect(x, s):
    for t in srcad.checkpointed(range(6), segment=2):
        x = x * (1.0 + s.rate)  # refused
    return x


class NoisyData:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def __getitem__(self, t):
        return 1.0 + 0.1 * self.rng.standard_normal()


def getitem_draws(x, data):
    for t in srcad.checkpointed(range(6), segment=2):
        x = x * data[t]  # refused
    return x


def scipy_rvs_with_a_generator(x, rng):
    for t in srcad.checkpointed(range(6), segment=2):
        x = x * (1.0 + 0.1 * scipy.stats.norm.rvs(random_state=rng))  # refused
    return x


def scipy_rvs_global_state(x):
    for t in srcad.checkpointed(range(6), segment=2):
        x = x * (1.0 + 0.1 * scipy.stats.norm.rvs())  # refused
    return x


TICKS = [0]


def tick(t):
    TICKS[0] += 1
    return 0.1 * TICKS[0]


VECTORIZED_TICK = np.vectorize(tick)


def vectorized_stateful_function(x):
    for t in srcad.checkpointed(range(6), segment=2):
        x = x * (1.0 + VECTORIZED_TICK(t))  # refused
    return x


@srcad.custom_vjp
def jitter(x):
    return x * (1.0 + 0.1 * np.random.standard_normal())


@jitter.defvjp
def jitter_vjp(y, x):
    d[x] += d[y] * y / x  # noqa: F821 (srcad's rule language)


def custom_vjp_draws(x):
    for t in srcad.checkpointed(range(6), segment=2):
        x = jitter(x)  # refused
    return x


PROBE_REFUSED = [
    # (c.item() is Ticker.item where c is a Ticker: named like ndarray.item, it is read as the class's)
    (user_method_named_like_an_arrays, (1.3, [Ticker()]), "Ticker.item(...) stores the attribute .n of an object",
     "before the loop"),
    (property_with_an_effect, (1.3, Schedule()), "reading .rate of 's' runs code of yours (a property of Schedule)",
     "read what the loop needs into a variable before the loop"),
    (getitem_draws, (1.3, NoisyData(0)), "indexing 'data' runs code of yours (NoisyData.__getitem__",
     "read what the loop needs into a variable before the loop"),
    (scipy_rvs_with_a_generator, (1.3, np.random.default_rng(5)), "scipy.stats.norm.rvs(...) draws random numbers",
     "draw the numbers before the loop"),
    (scipy_rvs_global_state, (1.3,), "scipy.stats.norm.rvs(...) draws random numbers",
     "draw the numbers before the loop"),
    (vectorized_stateful_function, (1.3,), "made by np.vectorize from tick", "keep the value in a variable"),
    (custom_vjp_draws, (1.3,), "np.random.standard_normal(...) draws random numbers",
     "draw the numbers before the loop"),
]


@pytest.mark.parametrize("fn, args, what, advice", PROBE_REFUSED, ids=[c[0].__name__ for c in PROBE_REFUSED])
@pytest.mark.parametrize("mode", ["grad", "hvp"])
def test_code_of_yours_behind_a_name_is_refused(fn, args, what, advice, mode):
    test_refused_at_the_users_line(fn, args, what, advice, mode)


def test_the_counter_is_not_ticked_twice():
    cnt = Counter()
    with pytest.raises(SrcadSyntaxError):
        srcad.grad(counter_object)(1.0, cnt)
    assert cnt.n == 0  # refused before anything ran


def test_forward_mode_runs_the_loop_once_and_is_not_refused():
    eps = 1e-6
    numeric = (helper_appends_to_a_list(1.0 + eps) - helper_appends_to_a_list(1.0 - eps)) / (2 * eps)
    _, tangent = srcad.jvp(helper_appends_to_a_list, (1.0,), (1.0,))
    np.testing.assert_allclose(tangent, numeric, rtol=1e-7)


def draws_without_derivatives(u, n):
    rng = np.random.default_rng(0)
    total = 0.0
    for t in srcad.checkpointed(range(n)):
        total = total + rng.standard_normal()
    return np.sum(u) * total


def test_a_loop_without_derivatives_is_not_checkpointed_so_not_refused():
    u = np.linspace(0.1, 0.5, 3)
    np.testing.assert_allclose(srcad.grad(draws_without_derivatives)(u, 4),
                               np.full(3, draws_without_derivatives(np.ones(3), 4) / 3))


# ---- accepted: state the snapshots hold -------------------------------------------------


def direct_appends(u):
    log = []
    for t in srcad.checkpointed(range(6), segment=2):
        u = u * (1.0 + 0.1 * len(log)) + np.sin(u) * 0.1
        log.append(u * 1.0)
    return np.sum(np.stack(log) ** 2)


def in_place_array_updates(u):
    a = u * 1.0
    acc = np.zeros_like(a)
    for t in srcad.checkpointed(range(7), segment=3):
        a[t % 3] = a[(t + 1) % 3] * np.sin(a[t % 3]) + 0.5
        acc += a * 0.5
        np.add.at(acc, [0, 2, 0], a[:3] * t)
    return np.sum(a * acc)


def dict_item_updates(u):
    d = {"a": u * 1.0, "b": u * 0.5}
    for t in srcad.checkpointed(range(5), segment=2):
        d["a"] = np.sin(d["b"]) * d["a"]
        d["b"] = d["b"] + 0.1 * d["a"]
    return np.sum(d["a"] * d["b"])


def step(u, dt):
    return u + dt * np.tanh(u) * np.cos(u)


def pure_helper(u):
    for t in srcad.checkpointed(range(7), segment=3):
        u = step(u, 0.1)
    return np.sum(u ** 2)


def step_in_place(u, dt):
    u += dt * np.sin(u)
    return u


def differentiated_helper_updating_its_argument(u):
    u = u * 1.0
    for t in srcad.checkpointed(range(5), segment=2):
        u = step_in_place(u, 0.1)  # srcad's forward sweep of it runs on a copy
    return np.sum(u * u)


LOG = logging.getLogger("srcad.tests.checkpoint_state")


def prints_and_logs(u):
    for t in srcad.checkpointed(range(4), segment=2):
        u = np.sin(u) * 1.2
        print("step", t, "of", 4)
        LOG.debug("step %d", t)
    return np.sum(u)


def array_methods(u):
    for t in srcad.checkpointed(range(4), segment=2):
        u = u.reshape(2, 2).transpose().ravel() * np.cos(u.sum()) + u.max()
    return np.sum(u * u)


ACCEPTED = [direct_appends, in_place_array_updates, dict_item_updates, pure_helper,
            differentiated_helper_updating_its_argument, prints_and_logs, array_methods]


def central_difference(fn, x, direction, eps=1e-6):
    return (fn(x + eps * direction) - fn(x - eps * direction)) / (2 * eps)


@pytest.mark.parametrize("fn", ACCEPTED, ids=[f.__name__ for f in ACCEPTED])
def test_accepted_gradients_against_central_differences(fn):
    rng = np.random.default_rng(7)
    u = rng.uniform(0.2, 1.0, 4)
    gradient = srcad.grad(fn)(u)
    _, pullback = srcad.vjp(fn, u)
    for _ in range(3):
        direction = rng.standard_normal(4)
        numeric = central_difference(fn, u, direction)
        np.testing.assert_allclose(gradient @ direction, numeric, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(pullback(1.0) @ direction, numeric, rtol=1e-6, atol=1e-8)


# ---- accepted: reads srcad can prove run no code of yours ---------------------------------


class Model:
    def __init__(self, n):
        self.W = np.linspace(-0.4, 0.5, n * n).reshape(n, n)
        self.scale = 0.7


MODEL = Model(4)


def plain_attributes_of_an_object(u, m):
    for t in srcad.checkpointed(range(5), segment=2):
        u = np.tanh(m.W @ u) * m.scale + 0.1 * u
    return np.sum(u * u)


def attributes_of_a_global_object(u):
    for t in srcad.checkpointed(range(5), segment=2):
        u = np.sin(u) * MODEL.scale + MODEL.W[1] * u.mean() + np.pi * 0.01
    return np.sum(u ** 2)


def list_and_dict_reads(u):
    p = {"a": 0.3, "b": 0.25}
    hist = [u * 1.0]
    for t in srcad.checkpointed(range(6), segment=2):
        u = np.cos(u) * p["a"] + hist[-1] * p["b"] + len(p.keys()) * 0.01 + p.get("a") * u
        hist.append(u * 1.0)
    return np.sum(u * hist[2])


def array_reading_methods(u):
    for t in srcad.checkpointed(range(4), segment=3):
        v = u * 2.0
        u = u * 0.5 + v.mean() * 0.1 + v.T[::-1] * v.max() * 0.05 + v.item(0) * 0.01 + u.shape[0] * 0.001
    return np.sum(u * u)


def seeded_noise(u):
    rng = np.random.default_rng(42)
    return u + 0.01 * rng.standard_normal(u.shape)


def helper_seeding_its_own_generator(u):
    for t in srcad.checkpointed(range(6), segment=2):
        u = seeded_noise(np.sin(u))
    return np.sum(u ** 2)


ACCEPTED_READS = [(plain_attributes_of_an_object, (Model(4),)), (attributes_of_a_global_object, ()),
                  (list_and_dict_reads, ()), (array_reading_methods, ()), (helper_seeding_its_own_generator, ())]


@pytest.mark.parametrize("fn, extra", ACCEPTED_READS, ids=[c[0].__name__ for c in ACCEPTED_READS])
def test_reads_that_run_no_code_of_yours_against_central_differences(fn, extra):
    rng = np.random.default_rng(11)
    u = rng.uniform(0.2, 1.0, 4)
    gradient = srcad.grad(fn)(u, *extra)
    for _ in range(3):
        direction = rng.standard_normal(4)
        numeric = central_difference(lambda v: fn(v, *extra), u, direction)
        np.testing.assert_allclose(gradient @ direction, numeric, rtol=1e-6, atol=1e-8)
