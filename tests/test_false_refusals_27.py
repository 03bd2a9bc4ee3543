"""Ordinary code srcad refused (probe 27), now differentiated, each checked against finite
differences in every mode, beside the near cases that must stay refused:

- ``t + (y,)``, ``t += (y,)`` and ``L + [y]`` of sequences whose lengths srcad knows (displays,
  earlier such joins) are the displays of their items; a join of a length srcad does not know
  (bound in a loop, a list changed in place) is still refused where it runs;
- ``rng.standard_normal(5)`` of a generator the function makes (``rng = np.random.default_rng(0)``
  at every binding) is a constant of new memory; a draw given a value with a derivative
  (``rng.normal(mu, 1.0)``), a generator passed in, a draw in a checkpointed loop from a
  generator made before it stay refused;
- ``y[0], y[1] = y[1], y[0]`` of an array whose shape says it has one axis per index reads
  NumPy scalars, no views (reverse mode, which knows shapes); a row swap stays refused.
"""
import numpy as np
import pytest

import srcad

from lang_checks import check_all_modes, check_second_order
from srcad.testing import check_grads, check_jvp

X = np.array([0.3, -0.5, 0.8])
JOINED = "join or repeat the sequences"


def refused_when_run(f, message, x=X):
    """Refused with ``message`` by grad and jvp."""
    for run in (lambda: srcad.grad(f)(x), lambda: srcad.jvp(f, (x,), (np.ones_like(x),))):
        with pytest.raises(srcad.SrcadError, match=message):
            run()


# ---- joins of sequences of known length --------------------------------------------------------

def tuple_augmented(x):
    t = (x, x)
    t += (x * 2,)
    return np.sum(t[0] * t[2]) + np.sum(t[1] ** 3)


def tuple_rebound(x):
    y = np.sin(x)
    t = (x, x)
    t = t + (y,)
    return np.sum(t[2] * t[0])


def list_rebound(x):
    y = x * 3
    lst = [x]
    lst = lst + [y]
    return np.sum(np.stack(lst) ** 2) + np.sum(lst[1] * lst[0])


def tuple_chain(x):
    t = (x,)
    t = t + (x * 2,)
    t = (np.cos(x),) + t + (x ** 2, x)
    return np.sum(t[0] * t[1] * t[3]) + np.sum(t[2] * t[4])


def joined_in_a_branch(x):
    t = (x, np.exp(x))
    if x[0] > 0:
        t = t + (x ** 2,)
    else:
        t = (x,) + t
    return np.sum(t[0] * t[2])


@pytest.mark.parametrize("f", [tuple_augmented, tuple_rebound, list_rebound, tuple_chain, joined_in_a_branch])
def test_join_of_known_lengths(f):
    check_all_modes(f, (X,))
    np.testing.assert_allclose(srcad.jacobian(f, mode="fwd")(X), srcad.jacobian(f, mode="rev")(X))


def test_joined_items_still_share_memory():
    def f(x):
        a = x * 2
        t = (a,) + (x,)
        b = t[0]
        b[0] = 7.0  # (the join holds the very array a: it changes too)
        return np.sum(a * x)

    refused_when_run(f, "in-place update of 'b', which shares memory with 'a'")


# ---- joins srcad cannot see the lengths of: still refused --------------------------------------

def joined_in_a_loop(x):
    t = (x,)
    for i in range(3):
        t = t + (x * i,)
    return np.sum(t[3] * t[0])


def list_appended_first(x):
    lst = [x]
    lst.append(x * 2)
    lst = lst + [x ** 2]
    return np.sum(lst[2] * lst[1])


def list_appended_through_another_name(x):
    lst = [x]
    other = lst
    other.append(x * 2)
    lst = lst + [x ** 2]
    return np.sum(lst[2] * lst[1])


def list_extended_in_place(x):
    lst = [x]
    lst += [x * 2]
    return np.sum(lst[1] * lst[0])


def joined_with_an_argument(x, t=(1.0,)):
    s = t + (x,)
    return np.sum(s[1] * x)


@pytest.mark.parametrize("f, message", [
    (joined_in_a_loop, JOINED), (list_appended_first, JOINED), (list_extended_in_place, JOINED),
    (joined_with_an_argument, JOINED),
    (list_appended_through_another_name, "in-place update of 'other', which shares memory with 'lst'")])
def test_join_of_unknown_length_refused(f, message):
    refused_when_run(f, message)


# ---- draws of a generator the function makes ---------------------------------------------------

U = np.array([0.3, -0.5, 0.8, 1.1, -0.2])


def scaled_noise(u):
    rng = np.random.default_rng(0)
    Z = rng.standard_normal(5)
    Z = Z * u
    return np.sum(Z ** 2)


def noise_updated_in_a_loop(u):
    rng = np.random.default_rng(0)
    Z = rng.standard_normal(5)
    for t in range(5):
        Z[t] = Z[t] * u[t]
    return np.sum(Z ** 2)


def other_generators(u):
    rs = np.random.RandomState(1)
    g = np.random.Generator(np.random.PCG64(2))
    a = rs.randn(5)
    a = (a + rs.normal(0.0, 2.0, size=5)) * u
    b = g.uniform(-1.0, 1.0, 5)
    b = b * g.normal(size=5) * u
    return np.sum(np.sin(a) * b)


def two_draws(u):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(5)
    b = rng.standard_normal(5)  # other numbers: never merged with a
    a = a * u
    return np.sum(a * b) + np.sum(b * u ** 2)


