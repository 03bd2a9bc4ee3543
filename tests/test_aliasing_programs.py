"""Adversarial programs over NumPy's view-producing operations and in-place updates.

Each program makes an array, takes a view (or a copy) of it, reads both, updates one of
them in place (before or after other reads, in a loop or not) and reads again: 26 ways to
make B from A x 6 updates x 2 targets x 4 final reads x 3 shapes of program. srcad must
either differentiate it right (checked against finite differences, in the joint adjoint,
the vjp pullback called twice and forward mode) or refuse it with a srcad error — never
return a silently wrong derivative. Programs without any shared memory must not be refused.
"""
import importlib.util
import itertools
import os
import random

import numpy as np
import pytest

from srcad import SrcadError
from srcad.testing import check_grads, check_jvp

# (expression of A, whether it shares A's memory)
VIEWS = [
    ("A", True), ("A[1:]", True), ("A[::-1]", True), ("np.flip(A)", True), ("A.reshape(2, 2)", True),
    ("A.ravel()", True), ("np.asarray(A)", True), ("A.T", True), ("A[...]", True), ("np.atleast_1d(A)", True),
    ("np.squeeze(A)", True), ("np.split(A, 2)[0]", True), ("A.real", True), ("np.ascontiguousarray(A)", True),
    ("np.atleast_2d(A)[0]", True), ("returns_argument(A)", True), ("A[::2]", True), ("np.rot90(A.reshape(2, 2))", True),
    ("A.copy()", False), ("np.array(A)", False), ("A * 1.0", False), ("A[[0, 1, 2]]", False),
    ("fresh_helper(A)", False), ("np.concatenate([A])", False), ("np.sort(A)", False), ("A + 0.0", False),
]
UPDATES = ["{M}[0] = x[1] * 3.0", "{M}[0] *= 2.0", "{M} += x[2]", "{M} *= 1.5", "{M}[...] = np.cos({M})",
           "{M} -= {M} * x[0]"]
AFTER = ["np.sum(A * x)", "np.sum(B ** 2)", "np.sum(A) + np.sum(np.sin(B))", "0.0"]

HELPERS = '''
def returns_argument(a):
    return a


def fresh_helper(a):
    return np.tanh(a) * 2.0
'''

STRAIGHT = '''
def f(x):
    A = np.sin(x) + 1.0
    B = {view}
    r = np.tanh(B) * B
    s = np.sum(np.exp(A) * np.sum(r))
    {update}
    return s + {after}
'''

LOOP = '''
def f(x):
    A = np.sin(x) + 1.0
    s = 0.0
    for i in range(2):
        B = {view}
        r = np.tanh(B) * B
        s = s + np.sum(np.exp(A) * np.sum(r))
        {update}
    return s + {after}
'''

UPDATE_FIRST = '''
def f(x):
    A = np.sin(x) + 1.0
    B = {view}
    {update}
    r = np.tanh(B) * B
    return np.sum(np.exp(A) * np.sum(r)) + {after}
'''

_counter = itertools.count()


def all_programs():
    for (view, shares), update, target, after, template in itertools.product(
            VIEWS, UPDATES, ("A", "B"), AFTER, (STRAIGHT, LOOP, UPDATE_FIRST)):
        body = template.format(view=view, update=update.format(M=target), after=after)
        yield body, shares


def chosen_programs():
    programs = list(all_programs())
    count = int(os.environ.get("SRCAD_EXAMPLES", 0)) or 70  # SRCAD_EXAMPLES=5000 runs them all
    return random.Random(9).sample(programs, min(count, len(programs)))


def build(directory, body):
    path = directory / f"aliasing_program_{next(_counter)}.py"
    path.write_text("import numpy as np\n\n" + HELPERS + body)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


def differentiated_or_refused(f, x):
    """True if srcad differentiated ``f`` right, False if it refused; AssertionError if wrong."""
    try:
        check_grads(f, (x,))
    except SrcadError:
        return False
    check_jvp(f, (x,))
    return True


@pytest.mark.parametrize("body,shares", chosen_programs(), ids=lambda p: None)
def test_program_is_right_or_refused(tmp_path, body, shares):
    try:
        f = build(tmp_path, body)
        f(np.array([0.3, 0.5, 0.7, 0.9]))
    except (ValueError, TypeError, IndexError):
        pytest.skip("NumPy itself rejects this combination (a read-only view, a shape mismatch)")
    done = differentiated_or_refused(f, np.array([0.3, 0.5, 0.7, 0.9]))
    assert done or shares, f"refused although nothing shares memory:\n{body}"
