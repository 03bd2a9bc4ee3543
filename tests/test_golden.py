"""Golden tests of generated source: the code srcad emits is a product, reviewed in diffs.

Regenerate after an intended change with ``SRCAD_UPDATE_GOLDEN=1 pytest tests/test_golden.py``
and read the diff.
"""
import os
import pathlib

import pytest

import golden_functions as g
import srcad

GOLDEN = pathlib.Path(__file__).parent / "golden"
CASES = {
    "mlp_loss": (g.mlp_loss, (0, 1)),
    "for_loop": (g.for_loop, 0),
    "while_loop": (g.while_loop, 0),
    "branch": (g.branch, 0),
    "logsumexp_loop": (g.logsumexp_loop, 0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_source_matches_golden(name):
    fn, wrt = CASES[name]
    d = srcad.differentiable(fn, wrt=wrt)
    text = f"# joint adjoint\n{d.adjoint_source}\n# forward/backward pair (vjp)\n{d.vjp_source}"
    path = GOLDEN / f"{name}.py.txt"
    if os.environ.get("SRCAD_UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert path.read_text() == text


def test_names_are_deterministic():
    first = srcad.differentiable(g.logsumexp_loop).adjoint_source
    from srcad import compile as compiled

    compiled._CACHE.clear()
    assert srcad.differentiable(g.logsumexp_loop).adjoint_source == first
