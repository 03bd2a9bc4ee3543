"""Rules the realistic corpus needed (np.fft's real n-dimensional transforms,
scipy.signal.convolve2d/correlate2d, np.take_along_axis, scipy.special.log_ndtr): reverse mode (joint and pullback), forward mode, float32
arguments and second order, against finite differences. FFT programs are real-in, real-out."""
import numpy as np
import pytest
from scipy import signal, special

import srcad

from library_check import check_first_order, check_float32, check_second_order

RNG = np.random.default_rng(21)


def R(*shape):
    return RNG.standard_normal(shape)


def f_rfft2_abs(m):
    return np.abs(np.fft.rfft2(m))


def f_rfftn_s_axes(m):
    return np.abs(np.fft.rfftn(m, s=(5, 3), axes=(1, 0), norm="ortho"))


def f_rfft2_roundtrip(m):
    return np.fft.irfft2(np.fft.rfft2(m) * np.exp(-np.arange(3)), s=m.shape)


def f_irfft2_odd(m):
    return np.fft.irfft2(np.fft.rfft2(m ** 2), s=(4, 5), norm="forward")


def f_irfftn_3d(m):
    spectrum = np.fft.rfftn(m.reshape(2, 3, 2))
    return np.fft.irfftn(spectrum * np.arange(1.0, 3.0), s=(2, 3, 2), axes=(0, 1, 2), norm="ortho")


def f_convolve2d_same(img, k):
    return signal.convolve2d(img, k, mode="same")


def f_convolve2d_valid(img, k):
    return signal.convolve2d(img, k, "valid", "fill", 0)


def f_convolve2d_full(img, k):
    return signal.convolve2d(img, k)


def f_correlate2d_same(img, k):
    return signal.correlate2d(img, k, mode="same")


def f_correlate2d_valid(img, k):
    return signal.correlate2d(img, k, mode="valid")


def f_correlate2d_full(img, k):
    return signal.correlate2d(img, k, boundary="fill")


IDX = np.array([[0, 2, 2], [1, 0, 1], [3, 3, 0]])


def f_take_along_axis(m):
    return np.take_along_axis(m, IDX, axis=1)


def f_take_along_axis_broadcast(m):
    return np.take_along_axis(m, np.array([[2], [2]]), axis=0)  # broadcast along axis 1


def f_take_along_axis_flat(m):
    return np.take_along_axis(m, np.array([5, 0, 5, 11]), None)


def f_log_normal_cdf(x):
    return special.log_ndtr(x) * special.log_ndtr(1.0 - x)


CASES = [
    ("rfft2", f_rfft2_abs, [R(3, 4)]),
    ("rfftn-s-axes", f_rfftn_s_axes, [R(4, 4)]),
    ("irfft2-roundtrip", f_rfft2_roundtrip, [R(4, 4)]),
    ("irfft2-odd-s", f_irfft2_odd, [R(4, 5)]),
    ("irfftn-3d", f_irfftn_3d, [R(12)]),
    ("convolve2d-same-even", f_convolve2d_same, [R(5, 6), R(2, 3)]),
    ("convolve2d-valid", f_convolve2d_valid, [R(5, 6), R(3, 2)]),
    ("convolve2d-full", f_convolve2d_full, [R(4, 3), R(2, 2)]),
    ("correlate2d-same-even", f_correlate2d_same, [R(5, 6), R(2, 4)]),
    ("correlate2d-same-odd", f_correlate2d_same, [R(5, 6), R(3, 3)]),
    ("correlate2d-valid", f_correlate2d_valid, [R(5, 6), R(3, 2)]),
    ("correlate2d-full", f_correlate2d_full, [R(4, 3), R(2, 2)]),
    ("take_along_axis", f_take_along_axis, [R(3, 4)]),
    ("take_along_axis-broadcast", f_take_along_axis_broadcast, [R(3, 4)]),
    ("take_along_axis-flat", f_take_along_axis_flat, [R(3, 4)]),
    ("log_ndtr", f_log_normal_cdf, [R(5) * 3]),
]


