"""The faster compile-time helpers answer exactly what the slower ones did.

(No timings here: benchmarks/compile_time.py measures them.)
"""
import inspect

import gast
import numpy as np

import corpus
import srcad
from srcad import astutil as A
from srcad import codegen
from srcad.passes import memory, simplify
from srcad.testing import check_grads


def _reference_names(tree, ctx):
    return {n.id for n in gast.walk(tree) if isinstance(n, gast.Name) and (ctx is None or isinstance(n.ctx, ctx))}


def test_walk_and_name_queries_match_gast_walk():  # walk leaves out the ctx and operator leaves
    for module in (corpus, memory, simplify):
        tree = gast.parse(inspect.getsource(module))
        leaves = (gast.expr_context, gast.operator, gast.unaryop, gast.boolop, gast.cmpop)
        assert [id(n) for n in A.walk(tree)] == [id(n) for n in gast.walk(tree) if not isinstance(n, leaves)]
        assert A.names_read(tree) == _reference_names(tree, gast.Load)
        assert A.names_stored(tree) == _reference_names(tree, gast.Store)
        assert A.all_names(tree) == _reference_names(tree, None)


def test_parameter_annotations_are_read():
    tree = gast.parse("def f(x: Weights, y=default): return x")
    assert A.names_read(tree) == {"Weights", "default", "x"}


def test_a_trailing_comment_keeps_its_line_end():
    text = A.to_source([A.assign("y", A.load("x")), A.comment("the end")])
    assert text == "y = x\n# the end\n"


def chain(x, w):
    a = np.sin(x) * w
    b = a
    c = b
    for i in range(3):
        d = c * 0.5
        e = d
        c = e + x
    f = c
    return np.sum(f * f)


def test_copies_propagated_through_a_chain_and_a_loop():
    rng = np.random.default_rng(0)
    check_grads(chain, (rng.standard_normal(4), rng.standard_normal(4)), wrt=(0, 1))
    source = srcad.differentiable(chain, wrt=(0, 1)).adjoint_source
    # b = a, c = b and e = d bind their adjoints once: read under the first name (dc, rebound in
    # the loop, keeps its own)
    assert not [line for line in source.splitlines() if line.strip().split(" = ")[0] in ("da", "db", "dd")]
