"""``d.get`` after normalize (issue 9): it is lowered to ``d[k] if k in d.keys() else default``
for every local receiver (a global dict's ``.get`` is a known object, called as it is), so no ``.get()`` call reaches the transforms (``"get"`` left the
non-differentiable methods). On an array, which has no ``.get`` (nor ``.keys``), the lowered
code fails as the user's own code does instead of testing membership of a value and
returning a gradient for a function that cannot run.
"""
import gast
import numpy as np
import pytest

import srcad
from srcad import astutil as A
from srcad.passes.normalize import normalize
from srcad.passes.resolve_calls import resolve_calls
from srcad.rules.methods import NONDIFF_METHODS
from srcad.source import capture
from srcad.testing import check_grads, check_jvp

SCALES = {"a": 2.0}


def get_on_dicts(x, d):
    w = d.get("w", x)
    s = SCALES.get("a", 1.0) + SCALES.get("b", 0.5)
    z = d.get("z")
    return np.sum(w * x * s) + (0.0 if z is None else np.sum(z))


def get_on_an_array(x):
    return np.sum(x.get(0, x * 2.0))


def test_no_get_call_survives_normalize():
    for fn in (get_on_dicts, get_on_an_array):
        src = capture(fn)
        node = normalize(resolve_calls(src.node, src), src)
        methods = {A.anno(c, "callee").name for c in gast.walk(node)
                   if isinstance(c, gast.Call) and A.anno(c, "callee").kind == "method"}
        assert "get" not in methods and "keys" in methods  # a global dict's .get is a known object
    assert "get" not in NONDIFF_METHODS


@pytest.mark.parametrize("d", [{"w": np.array([0.4, 0.9])}, {"z": np.array([0.3, 0.1])}])
def test_get_on_dicts(d):
    x = np.array([0.7, 0.2])
    check_grads(get_on_dicts, (x, d), wrt=(0, 1), modes=("rev",))
    check_jvp(get_on_dicts, (x, d), wrt=(0, 1))
    check_jvp(srcad.grad(get_on_dicts), (x, d))


def test_get_on_an_array_fails_like_python():
    x = np.array([0.0, 0.5])
    with pytest.raises(AttributeError):
        get_on_an_array(x)
    with pytest.raises(AttributeError, match="keys"):
        srcad.grad(get_on_an_array)(x)
    with pytest.raises(AttributeError, match="keys"):
        srcad.jvp(get_on_an_array, (x,), (np.ones(2),))
