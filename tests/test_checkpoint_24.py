"""Checkpointed loops calling functions of yours through several levels, and gradients srcad made.

* A molecular-dynamics step calling a helper that calls another helper indexing its array
  argument (``force(x)`` -> ``pair_diff(p)`` -> ``p[:, None]``): shape inference reads one level
  of calls, so the loop's state was of unknown type and the inner index refused. The
  checkpoint allowlist now reads what a function of yours answers (an array, given arrays)
  and passes "an array" on to the functions it calls.
* A leapfrog step calling ``grad_U = srcad.grad(potential)``: the derivative srcad made is
  read as any function of yours (what srcad's own helpers in it answer is known), and a
  refusal inside it names the line of ``potential``, not srcad's generated code.

Values: the checkpointed loop equals the plain loop, and is checked against central finite
differences (the joint adjoint and the pullback, ``check_grads``; ``jvp``, ``check_jvp``;
``hvp`` against finite differences of srcad's gradient), for several segment lengths.
Controls: state the snapshots do not hold is still refused, at the user's lines, and each
recomputed segment is still checked.
"""
import inspect

import numpy as np
import pytest

import srcad
from srcad.errors import CheckpointReplayError, SrcadSyntaxError
from srcad.pipeline import Options, transform
from srcad.testing import check_grads, check_jvp
from test_checkpoint_params_23 import Counted  # an object whose length counts its calls

SEGMENTS = [1, 2, 4, None]
S = np.array([[2.0, 0.3], [0.3, 1.0]])


def potential(q):
    return 0.5 * q @ S @ q + 0.1 * np.sum(np.cos(q))


grad_U = srcad.grad(potential)


def pair_diff(p):
    return p[:, None] - p[None, :]


def force(p):  # force -> pair_diff -> p[...]
    return np.sum(np.sin(pair_diff(p)) ** 2, axis=1)


def energy(p):  # three levels: energy -> force -> pair_diff
    f = force(p)
    return f * p[0]


def leapfrog(segment):
    def run(q0, v0):
        q = q0.copy()
        v = v0.copy()
        for t in srcad.checkpointed(range(6), segment=segment):
            v = v - 0.05 * grad_U(q)
            q = q + 0.1 * v
            v = v - 0.05 * grad_U(q)
        return np.sum(q ** 2) + np.sum(v * q)
    return run


def leapfrog_plain(q0, v0):
    q = q0.copy()
    v = v0.copy()
    for t in range(6):
        v = v - 0.05 * grad_U(q)
        q = q + 0.1 * v
        v = v - 0.05 * grad_U(q)
    return np.sum(q ** 2) + np.sum(v * q)


def dynamics(segment):
    def run(x0):
        x = x0
        for t in srcad.checkpointed(range(5), segment=segment):
            x = x - 0.01 * force(x)
            x = x - 0.01 * energy(x)
        return np.sum(x ** 2)
    return run


def dynamics_plain(x0):
    x = x0
    for t in range(5):
        x = x - 0.01 * force(x)
        x = x - 0.01 * energy(x)
    return np.sum(x ** 2)


W = np.array([1.0, -0.5])


def along_the_gradient(q):
    return np.sum(grad_U(q) * W)


grad_along = srcad.grad(along_the_gradient)


def second_order_step(q0):
    q = q0.copy()
    for t in srcad.checkpointed(range(4), segment=2):
        q = q - 0.1 * grad_along(q)
    return np.sum(q ** 2)


def second_order_step_plain(q0):
    q = q0.copy()
    for t in range(4):
        q = q - 0.1 * grad_along(q)
    return np.sum(q ** 2)


Q, V = np.array([0.5, -0.3]), np.array([0.2, 0.4])
X = np.array([0.5, -0.3, 0.2, 0.9])
CASES = [(leapfrog, leapfrog_plain, (Q, V)), (dynamics, dynamics_plain, (X,))]
ids = lambda case: getattr(case, "__name__", "")


def assert_checkpointed(fn, n_args):
    assert "checkpoint_segments" in transform(fn, Options(wrt=tuple(range(n_args)))).joint_source


@pytest.mark.parametrize("segment", SEGMENTS)
@pytest.mark.parametrize("make, plain, args", CASES, ids=ids)
def test_first_order_and_forward(make, plain, args, segment):
    fn = make(segment)
    assert_checkpointed(fn, len(args))
    wrt = tuple(range(len(args)))
    got = srcad.grad(fn, wrt=wrt)(*args)
    for g, expected in zip(got, srcad.grad(plain, wrt=wrt)(*args)):
        np.testing.assert_allclose(g, expected, rtol=1e-12, atol=1e-14)
    check_grads(fn, args, wrt=wrt, modes=("rev",))  # the joint adjoint and the pullback, against finite differences
    check_jvp(fn, args, wrt=wrt)


