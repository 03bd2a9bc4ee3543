"""Negation folding (passes/negations.py): random reverse sweeps of signed arithmetic, reads in
every context (calls, subscripts, tests, loops that read a name before binding it again,
names bound twice, updates ``+=``/``-=``/``*=``), run before and after the pass on values with
signed zeros, infinities, NaN and overflow: every value the program returns is the same bit
for bit (any NaN for a NaN), an error is the same error, and the pass never adds a negation. End to end: sigmoid and
soft-minimum chains, whose adjoints lose their negations, against finite differences in every
mode."""
import gast
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import srcad
from loop_checks import all_modes
from srcad import astutil as A
from srcad.passes.negations import fold_negations

SPECIAL = np.array([0.0, -0.0, 1.5, -2.25, 1e308, -1e-310, np.inf, -np.inf, np.nan, 3.0])


@st.composite
def expressions(draw, names, depth=0):
    kind = draw(st.sampled_from(["name", "name", "const", "neg", "bin", "bin", "call", "item"]
                                if depth < 3 else ["name", "const"]))
    if kind == "name":
        return draw(st.sampled_from(names))
    if kind == "const":
        return repr(draw(st.sampled_from([2.0, -1.5, 0.0, -0.0, 3])))
    if kind == "neg":
        return f"(-{draw(expressions(names, depth + 1))})"
    if kind == "call":
        return f"np.tanh({draw(expressions(names, depth + 1))})"
    if kind == "item":  # a read in a subscript's value: nothing there may change sign
        return f"{draw(st.sampled_from(names))}[::-1]"
    op = draw(st.sampled_from(["+", "-", "*", "/"]))
    return f"({draw(expressions(names, depth + 1))} {op} {draw(expressions(names, depth + 1))})"


@st.composite
def programs(draw):
    """A function of ``a, b`` whose body is all 'reverse sweep': fresh single-assignment
    names, an accumulator updated in place, a name bound twice, reads in opaque places, and a
    loop whose body reads a name before binding it again (the previous trip's value)."""
    names, lines, k = ["a", "b"], ["    acc = a * 0.0", "    twice = -b"], 0
    names.append("twice")

    def statement(indent):
        nonlocal k
        choice = draw(st.sampled_from(["fresh", "fresh", "fresh", "update", "rebind", "opaque"]))
        expr = draw(expressions(names))
        if choice == "fresh":
            k += 1
            lines.append(f"{indent}t{k} = {expr}")
            names.append(f"t{k}")
        elif choice == "update":
            op = draw(st.sampled_from(["+=", "-=", "*="]))
            lines.append(f"{indent}acc {op} {expr}")
        elif choice == "rebind":
            lines.append(f"{indent}twice = {expr}")
        else:
            lines.append(f"{indent}acc = acc + np.sum({expr}) * (1.0 if np.all({expr} > 0) else 2.0)")

    for _ in range(draw(st.integers(1, 8))):
        statement("    ")
    if draw(st.booleans()):
        k += 1
        carried = f"t{k}"
        lines.append(f"    {carried} = -a")  # bound before the loop and in it: bound twice
        names.append(carried)
        lines.append("    for _ in range(3):")
        lines.append(f"        acc -= {carried} * b")
        for _ in range(draw(st.integers(1, 5))):
            statement("        ")
    returned = ["acc", "twice"]
    for name in names[3:]:  # each value observed whole: returned (read where no sign can go), or negated first
        how = draw(st.sampled_from(["returned", "negated", "negated"]))
        if how == "negated":
            lines.append(f"    o_{name} = -{name}")
        returned.append(name if how == "returned" else f"o_{name}")
    return "def f(a, b):\n" + "\n".join(lines) + f"\n    return ({', '.join(returned)},)\n"


def _run(tree, a, b):
    namespace = {"np": np}
    exec(compile(A.to_source(tree), "<negations>", "exec"), namespace)
    with np.errstate(all="ignore"):
        return namespace["f"](a.copy(), b.copy())


def _negations(tree):
    return sum(isinstance(n, gast.UnaryOp) and isinstance(n.op, gast.USub) for n in A.walk(tree))


def _same_bits(x, y):
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    nan = np.isnan(x)
    return x.shape == y.shape and np.array_equal(nan, np.isnan(y)) and np.array_equal(
        x[~nan].view(np.int64), y[~nan].view(np.int64))


