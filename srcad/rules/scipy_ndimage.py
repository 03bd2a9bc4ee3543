"""Rules for ``scipy.ndimage``'s linear filters, reverse (vjp) and forward (jvp): ``correlate``,
``convolve``, their 1-D forms, ``uniform_filter(1d)`` and ``gaussian_filter(1d)``.

Each filter extends its input past the edges (the boundary ``mode``), then correlates the
extension with a kernel over the input's size: ``y = correlate(pad(x), w, "valid")``, with
``pad`` the ``np.pad`` mode that copies the same elements. ``mode='reflect'`` or ``'nearest'``
makes the filter's adjoint not the filter with a flipped kernel: the exact adjoint convolves
the cotangent with the kernel over the full size, then sums each padded copy back into the
element it copies (``pad_grad``, np.pad's adjoint). ``convolve`` is ``correlate`` with the
kernel flipped and the origin moved; the uniform and Gaussian filters correlate with their
kernel along each axis in turn. A tangent is the filter of the tangent (``cval`` is a constant:
0 there); the kernel of ``correlate``/``convolve`` is differentiated too, the sizes and widths
of the others (``size``, ``sigma``) are not. Options srcad does not differentiate (a mode per
axis, ``axes``, an ``output`` that is not a float type) are refused.
"""
import numpy as np

from ..errors import UnsupportedCaseError
from ..registry import register_jvp, register_nondifferentiable, register_vjp
from .numpy_padding import pad_grad

try:
    from scipy import ndimage, signal
except ImportError:  # SciPy is not a dependency of srcad
    ndimage = signal = None

#: ndimage's boundary modes -> the mode of np.pad that extends an array the same way
PAD_MODES = {"reflect": "symmetric", "grid-mirror": "symmetric", "mirror": "reflect", "nearest": "edge",
             "wrap": "wrap", "grid-wrap": "wrap", "constant": "constant", "grid-constant": "constant"}


def filter_mode(mode, output, axes=None):
    """``mode``, after refusing the options srcad does not differentiate."""
    if not isinstance(mode, str) or mode not in PAD_MODES:
        raise UnsupportedCaseError(f"srcad differentiates scipy.ndimage's filters with one boundary mode of "
                                   f"{', '.join(PAD_MODES)}, not mode={mode!r}")
    if axes is not None:
        raise UnsupportedCaseError("srcad does not differentiate scipy.ndimage's filters with axes; filter over "
                                   "all axes, or call the 1-D filter along each axis you want")
    if output is not None and not (isinstance(output, type) and np.issubdtype(output, np.floating)):
        raise UnsupportedCaseError("srcad differentiates scipy.ndimage's filters with output=None or a float "
                                   f"type, not output={output!r}")
    return mode


def origins_of(origin, ndim, axis=None):
    """One origin per axis: ``origin`` broadcast, or given for ``axis`` only (the 1-D filters)."""
    if axis is None:
        return [int(o) for o in np.broadcast_to(origin, (ndim,))]
    return [int(origin) if i == axis % ndim else 0 for i in range(ndim)]


def flipped_origins(shape, origins):
    """``convolve(x, w, origin)`` is ``correlate(x, flip(w), flipped_origins)``: the centre of
    an even-sized kernel moves by one."""
    return [-o - (1 - n % 2) for n, o in zip(shape, origins)]


def along(kernel, axis, ndim):
    """A 1-D kernel as an ``ndim``-D one along ``axis``."""
    return np.reshape(kernel, [np.size(kernel) if i == axis % ndim else 1 for i in range(ndim)])


def box_kernels(size, ndim):
    """The kernels of ``uniform_filter``, one per axis."""
    return [np.ones(int(n)) / int(n) for n in np.broadcast_to(size, (ndim,))]


