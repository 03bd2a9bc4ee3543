"""Parameters beyond plain positional ones (issues 9 and 10).

``def f(*xs)`` failed with an IndexError before srcad's refusal was reached; ``*args``,
``**kwargs`` and keyword-only parameters of the differentiated function were then refused at its
``def`` line; since issue 10 they are differentiated (``*args`` as one tuple parameter, see
tests/test_lang_signatures.py). Positional-only parameters are supported. Local helpers (``def`` and ``lambda`` inside the function) take positional-only,
``*args``, keyword-only and ``**kwargs`` parameters, and methods of their parameters resolve
(``v.sum()`` inside a helper was looked up as a global). Each supported function is checked
against finite differences in reverse mode (joint adjoint and the pullback called twice),
forward mode and second order.
"""
import numpy as np
import pytest

import srcad
from srcad.errors import SrcadSyntaxError
from srcad.testing import check_grads, check_jvp

X = np.array([0.3, 0.4, 0.6])


def star_args(*xs):
    return np.sum(xs[0] * xs[1])


def keyword_only(x, *, scale=2.0):
    return np.sum(x * scale)


def star_args_after_positional(x, *rest):
    return np.sum(x * rest[0])


def double_star(x, **options):
    return np.sum(x * options.get("scale", 1.0))


@pytest.mark.parametrize("f", [keyword_only, star_args_after_positional, double_star])
def test_differentiated_in_both_modes(f):
    # issue 10: these were refused at the def line; now every parameter is passed by position
    # to the generated code (*rest a tuple, **options a dict), wrt=0 is x
    args = (X, X) if f is star_args_after_positional else (X,)
    if f is star_args_after_positional:  # a positional cotangent would be one more *rest item: v= here
        pullback = check_grads(f, args, mode="split", v=1.0)
        np.testing.assert_allclose(srcad.adjoint(f)(*args, v=1.0), pullback)
    else:
        check_grads(f, args)
    check_jvp(f, args)


def test_star_args_differentiated_as_one_tuple():
    with pytest.raises(srcad.WrtError, match=r"wrt=0 falls in \*xs.*wrt='xs'"):
        srcad.grad(star_args)
    g = srcad.grad(star_args, wrt="xs")(X, 2.0 * X)
    assert isinstance(g, tuple) and len(g) == 2
    np.testing.assert_allclose(g[0], 2.0 * X)
    np.testing.assert_allclose(g[1], X)


def positional_only(x, /, y):
    return np.sum(np.sin(x) * y ** 2)


def helper_with_every_kind_of_parameter(x):
    def combine(a, /, b, *rest, scale=1.0, **options):
        out = a * b * scale
        for r in rest:
            out = out + np.sin(r)
        return out * options.get("w", 1.0) + len(options)
    return np.sum(combine(x, x[0], x ** 2, np.cos(x), scale=3.0, w=x[1])) + np.sum(combine(x, b=x))


def lambda_with_star_args(x):
    total = lambda *parts: sum(parts)  # noqa: E731
    return np.sum(total(x, x * 2.0, np.sin(x))) + np.sum(total())


def helper_calls_a_method_of_its_parameter(x):
    def h(v):
        return v.sum() * v.max()
    scaled = lambda v: v.prod()  # noqa: E731
    return h(x * 2.0) + scaled(x)


@pytest.mark.parametrize("f,args,wrt", [
    (positional_only, (X, X[::-1].copy()), (0, 1)),
    (helper_with_every_kind_of_parameter, (X,), 0),
    (lambda_with_star_args, (X,), 0),
    (helper_calls_a_method_of_its_parameter, (X,), 0),
])
def test_supported_parameters(f, args, wrt):
    check_grads(f, args, wrt=wrt, modes=("rev",))
    check_jvp(f, args, wrt=wrt)
    check_jvp(srcad.grad(f), args)  # forward over reverse


def test_helper_keyword_for_positional_only_parameter_is_refused():
    with pytest.raises(SrcadSyntaxError, match="bad keyword argument for 'h'"):
        srcad.grad(positional_only_by_keyword)(X)


def positional_only_by_keyword(x):
    def h(a, /):
        return a * 2.0
    return np.sum(h(a=x))
