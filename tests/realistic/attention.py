"""A softmax attention block as written in NumPy transformer code."""
import numpy as np

from realistic import Case


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def layer_norm(x, g, b, eps=1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    variance = np.var(x, axis=-1, keepdims=True)
    return g * (x - mean) / np.sqrt(variance + eps) + b


def attention(q, k, v, mask):
    return softmax(q @ k.T / np.sqrt(q.shape[-1]) + mask) @ v


def mha(x, c_attn_w, c_proj_w, n_head):
    qkv = x @ c_attn_w
    qkv_heads = list(map(lambda t: np.split(t, n_head, axis=-1), np.split(qkv, 3, axis=-1)))
    causal_mask = (1 - np.tri(x.shape[0], dtype=x.dtype)) * -1e10
    out_heads = [attention(q, k, v, causal_mask) for q, k, v in zip(*qkv_heads)]
    x = np.hstack(out_heads)
    return x @ c_proj_w


def block_loss(x, c_attn_w, c_proj_w, g, b):
    h = x + mha(layer_norm(x, g, b), c_attn_w, c_proj_w, 2)
    return np.sum(np.tanh(h))


def single_head(x, Wq, Wk, Wv):
    Q, K, V = x @ Wq, x @ Wk, x @ Wv
    scores = Q @ K.T / np.sqrt(K.shape[1])
    weights = softmax(scores, axis=1)
    return np.sum((weights @ V) ** 2)


def cases():
    rng = np.random.default_rng(14)
    T, D = 4, 4
    x = rng.standard_normal((T, D))
    return [
        Case("attention.gpt2_block", block_loss, (x, rng.standard_normal((D, 3 * D)) * 0.5, rng.standard_normal((D, D)) * 0.5,
                                                   rng.uniform(0.5, 1.5, D), rng.standard_normal(D) * 0.1), (0, 1, 3)),
        Case("attention.single_head", single_head, (x, rng.standard_normal((D, D)), rng.standard_normal((D, D)), rng.standard_normal((D, D))), (0, 1, 3)),
    ]
