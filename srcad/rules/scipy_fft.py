"""Rules for ``scipy.fft``'s discrete Fourier transforms, reverse (vjp) and forward (jvp).

They are ``np.fft``'s transforms with three more keywords (``overwrite_x`` and ``workers``, which
change neither the value nor its derivative, and ``plan``, which SciPy reserves for other
backends: refused), so their adjoints are ``numpy_fft``'s (see that module for the
mathematics); a tangent is the transform of the tangent.
"""
import numpy as np

from ..errors import UnsupportedCaseError
from ..registry import (register_complex_makers, register_complex_safe, register_jvp, register_nondifferentiable,
                        register_real_results, register_standin_positions, register_vjp)
from .numpy_fft import fft_grad, fftn_grad, irfft_grad, irfftn_grad, rfft_grad, rfftn_grad, DUAL_NORM

try:
    from scipy import fft as sfft
except ImportError:  # SciPy is not a dependency of srcad
    sfft = None


def unplanned(norm, plan):
    """``norm``, after refusing a precomputed ``plan`` (another backend's object)."""
    if plan is not None:
        raise UnsupportedCaseError("srcad does not differentiate scipy.fft transforms with a precomputed plan; "
                                   "call them without plan=")
    return norm


register_nondifferentiable(unplanned, reason="it checks scipy.fft's options")


