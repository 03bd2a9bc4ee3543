"""A generator expression, ``map`` and ``filter`` compute each item when it is read. In a
loop's header srcad computes them there too (what the body changes reaches the next item);
elsewhere a generator expression is accepted only where one call reads it through."""
import math

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads


def body_rebinds_what_the_items_read(x):
    s = x * 1.0
    total = 0.0
    for t in (s * k for k in range(3)):
        total = total + np.sum(t)
        s = s + 1.0
    return total


def body_updates_in_place(x):
    s = x * 1.0
    total = 0.0
    for t in (np.sin(s) * k for k in range(1, 4) if k != 2):
        total = total + np.sum(t ** 2)
        s *= 1.5
    return total


def map_reads_a_rebound_name(x):
    s = x * 1.0
    total = 0.0
    for t in map(lambda k: s * k, range(3)):
        total = total + np.sum(t)
        s = s * 2.0
    return total


def filter_then_break(x):
    total = 0.0
    scale = 1.0
    for v in filter(lambda u: u > -0.3, x):
        total = total + v * scale
        scale = scale * 3.0
        if total > 5.0:
            break
    return total


def pairs_with_a_target_tuple(x):
    total = 0.0
    k = 10.0  # the generator's own names are apart from the function's
    for a, b in ((x[i], x[i + 1]) for i in range(len(x) - 1)):
        total = total + a * b * k
        k = k + 1.0
    return total + k


def counted_while_the_body_rebinds(x):
    s = x * 1.0
    total = 0.0
    for i, t in enumerate((s * k for k in range(3) if k != 1), start=1):
        total = total + np.sum(t) * i
        s = s + 1.0
    return total


LOOPS = [counted_while_the_body_rebinds, body_rebinds_what_the_items_read, body_updates_in_place, map_reads_a_rebound_name, filter_then_break,
         pairs_with_a_target_tuple]


@pytest.mark.parametrize("fn", LOOPS)
def test_items_of_a_lazy_loop_header_see_what_the_body_changed(fn):
    x = np.array([0.3, -0.2, 0.5, 0.1])
    value, _ = srcad.value_and_grad(fn)(x)
    assert np.isclose(value, fn(x))
    check_grads(fn, (x,))
    d = np.array([0.4, -1.0, 0.7, 0.2])
    _, tangent = srcad.jvp(fn, (x,), (d,))
    assert np.isclose(tangent, (fn(x + 1e-6 * d) - fn(x - 1e-6 * d)) / 2e-6, rtol=1e-5)


def bound_then_rebound(x):
    s = x * 1.0
    g = (s * k for k in range(3))
    s = s + 1.0
    return sum(np.sum(t) for t in g)


def bound_then_grown(x):
    acc = [x * 1.0]
    g = (a * 2 for a in acc)
    acc.append(x ** 2)
    return sum(np.sum(t) for t in g)


def zipped_in_a_header(x):
    s = x * 1.0
    total = 0.0
    for t, c in zip((s * k for k in range(3)), [1.0, 2.0, 3.0]):
        total = total + np.sum(t) * c
        s = s * 2.0
    return total


def mapped_in_a_zip(x):
    s = 2.0
    total = 0.0
    for a, b in zip(map(lambda v: v * s, x), x[::-1]):
        total = total + a * b
        s = s + 1.0
    return total


def read_by_next(x):
    g = (x * k for k in range(1, 3))
    first = next(g)
    return np.sum(first)


@pytest.mark.parametrize("fn", [bound_then_rebound, bound_then_grown, zipped_in_a_header, mapped_in_a_zip,
                                read_by_next])
def test_a_generator_expression_read_later_is_refused(fn):
    x = np.array([0.3, -0.2, 0.5, 0.1])
    for run in (lambda: srcad.grad(fn)(x), lambda: srcad.jvp(fn, (x,), (x,))):
        with pytest.raises(srcad.SrcadError, match=r"generator expression|next\(\)|map\(\.\.\.\)"):
            run()


def read_through(x):
    a = sum(np.sum(x * k) for k in range(3))
    b = max(v for v in x) + min(v * 2.0 for v in x)
    c = math.fsum(float(k) for k in range(4)) * np.sum(x)
    label = ", ".join(f"{v:.2f}" for v in x)
    parts = tuple(x[i] ** 2 for i in range(2))
    return a + b + c + parts[0] * parts[1] + 0.0 * len(label) + sorted(float(k) for k in range(3))[0]


def test_a_generator_expression_read_through_by_one_call_is_differentiated():
    x = np.array([0.3, -0.2, 0.5, 0.1])
    check_grads(read_through, (x,))
    assert np.isclose(srcad.value_and_grad(read_through)(x)[0], read_through(x))
