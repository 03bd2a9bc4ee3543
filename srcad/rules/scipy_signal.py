"""Rules for ``scipy.signal`` convolutions, reverse (vjp) and forward (jvp).

``convolve``, ``correlate``, ``fftconvolve`` (without ``axes``) and ``convolve2d``/``correlate2d``
(zero-filled boundary) are bilinear: a tangent
convolves each tangent with the other operand, and the adjoint of one operand correlates the
cotangent, placed where the ``mode``'s output sits in the full convolution, with the other
(``valid`` over the full size). ``fftconvolve(axes=...)`` is refused.

``lfilter(b, a, x)`` (a 1-D signal, no ``zi``) solves ``a * y = b * x`` (causal convolutions cut
to the signal's length), so ``dy = lfilter(b, a, dx) + lfilter(db, a, x) - lfilter(da, a, y)``.
Its adjoint in ``x`` filters the reversed cotangent (Toeplitz matrices are transposed by
reversal), and those in ``b`` and ``a`` are lagged products of ``h = Aᵀ⁻¹ g`` with ``x`` and
``-y``.
"""
import numpy as np

from ..errors import UnsupportedCaseError
from ..registry import register_jvp, register_nondifferentiable, register_vjp

try:
    from scipy import signal
except ImportError:  # SciPy is not a dependency of srcad
    signal = None


