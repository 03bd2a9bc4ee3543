"""Rules for ``np.fft``, reverse (vjp) and forward (jvp).

The transforms are linear, so a tangent is the transform of the tangent. A cotangent of a
complex value ``z = a + ib`` is ``∂L/∂a + i ∂L/∂b`` (L real); with that convention the adjoint
of a complex-linear map is its conjugate transpose, and the cotangent of a real input is the
real part of the complex one. The conjugate transpose of ``fft`` with ``norm`` is ``ifft``
with the dual norm (``"backward"`` ↔ ``"forward"``, ``"ortho"`` ↔ itself), and a length ``n``
that pads or cuts the input is undone by cutting or padding the cotangent.

``rfft`` keeps half the spectrum: its adjoint zero-pads the cotangent to the full spectrum.
``irfft`` reads a half spectrum as a Hermitian one, which counts the interior frequencies
twice and ignores the imaginary parts of the first and (for even n) last: its adjoint is the
``rfft`` of the cotangent, interior frequencies doubled. ``rfftn``/``rfft2`` halve the last
transformed axis only (``fftn`` over the others), and ``irfftn``/``irfft2`` undo that: their
adjoints are the same with the half axis last. ``hfft`` is ``irfft`` of the conjugated input,
``ihfft`` the conjugate of ``rfft``, both with the dual norm (NumPy defines them so); the
adjoint of a conjugation conjugates the cotangent.

srcad's other rules differentiate real values: keep complex values between the transforms
and ``np.abs``, ``np.real``, ``np.imag``, ``np.conj`` (real-in, real-out programs).
"""
import builtins

import gast
import numpy as np

from ..registry import register_complex_safe, register_jvp, register_nondifferentiable, register_vjp
from .numpy_core import unit_phase
from .numpy_elementwise import imag_cotangent

DUAL_NORM = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def resized(g, length, axis):
    """``g`` cut or zero-padded to ``length`` along ``axis``."""
    g = np.asarray(g)
    axis = axis % g.ndim
    have = g.shape[axis]
    if have >= length:
        return np.take(g, np.arange(length), axis=axis)
    return np.pad(g, [(0, length - have) if i == axis else (0, 0) for i in range(g.ndim)])


def like_input(g, x):
    """The cotangent of ``x``: its real part when ``x`` is real."""
    return g if np.iscomplexobj(x) else np.real(g)


def transform_axes(x, s, axes, default):
    """The axes an n-dimensional transform runs over (NumPy's rules for ``s`` and ``axes``)."""
    if axes is not None:
        return tuple(a % np.ndim(x) for a in axes)
    if s is not None:
        return tuple(range(np.ndim(x) - len(s), np.ndim(x)))
    return tuple(range(np.ndim(x))) if default is None else tuple(a % np.ndim(x) for a in default)


register_nondifferentiable(transform_axes, reason="it computes axis numbers")


def fft_grad(g, x, n, axis, norm, inverse):
    """The adjoint of ``x`` in ``fft(x, n, axis, norm)`` (``ifft`` when ``inverse``)."""
    if inverse:
        back = np.fft.fft(g, axis=axis, norm=DUAL_NORM[norm])
    else:
        back = np.fft.ifft(g, axis=axis, norm=DUAL_NORM[norm])
    return like_input(resized(back, np.shape(x)[axis], axis), x)


def fftn_grad(g, x, s, axes, norm, inverse, default_axes):
    """The adjoint of ``x`` in ``fftn(x, s, axes, norm)`` (``ifftn`` when ``inverse``)."""
    axes = transform_axes(x, s, axes, default_axes)
    if inverse:
        back = np.fft.fftn(g, axes=axes, norm=DUAL_NORM[norm])
    else:
        back = np.fft.ifftn(g, axes=axes, norm=DUAL_NORM[norm])
    for axis in axes:
        back = resized(back, np.shape(x)[axis], axis)
    return like_input(back, x)


def rfft_grad(g, x, n, axis, norm):
    """The adjoint of ``x`` in ``rfft(x, n, axis, norm)``: the full spectrum's adjoint of the
    half spectrum zero-padded."""
    length = np.shape(x)[axis] if n is None else n
    back = np.fft.ifft(resized(g, length, axis), axis=axis, norm=DUAL_NORM[norm])
    return np.real(resized(back, np.shape(x)[axis], axis))


def rfftn_grad(g, x, s, axes, norm, default_axes):
    """The adjoint of ``x`` in ``rfftn(x, s, axes, norm)``: the half spectrum zero-padded along
    the last transformed axis, then the adjoint of the full ``fftn``."""
    axes = transform_axes(x, s, axes, default_axes)
    length = np.shape(x)[axes[-1]] if s is None else s[-1]
    back = np.fft.ifftn(resized(g, length, axes[-1]), axes=axes, norm=DUAL_NORM[norm])
    for axis in axes:
        back = resized(back, np.shape(x)[axis], axis)
    return np.real(back)