if sfft is not None:

    @register_vjp(sfft.fft)
    def fft(y, x, n=None, axis=-1, norm=None, overwrite_x=False, workers=None, *, plan=None):
        d[x] += fft_grad(d[y], x, n, axis, unplanned(norm, plan), False)

    @register_jvp(sfft.fft)
    def fft_jvp(y, x, n=None, axis=-1, norm=None, overwrite_x=False, workers=None, *, plan=None):
        t[y] += sfft.fft(t[x], n, axis, unplanned(norm, plan), workers=workers)

    @register_vjp(sfft.ifft)
    def ifft(y, x, n=None, axis=-1, norm=None, overwrite_x=False, workers=None, *, plan=None):
        d[x] += fft_grad(d[y], x, n, axis, unplanned(norm, plan), True)

    @register_jvp(sfft.ifft)
    def ifft_jvp(y, x, n=None, axis=-1, norm=None, overwrite_x=False, workers=None, *, plan=None):
        t[y] += sfft.ifft(t[x], n, axis, unplanned(norm, plan), workers=workers)

    @register_vjp(sfft.rfft)
    def rfft(y, x, n=None, axis=-1, norm=None, overwrite_x=False, workers=None, *, plan=None):
        d[x] += rfft_grad(d[y], x, n, axis, unplanned(norm, plan))

    @register_jvp(sfft.rfft)
    def rfft_jvp(y, x, n=None, axis=-1, norm=None, overwrite_x=False, workers=None, *, plan=None):
        t[y] += sfft.rfft(t[x], n, axis, unplanned(norm, plan), workers=workers)

    @register_vjp(sfft.irfft)
    def irfft(y, x, n=None, axis=-1, norm=None, overwrite_x=False, workers=None, *, plan=None):
        d[x] += irfft_grad(d[y], x, n, axis, unplanned(norm, plan))

    @register_jvp(sfft.irfft)
    def irfft_jvp(y, x, n=None, axis=-1, norm=None, overwrite_x=False, workers=None, *, plan=None):
        t[y] += sfft.irfft(t[x], n, axis, unplanned(norm, plan), workers=workers)

    @register_vjp(sfft.hfft)
    def hfft(y, x, n=None, axis=-1, norm=None, overwrite_x=False, workers=None, *, plan=None):
        d[x] += np.conjugate(irfft_grad(d[y], x, n, axis, DUAL_NORM[unplanned(norm, plan)]))

    @register_jvp(sfft.hfft)
    def hfft_jvp(y, x, n=None, axis=-1, norm=None, overwrite_x=False, workers=None, *, plan=None):
        t[y] += sfft.hfft(t[x], n, axis, unplanned(norm, plan), workers=workers)

    @register_vjp(sfft.ihfft)
    def ihfft(y, x, n=None, axis=-1, norm=None, overwrite_x=False, workers=None, *, plan=None):
        d[x] += rfft_grad(np.conjugate(d[y]), x, n, axis, DUAL_NORM[unplanned(norm, plan)])

    @register_jvp(sfft.ihfft)
    def ihfft_jvp(y, x, n=None, axis=-1, norm=None, overwrite_x=False, workers=None, *, plan=None):
        t[y] += sfft.ihfft(t[x], n, axis, unplanned(norm, plan), workers=workers)

    @register_vjp(sfft.fftn)
    def fftn(y, x, s=None, axes=None, norm=None, overwrite_x=False, workers=None, *, plan=None):
        d[x] += fftn_grad(d[y], x, s, axes, unplanned(norm, plan), False, None)

    @register_jvp(sfft.fftn)
    def fftn_jvp(y, x, s=None, axes=None, norm=None, overwrite_x=False, workers=None, *, plan=None):
        t[y] += sfft.fftn(t[x], s, axes, unplanned(norm, plan), workers=workers)

    @register_vjp(sfft.ifftn)
    def ifftn(y, x, s=None, axes=None, norm=None, overwrite_x=False, workers=None, *, plan=None):
        d[x] += fftn_grad(d[y], x, s, axes, unplanned(norm, plan), True, None)

    @register_jvp(sfft.ifftn)
    def ifftn_jvp(y, x, s=None, axes=None, norm=None, overwrite_x=False, workers=None, *, plan=None):
        t[y] += sfft.ifftn(t[x], s, axes, unplanned(norm, plan), workers=workers)

    @register_vjp(sfft.fft2)
    def fft2(y, x, s=None, axes=(-2, -1), norm=None, overwrite_x=False, workers=None, *, plan=None):
        d[x] += fftn_grad(d[y], x, s, axes, unplanned(norm, plan), False, (-2, -1))

    @register_jvp(sfft.fft2)
    def fft2_jvp(y, x, s=None, axes=(-2, -1), norm=None, overwrite_x=False, workers=None, *, plan=None):
        t[y] += sfft.fft2(t[x], s, axes, unplanned(norm, plan), workers=workers)

    @register_vjp(sfft.ifft2)
    def ifft2(y, x, s=None, axes=(-2, -1), norm=None, overwrite_x=False, workers=None, *, plan=None):
        d[x] += fftn_grad(d[y], x, s, axes, unplanned(norm, plan), True, (-2, -1))

    @register_jvp(sfft.ifft2)
    def ifft2_jvp(y, x, s=None, axes=(-2, -1), norm=None, overwrite_x=False, workers=None, *, plan=None):
        t[y] += sfft.ifft2(t[x], s, axes, unplanned(norm, plan), workers=workers)

    @register_vjp(sfft.rfftn)
    def rfftn(y, x, s=None, axes=None, norm=None, overwrite_x=False, workers=None, *, plan=None):
        d[x] += rfftn_grad(d[y], x, s, axes, unplanned(norm, plan), None)

    @register_jvp(sfft.rfftn)
    def rfftn_jvp(y, x, s=None, axes=None, norm=None, overwrite_x=False, workers=None, *, plan=None):
        t[y] += sfft.rfftn(t[x], s, axes, unplanned(norm, plan), workers=workers)

    @register_vjp(sfft.rfft2)
    def rfft2(y, x, s=None, axes=(-2, -1), norm=None, overwrite_x=False, workers=None, *, plan=None):
        d[x] += rfftn_grad(d[y], x, s, axes, unplanned(norm, plan), (-2, -1))

    @register_jvp(sfft.rfft2)
    def rfft2_jvp(y, x, s=None, axes=(-2, -1), norm=None, overwrite_x=False, workers=None, *, plan=None):
        t[y] += sfft.rfft2(t[x], s, axes, unplanned(norm, plan), workers=workers)

    @register_vjp(sfft.irfftn)
    def irfftn(y, x, s=None, axes=None, norm=None, overwrite_x=False, workers=None, *, plan=None):
        d[x] += irfftn_grad(d[y], x, s, axes, unplanned(norm, plan), None)

    @register_jvp(sfft.irfftn)
    def irfftn_jvp(y, x, s=None, axes=None, norm=None, overwrite_x=False, workers=None, *, plan=None):
        t[y] += sfft.irfftn(t[x], s, axes, unplanned(norm, plan), workers=workers)

    @register_vjp(sfft.irfft2)
    def irfft2(y, x, s=None, axes=(-2, -1), norm=None, overwrite_x=False, workers=None, *, plan=None):
        d[x] += irfftn_grad(d[y], x, s, axes, unplanned(norm, plan), (-2, -1))

    @register_jvp(sfft.irfft2)
    def irfft2_jvp(y, x, s=None, axes=(-2, -1), norm=None, overwrite_x=False, workers=None, *, plan=None):
        t[y] += sfft.irfft2(t[x], s, axes, unplanned(norm, plan), workers=workers)

    @register_vjp(sfft.fftshift)
    def fftshift(y, x, axes=None):
        d[x] += np.fft.ifftshift(d[y], axes)

    @register_jvp(sfft.fftshift)
    def fftshift_jvp(y, x, axes=None):
        t[y] += np.fft.fftshift(t[x], axes)

    @register_vjp(sfft.ifftshift)
    def ifftshift(y, x, axes=None):
        d[x] += np.fft.fftshift(d[y], axes)

    @register_jvp(sfft.ifftshift)
    def ifftshift_jvp(y, x, axes=None):
        t[y] += np.fft.ifftshift(t[x], axes)

    register_complex_safe(sfft.fft, sfft.ifft, sfft.rfft, sfft.irfft, sfft.hfft, sfft.ihfft, sfft.fftn, sfft.ifftn,
                          sfft.fft2, sfft.ifft2, sfft.rfftn, sfft.rfft2, sfft.irfftn, sfft.irfft2, sfft.fftshift,
                          sfft.ifftshift)
    register_complex_makers(sfft.fft, sfft.ifft, sfft.rfft, sfft.ihfft, sfft.fftn, sfft.ifftn, sfft.fft2, sfft.ifft2,
                            sfft.rfftn, sfft.rfft2)
    register_real_results(sfft.irfft, sfft.irfft2, sfft.irfftn, sfft.hfft)
    # their results' shapes and complex dtypes guard the rules that follow, as np.fft's do
    register_standin_positions((0,), sfft.fft, sfft.ifft, sfft.rfft, sfft.irfft, sfft.hfft, sfft.ihfft, sfft.fftn,
                               sfft.ifftn, sfft.fft2, sfft.ifft2, sfft.rfftn, sfft.rfft2, sfft.irfftn, sfft.irfft2,
                               sfft.fftshift, sfft.ifftshift)
