"""Neural-network layers in the course-assignment style: each forward returns ``(out, cache)``
and each backward takes ``(dout, cache)``."""
import numpy as np

from realistic import Case


def affine_forward(x, w, b):
    out = x.reshape(x.shape[0], -1) @ w + b
    cache = (x, w, b)
    return out, cache


def affine_backward(dout, cache):
    x, w, b = cache
    dx = (dout @ w.T).reshape(x.shape)
    dw = x.reshape(x.shape[0], -1).T @ dout
    db = np.sum(dout, axis=0)
    return dx, dw, db


def tanh_forward(x):
    out = np.tanh(x)
    cache = out
    return out, cache


def tanh_backward(dout, cache):
    return dout * (1 - cache ** 2)


def affine_tanh_forward(x, w, b):
    a, fc_cache = affine_forward(x, w, b)
    out, act_cache = tanh_forward(a)
    cache = (fc_cache, act_cache)
    return out, cache


def affine_tanh_backward(dout, cache):
    fc_cache, act_cache = cache
    da = tanh_backward(dout, act_cache)
    return affine_backward(da, fc_cache)


def batchnorm_forward(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=0)
    xc = x - mu
    var = np.mean(xc ** 2, axis=0)
    std = np.sqrt(var + eps)
    xn = xc / std
    out = gamma * xn + beta
    return out, (xn, gamma, std)


def two_layer_output(x, w1, b1, w2, b2):
    h, cache1 = affine_tanh_forward(x, w1, b1)
    out, cache2 = affine_forward(h, w2, b2)
    return out, (cache1, cache2)


def stacked_loss(w1, x, b1, w2, b2):
    scores, caches = two_layer_output(x, w1, b1, w2, b2)
    return np.sum(scores ** 2) / x.shape[0]


def batchnorm_loss(gamma, x, beta):
    out, cache = batchnorm_forward(x, gamma, beta)
    return np.sum(np.sin(out) * np.arange(out.shape[1]))


def gradient_penalty(w1, x, b1, w2, b2):
    """The squared norm of the hand-written input gradient (a double-backprop regulariser)."""
    scores, (cache1, cache2) = two_layer_output(x, w1, b1, w2, b2)
    dscores = 2 * scores / x.shape[0]
    dh, dw2, db2 = affine_backward(dscores, cache2)
    dx, dw1, db1 = affine_tanh_backward(dh, cache1)
    return np.sum(dx ** 2) + 0.1 * np.sum(dw1 ** 2)


def cases():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 2, 3))
    w1, b1 = rng.standard_normal((6, 5)) * 0.5, rng.standard_normal(5)
    w2, b2 = rng.standard_normal((5, 3)) * 0.5, rng.standard_normal(3)
    xb = rng.standard_normal((6, 3))
    return [
        Case("layers.stacked_loss", stacked_loss, (w1, x, b1, w2, b2), (0, 2, 3)),
        Case("layers.output_with_cache", two_layer_output, (x, w1, b1, w2, b2), (0, 1)),
        Case("layers.batchnorm", batchnorm_loss, (rng.uniform(0.5, 1.5, 3), xb, rng.standard_normal(3)), (0, 1, 2)),
        Case("layers.gradient_penalty", gradient_penalty, (w1, x, b1, w2, b2), (0, 1)),
    ]