@pytest.mark.parametrize("segment", [2, None])
@pytest.mark.parametrize("make, plain, args", CASES, ids=ids)
def test_hvp(make, plain, args, segment):
    fn = make(segment)
    direction = np.random.default_rng(5).standard_normal(args[0].size)
    grad, eps = srcad.grad(fn), 1e-5
    expected = (grad(args[0] + eps * direction, *args[1:]) - grad(args[0] - eps * direction, *args[1:])) / (2 * eps)
    np.testing.assert_allclose(srcad.hvp(fn)(*args, direction), expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(srcad.hvp(fn)(*args, direction), srcad.hvp(plain)(*args, direction), rtol=1e-10)


def test_a_gradient_of_a_function_calling_a_gradient():
    assert_checkpointed(second_order_step, 1)
    np.testing.assert_allclose(srcad.grad(second_order_step)(Q), srcad.grad(second_order_step_plain)(Q),
                               rtol=1e-12, atol=1e-14)
    check_grads(second_order_step, (Q,))


# ---- controls: still refused, at the user's lines

RNG = np.random.default_rng(0)
HISTORY = []


def drawing_potential(q):
    return 0.5 * q @ S @ q + 0.0 * RNG.standard_normal()


def recording_potential(q):
    HISTORY.append(1.0)
    return 0.5 * q @ S @ q


def stepping_with(gradient):
    def run(q0):
        q = q0
        for t in srcad.checkpointed(range(4), segment=2):
            q = q - 0.1 * gradient(q)
        return np.sum(q ** 2)
    return run


def line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("fn, text, what", [
    (drawing_potential, "RNG.standard_normal", "draws random numbers"),
    (recording_potential, "HISTORY.append", "changes a list, dict or set of your module"),
], ids=ids)
def test_state_changed_in_a_gradient_is_refused_at_your_line(fn, text, what):
    with pytest.raises(SrcadSyntaxError) as raised:
        srcad.grad(stepping_with(srcad.grad(fn)))(Q)
    message = str(raised.value)
    assert f"{__file__}:{line_of(fn, text)} (in the derivative srcad made of {fn.__name__})" in message
    assert what in message and "srcad-generated" not in message


class Counting:
    """Indexing it counts: state no snapshot holds."""

    def __init__(self, values):
        self.values, self.reads = values, 0

    def __getitem__(self, i):
        self.reads += 1
        return self.values[i]


BOX = Counting(np.array([1.0, 2.0, 3.0, 4.0]))


def scaled_by(p, box):
    return pair_diff(p)[0] * box[0]


def through_two_helpers(p, box):
    return scaled_by(p, box) * 2.0


def the_box(p):
    return BOX


def steps_with_a_counting_box(x0):
    x = x0
    for t in srcad.checkpointed(range(4), segment=2):
        x = x - 0.01 * through_two_helpers(x, BOX)
    return np.sum(x ** 2)


def steps_with_a_returned_box(x0):
    x = x0
    for t in srcad.checkpointed(range(4), segment=2):
        b = the_box(x)
        x = x - 0.01 * b[0] * x
    return np.sum(x ** 2)


def test_an_object_of_yours_is_still_refused_through_helpers():
    # (before the fix, refused earlier: at pair_diff's index of an array)
    with pytest.raises(SrcadSyntaxError, match=r"scaled_by\(\.\.\.\) reaches .*where indexing 'box' runs code of "
                                               r"yours \(Counting.__getitem__ is your code\)"):
        srcad.grad(steps_with_a_counting_box)(X)


def test_an_object_a_helper_returns_is_still_refused():
    with pytest.raises(SrcadSyntaxError, match="indexing 'b' runs code of yours"):
        srcad.grad(steps_with_a_returned_box)(X)


def length_of_first(items):
    return len(items[0])


def scale_of(p, items):
    return p * length_of_first(items)


def steps_reading_hidden_state(x0, items):
    x = x0
    c = 0.0
    for t in srcad.checkpointed(range(4), segment=2):
        x = x - 0.01 * force(x)
        c = c + np.sum(scale_of(x, items))  # (nothing indexes c: no rule refuses it)
    return np.sum(x ** 2) + c


def test_each_recomputed_segment_is_still_checked():  # (before the fix, refused at pair_diff's index)
    with pytest.raises(CheckpointReplayError, match="'c' came out different"):
        srcad.grad(steps_reading_hidden_state)(X, [Counted()])
