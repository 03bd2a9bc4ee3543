"""Image filters: separable blur with convolve2d, Sobel edge energy, FFT low-pass."""
import numpy as np
from scipy.signal import convolve2d

from realistic import Case

SOBEL_X = np.array([[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]])


def edge_energy(img, kernel):
    blurred = convolve2d(img, kernel, mode="same", boundary="fill")
    gx = convolve2d(blurred, SOBEL_X, mode="valid")
    gy = convolve2d(blurred, SOBEL_X.T, mode="valid")
    return np.sum(np.sqrt(gx ** 2 + gy ** 2 + 1e-3))


def fft_lowpass(img, cutoff):
    F = np.fft.fft2(img)
    ky = np.fft.fftfreq(img.shape[0])[:, None]
    kx = np.fft.fftfreq(img.shape[1])[None, :]
    mask = np.exp(-(kx ** 2 + ky ** 2) / cutoff ** 2)
    out = np.real(np.fft.ifft2(F * mask))
    return np.sum(out ** 2) + np.sum(np.abs(np.fft.rfft2(img)) ** 2) * 1e-3


def total_variation(img, lam):
    dx = np.diff(img, axis=1)
    dy = np.diff(img, axis=0)
    return lam * (np.sum(np.sqrt(dx ** 2 + 0.01)) + np.sum(np.sqrt(dy ** 2 + 0.01))) + 0.5 * np.sum(img ** 2)


def cases():
    rng = np.random.default_rng(12)
    img = rng.standard_normal((7, 6))
    return [
        Case("images.convolve2d_edges", edge_energy, (img, rng.uniform(0, 1, (3, 3))), (0, 1)),
        Case("images.fft_lowpass", fft_lowpass, (img, 0.3), 0),
        Case("images.fft_lowpass_cutoff", fft_lowpass, (img, 0.3), (0, 1)),
        Case("images.total_variation", total_variation, (img, 0.7), (0, 1)),
    ]
