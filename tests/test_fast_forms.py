"""Fast forms (passes/fast_forms.py): generated code calls srcad's equal forms of slow NumPy
functions (``runtime.padded`` for ``np.pad``), which return exactly what NumPy returns for
every argument, and code that pads is differentiated alike in every mode and at second order."""
import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import srcad
from loop_checks import all_modes
from srcad.runtime import padded
from test_pad_loops import heat as stencil  # the heat stencil: pads a temporary every step


def _layouts(a, layout):
    if layout == "F":
        return np.asfortranarray(a)
    if layout == "strided" and a.ndim:
        return np.repeat(a, 2, axis=-1)[..., ::2]  # a non-contiguous view with a's values
    return a


@settings(max_examples=300, deadline=None)
@given(array=hnp.arrays(st.sampled_from([np.float64, np.float32, np.complex128, np.int64, np.bool_]),
                        hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)),
       layout=st.sampled_from(["C", "F", "strided"]),
       width=st.one_of(st.integers(0, 3), st.tuples(st.integers(0, 2), st.integers(0, 2))),
       mode=st.sampled_from(["constant", "edge", "wrap", None]))
def test_padded_is_np_pad(array, layout, width, mode):
    a = _layouts(array, layout)
    if mode is None:
        want, got = np.pad(a, width), padded(a, width)
    else:
        try:
            want = np.pad(a, width, mode=mode)
        except ValueError as exc:  # (edge or wrap of an empty axis): the same error
            with pytest.raises(ValueError, match=str(exc)[:30]):
                padded(a, width, mode=mode)
            return
        got = padded(a, width, mode=mode)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert (got.flags.c_contiguous, got.flags.f_contiguous) == (want.flags.c_contiguous, want.flags.f_contiguous)
    assert not np.shares_memory(got, a)


def test_padded_keywords_and_values_go_to_np_pad():
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(padded(a, 1, constant_values=7.0), np.pad(a, 1, constant_values=7.0))
    np.testing.assert_array_equal(padded(a, 1, "reflect"), np.pad(a, 1, "reflect"))
    with pytest.raises(ValueError):
        padded(a, -1)  # as np.pad: negative widths are an error, not a short path


def pad_then_write(x):
    y = np.pad(x, 0)  # width 0: still a new array, so writing it leaves x alone
    y[0] = 3.0 * y[1]
    z = np.pad(np.asfortranarray(x * x), 2)
    return np.sum(y * x) + np.sum(z ** 3)


def test_generated_code_pads_with_the_fast_form():
    f = srcad.differentiable(stencil, wrt=(0, 1))
    u0 = np.random.default_rng(0).standard_normal((6, 6))
    f.adjoint(u0, 0.1)
    code = [line for line in f.adjoint_source.splitlines() if not line.strip().startswith("#")]
    assert any("padded(lap, 1" in line for line in code) and not any("np.pad(" in line for line in code)


@pytest.mark.parametrize("fn, args, wrt", [
    (stencil, (np.random.default_rng(1).standard_normal((6, 5)), 0.2), (0, 1)),
    (pad_then_write, (np.random.default_rng(2).standard_normal((3, 4)),), 0),
])
def test_padding_code_in_every_mode(fn, args, wrt):
    all_modes(fn, args, wrt=wrt)
