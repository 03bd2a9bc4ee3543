"""srcad.checkpointed: what srcad does not checkpoint is refused at the user's line, in every
mode (the forward mode shares the front end), with what to write instead."""
import inspect

import numpy as np
import pytest

import srcad
from srcad.errors import SrcadSyntaxError


def breaks_out(u):
    for t in srcad.checkpointed(range(5)):
        u = np.sin(u)
        if t > 2:
            break  # refused
    return np.sum(u)


def returns_early(u):
    for t in srcad.checkpointed(range(5)):
        u = np.sin(u)
        for j in range(2):
            if np.sum(u) > 10.0:
                return np.sum(u)  # refused
    return np.sum(u)


def breaks_in_an_inner_loops_else(u):
    for t in srcad.checkpointed(range(5)):
        for j in range(2):
            u = np.sin(u)
        else:
            break  # refused
    return np.sum(u)


def not_a_range(u):
    steps = range(5)
    for t in srcad.checkpointed(steps):  # refused
        u = np.sin(u)
    return np.sum(u)


def a_list(u):
    for t in srcad.checkpointed([0, 1, 2]):  # refused
        u = np.sin(u)
    return np.sum(u)


def outside_a_for(u):
    steps = srcad.checkpointed(range(3))  # refused
    for t in steps:
        u = np.sin(u)
    return np.sum(u)


def in_a_comprehension(u):
    return np.sum(np.stack([u * t for t in srcad.checkpointed(range(3))]))  # refused


def in_a_nested_function(u):
    def run(v):
        for t in srcad.checkpointed(range(3)):  # refused
            v = np.sin(v)
        return v
    return np.sum(run(u))


def with_an_else_block(u):
    for t in srcad.checkpointed(range(3)):  # refused
        u = np.sin(u)
    else:
        u = u * 2.0
    return np.sum(u)


def unknown_keyword(u):
    for t in srcad.checkpointed(range(3), snapshots=2):  # refused
        u = np.sin(u)
    return np.sum(u)


def two_arguments(u):
    for t in srcad.checkpointed(range(3), 2):  # refused
        u = np.sin(u)
    return np.sum(u)


REFUSED = [
    (breaks_out, "can end early (break"),
    (returns_early, "can end early (return"),
    (breaks_in_an_inner_loops_else, "can end early (break"),
    (not_a_range, "needs range(...) written in the call"),
    (a_list, "needs range(...) written in the call"),
    (outside_a_for, "only marks the iterable of a for statement"),
    (in_a_comprehension, "only marks the iterable of a for statement"),
    (in_a_nested_function, "not of a nested def or lambda"),
    (with_an_else_block, "else block"),
    (unknown_keyword, "optional segment= length"),
    (two_arguments, "optional segment= length"),
]


def refused_line(fn):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if "# refused" in line)


@pytest.mark.parametrize("fn, message", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
@pytest.mark.parametrize("mode", ["grad", "vjp", "jvp"])
def test_refused_at_the_users_line(fn, message, mode):
    u = np.linspace(0.1, 0.5, 3)
    with pytest.raises(SrcadSyntaxError, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
        if mode == "grad":
            srcad.grad(fn)(u)
        elif mode == "vjp":
            srcad.vjp(fn, u)
        else:
            srcad.jvp(fn, (u,), (np.ones_like(u),))
    err = info.value
    assert err.filename == __file__
    assert err.lineno == refused_line(fn)
