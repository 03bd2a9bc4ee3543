"""Fuzz seed 113684 (program 113684341052) and its class: forward mode (``srcad.jvp``,
``check_jvp``) of a function called with a default left out.

A ``for`` loop over a one-dimensional array binds NumPy numbers, not views, so updating the loop
variable in place (``d *= ...``) rebinds it and leaves the array as it was. srcad proves the
array a vector from the argument shapes it is given; ``srcad.jvp`` passed them only when every
parameter was given, so a scalar default left out (``reps=1.09``) dropped them all, and the
update was refused as one "while the for loop iterates over 'x'", though reverse mode accepted
the same function. Forward mode now takes the defaults' shapes as reverse mode does (the code is
made again where they differ). A loop over the rows of a matrix binds views: still refused.

Fuzz seed 113687 (program 113687341069, grad of grad): srcad writes a read of one element of an
array it updates in place as ``a: np.float64 = S[j]`` in the generated code; astor wraps a long
line whose target side is long in parentheses, ``(a: np.float64) = S[j]``, which is not Python,
so the generated module did not compile (a SyntaxError, at first order too, for a long name in
deeply nested blocks). The target and its annotation are now never split (``srcad.line_wrapping``).
"""
import functools

import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes
from srcad.testing import check_jvp

X = np.array([0.3, -0.7, 0.45, 0.9])
W = np.array([0.2, 0.5, -0.4, 1.1])


def items_rebound_in_place(x, w, reps=1.09):
    t = 0.0
    for d, i in zip(x, reps * np.ones((4, 3))):
        d *= np.tanh(d * w[1])  # d is a number: x is left as it was
        t = t + d * i.sum()
    return t + np.sum(x * w)


def items_rebound_keyword_only(x, w, *, scale=0.5):
    t = 0.0
    for d in x:
        d += scale * w[0] ** 2
        t = t + np.sin(d)
    return t * np.sum(x)


def rows_updated_in_place(x, w, reps=1.5):
    m = np.outer(x, w) * reps
    for row in m:
        row *= 2.0  # a view of m: m changes
    return np.sum(m * m)


@pytest.mark.parametrize("wrt", [0, 1])
def test_a_loop_over_a_vector_with_a_default_left_out_in_every_mode(wrt):
    check_all_modes(items_rebound_in_place, (X, W), wrt=wrt)


def test_the_default_passed_or_fixed_by_a_partial_gives_the_same_tangents():
    tx = np.array([1.0, -0.5, 0.25, 2.0])
    left_out = srcad.jvp(items_rebound_in_place, (X, W), (tx, None))
    passed = srcad.jvp(items_rebound_in_place, (X, W, 1.09), (tx, None, None))
    fixed = srcad.jvp(functools.partial(items_rebound_in_place, reps=1.09), (X, W), (tx, None))
    for got in (left_out, fixed):
        np.testing.assert_allclose(got, passed, rtol=1e-12)
    check_jvp(functools.partial(items_rebound_in_place, reps=0.7), (X, W), wrt=(0, 1))


def test_a_default_rebound_afterwards_is_read_again():
    def f(x, w, reps=1.09):
        t = 0.0
        for d in x:
            d *= reps
            t = t + d * w[2]
        return t
    check_jvp(f, (X, W), wrt=0)
    f.__defaults__ = (-2.5,)
    tx = np.ones(4)
    _, tangent = srcad.jvp(f, (X, W), (tx, None))
    assert tangent == pytest.approx(-2.5 * W[2] * 4.0, rel=1e-12)


def test_keyword_only_defaults_pass_and_rows_of_a_matrix_are_still_refused():
    check_all_modes(items_rebound_keyword_only, (X, W), wrt=0)
    for call in (lambda: srcad.jvp(rows_updated_in_place, (X, W), (X, None)),
                 lambda: srcad.grad(rows_updated_in_place)(X, W)):
        with pytest.raises(srcad.SrcadSyntaxError, match=r"'row', an item of what the for loop .* 'for i, row in enumerate\(m.copy\(\)\): m\[i\] = row \* \.\.\.'"):
            call()


def elements_read_deep_in_blocks(x, w):
    S = x * 1.0
    t = 0.0
    if x[0] > -5.0:
        for i in range(2):
            if i >= 0:
                for j in range(4):
                    if j >= 0:
                        an_element_of_the_vector_with_a_rather_long_name = S[j]
                        S[j] = S[j] * w[j]
                        t = t + np.sin(an_element_of_the_vector_with_a_rather_long_name) * w[i]
    return t + np.sum(S * S)


@pytest.mark.parametrize("wrt", [0, 1])
def test_a_long_annotated_element_read_compiles_in_every_mode(wrt):
    check_all_modes(elements_read_deep_in_blocks, (X, W), wrt=wrt)


def test_annotated_targets_are_never_wrapped_in_parentheses():
    import ast

    from srcad import astutil

    name = "a_name_long_enough_that_the_target_side_passes_the_line_width_alone"
    body = f"{name}: np.float64 = S[j]\n{name}: np.float64 = S[j] + g({name}, {name}, {name})\nd = {{k: v for k, v in z}}\n"
    text = astutil.to_source(ast.parse("def f(S, j):\n    if j:\n        for i in j:\n" + "".join(
        "            " + line + "\n" for line in body.splitlines())))
    compile(text, "<test>", "exec")
    assert f"({name}:" not in text and text.count(f"{name}: np.float64 = S[") == 2