def gaussian_kernels(sigma, order, truncate, radius, ndim):
    """The correlation kernels of ``gaussian_filter``, one per axis: each axis's filter applied
    to a unit impulse, reversed (SciPy's own kernel, through its public functions). An axis
    SciPy skips (sigma ~ 0) gets the identity."""
    kernels = []
    for s, o, r in zip(np.broadcast_to(sigma, (ndim,)), np.broadcast_to(order, (ndim,)),
                       np.broadcast_to(np.asarray(radius, object), (ndim,))):
        half = int(truncate * float(s) + 0.5) if r is None else int(r)
        impulse = np.zeros(2 * half + 1)
        impulse[half] = 1.0
        identity = float(s) <= 1e-15
        kernels.append(np.ones(1) if identity else
                       ndimage.gaussian_filter1d(impulse, float(s), order=int(o), mode="constant",
                                                 truncate=truncate, radius=r)[::-1])
    return kernels


register_nondifferentiable(origins_of, flipped_origins, box_kernels, gaussian_kernels,
                           reason="it computes a filter's constant kernel or offsets")


def pad_widths(shape, origins):
    """np.pad's widths that extend an array for a kernel of ``shape`` centred at ``origins``."""
    return [(n // 2 + o, n - 1 - n // 2 - o) for n, o in zip(shape, origins)]


def extended(x, shape, origins, mode, cval):
    """``x`` extended past its edges as the filter extends it in ``mode``."""
    widths = pad_widths(shape, origins)
    if PAD_MODES[mode] == "constant":
        return np.pad(x, widths, mode="constant", constant_values=cval)
    return np.pad(x, widths, mode=PAD_MODES[mode])


def correlate_input_grad(g, weights, origins, mode):
    """The adjoint of ``x`` in ``correlate(pad(x), weights, "valid")``."""
    full = signal.convolve(g, weights, "full")  # the adjoint of the valid correlation
    return pad_grad(full, pad_widths(np.shape(weights), origins), PAD_MODES[mode], "even")


def correlate_weights_grad(g, x, weights, origins, mode, cval):
    """The adjoint of ``weights`` in ``correlate(pad(x), weights, "valid")``."""
    return signal.correlate(extended(x, np.shape(weights), origins, mode, cval), g, "valid")


def separable_grad(g, kernels, origins, mode):
    """The adjoint of the filters along each axis in turn (the last one's adjoint first)."""
    ndim = len(kernels)
    for axis in range(ndim - 1, -1, -1):
        g = correlate_input_grad(g, along(kernels[axis], axis, ndim), origins_of(origins[axis], ndim, axis), mode)
    return g


if ndimage is not None:

    @register_vjp(ndimage.correlate)
    def correlate(y, input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
        origins = origins_of(origin, np.ndim(input))
        d[input] += correlate_input_grad(d[y], weights, origins, filter_mode(mode, output, axes))
        d[weights] += correlate_weights_grad(d[y], input, weights, origins, filter_mode(mode, output, axes), cval)

    @register_jvp(ndimage.correlate)
    def correlate_jvp(y, input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
        t[y] += ndimage.correlate(t[input], weights, output, filter_mode(mode, output, axes), 0.0, origin)
        t[y] += ndimage.correlate(input, t[weights], output, filter_mode(mode, output, axes), cval, origin)

    @register_vjp(ndimage.convolve)
    def convolve(y, input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
        origins = flipped_origins(np.shape(weights), origins_of(origin, np.ndim(input)))
        d[input] += correlate_input_grad(d[y], np.flip(weights), origins, filter_mode(mode, output, axes))
        d[weights] += np.flip(correlate_weights_grad(d[y], input, np.flip(weights), origins,
                                                     filter_mode(mode, output, axes), cval))

    @register_jvp(ndimage.convolve)
    def convolve_jvp(y, input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
        t[y] += ndimage.convolve(t[input], weights, output, filter_mode(mode, output, axes), 0.0, origin)
        t[y] += ndimage.convolve(input, t[weights], output, filter_mode(mode, output, axes), cval, origin)

    @register_vjp(ndimage.correlate1d)
    def correlate1d(y, input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
        kernel = along(weights, axis, np.ndim(input))
        origins = origins_of(origin, np.ndim(input), axis)
        d[input] += correlate_input_grad(d[y], kernel, origins, filter_mode(mode, output))
        d[weights] += np.reshape(correlate_weights_grad(d[y], input, kernel, origins, filter_mode(mode, output), cval),
                                 np.shape(weights))

    @register_jvp(ndimage.correlate1d)
    def correlate1d_jvp(y, input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
        t[y] += ndimage.correlate1d(t[input], weights, axis, output, filter_mode(mode, output), 0.0, origin)
        t[y] += ndimage.correlate1d(input, t[weights], axis, output, filter_mode(mode, output), cval, origin)

    @register_vjp(ndimage.convolve1d)
    def convolve1d(y, input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
        kernel = along(np.flip(weights), axis, np.ndim(input))
        origins = flipped_origins(np.shape(kernel), origins_of(origin, np.ndim(input), axis))
        d[input] += correlate_input_grad(d[y], kernel, origins, filter_mode(mode, output))
        d[weights] += np.flip(np.reshape(correlate_weights_grad(d[y], input, kernel, origins,
                                                                filter_mode(mode, output), cval), np.shape(weights)))

    @register_jvp(ndimage.convolve1d)
    def convolve1d_jvp(y, input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
        t[y] += ndimage.convolve1d(t[input], weights, axis, output, filter_mode(mode, output), 0.0, origin)
        t[y] += ndimage.convolve1d(input, t[weights], axis, output, filter_mode(mode, output), cval, origin)

    @register_vjp(ndimage.uniform_filter1d)
    def uniform_filter1d(y, input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
        d[input] += correlate_input_grad(d[y], along(box_kernels(size, 1)[0], axis, np.ndim(input)),
                                         origins_of(origin, np.ndim(input), axis), filter_mode(mode, output))

    @register_jvp(ndimage.uniform_filter1d)
    def uniform_filter1d_jvp(y, input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
        t[y] += ndimage.uniform_filter1d(t[input], size, axis, output, filter_mode(mode, output), 0.0, origin)

    @register_vjp(ndimage.uniform_filter)
    def uniform_filter(y, input, size=3, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
        d[input] += separable_grad(d[y], box_kernels(size, np.ndim(input)), origins_of(origin, np.ndim(input)),
                                   filter_mode(mode, output, axes))

    @register_jvp(ndimage.uniform_filter)
    def uniform_filter_jvp(y, input, size=3, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
        t[y] += ndimage.uniform_filter(t[input], size, output, filter_mode(mode, output, axes), 0.0, origin)

    @register_vjp(ndimage.gaussian_filter1d)
    def gaussian_filter1d(y, input, sigma, axis=-1, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0,
                          *, radius=None):
        kernel = along(gaussian_kernels(sigma, order, truncate, radius, 1)[0], axis, np.ndim(input))
        d[input] += correlate_input_grad(d[y], kernel, origins_of(0, np.ndim(input), axis), filter_mode(mode, output))

    @register_jvp(ndimage.gaussian_filter1d)
    def gaussian_filter1d_jvp(y, input, sigma, axis=-1, order=0, output=None, mode="reflect", cval=0.0,
                              truncate=4.0, *, radius=None):
        t[y] += ndimage.gaussian_filter1d(t[input], sigma, axis, order, output, filter_mode(mode, output), 0.0,
                                          truncate, radius=radius)

    @register_vjp(ndimage.gaussian_filter)
    def gaussian_filter(y, input, sigma, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0, *,
                        radius=None, axes=None):
        d[input] += separable_grad(d[y], gaussian_kernels(sigma, order, truncate, radius, np.ndim(input)),
                                   origins_of(0, np.ndim(input)), filter_mode(mode, output, axes))

    @register_jvp(ndimage.gaussian_filter)
    def gaussian_filter_jvp(y, input, sigma, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0, *,
                            radius=None, axes=None):
        t[y] += ndimage.gaussian_filter(t[input], sigma, order, output, filter_mode(mode, output, axes), 0.0,
                                        truncate, radius=radius)
