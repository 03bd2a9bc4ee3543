"""Golden tests of generated source: the code srcad emits is a product, reviewed in diffs.

Regenerate after an intended change with ``SRCAD_UPDATE_GOLDEN=1 pytest tests/test_golden.py``
and read the diff.
"""
import os
import pathlib

import numpy as np
import pytest

import golden_functions as g
import srcad

GOLDEN = pathlib.Path(__file__).parent / "golden"
CASES = {
    "mlp_loss": (g.mlp_loss, (0, 1), (np.ones((8, 4)), np.ones((4, 3)), np.ones(3))),
    "for_loop": (g.for_loop, 0, (np.ones(5),)),
    "while_loop": (g.while_loop, 0, (np.ones(3),)),
    "branch": (g.branch, 0, (np.ones(3), 1.0)),
    "logsumexp_loop": (g.logsumexp_loop, 0, (np.ones(6),)),
    "mlp_loss_generic": (g.mlp_loss, (0, 1), None),
    "table_recursion": (g.table_recursion, 0, (np.ones(4), 0.5)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_source_matches_golden(name):
    fn, wrt, args = CASES[name]
    d = srcad.differentiable(fn, wrt=wrt)
    if args is not None:  # specialised on these shapes and dtypes
        d._functions(args)
    text = f"# joint adjoint\n{d.adjoint_source}\n# forward/backward pair (vjp)\n{d.vjp_source}"
    text = text.replace(str(GOLDEN.parent), "<tests>")  # the checks' messages name the user's file
    path = GOLDEN / f"{name}.py.txt"
    if os.environ.get("SRCAD_UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert path.read_text() == text


def test_names_are_deterministic():
    first = srcad.differentiable(g.logsumexp_loop).adjoint_source
    from srcad import compile as compiled

    compiled._CACHE.clear()
    assert srcad.differentiable(g.logsumexp_loop).adjoint_source == first
