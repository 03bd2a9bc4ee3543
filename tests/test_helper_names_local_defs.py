"""A function defined in the differentiated function under the name of a helper srcad's
normal form calls (``in_place_result`` for ``y += e``, ``new_record`` for a record's
construction, ``chosen_index`` for ``max``) is the user's, not srcad's: it was refused as
"used as a value" (fuzzer, seed 113627341276), naming no line."""
import dataclasses

import numpy as np

import srcad
from lang_checks import check_all_modes

G = np.array([0.1, 0.2, -0.4])


def local_in_place_result(g):
    def in_place_result(a, b):
        return a * b
    y = g * 2.0
    y += g
    return np.sum(y * in_place_result(g, 1.5))


@dataclasses.dataclass
class Pair:
    a: np.ndarray
    b: np.ndarray


def local_new_record(g):
    def new_record(a, b):
        return a - b
    p = Pair(g * 2.0, g)
    return np.sum(new_record(p.a, p.b) ** 2)


def local_chosen_index(g):
    def chosen_index(a):
        return a[1:2]
    m = max(g[0:1] * 1.0, chosen_index(g))
    return np.sum(m ** 2)


def test_in_place_result():
    assert np.isclose(srcad.value_and_grad(local_in_place_result)(G)[0], local_in_place_result(G))
    check_all_modes(local_in_place_result, (G,))


def test_new_record():
    check_all_modes(local_new_record, (G,))


def test_chosen_index():
    check_all_modes(local_chosen_index, (G,))
