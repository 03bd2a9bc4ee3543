"""Shape inference never guesses: what a stand-in cannot decide stays unknown, and the
generated code is right whatever the argument values are."""
import gast
import numpy as np
import pytest

import srcad
from srcad.astutil import anno
from srcad.passes.normalize import normalize
from srcad.passes.resolve_calls import resolve_calls
from srcad.passes.shapes import arg_spec, infer_shapes
from srcad.source import capture
from srcad.testing import check_grads, check_jvp

rng = np.random.default_rng(3)


def inferred(fn, *args):
    src = capture(fn)
    node = normalize(resolve_calls(src.node, src), src)
    params = [a.id for a in node.args.args]
    return infer_shapes(node, {p: arg_spec(a) for p, a in zip(params, args)})


def specs_of(fn, *args):
    return anno(inferred(fn, *args), "specs")


def sized_by_int(d, n):
    S = np.zeros((n, n))
    for i in range(n):
        S[i, 2] = 1.0
        if i == 2:
            S[i, i] += d[i]
    return S


def test_int_argument_sizes_an_array():
    """Issue 9: an int argument's value is not known when the code is generated."""
    d = rng.uniform(0.2, 1.0, 4)
    check_grads(sized_by_int, (d, 4))
    check_grads(sized_by_int, (rng.uniform(0.2, 1.0, 5), 5))  # the same code, another n
    check_jvp(sized_by_int, (d, 4))
    assert "S" not in specs_of(sized_by_int, d, 4)


def summed_over_int_axis(x, k):
    return np.sum(x, axis=k) * 2.0


def test_int_argument_as_axis():
    x = rng.standard_normal((2, 3))
    for k in (0, 1):
        check_grads(summed_over_int_axis, (x, k), v=rng.standard_normal(x.shape[1 - k]))
    assert "_t1" not in specs_of(summed_over_int_axis, x, 0)


def clamped_length(x, n):
    m = min(n, 3)
    return np.sum(x[:m] ** 2)


def test_builtin_on_unknown_int():
    x = rng.standard_normal(5)
    check_grads(clamped_length, (x, 2))
    check_grads(clamped_length, (x, 5))


def inverse_of_product(a):
    return np.sum(np.linalg.inv(a @ a.T + np.eye(3)))


def test_no_evaluation_on_stand_in_data():
    """np.linalg.inv is never run on stand-in zeros (singular): its shape comes from its shape rule."""
    a = rng.standard_normal((3, 3))
    specs = specs_of(inverse_of_product, a)
    # a, a.T, a @ a.T, eye(3), their sum, inv(...)
    assert [k for k, v in specs.items() if v.shape == (3, 3)] == ["a", "_t1", "_t2", "_t3", "_t4", "_t5"]
    check_grads(inverse_of_product, (a,))


def repeats_from_data(x, counts):
    return np.sum(np.repeat(x, counts) ** 2)


def test_value_dependent_shape_stays_unknown():
    x = rng.standard_normal(3)
    counts = np.array([1, 2, 3])
    specs = specs_of(repeats_from_data, x, counts)
    assert all(s.shape != (0,) for s in specs.values())
    check_grads(repeats_from_data, (x, counts))


def list_changed_in_place(x):
    parts = [x, x * 2.0]
    parts[0] = np.stack([x, x])
    return np.sum(parts[0] * 3.0)


def list_popped(x):
    parts = [x[:2], x]
    last = parts.pop()
    return np.sum(parts[-1] * last[:2])


@pytest.mark.parametrize("fn", [list_changed_in_place, list_popped])
def test_changed_list_structure_is_unknown(fn):
    x = rng.standard_normal(3)
    node = inferred(fn, x)
    assert "parts" not in anno(node, "container_values")
    items = [s.targets[0].id for s in gast.walk(node) if isinstance(s, gast.Assign)
             and isinstance(s.value, gast.Subscript) and getattr(s.value.value, "id", None) == "parts"]
    assert items and not set(items) & set(anno(node, "specs"))
    check_grads(fn, (x,))


def int_and_float_paths(x, flag):
    y = np.arange(3)
    if flag:
        y = x * 2.0
    return np.sum(y * x)


def test_dtypes_that_differ_are_not_joined():
    x = rng.standard_normal(3)
    assert "y" not in specs_of(int_and_float_paths, x, True)
    check_grads(int_and_float_paths, (x, True))
    check_grads(int_and_float_paths, (x, False))


def literal_shapes(x):
    S = np.zeros((2, 3))
    k = +2
    S[0, :] = x * k
    return S * np.ones(k)[:, None]


def test_literal_shape_tuple_and_unary_plus():
    """``np.zeros((2, 3))`` is specialised; ``+2`` is 2 (it once read as -2)."""
    x = rng.standard_normal(3)
    specs = specs_of(literal_shapes, x)
    assert specs["S"].shape == (2, 3)
    assert "k" not in specs  # a known int, not a stand-in
    assert specs["_t2"].shape == (2,)  # np.ones(k)
    check_grads(literal_shapes, (x,))


def test_huge_literal_array_is_not_built_at_generation_time():
    def make(x):
        big = np.ones((100000, 100000))
        return x * 2.0

    assert "big" not in specs_of(make, np.ones(2))
