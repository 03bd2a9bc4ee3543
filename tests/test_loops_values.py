"""What loops save: values a loop does not change are computed once, before it, and not
saved per iteration (a transpose of an argument, Python floats added or multiplied); an adjoint
buffer handed whole to another stays owned (no copy per iteration); a store whose region has
the value's shape needs neither unbroadcast nor the value. Each program runs in every mode
(joint, pullback twice, jvp, second order) against finite differences, including loops
left by break, continue and return, nested loops, while loops and loops that run zero times,
and the cases where a value only looks invariant (rebound, updated in place, appended to)."""
import numpy as np
import pytest

from loop_checks import adjoint_source, all_modes

rng = np.random.default_rng(11)


# ---- loop-invariant values -----------------------------------------------------------------

def invariant_products(F, x, dt, n):
    s = x
    for t in range(n):
        Ft = F.T
        h = 0.5 * dt
        s = np.tanh(Ft @ s) * h + s
    return np.sum(s ** 2)


def hoisted_before_loop(src, assignment, loop="for t in _range"):
    return assignment in src and src.index(assignment) < src.index(loop)


def test_invariant_values_are_computed_once_before_the_loop():
    F, x = rng.standard_normal((3, 3)), rng.standard_normal(3)
    src = adjoint_source(invariant_products, (F, x, 0.3, 4), (0, 1, 2))
    assert "_Ft_stack" not in src and "_h_stack" not in src
    assert hoisted_before_loop(src, "Ft = F.T") and hoisted_before_loop(src, "h = 0.5 * dt")
    assert "_s_stack" in src  # the state changes: saved
    all_modes(invariant_products, (F, x, 0.3, 4), (0, 1, 2))
    all_modes(invariant_products, (F, x, 0.3, 0), (0, 1, 2))  # zero trips


def jumps_with_invariant(F, x, n):
    s = x
    for t in range(n):
        G = F.T
        if t == 1:
            continue
        s = np.sin(G @ s)
        if np.sum(s) > 10.0:
            break
        if t == 3:
            return np.sum(s * G[0])
    return np.sum(s)


@pytest.mark.parametrize("n", [0, 1, 3, 6])
def test_invariant_with_break_continue_return(n):
    F, x = 0.5 * rng.standard_normal((3, 3)), rng.standard_normal(3)
    src = adjoint_source(jumps_with_invariant, (F, x, n), (0, 1))
    assert "_G_stack" not in src and hoisted_before_loop(src, "G = F.T")
    all_modes(jumps_with_invariant, (F, x, n), (0, 1))


def nested_partly_invariant(x, dt):
    s = x
    for i in range(3):
        c = dt * i  # changes with the outer loop: saved
        for j in range(2):
            k = dt * 3.0  # the same in every iteration of both loops
            s = np.cos(s * c + k * s)
    return np.sum(s)


def test_nested_loops_save_what_the_outer_loop_changes():
    x = rng.standard_normal(2)
    src = adjoint_source(nested_partly_invariant, (x, 0.4), (0, 1))
    assert "_c_stack" in src and "_k_stack" not in src and hoisted_before_loop(src, "k = dt * 3.0", "for i in _range")
    all_modes(nested_partly_invariant, (x, 0.4), (0, 1))


def while_invariant(x, dt):
    s = x
    k = 0
    while k < 4:
        w = dt * dt
        s = np.sin(s) * w
        k = k + 1
    return np.sum(s)


def test_while_loop_invariant():
    x = rng.standard_normal(2)
    src = adjoint_source(while_invariant, (x, 0.7), (0, 1))
    assert "_w_stack" not in src and hoisted_before_loop(src, "w = dt * dt", "while _t")
    all_modes(while_invariant, (x, 0.7), (0, 1))


def may_fail_or_vary(a, x, dt):
    s = x
    for t in range(3):
        q = 1.0 / dt  # division may fail (dt == 0): stays in the loop
        w = a * 2.0  # arrays may warn (overflow): stays in the loop
        s = np.sin(s * w) * q
    return np.sum(s)


def test_values_that_may_fail_stay_in_the_loop():
    a, x = rng.standard_normal(2), rng.standard_normal(2)
    src = adjoint_source(may_fail_or_vary, (a, x, 0.5), (0, 1, 2))
    assert not hoisted_before_loop(src, "q = 1.0 / dt") and not hoisted_before_loop(src, "w = a * 2.0")
    all_modes(may_fail_or_vary, (a, x, 0.5), (0, 1, 2))


