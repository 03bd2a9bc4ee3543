"""``zip(*rows)`` and ``zip`` kept as a list (issue 10): transposing with ``zip(*rows)`` in a
loop, a comprehension or an unpacking assignment, and ``list(zip(xs, ys))``, give the tuples
Python's iterator yields (up to the shortest row); unpacking consumes ``map`` too. Every mode
against central finite differences; an iterator kept in a variable stays refused."""
import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes

X = np.array([0.4, -0.7, 1.1, 0.25])


def unzip_pairs(x):
    pairs = [(x[0], x[1]), (x[2], x[0] * x[1]), (np.sin(x[3]), x[2])]
    firsts, seconds = zip(*pairs)
    return np.sum(np.array(firsts) * np.array(seconds)) + firsts[2] * seconds[0]


def transposed_list(x):
    rows = [[x[0], x[1], x[2]], [x[3], x[0] * x[3], x[1] ** 2]]
    columns = list(zip(*rows))
    return sum(a * np.cos(b) for a, b in columns) + columns[1][1] * len(columns)


def loop_over_ragged_rows(x):
    rows = [[x[0], x[1]], [x[2], x[0] * x[2], x[1]], (x[3], x[3] ** 2, x[0], x[1])]
    total = 0.0
    for a, b, c in zip(*rows):  # stops at the shortest row: two steps
        total = total + a * np.sin(b) - c * b
    return total


def attention_heads(x):
    q, k, v = x * 1.5, np.tanh(x), x ** 2
    heads = [np.split(t, 2) for t in (q, k, v)]
    outs = [np.exp(qh @ kh) * vh for qh, kh, vh in zip(*heads)]
    return np.sum(np.hstack(outs))


def zip_of_no_rows(x):
    rows = [x[i:i + 2] for i in range(0)]  # empty: zip() yields nothing
    total = np.sum(x ** 2)
    for pair in zip(*rows):
        total = total + pair[0]
    return total


def zipped_list(x):
    y = np.sin(x)
    pairs = list(zip(x, y))
    return sum(a * b for a, b in pairs) + pairs[0][1] * pairs[3][0]


def zip_items_are_tuples(x):
    columns = list(zip(*[[x[0], x[1]], [x[2], x[3]]]))
    first = columns[0]
    return first[0] * first[1] + len(first) * columns[1][1] + float(isinstance(first, tuple))


def unpack_a_map(x):
    a, b = map(np.tanh, [x[0] * x[1], x[2]])
    return a * b


@pytest.mark.parametrize("fn", [unzip_pairs, transposed_list, loop_over_ragged_rows, attention_heads,
                                zip_of_no_rows, zipped_list, zip_items_are_tuples, unpack_a_map],
                         ids=lambda f: f.__name__)
def test_zip_of_rows_in_every_mode(fn):
    check_all_modes(fn, (X,))


def test_values_are_those_of_python():
    for fn in (unzip_pairs, transposed_list, loop_over_ragged_rows, zip_items_are_tuples):
        y, _ = srcad.vjp(fn, X)
        assert y == pytest.approx(fn(X), rel=1e-15)


def zip_kept_in_a_variable(x):
    pairs = zip(x, np.sin(x))
    total = 0.0
    for a, b in pairs:
        total = total + a * b
    return total


def map_kept_in_a_variable(x):
    values = map(np.sin, [x[0], x[1]])
    return sum(values)


def test_an_iterator_kept_in_a_variable_is_refused_with_what_to_write():
    with pytest.raises(srcad.SrcadSyntaxError, match=r"zip\(\) of differentiated values outside a for loop"):
        srcad.grad(zip_kept_in_a_variable)(X)
    with pytest.raises(srcad.SrcadSyntaxError, match=r"write list\(map\(...\)\) to keep it"):
        srcad.grad(map_kept_in_a_variable)(X)
