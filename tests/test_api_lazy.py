"""The forward/backward pair that ``vjp`` runs is generated when first needed: ``grad`` and
``adjoint`` make and compile only the joint adjoint. What the pair computes, and the
guards that protect it, do not depend on when it is made. Values are checked against
finite differences."""
import numpy as np

import srcad
from srcad.testing import check_grads

X = np.array([0.3, -1.2, 0.8])


def helper(x):
    return np.sin(x) * x


def calls_helper(x):
    return np.sum(helper(x) ** 2 + np.cos(x))


def output_only(x):
    return np.sum(np.tanh(x)), np.argmax(x)  # argmax feeds only the output: only the pair reads it


def test_grad_makes_no_pair_and_vjp_makes_it_once():
    d = srcad.differentiable(calls_helper)
    reference = check_grads(calls_helper, (X,), v=1.0, mode="joint")  # finite differences, no vjp
    np.testing.assert_allclose(d.grad(X), reference, rtol=1e-12)
    generated = d._compiled.generated
    assert generated.forward_source == "" and generated.pair_module_source == ""
    y, pullback = d.vjp(X)
    assert "def calls_helper_forward(" in generated.forward_source
    np.testing.assert_allclose(pullback(1.0), reference, rtol=1e-12)
    np.testing.assert_allclose(pullback(1.0), reference, rtol=1e-12)
    pair = generated.pair_module_source
    d.vjp(X)
    assert generated.pair_module_source is pair  # made once
    assert "def calls_helper_forward(" in d.vjp_source


def test_a_callee_gets_its_pair_when_a_caller_needs_it():
    srcad.grad(calls_helper)(X)
    assert "def helper_backward(" in d_sources(calls_helper)


def d_sources(fn):
    import io
    import contextlib

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        srcad.show(fn, X)
    return out.getvalue()


def test_the_pairs_module_attributes_are_guarded_before_it_is_made():
    d = srcad.differentiable(output_only)
    g = d.adjoint(X, (1.0, None))
    np.testing.assert_allclose(g, check_grads(lambda x: np.sum(np.tanh(x)), (X,), v=1.0, mode="joint"), rtol=1e-12)
    compiled = d._compiled
    assert compiled.generated.forward_source == ""
    # np.argmax is read by the forward function only: guarded with the joint adjoint's reads
    assert ("argmax",) in [getattr(guard, "attrs", None) for guard in compiled.inherited]
    y, pullback = d.vjp(X)
    assert y[1] == np.argmax(X)
    np.testing.assert_allclose(pullback((1.0, None)), g, rtol=1e-12)
