"""Idioms of library code a probe of real programs found refused (round 25A): the builtin
``pow(a, b)``, a membership test in a set of literals, and a dict display copying a mapping
and updating it (``{**params, "w": w}``, the functional optimiser step). Every mode against
finite differences; what stays refused says so."""
import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes
from srcad.errors import SrcadError


def powers(x, p):
    return np.sum(pow(x, 3)) + pow(p, 2.5) * np.sum(pow(x * x + 1.0, p))


def validated(x, mode="l2"):
    if mode not in {"l1", "l2"}:
        raise ValueError(f"unknown norm {mode!r}")
    if 0 < 1 in {1, 2}:  # chained, with the set last
        x = x * 2.0
    return np.sum(x ** 2) if mode == "l2" else np.sum(np.abs(x))


def sgd_step(w, x, b):
    params = {"w": w, "b": b}
    new = {**params, "w": params["w"] - 0.1 * x * params["w"]}
    again = {**new, "b": new["b"] * 3.0}
    return np.sum(np.tanh(new["w"]) ** 2) + again["b"] * np.sum(new["w"]) + params["b"]


def replaced_then_updated(w, x):
    params = {"w": w}
    new = {**params}
    new["w"] *= 2.0  # new["w"] is params["w"]: Python updates both
    return np.sum(new["w"] * params["w"] * x)


def set_of_names(x, k):
    return np.sum(x) if k in {k, 1} else 0.0


X = np.array([0.3, -0.2, 0.5])


@pytest.mark.parametrize("wrt", [0, 1])
def test_builtin_pow(wrt):
    check_all_modes(powers, (X, 1.3), wrt=wrt)


def test_membership_in_a_set_of_literals():
    check_all_modes(validated, (X,))
    assert np.allclose(srcad.grad(validated)(X), 8 * X)
    with pytest.raises(ValueError, match="unknown norm"):
        srcad.grad(validated)(X, "huber")


@pytest.mark.parametrize("wrt", [0, 1, 2])
def test_a_dict_display_copying_a_mapping(wrt):
    check_all_modes(sgd_step, (X, np.array([1.0, 2.0, -1.0]), 0.7), wrt=wrt)


def test_what_stays_refused():
    with pytest.raises(SrcadError, match=r"test_idioms_25\.py:\d+: .*updates 'new\['w'\]' in place"):
        srcad.grad(replaced_then_updated)(X, X)
    with pytest.raises(SrcadError, match=r"test_idioms_25\.py:\d+: srcad does not support Set expressions"):
        srcad.grad(set_of_names)(X, 1)
    with pytest.raises(SrcadError, match="three-argument|has no derivative rule"):
        srcad.grad(lambda a: pow(a, 3, 5))(3.0)
