"""A vanilla RNN and an LSTM, each a step helper called in a loop over time."""
import numpy as np

from realistic import Case


def rnn_step_forward(x, prev_h, Wx, Wh, b):
    next_h = np.tanh(x @ Wx + prev_h @ Wh + b)
    cache = (x, prev_h, Wx, Wh, next_h)
    return next_h, cache


def rnn_loss(Wh, x, h0, Wx, b):
    N, T, D = x.shape
    h = h0
    hs = []
    for t in range(T):
        h, _ = rnn_step_forward(x[:, t, :], h, Wx, Wh, b)
        hs.append(h)
    H = np.stack(hs, axis=1)
    return np.sum(H ** 2) / N


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def lstm_step(x, h, c, Wx, Wh, b):
    a = x @ Wx + h @ Wh + b
    H = h.shape[1]
    i = sigmoid(a[:, :H])
    f = sigmoid(a[:, H:2 * H])
    o = sigmoid(a[:, 2 * H:3 * H])
    g = np.tanh(a[:, 3 * H:])
    next_c = f * c + i * g
    next_h = o * np.tanh(next_c)
    return next_h, next_c


def lstm_loss(Wx, Wh, b, xs, target):
    N = xs.shape[1]
    H = Wh.shape[0]
    h = np.zeros((N, H))
    c = np.zeros((N, H))
    for x in xs:
        h, c = lstm_step(x, h, c, Wx, Wh, b)
    return 0.5 * np.sum((h - target) ** 2)


def cases():
    rng = np.random.default_rng(4)
    N, T, D, H = 2, 4, 3, 3
    x = rng.standard_normal((N, T, D))
    rnn_args = (rng.standard_normal((H, H)) * 0.4, x, rng.standard_normal((N, H)),
                rng.standard_normal((D, H)) * 0.4, rng.standard_normal(H) * 0.1)
    lstm_args = (rng.standard_normal((D, 4 * H)) * 0.4, rng.standard_normal((H, 4 * H)) * 0.4,
                 rng.standard_normal(4 * H) * 0.1, rng.standard_normal((T, N, D)), rng.standard_normal((N, H)))
    return [
        Case("recurrent.rnn", rnn_loss, rnn_args, (0, 1, 3)),
        Case("recurrent.lstm", lstm_loss, lstm_args, (0, 1, 2)),
    ]
