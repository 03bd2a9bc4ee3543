"""A two-layer perceptron with softmax cross-entropy, parameters in a dict as in course code."""
import numpy as np

from realistic import Case


def softmax_cross_entropy(scores, y):
    shifted = scores - np.max(scores, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    n = scores.shape[0]
    return -np.sum(log_probs[np.arange(n), y]) / n


def mlp_loss(params, X, y, reg=1e-3):
    W1, b1 = params["W1"], params["b1"]
    W2, b2 = params["W2"], params["b2"]
    hidden = np.maximum(0, X @ W1 + b1)
    scores = hidden @ W2 + b2
    data_loss = softmax_cross_entropy(scores, y)
    reg_loss = 0.5 * reg * (np.sum(W1 * W1) + np.sum(W2 * W2))
    return data_loss + reg_loss


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def mlp_gelu_loss(W1, b1, W2, X, y):
    scores = gelu(X @ W1 + b1) @ W2
    probs = np.exp(scores - scores.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    onehot = np.eye(W2.shape[1])[y]
    return -np.mean(np.sum(onehot * np.log(probs), axis=1))


def cases():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((7, 4))
    y = rng.integers(0, 3, 7)
    params = {"W1": rng.standard_normal((4, 5)), "b1": rng.standard_normal(5) + 0.5,
              "W2": rng.standard_normal((5, 3)), "b2": rng.standard_normal(3)}
    return [
        Case("mlp.relu_dict_params", mlp_loss, (params, X, y), 0),
        Case("mlp.gelu_onehot", mlp_gelu_loss, (params["W1"], params["b1"], params["W2"], X, y), (0, 1, 2)),
    ]