def full_cotangent(g, in1, in2, mode, round_up=0):
    """``g``, the cotangent of the ``mode`` output, zero-padded to the full convolution's shape
    (the ``same`` and ``valid`` outputs are its centred parts; ``correlate2d`` centres an odd
    surplus one later: ``round_up=1``)."""
    g = np.asarray(g)
    full = [a + b - 1 for a, b in zip(np.shape(in1), np.shape(in2))]
    if mode == "full":
        return g
    if mode not in ("same", "valid"):
        raise UnsupportedCaseError(f"srcad does not differentiate convolutions with mode={mode!r}")
    starts = [(f - n + round_up) // 2 for f, n in zip(full, g.shape)]
    return np.pad(g, [(s, f - n - s) for s, f, n in zip(starts, full, g.shape)])


def convolve_grad(g, in1, in2, mode, which):
    """The adjoint of ``in1`` (which=0) or ``in2`` (which=1) in ``convolve(in1, in2, mode)``."""
    full = full_cotangent(g, in1, in2, mode)
    return signal.correlate(full, in2 if which == 0 else in1, mode="valid")


def correlate_grad(g, in1, in2, mode, which):
    """``correlate(in1, in2) = convolve(in1, flip(in2))``: the adjoint through the flip."""
    flipped = np.flip(in2)
    grad = convolve_grad(g, in1, flipped, mode, which)
    return grad if which == 0 else np.flip(grad)


def zero_filled(mode, boundary, fillvalue):
    """``mode``, after refusing the boundaries that make ``convolve2d`` not bilinear."""
    if boundary not in ("fill", "pad") or fillvalue != 0:
        raise UnsupportedCaseError("srcad differentiates scipy.signal.convolve2d and correlate2d with "
                                   "boundary='fill' and fillvalue=0 only")
    return mode


def correlate2d_grad(g, in1, in2, mode, which):
    """The adjoint of ``in1`` (which=0) or ``in2`` (which=1) in ``correlate2d(in1, in2, mode)``:
    the full correlation is ``convolve(in1, flip(in2))``, its ``same`` part centred one later."""
    flipped = np.flip(in2)
    full = full_cotangent(g, in1, flipped, mode, 1)
    grad = signal.correlate(full, flipped if which == 0 else in1, mode="valid")
    return grad if which == 0 else np.flip(grad)


def over_all_axes(mode, axes):
    """``mode``, after refusing ``fftconvolve(axes=...)``."""
    if axes is not None:
        raise UnsupportedCaseError("srcad does not differentiate scipy.signal.fftconvolve with axes; "
                                   "use scipy.signal.convolve over all axes")
    return mode


def lfilter_axis(x, axis, zi):
    """The axis ``lfilter`` runs along, after refusing the calls srcad does not differentiate."""
    if zi is not None:
        raise UnsupportedCaseError("srcad does not differentiate scipy.signal.lfilter with zi (initial conditions); "
                                   "leave zi out, or add the response to the initial state yourself")
    if np.ndim(x) != 1 or axis not in (0, -1):
        raise UnsupportedCaseError("srcad differentiates scipy.signal.lfilter of a 1-D signal only; "
                                   "filter each row of a batch in a loop")
    return -1


register_nondifferentiable(lfilter_axis, reason="it checks lfilter's options")


def lfilter_transposed(b, a, g, axis):
    """``Tᵀ g`` for the filter ``T = lfilter(b, a, .)``: the reversed ``g`` filtered, reversed."""
    return np.flip(signal.lfilter(b, a, np.flip(g, axis), axis=axis), axis)


def lfilter_coefficients_grad(g, a, s, coefficients, axis):
    """The adjoint of the ``coefficients`` whose tangent ``dc`` makes ``lfilter(dc, a, s)``:
    ``Σᵢ h[i] s[i - k]`` for each lag ``k``, with ``h = Aᵀ⁻¹ g``."""
    h = lfilter_transposed(np.ones(1), a, g, axis)
    n, count = np.shape(s)[-1], np.size(coefficients)
    lags = np.correlate(h, s, "full")[n - 1:n - 1 + count]  # (lags past the signal's end are zero)
    return np.reshape(np.pad(lags, (0, count - np.size(lags))), np.shape(coefficients))


if signal is not None:

    @register_vjp(signal.convolve)
    def convolve(y, in1, in2, mode="full", method="auto"):
        d[in1] += convolve_grad(d[y], in1, in2, mode, 0)
        d[in2] += convolve_grad(d[y], in1, in2, mode, 1)

    @register_jvp(signal.convolve)
    def convolve_jvp(y, in1, in2, mode="full", method="auto"):
        t[y] += signal.convolve(t[in1], in2, mode=mode)
        t[y] += signal.convolve(in1, t[in2], mode=mode)

    @register_vjp(signal.fftconvolve)
    def fftconvolve(y, in1, in2, mode="full", axes=None):
        d[in1] += convolve_grad(d[y], in1, in2, over_all_axes(mode, axes), 0)
        d[in2] += convolve_grad(d[y], in1, in2, over_all_axes(mode, axes), 1)

    @register_jvp(signal.fftconvolve)
    def fftconvolve_jvp(y, in1, in2, mode="full", axes=None):
        t[y] += signal.fftconvolve(t[in1], in2, mode=over_all_axes(mode, axes))
        t[y] += signal.fftconvolve(in1, t[in2], mode=over_all_axes(mode, axes))

    @register_vjp(signal.correlate)
    def correlate(y, in1, in2, mode="full", method="auto"):
        d[in1] += correlate_grad(d[y], in1, in2, mode, 0)
        d[in2] += correlate_grad(d[y], in1, in2, mode, 1)

    @register_jvp(signal.correlate)
    def correlate_jvp(y, in1, in2, mode="full", method="auto"):
        t[y] += signal.correlate(t[in1], in2, mode=mode)
        t[y] += signal.correlate(in1, t[in2], mode=mode)

    @register_vjp(signal.convolve2d)
    def convolve2d(y, in1, in2, mode="full", boundary="fill", fillvalue=0):
        d[in1] += convolve_grad(d[y], in1, in2, zero_filled(mode, boundary, fillvalue), 0)
        d[in2] += convolve_grad(d[y], in1, in2, zero_filled(mode, boundary, fillvalue), 1)

    @register_jvp(signal.convolve2d)
    def convolve2d_jvp(y, in1, in2, mode="full", boundary="fill", fillvalue=0):
        t[y] += signal.convolve2d(t[in1], in2, mode=zero_filled(mode, boundary, fillvalue))
        t[y] += signal.convolve2d(in1, t[in2], mode=zero_filled(mode, boundary, fillvalue))

    @register_vjp(signal.correlate2d)
    def correlate2d(y, in1, in2, mode="full", boundary="fill", fillvalue=0):
        d[in1] += correlate2d_grad(d[y], in1, in2, zero_filled(mode, boundary, fillvalue), 0)
        d[in2] += correlate2d_grad(d[y], in1, in2, zero_filled(mode, boundary, fillvalue), 1)

    @register_jvp(signal.correlate2d)
    def correlate2d_jvp(y, in1, in2, mode="full", boundary="fill", fillvalue=0):
        t[y] += signal.correlate2d(t[in1], in2, mode=zero_filled(mode, boundary, fillvalue))
        t[y] += signal.correlate2d(in1, t[in2], mode=zero_filled(mode, boundary, fillvalue))

    @register_vjp(signal.lfilter)
    def lfilter(y, b, a, x, axis=-1, zi=None):
        d[x] += lfilter_transposed(b, a, d[y], lfilter_axis(x, axis, zi))
        d[b] += lfilter_coefficients_grad(d[y], a, x, b, lfilter_axis(x, axis, zi))
        d[a] -= lfilter_coefficients_grad(d[y], a, y, a, lfilter_axis(x, axis, zi))

    @register_jvp(signal.lfilter)
    def lfilter_jvp(y, b, a, x, axis=-1, zi=None):
        t[y] += signal.lfilter(b, a, t[x], axis=lfilter_axis(x, axis, zi))
        t[y] += signal.lfilter(t[b], a, x, axis=lfilter_axis(x, axis, zi))
        t[y] -= signal.lfilter(t[a], a, y, axis=lfilter_axis(x, axis, zi))