@pytest.mark.parametrize("name, fun, args", CASES, ids=[c[0] for c in CASES])
def test_first_order(name, fun, args):
    check_first_order(fun, args)


@pytest.mark.parametrize("name, fun, args", CASES, ids=[c[0] for c in CASES])
def test_float32(name, fun, args):
    check_float32(fun, args)


@pytest.mark.parametrize("name, fun, args", CASES, ids=[c[0] for c in CASES])
def test_second_order(name, fun, args):
    check_second_order(fun, args)


def convolve_wrap(img, k):
    return np.sum(signal.convolve2d(img, k, mode="same", boundary="wrap") ** 2)


def correlate_fill_one(img, k):
    return np.sum(signal.correlate2d(img, k, fillvalue=1.0) ** 2)


@pytest.mark.parametrize("fun", [convolve_wrap, correlate_fill_one])
def test_boundaries_that_are_not_zero_filled_are_refused(fun):
    with pytest.raises(srcad.UnsupportedCaseError, match="boundary='fill' and fillvalue=0 only"):
        srcad.grad(fun)(R(4, 4), R(2, 2))
    with pytest.raises(srcad.UnsupportedCaseError, match="boundary='fill' and fillvalue=0 only"):
        srcad.jvp(fun, (R(4, 4), R(2, 2)), (R(4, 4), None))


# ---- complex values between FFTs: a real filter is right, anything else refused, never wrong ----

MASK = np.exp(-np.arange(7.0))
PHASES = np.exp(1j * np.arange(4.0))


def f_lowpass(m):
    return np.fft.irfft(np.fft.rfft(m) * MASK / 2.0, n=12)


def f_gaussian_blur(m):
    k2 = np.fft.fftfreq(m.shape[0])[:, None] ** 2 + np.fft.fftfreq(m.shape[1])[None, :] ** 2
    return np.real(np.fft.ifft2(np.fft.fft2(m) * np.exp(-k2 / 0.1)))


FILTERS = [("lowpass", f_lowpass, [R(12)]), ("gaussian-blur", f_gaussian_blur, [R(4, 5)])]


@pytest.mark.parametrize("name, fun, args", FILTERS, ids=[c[0] for c in FILTERS])
def test_a_spectrum_times_a_real_constant(name, fun, args):
    check_first_order(fun, args)
    check_second_order(fun, args)


def active_filter(mask, m):
    return np.fft.irfft(np.fft.rfft(m) * mask, n=12)


def global_phases(x):
    return np.abs(np.sum(PHASES * x))


def masked_spectrum(m):
    s = np.fft.fft(m[m > 0])
    return np.sum(np.abs(s * np.real(s)))


def test_a_filter_that_is_differentiated_is_refused():
    """The adjoint of a real factor of a complex product needs a conjugate the real rules lack."""
    with pytest.raises(srcad.SrcadSyntaxError, match="complex values only through"):
        srcad.grad(active_filter)(MASK, R(12))
    with pytest.raises(srcad.SrcadError, match="complex values only through"):  # in a helper: when it runs
        srcad.grad(filter_loss)(MASK, R(12))


def filter_loss(mask, m):
    return np.sum(active_filter(mask, m) ** 2)


@pytest.mark.parametrize("fun", [global_phases, masked_spectrum])
def test_complex_values_of_unknown_dtype_are_refused(fun):
    """Regression: where the dtype was not known when the adjoint was generated (a global, a
    shape that depends on data) a complex operand went through a real rule: a wrong gradient.
    passes/complex_values.py decides which values may be complex without shapes."""
    with pytest.raises(srcad.SrcadSyntaxError, match="complex values only through") as raised:
        srcad.grad(fun)(R(4))
    assert raised.value.filename.endswith("test_realistic_rules.py")
    srcad.testing.check_jvp(fun, (R(4),))  # forward mode's rules for these are right for complex values
