"""``srcad.jvp`` reads a tangent of a list, tuple, dict or record argument item by item: ``None``
for an item is a zero tangent there (as in a ``vjp`` cotangent), and a tangent laid out otherwise
(a key missing or extra, a list for a dict, another length or class) is a ``CotangentError`` naming
both layouts. (A ``None`` item crashed in the generated code with a TypeError, a missing key was a
bare KeyError and an extra key was ignored.)"""
import dataclasses
from collections import namedtuple

import numpy as np
import pytest

import srcad
from srcad import CotangentError

rng = np.random.default_rng(2811)
X = rng.standard_normal((4, 3))
Pair = namedtuple("Pair", "w b")
Other = namedtuple("Other", "w b")


@dataclasses.dataclass(frozen=True)
class Layer:
    w: np.ndarray
    b: float


def of_dict(p, X):
    return np.tanh(X @ p["w"]) * p["b"]


def of_list(p, X):
    return np.tanh(X @ p[0]) * p[1]


def of_record(p, X):
    return np.tanh(X @ p.w) * p.b


def of_nested(p, X):
    return np.tanh(X @ p["layer"][0]) * p["layer"][1] + p["scale"]


W, B = rng.standard_normal(3), 0.7
CASES = {
    "dict": (of_dict, {"w": W, "b": B}, lambda w, b: {"w": w, "b": b}),
    "list": (of_list, [W, B], lambda w, b: [w, b]),
    "tuple": (of_list, (W, B), lambda w, b: (w, b)),
    "namedtuple": (of_record, Pair(W, B), lambda w, b: Pair(w, b)),
    "dataclass": (of_record, Layer(W, B), lambda w, b: Layer(w, b)),
}


def directional(f, p, t, eps=1e-6):
    """Central difference of ``f(., X)`` at ``p`` along ``t`` (both built by the same layout)."""
    leaves = lambda q: (q["w"], q["b"]) if isinstance(q, dict) else (q.w, q.b) if hasattr(q, "w") else (q[0], q[1])
    (w, b), (tw, tb) = leaves(p), leaves(t)
    make = type(p) if not isinstance(p, (list, tuple)) or hasattr(p, "_fields") else None
    build = {dict: lambda w, b: {"w": w, "b": b}, list: lambda w, b: [w, b], tuple: lambda w, b: (w, b)}.get(
        type(p), lambda w, b: make(w, b))
    return (f(build(w + eps * tw, b + eps * tb), X) - f(build(w - eps * tw, b - eps * tb), X)) / (2 * eps)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("zero", ["w", "b"])
def test_a_none_item_is_a_zero_tangent(name, zero):
    f, p, layout = CASES[name]
    tw, tb = rng.standard_normal(3), 1.3
    given = layout(None if zero == "w" else tw, None if zero == "b" else tb)
    zeros = layout(np.zeros(3) if zero == "w" else tw, 0.0 if zero == "b" else tb)
    y, y_dot = srcad.jvp(f, (p, X), (given, None))
    np.testing.assert_allclose(y, f(p, X))
    np.testing.assert_allclose(y_dot, srcad.jvp(f, (p, X), (zeros, None))[1], rtol=1e-13)
    np.testing.assert_allclose(y_dot, directional(f, p, zeros), rtol=1e-6, atol=1e-8)


def test_a_none_item_holding_a_structure_is_zero_throughout():
    p = {"layer": [W, B], "scale": 0.3}
    y_dot = srcad.jvp(of_nested, (p, X), ({"layer": None, "scale": 1.0}, None))[1]
    np.testing.assert_allclose(y_dot, np.ones(4))


@pytest.mark.parametrize("p, tangent, says", [
    ({"w": W, "b": B}, {"w": W}, "is a dict with keys ['w'] but the argument is a dict with keys ['b', 'w']"),
    ({"w": W, "b": B}, {"w": W, "b": 1.0, "c": 2.0}, "keys ['b', 'c', 'w']"),
    ({"w": W, "b": B}, [W, 1.0], "is a list of 2 items but the argument is a dict"),
    ([W, B], [W], "is a list of 1 items but the argument is a list of 2 items"),
    ([W, B], (W, 1.0), "is a tuple of 2 items but the argument is a list of 2 items"),
    (Pair(W, B), Other(W, 1.0), "is an instance of Other but the argument is an instance of Pair"),
])
def test_a_tangent_laid_out_otherwise_is_refused(p, tangent, says):
    f = of_dict if isinstance(p, dict) else of_record if hasattr(p, "_fields") else of_list
    with pytest.raises(CotangentError, match="pass a tangent laid out like the argument") as info:
        srcad.jvp(f, (p, X), (tangent, None))
    assert says in str(info.value) and "test_jvp_tangent_layouts.py" in str(info.value)