@settings(max_examples=400, deadline=None)
@given(source=programs(), seed=st.integers(0, 2**32 - 1))
def test_folding_computes_every_value_bit_for_bit(source, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.choice(SPECIAL, 6), rng.choice(SPECIAL, 6)
    before = gast.parse(source).body[0]
    A.set_anno(before, "n_forward", 0)
    after = A.set_anno(A.deepcopy(before), "n_forward", 0)
    folded = fold_negations(after)
    try:
        expected = _run(before, a, b)
    except Exception as exc:  # (a float divided by a literal zero, a float indexed): the same error after
        with pytest.raises(type(exc)):
            _run(folded, a, b)
        return
    got = _run(folded, a, b)
    assert all(_same_bits(x, y) for x, y in zip(expected, got)), A.to_source(folded)
    assert _negations(folded) <= _negations(before)


def _folded(source, n_forward=0):
    tree = gast.parse(source).body[0]
    A.set_anno(tree, "n_forward", n_forward)
    return A.to_source(fold_negations(tree)).strip()


def test_a_sign_handed_down_a_chain_is_taken_back_where_it_is_added():
    assert "-" not in _folded('''
def f(do, o, e, da):
    d1 = -do * o / e
    d2 = d1 * e
    d3 = -d2
    da += d3
    return da''').split("\n", 1)[1]


def test_a_sign_reaching_an_update_turns_it_round():
    assert "dy -= d1" in _folded('''
def f(g, x, dy):
    d1 = -g * x
    dy += d1
    return dy''')


@pytest.mark.parametrize("use", ["np.sum(d1)", "d1[0]", "f(d1)", "d1 if c else 0.0", "[d1]", "d1 < 0"])
def test_a_name_read_anywhere_the_sign_cannot_go_keeps_its_value(use):
    folded = _folded(f'''
def f(g, x, c):
    d1 = -g * x
    d2 = -d1
    r = {use}
    return d2, r''')
    assert "d1 = -g * x" in folded, folded  # its minus where it was: on g, not on the product


@pytest.mark.parametrize("binding", ["d1 += x", "for d1 in x:\n        pass", "d1 = x", "del d1"])
def test_a_name_bound_twice_keeps_its_value(binding):
    folded = _folded(f'''
def f(g, x):
    d1 = -g * x
    d2 = -d1
    {binding}
    return d2''')
    assert "d1 = -g * x" in folded, folded  # its minus where it was: on g, not on the product


def test_the_forward_sweep_and_its_names_are_left_alone():
    folded = _folded('''
def f(x, v):
    t = -x
    s = np.exp(t)
    d = -v
    dx = -d * s
    return dx''', n_forward=2)
    assert folded.splitlines()[1:3] == ["    t = -x", "    s = np.exp(t)"]
    assert "dx = d * s" in folded and "d = v" in folded


def sigmoid_gate(a, w):
    z = a * w
    i = 1.0 / (1.0 + np.exp(-z[:, :2]))
    g = np.tanh(z[:, 2])
    return np.sum(i[:, 0] * g) - np.sum(2.0 / (3.0 + np.exp(-(a * a))))


def softmin_cells(x, gamma):
    total = 0.0
    for k in range(1, x.shape[0]):
        m = min(x[k - 1], x[k])
        s = np.exp(-(x[k - 1] - m) / gamma) + np.exp(-(x[k] - m) / gamma)
        total = total - gamma * np.log(s) + m
    return total


def test_folded_adjoints_lose_their_negations():
    d = srcad.differentiable(sigmoid_gate, wrt=(0, 1))
    d.adjoint(np.ones((4, 3)) * 0.3, np.ones(3) * 0.2)
    reverse = d.adjoint_source.split("cotangent_like", 1)[1]
    line = sigmoid_gate.__code__.co_firstlineno + 2  # i = 1.0 / (1.0 + np.exp(-z[:, :2])): its three signs cancel
    sigmoid = reverse.split(f"# line {line}:", 1)[1].split(f"# line {line - 1}:", 1)[0]
    assert "-" not in sigmoid.split("\n", 1)[1], reverse


@pytest.mark.parametrize("fn, args, wrt", [
    (sigmoid_gate, (np.linspace(-1.0, 1.2, 12).reshape(4, 3), np.array([0.3, -0.7, 1.1])), (0, 1)),
    (softmin_cells, (np.array([0.3, -0.2, 1.4, 0.9, 0.95, -1.3]), 0.7), 0)])
def test_sigmoid_and_softmin_chains_match_finite_differences(fn, args, wrt):
    all_modes(fn, args, wrt=wrt)