def noise_before_a_checkpointed_loop(u):
    rng = np.random.default_rng(3)
    noise = rng.standard_normal((5, 5))
    noise = noise * u
    x = u * 1.0
    for t in srcad.checkpointed(range(5)):
        x = np.tanh(x + noise[t])
    return np.sum(x ** 2)


def seeded_in_a_checkpointed_body(u):
    x = u * 1.0
    for t in srcad.checkpointed(range(5)):
        rng = np.random.default_rng(42)  # made again when a segment is recomputed: the same numbers
        z = rng.standard_normal(5)
        z = z * x
        x = np.tanh(x + z)
    return np.sum(x ** 2)


@pytest.mark.parametrize("f", [scaled_noise, noise_updated_in_a_loop, other_generators, two_draws,
                               noise_before_a_checkpointed_loop, seeded_in_a_checkpointed_body])
def test_draws_of_a_generator_made_here(f):
    check_all_modes(f, (U,))
    np.testing.assert_allclose(srcad.jacobian(f, mode="fwd")(U), srcad.jacobian(f, mode="rev")(U))


def test_the_draw_is_the_one_python_makes():
    Z = np.random.default_rng(0).standard_normal(5)
    np.testing.assert_allclose(srcad.grad(scaled_noise)(U), 2 * Z ** 2 * U)


def drawn_around_a_parameter(u):
    rng = np.random.default_rng(0)
    return np.sum(rng.normal(u, 1.0) ** 2)


def drawn_around_a_keyword(u):
    rng = np.random.default_rng(0)
    z = rng.uniform(low=u, high=2.0)
    return np.sum(z ** 2)


@pytest.mark.parametrize("f", [drawn_around_a_parameter, drawn_around_a_keyword])
def test_a_draw_given_a_derivative_is_refused(f):
    refused_when_run(f, r"does not differentiate a random draw \(rng\.(normal|uniform)\) in its parameters, here u: "
                        r".*mu \+ sigma \* rng\.standard_normal", U)


def noise_of_a_generator_passed_in(u, rng):
    Z = rng.standard_normal(5)
    Z = Z * u
    return np.sum(Z ** 2)


def noise_of_a_generator_bound_twice(u):
    rng = np.random.default_rng(0)
    if u[0] > 0:
        rng = make_generator()
    Z = rng.standard_normal(5)
    Z = Z * u
    return np.sum(Z ** 2)


def make_generator():
    return np.random.default_rng(1)


def noise_from_before_a_checkpointed_loop(u):
    rng = np.random.default_rng(3)
    x = u * 1.0
    for t in srcad.checkpointed(range(5)):
        x = np.tanh(x + rng.standard_normal(5))
    return np.sum(x ** 2)


def drawn_into_an_array_by_position(u):
    rng = np.random.default_rng(0)
    Z = np.zeros(5)
    W = rng.standard_normal(None, np.float64, Z)  # out=Z: W is Z
    W[0] = 3.0
    return np.sum(Z * u)


def test_draws_srcad_cannot_prove_stay_refused():
    with pytest.raises(srcad.SrcadError, match="in-place update of 'W', which may share memory"):
        srcad.grad(drawn_into_an_array_by_position)(U)
    with pytest.raises(srcad.SrcadError, match=r"no derivative rule for the method \.standard_normal\(\)"):
        srcad.grad(noise_of_a_generator_passed_in)(U, np.random.default_rng(0))
    with pytest.raises(srcad.SrcadError, match=r"no derivative rule for the method \.standard_normal\(\)"):
        srcad.grad(noise_of_a_generator_bound_twice)(U)
    with pytest.raises(srcad.SrcadError, match=r"rng\.standard_normal\(\.\.\.\) draws random numbers"):
        srcad.grad(noise_from_before_a_checkpointed_loop)(U)


# ---- swapping items of an array ----------------------------------------------------------------

def swapped_items(x):
    y = x * np.sin(x)
    y[0], y[1] = y[1], y[0]
    return np.sum(y * np.arange(3.0))


def swapped_matrix_items(x):
    A = x.reshape(2, 2) * x[0]
    A[0, 1], A[1, 0] = A[1, 0], A[0, 1]
    return np.sum(A * np.arange(4.0).reshape(2, 2))


def swapped_in_a_loop(x):
    y = x ** 2
    for i in range(2):
        y[i], y[i + 1] = y[i + 1], y[i]
    return np.sum(y * np.arange(3.0))


def swapped_rows(x):
    A = x.reshape(2, 2) * 1.0
    A[0], A[1] = A[1], A[0]  # views: NumPy itself leaves both rows equal
    return np.sum(A * np.arange(4.0).reshape(2, 2))


X4 = np.array([0.3, -0.5, 0.8, 1.2])


@pytest.mark.parametrize("f, x", [(swapped_items, X), (swapped_matrix_items, X4), (swapped_in_a_loop, X)])
def test_swapping_items(f, x):
    check_grads(f, (x,))
    check_second_order(f, (x,))
    np.testing.assert_allclose(srcad.hessian(f)(x), srcad.jacobian(srcad.grad(f), mode="rev")(x), atol=1e-12)


def test_swapping_items_in_forward_mode_from_jvp_which_gives_the_shapes():
    # (refused before the nineteenth stop: forward code was made for any shape, where y[0] may be a view)
    check_jvp(swapped_items, (X,))
    np.testing.assert_allclose(srcad.jacobian(swapped_items, mode="fwd")(X),
                               srcad.jacobian(swapped_items, mode="rev")(X), atol=1e-12)


def test_swapping_rows_stays_refused():
    with pytest.raises(srcad.SrcadError, match=r"shares memory with 'A\[0\]'"):
        srcad.grad(swapped_rows)(X4)