def rebound_operand(a, x):
    s = x
    c = a
    for t in range(3):
        w = c * 2.0  # c changes below: w is not invariant
        s = np.sin(s * w)
        c = c + s
    return np.sum(s)


def updated_operand(a, x):
    b = a.copy()
    s = x
    for t in range(3):
        w = b * 2.0  # b is updated in place below
        s = np.sin(s * w)
        b[0] = s[0]
    return np.sum(s)


def appended_operand(a, x):
    items = [a]
    s = x
    for t in range(3):
        last = items[-1]  # the list grows below
        s = np.sin(s * last)
        items.append(s * 0.5)
    return np.sum(s)


def random_inside(a, x):
    s = x
    for t in range(3):
        w = np.array([float(t), 1.0]) * a  # a call: never treated as invariant
        s = np.sin(s * w)
    return np.sum(s)


@pytest.mark.parametrize("fn", [rebound_operand, updated_operand, appended_operand, random_inside])
def test_values_that_only_look_invariant_are_saved(fn):
    a, x = rng.standard_normal(2), rng.standard_normal(2)
    all_modes(fn, (a, x), (0, 1))


# ---- adjoint buffers handed on -------------------------------------------------------------

def heat(u0, alpha, steps):
    u = u0
    for t in range(steps):
        lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
        u = u.copy()
        u[1:-1, 1:-1] += alpha * lap
    return np.sum(u * u)


@pytest.mark.parametrize("steps", [0, 1, 3])
def test_heat_stencil_adjoint_updates_its_buffer_in_place(steps):
    u0 = rng.standard_normal((6, 5))
    src = adjoint_source(heat, (u0, 0.1, steps), (0, 1))
    if steps:
        assert "copy_grad" not in src and "unbroadcast" not in src and "_t13_stack" not in src
    all_modes(heat, (u0, 0.1, steps), (0, 1))


def renamed_twice(x):
    u = x * 1.0
    for t in range(3):
        w = u
        v = w.copy()
        u = v + w * 0.5  # w's adjoint is read twice: the buffer is not handed on whole
        u[0] = u[1] * 2.0
    return np.sum(u ** 2)


def test_buffer_read_twice_is_not_handed_on():
    all_modes(renamed_twice, (rng.standard_normal(4),))


# ---- stores --------------------------------------------------------------------------------

def stores(x, s):
    A = np.zeros((3, 4))
    for i in range(3):
        A[i] = x * (i + 1)  # a row: the value's shape
        A[i, 1:3] = s * i  # a scalar broadcast into two slots: unbroadcast sums them
        A[i, 0] = A[i, 3] * s
    return np.sum(A ** 2)


def test_stores_whole_and_broadcast():
    x = rng.standard_normal(4)
    src = adjoint_source(stores, (x, 0.7), (0, 1))
    assert src.count("unbroadcast(") == 1  # only the broadcast store
    all_modes(stores, (x, 0.7), (0, 1))


def transpose_in_a_branch_of_a_loop(k, m, items):
    ar, upper = (items, items if m.sum() > 0.73 or items[1:, ::2].sum() < -0.18 else items)
    ratios = items.max(axis=0) / (1.5 + m[3, -2] ** 2)
    for c, row in zip(ratios[1:], ar):
        if np.where(c > 0.13, 1.01, c) > 0.41:
            unused = m.T
        elif np.where(c > -0.04, c, k.sum()) > 0.05 and ratios[1:3].sum() < 0.18:
            pass
        else:
            skipped = np.repeat(row, 3)
    return np.einsum("i,i->", ratios[::-1], ratios) if -0.6 < np.hypot(ratios.sum(), upper.mean() + 2.0) <= 1.91 else k[-2, 2]


def test_a_branch_left_with_only_its_line_comment_still_compiles():
    # the loop-invariant 'unused = m.T' moves before the loop in the vjp's forward function,
    # leaving the branch only its '# line' comment: an empty block that did not compile
    # (fuzzer seed 112905339999: IndentationError)
    rng = np.random.default_rng(5)
    args = (rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, (3, 4)))
    all_modes(transpose_in_a_branch_of_a_loop, args, wrt=(0, 1, 2))