def hermitian_weights(half, n, axis, ndim):
    """``1, 2, ..., 2, 1`` (last 1 only for even ``n``): how often ``irfft`` counts each of the
    ``half`` frequencies, shaped to broadcast along ``axis``."""
    weights = np.full(half, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    shape = [1] * ndim
    shape[axis] = half
    return np.reshape(weights, shape)


register_nondifferentiable(hermitian_weights, reason="it builds constant weights")


def irfft_grad(g, x, n, axis, norm):
    """The adjoint of the half spectrum ``x`` in ``irfft(x, n, axis, norm)``."""
    length = 2 * (np.shape(x)[axis] - 1) if n is None else n
    half = np.fft.rfft(g, axis=axis, norm=DUAL_NORM[norm])
    half = half * hermitian_weights(half.shape[axis], length, axis % np.ndim(half), np.ndim(half))
    return like_input(resized(half, np.shape(x)[axis], axis), x)


def irfftn_grad(g, x, s, axes, norm, default_axes):
    """The adjoint of the half spectrum ``x`` in ``irfftn(x, s, axes, norm)``: ``rfftn`` of the
    cotangent with the Hermitian weights along the last axis, cut or padded to ``x``."""
    axes = transform_axes(x, s, axes, default_axes)
    length = 2 * (np.shape(x)[axes[-1]] - 1) if s is None else s[-1]
    half = np.fft.rfftn(g, axes=axes, norm=DUAL_NORM[norm])
    last = axes[-1] % np.ndim(half)
    half = half * hermitian_weights(half.shape[last], length, last, np.ndim(half))
    for axis in axes:
        half = resized(half, np.shape(x)[axis], axis)
    return like_input(half, x)


@register_vjp(np.fft.fft)
def fft(y, a, n=None, axis=-1, norm=None, out=None):
    d[a] += fft_grad(d[y], a, n, axis, norm, False)


@register_jvp(np.fft.fft)
def fft_jvp(y, a, n=None, axis=-1, norm=None, out=None):
    t[y] += np.fft.fft(t[a], n, axis, norm)


@register_vjp(np.fft.ifft)
def ifft(y, a, n=None, axis=-1, norm=None, out=None):
    d[a] += fft_grad(d[y], a, n, axis, norm, True)


@register_jvp(np.fft.ifft)
def ifft_jvp(y, a, n=None, axis=-1, norm=None, out=None):
    t[y] += np.fft.ifft(t[a], n, axis, norm)


@register_vjp(np.fft.rfft)
def rfft(y, a, n=None, axis=-1, norm=None, out=None):
    d[a] += rfft_grad(d[y], a, n, axis, norm)


@register_jvp(np.fft.rfft)
def rfft_jvp(y, a, n=None, axis=-1, norm=None, out=None):
    t[y] += np.fft.rfft(t[a], n, axis, norm)


@register_vjp(np.fft.irfft)
def irfft(y, a, n=None, axis=-1, norm=None, out=None):
    d[a] += irfft_grad(d[y], a, n, axis, norm)


@register_jvp(np.fft.irfft)
def irfft_jvp(y, a, n=None, axis=-1, norm=None, out=None):
    t[y] += np.fft.irfft(t[a], n, axis, norm)


@register_vjp(np.fft.hfft)
def hfft(y, a, n=None, axis=-1, norm=None, out=None):
    d[a] += np.conjugate(irfft_grad(d[y], a, n, axis, DUAL_NORM[norm]))


@register_jvp(np.fft.hfft)
def hfft_jvp(y, a, n=None, axis=-1, norm=None, out=None):
    t[y] += np.fft.hfft(t[a], n, axis, norm)


@register_vjp(np.fft.ihfft)
def ihfft(y, a, n=None, axis=-1, norm=None, out=None):
    d[a] += rfft_grad(np.conjugate(d[y]), a, n, axis, DUAL_NORM[norm])


@register_jvp(np.fft.ihfft)
def ihfft_jvp(y, a, n=None, axis=-1, norm=None, out=None):
    t[y] += np.fft.ihfft(t[a], n, axis, norm)


@register_vjp(np.fft.fftn)
def fftn(y, a, s=None, axes=None, norm=None, out=None):
    d[a] += fftn_grad(d[y], a, s, axes, norm, False, None)


@register_jvp(np.fft.fftn)
def fftn_jvp(y, a, s=None, axes=None, norm=None, out=None):
    t[y] += np.fft.fftn(t[a], s, axes, norm)


@register_vjp(np.fft.ifftn)
def ifftn(y, a, s=None, axes=None, norm=None, out=None):
    d[a] += fftn_grad(d[y], a, s, axes, norm, True, None)


@register_jvp(np.fft.ifftn)
def ifftn_jvp(y, a, s=None, axes=None, norm=None, out=None):
    t[y] += np.fft.ifftn(t[a], s, axes, norm)


@register_vjp(np.fft.fft2)
def fft2(y, a, s=None, axes=(-2, -1), norm=None, out=None):
    d[a] += fftn_grad(d[y], a, s, axes, norm, False, (-2, -1))


@register_jvp(np.fft.fft2)
def fft2_jvp(y, a, s=None, axes=(-2, -1), norm=None, out=None):
    t[y] += np.fft.fft2(t[a], s, axes, norm)


@register_vjp(np.fft.ifft2)
def ifft2(y, a, s=None, axes=(-2, -1), norm=None, out=None):
    d[a] += fftn_grad(d[y], a, s, axes, norm, True, (-2, -1))


@register_jvp(np.fft.ifft2)
def ifft2_jvp(y, a, s=None, axes=(-2, -1), norm=None, out=None):
    t[y] += np.fft.ifft2(t[a], s, axes, norm)


@register_vjp(np.fft.rfftn)
def rfftn(y, a, s=None, axes=None, norm=None, out=None):
    d[a] += rfftn_grad(d[y], a, s, axes, norm, None)


@register_jvp(np.fft.rfftn)
def rfftn_jvp(y, a, s=None, axes=None, norm=None, out=None):
    t[y] += np.fft.rfftn(t[a], s, axes, norm)


@register_vjp(np.fft.rfft2)
def rfft2(y, a, s=None, axes=(-2, -1), norm=None, out=None):
    d[a] += rfftn_grad(d[y], a, s, axes, norm, (-2, -1))


@register_jvp(np.fft.rfft2)
def rfft2_jvp(y, a, s=None, axes=(-2, -1), norm=None, out=None):
    t[y] += np.fft.rfft2(t[a], s, axes, norm)


@register_vjp(np.fft.irfftn)
def irfftn(y, a, s=None, axes=None, norm=None, out=None):
    d[a] += irfftn_grad(d[y], a, s, axes, norm, None)


@register_jvp(np.fft.irfftn)
def irfftn_jvp(y, a, s=None, axes=None, norm=None, out=None):
    t[y] += np.fft.irfftn(t[a], s, axes, norm)


@register_vjp(np.fft.irfft2)
def irfft2(y, a, s=None, axes=(-2, -1), norm=None, out=None):
    d[a] += irfftn_grad(d[y], a, s, axes, norm, (-2, -1))


@register_jvp(np.fft.irfft2)
def irfft2_jvp(y, a, s=None, axes=(-2, -1), norm=None, out=None):
    t[y] += np.fft.irfft2(t[a], s, axes, norm)


@register_vjp(np.fft.fftshift)
def fftshift(y, x, axes=None):
    d[x] += np.fft.ifftshift(d[y], axes)


@register_jvp(np.fft.fftshift)
def fftshift_jvp(y, x, axes=None):
    t[y] += np.fft.fftshift(t[x], axes)


@register_vjp(np.fft.ifftshift)
def ifftshift(y, x, axes=None):
    d[x] += np.fft.fftshift(d[y], axes)


@register_jvp(np.fft.ifftshift)
def ifftshift_jvp(y, x, axes=None):
    t[y] += np.fft.ifftshift(t[x], axes)


# the rules above, and those of srcad's other modules that are right for complex values too
register_complex_safe(np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft, np.fft.hfft, np.fft.ihfft, np.fft.fftn, np.fft.ifftn, np.fft.fft2,
                      np.fft.ifft2, np.fft.rfftn, np.fft.rfft2, np.fft.irfftn, np.fft.irfft2,
                      np.fft.fftshift, np.fft.ifftshift, np.real, np.imag, np.abs, builtins.abs,
                      np.conjugate, gast.Add, gast.Sub, gast.USub, gast.UAdd, np.sum,
                      # the derivatives above call these, and second order differentiates them
                      # through their source: they are linear, so that is right for complex values
                      resized, like_input, fft_grad, fftn_grad, rfft_grad, irfft_grad, rfftn_grad, irfftn_grad,
                      # helpers of np.abs and np.imag with rules right for complex values
                      unit_phase, imag_cotangent,
                      # linear maps with real coefficients act on real and imaginary parts alike
                      # (each checked in tests/test_complex_values.py)
                      np.asarray, np.array, np.copy, np.reshape, np.transpose, np.ravel, np.concatenate, np.stack,
                      np.vstack, np.hstack, np.squeeze, np.expand_dims, np.take, np.flip, np.roll, np.cumsum,
                      np.mean, np.diff, np.trace, np.diag, np.swapaxes, np.moveaxis, np.broadcast_to, np.tile,
                      np.repeat)
