"""A parameter dict copied and then one entry overridden (``params = dict(P);
params["W"] = W``) was refused: ``dict`` had no rule (found by an adversarial probe). ``dict(m)``
of a dict is a copy: every mode against finite differences."""
import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes
from srcad.errors import UnsupportedCaseError

P = {"W": np.eye(2), "b": np.ones(2)}
ARGS = (np.eye(2) + 0.1, np.array([0.3, 0.4]))


def override_a_global_dict(W, y):
    params = dict(P)
    params["W"] = W
    return np.sum(np.tanh(y @ params["W"] + params["b"]))


def copy_a_local_dict(W, y):
    local = {"W": W * 2.0, "b": np.sin(y)}
    params = dict(local)
    params["b"] = params["b"] * 3.0
    return np.sum(np.tanh(y @ params["W"] + params["b"]) * local["b"])


@pytest.mark.parametrize("f", [override_a_global_dict, copy_a_local_dict])
@pytest.mark.parametrize("wrt", [0, 1])
def test_dict_copies(f, wrt):
    check_all_modes(f, ARGS, wrt=wrt)


def test_dict_of_pairs_is_refused():
    def pairs(W, y):
        return np.sum(dict([("W", W)])["W"] * y)
    with pytest.raises(UnsupportedCaseError, match="dict"):
        srcad.grad(pairs)(*ARGS)
