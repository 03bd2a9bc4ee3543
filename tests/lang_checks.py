"""Checks shared by the tests of the language constructs (tests/test_lang_*.py): every mode
against central finite differences."""
import linecache

import numpy as np
import pytest

import srcad
from srcad import SrcadSyntaxError
from srcad.testing import check_grads


def refused(f, *args, line_text, message):
    """``srcad.grad(f)(*args)`` refused with ``message``, at the line of ``f``'s file holding
    ``line_text``; returns the message."""
    with pytest.raises(SrcadSyntaxError) as info:
        srcad.grad(f)(*args)
    err = info.value
    assert message in str(err), str(err)
    assert err.filename == f.__code__.co_filename
    assert line_text in linecache.getline(err.filename, err.lineno)
    return str(err)


def check_second_order(f, args, wrt=0, eps=1e-6, rtol=1e-5, atol=1e-7, seed=0):
    """hvp and grad-of-grad of ``f`` against central differences of ``srcad.grad(f)``."""
    rng = np.random.default_rng(seed)
    x = args[wrt]
    u = rng.normal(size=np.shape(x)) if np.ndim(x) else float(rng.normal())
    gradient = srcad.grad(f, wrt=wrt)

    def moved(t):
        shifted = list(args)
        shifted[wrt] = x + t * u
        return np.asarray(gradient(*shifted), dtype=float)

    numeric = (moved(eps) - moved(-eps)) / (2 * eps)
    got = np.asarray(srcad.hvp(f, wrt=wrt)(*args, u), dtype=float)
    np.testing.assert_allclose(got, numeric, rtol=rtol, atol=atol, err_msg="hvp")
    w = rng.normal(size=np.shape(x)) if np.ndim(x) else 1.0
    _, pullback = srcad.vjp(gradient, *args, wrt=wrt)
    np.testing.assert_allclose(np.vdot(pullback(w), u), np.vdot(w, numeric), rtol=rtol, atol=atol,
                               err_msg="grad-of-grad")


def check_all_modes(f, args, wrt=0, second=True):
    """Joint adjoint and pullback (twice), jvp, and (``second``) hvp and grad-of-grad."""
    check_grads(f, args, wrt=wrt, modes=("rev", "fwd"))  # (named: a refused forward mode raises)
    if second:
        check_second_order(f, args, wrt=wrt)


def check_unchanged(f, *args, wrt=0, second=True, value=False):
    """``check_all_modes``, and the arguments unchanged afterwards; ``value``: the value ``vjp``
    gives is the one Python computes too."""
    kept = [np.copy(a) for a in args]
    if value:
        y, _ = srcad.vjp(f, *args, wrt=wrt)
        np.testing.assert_allclose(y, f(*args), rtol=1e-12, err_msg="value")
    check_all_modes(f, args, wrt=wrt, second=second)
    for a, b in zip(args, kept):
        np.testing.assert_array_equal(a, b)


def made_by(call):
    """How many compilations ``call()`` made (a guard that cannot hold makes one on every call)."""
    from srcad.compile import _CACHE

    made = _CACHE.made_in_this_thread()
    call()
    return _CACHE.made_in_this_thread() - made
