"""``passes.needless_copies``: an adjoint's copy before an in-place update is dropped only where
no other live name refers to the buffer. Programs are checked in every mode against finite
differences (and the caller's arrays and cotangent stay as they were); the pass itself is
checked on hand-made trees for each way a buffer can escape."""
import gast
import numpy as np
import pytest

import srcad
from loop_checks import adjoint_source, all_modes
from test_pad_loops import heat as heat_steps
from srcad import astutil as A
from srcad.passes.needless_copies import drop_needless_copies

RNG = np.random.default_rng(11)


def heat_field(u0, kappa):
    u = u0
    for step in range(3):
        u = u + kappa * np.pad(u[1:-1, :-2] - u[1:-1, 1:-1], 1, mode="constant")
    return u


def sibling_read_later(x):
    a = np.sin(x)
    b = np.cos(x)
    p = a[1:] * 2.0
    s = a + b
    return np.sum(s * s) + np.sum(p)


def sibling_consumed_first(x):
    a = np.sin(x)
    p = a[1:] * 2.0
    b = np.cos(x)
    s = a + b
    return np.sum(s * s) + np.sum(p)


def relax(u, rate):
    """A simulation's step helper."""
    return u + rate * (np.roll(u, 1) - u)


def relax_in_a_loop(x, rate):
    u = x
    for _ in range(3):
        u = relax(u, rate)
        u = np.concatenate([u[:1] * 0.5, u[1:]])
    return np.sum(u ** 2)


def test_heat_step_adjoint_is_updated_without_a_copy():
    args = (RNG.standard_normal((6, 5)), 0.2)
    assert "copy_grad" not in adjoint_source(heat_steps, args, wrt=(0, 1))
    all_modes(heat_steps, args, wrt=(0, 1))


def test_a_field_output_keeps_the_cotangent_unchanged():
    u0 = RNG.standard_normal((5, 6))
    v = RNG.standard_normal((5, 6))
    kept = v.copy()
    all_modes(heat_field, (u0, 0.3), wrt=(0, 1), v=v, second_order=False)
    _, pullback = srcad.vjp(heat_field, u0, 0.3, wrt=(0, 1))
    pullback(v)
    np.testing.assert_array_equal(v, kept)


def test_the_copy_stays_where_the_other_operand_reads_the_buffer_later():
    x = RNG.standard_normal(5)
    assert "copy_grad" in adjoint_source(sibling_read_later, (x,))
    all_modes(sibling_read_later, (x,))


def test_the_copy_goes_where_the_other_operand_is_done_first():
    x = RNG.standard_normal(5)
    assert "copy_grad" not in adjoint_source(sibling_consumed_first, (x,))
    all_modes(sibling_consumed_first, (x,))


def test_a_helper_stepped_in_a_loop():
    all_modes(relax_in_a_loop, (RNG.standard_normal(6), 0.3), wrt=(0, 1))


# ---- the pass on hand-made trees: each way the buffer may still be referred to keeps the copy

COPY_DROPPED = """
def f(v):
    d_t12 = v * 2.0
    du = d_t12
    d_t11 = d_t12
    dk = d_t11 * 3.0
    du = copy_grad(du)
    du[0] += dk
    return du
"""


def _run(text, origin_line="d_t12 = v * 2.0"):
    fn = gast.parse(text).body[0]
    for s in A.walk_statements(fn.body):
        source = A.to_source(s).strip()
        if source == origin_line:
            A.set_anno(s, "exclusive_origin", True)
        if source == "du = copy_grad(du)":
            A.set_anno(s, "ownership_copy", True)
    return "copy_grad" in A.to_source(drop_needless_copies(fn))


def test_the_plain_case_drops_the_copy():
    assert not _run(COPY_DROPPED)


@pytest.mark.parametrize("change", [
    ("    dk = d_t11 * 3.0\n", "    dk = d_t11 * 3.0\n    w = d_t11[0:2]\n"),  # a view of the buffer
    ("    dk = d_t11 * 3.0\n", "    dk = d_t11 * 3.0\n    w = [d_t11]\n"),  # held by a list
    ("    dk = d_t11 * 3.0\n", "    dk = d_t11 * 3.0\n    w = g(d_t11)\n"),  # a call that may return it
    ("    dk = d_t11 * 3.0\n", "    dk = np.multiply(d_t11, 3.0, out=d_t11)\n"),  # out=
    ("    return du\n", "    return du + d_t11\n"),  # read after the copy
    ("    du[0] += dk\n", "    du[0] += dk\n    h = lambda: d_t11\n"),  # read by a closure
    ("    du[0] += dk\n", "    du[0] += dk\n    if v is None:\n        q = d_t11\n"),  # read in a nested block
    ("    dk = d_t11 * 3.0\n", "    dk = d_t11 * 3.0\n    d_t11[1] = 0.0\n"),  # written in place first
])
def test_the_copy_stays(change):
    old, new = change
    assert old in COPY_DROPPED
    assert _run(COPY_DROPPED.replace(old, new))


def test_a_buffer_that_did_not_begin_exclusive_keeps_the_copy():
    # the cotangent handed on as it is: the caller's memory
    assert _run(COPY_DROPPED.replace("d_t12 = v * 2.0", "d_t12 = v"), origin_line=None)


LOOP_BODY = """
def f(v, n):
    d_t11 = v * 1.0
    for i in range(n):
        {first}
        d_t12 = v * 2.0
        du = d_t12
        d_t11 = d_t12
        {second}
        du = copy_grad(du)
        du[0] += acc
    return du
"""


@pytest.mark.parametrize("first, second, copied", [
    ("acc = d_t11 * 1.0", "pass", True),  # read before its binding: last trip's d_t11 is this buffer
    ("pass", "acc = d_t11 * 1.0", False),  # bound first in every trip: dead at the copy
])
def test_a_name_of_a_loop_body_is_dead_only_if_bound_before_it_is_read(first, second, copied):
    assert _run(LOOP_BODY.format(first=first, second=second)) is copied
