"""The benchmark workloads: each model as plain NumPy code (what srcad differentiates),
its hand-written adjoint (the denominator of every ratio), and its inputs.

The hand-written adjoints are what an expert writes for the same program: the forward
sweep with the program's own operations, then the reverse sweep with no bookkeeping,
fused and in-place updates, and batched products where the reverse sweep allows them.
They compute only the gradient, as ``f.adjoint`` does.
"""
import dataclasses

import numpy as np


# ---- 1. the tutorials' seed product: x (1×2) @ M (2×2)

def seed_sum(x, M):
    return np.sum(x @ M)


def seed_sum_grad(x, M):
    return M.sum(axis=1)[None, :], np.repeat(x.T, M.shape[1], axis=1)


def seed_product(x, M):
    return x @ M


def seed_product_vjp(x, M, v):
    return v @ M.T, x.T @ v


# ---- 2. a Python loop over scalars: logsumexp that tracks the largest item

def logsumexp_loop(a):
    largest = a[0]
    for i in range(len(a)):
        if a[i] > largest:
            largest = a[i]
    total = 0.0
    for i in range(len(a)):
        total = total + np.exp(a[i] - largest)
    return largest + np.log(total)


def logsumexp_loop_where(a):
    """The same program without a Python ``if`` on a value, for tracing compilers (jax.jit)."""
    largest = a[0]
    for i in range(len(a)):
        largest = np.where(a[i] > largest, a[i], largest)
    total = 0.0
    for i in range(len(a)):
        total = total + np.exp(a[i] - largest)
    return largest + np.log(total)


def logsumexp_loop_grad(a):
    n = len(a)
    largest = a[0]
    argmax = 0
    for i in range(n):
        if a[i] > largest:
            largest = a[i]
            argmax = i
    exps = [None] * n
    total = 0.0
    for i in range(n):
        e = np.exp(a[i] - largest)
        exps[i] = e
        total = total + e
    # reverse sweep: d total = 1 / total; each exp term feeds a[i] and, negated, largest
    dtotal = 1.0 / total
    da = np.zeros(n)
    dlargest = 1.0
    for i in range(n - 1, -1, -1):
        g = dtotal * exps[i]
        da[i] = g
        dlargest -= g
    da[argmax] += dlargest
    return da


# ---- 3. an MLP: batch 256, 784 -> 512 -> 10, tanh, squared loss

def mlp(W1, b1, W2, b2, x, t):
    h = np.tanh(x @ W1 + b1)
    y = h @ W2 + b2
    return 0.5 * np.sum((y - t) ** 2)


def mlp_grad(W1, b1, W2, b2, x, t):
    h = x @ W1
    h += b1
    np.tanh(h, out=h)
    r = h @ W2
    r += b2
    r -= t  # d loss / d y
    dW2 = h.T @ r
    db2 = r.sum(axis=0)
    dz = r @ W2.T
    np.multiply(h, h, out=h)  # h is not needed any more: reuse it for 1 - h²
    np.subtract(1.0, h, out=h)
    dz *= h
    return x.T @ dz, dz.sum(axis=0), dW2, db2


# ---- 4. an RNN: 50 steps, batch 16, input 32, hidden 64, tanh

def rnn(Wx, Wh, b, xs, h0):
    h = h0
    total = 0.0
    for step in range(xs.shape[0]):
        h = np.tanh(xs[step] @ Wx + h @ Wh + b)
        total = total + np.sum(h)
    return total


def rnn_grad(Wx, Wh, b, xs, h0):
    steps, batch, inputs = xs.shape
    hidden = h0.shape[1]
    hs = np.empty((steps + 1, batch, hidden))
    hs[0] = h0
    for step in range(steps):
        z = xs[step] @ Wx
        z += hs[step] @ Wh
        z += b
        np.tanh(z, out=hs[step + 1])
    # reverse sweep: per step only the recurrence; the weight adjoints are one product each
    dz = np.empty((steps, batch, hidden))
    dh = np.ones((batch, hidden))  # total sums every h
    for step in range(steps - 1, -1, -1):
        g = dz[step]
        h = hs[step + 1]
        np.multiply(h, h, out=g)
        np.subtract(1.0, g, out=g)
        g *= dh
        if step:
            dh = g @ Wh.T
            dh += 1.0
    flat_dz = dz.reshape(-1, hidden)
    dWx = xs.reshape(-1, inputs).T @ flat_dz
    dWh = hs[:-1].reshape(-1, hidden).T @ flat_dz
    return dWx, dWh, flat_dz.sum(axis=0)


# ---- 5. a small model for first-use (transform + compile) time

def small_model(W, b, xs, target):
    h = np.zeros(W.shape[1])
    loss = 0.0
    for t in range(xs.shape[0]):
        z = xs[t] @ W + b + 0.5 * h
        h = np.tanh(z)
        err = h - target[t]
        loss = loss + np.sum(err ** 2)
    penalty = 0.01 * np.sum(W * W)
    scale = np.exp(-np.mean(np.abs(b)))
    return loss * scale + penalty


def small_model_inputs(rng):
    return (rng.standard_normal((8, 6)) * 0.3, rng.standard_normal(6), rng.standard_normal((5, 8)),
            rng.standard_normal((5, 6)))


@dataclasses.dataclass
class Workload:
    key: str
    title: str
    function: object  # the NumPy program srcad differentiates
    hand: object  # hand-written adjoint: (*args[, v]) -> gradients (a tuple when wrt is)
    args: tuple
    wrt: object  # int or tuple of ints
    v: object = None  # the cotangent, or None for a scalar output
    target: float = None  # srcad ÷ hand-written
    jit_function: object = None  # a traceable rewrite where the program branches on values
    companion: bool = False  # srcad is called as srcad.adjoint(f)(*args, v), not f.adjoint(*args, v)
    kind: str = "gradient"  # or "jacobian": hand is the closed-form Jacobian, systems compute a full one
    jax_jit: str = ""  # why jax.jit is not run (it unrolls Python loops: minutes of compiling), or ""

    @property
    def wrt_tuple(self):
        return self.wrt if isinstance(self.wrt, tuple) else (self.wrt,)


def workloads(seed=0):
    rng = np.random.default_rng(seed)
    x, M, v = rng.standard_normal((1, 2)), rng.standard_normal((2, 2)), rng.standard_normal((1, 2))
    a = rng.standard_normal(200)
    W1 = rng.standard_normal((784, 512)) / np.sqrt(784)
    b1 = rng.standard_normal(512) * 0.1
    W2 = rng.standard_normal((512, 10)) / np.sqrt(512)
    b2 = rng.standard_normal(10) * 0.1
    images = rng.standard_normal((256, 784))
    labels = rng.standard_normal((256, 10))
    Wx = rng.standard_normal((32, 64)) / np.sqrt(32)
    Wh = rng.standard_normal((64, 64)) / np.sqrt(64) * 0.5
    bh = rng.standard_normal(64) * 0.1
    xs = rng.standard_normal((50, 16, 32))
    h0 = rng.standard_normal((16, 64)) * 0.1
    return [
        Workload("seed_sum", "seed product x@M, summed (1×2 @ 2×2)", seed_sum, seed_sum_grad, (x, M), (0, 1),
                 target=3.0),
        Workload("seed_vjp", "seed product x@M, cotangent v (1×2 @ 2×2)", seed_product, seed_product_vjp,
                 (x, M), (0, 1), v=v, target=3.0),
        Workload("scalar_loop", "Python loop over 200 scalars (max-tracking logsumexp)", logsumexp_loop,
                 logsumexp_loop_grad, (a,), 0, target=1.5, jit_function=logsumexp_loop_where),
        Workload("mlp", "MLP 784→512→10, batch 256, tanh, squared loss", mlp, mlp_grad,
                 (W1, b1, W2, b2, images, labels), (0, 1, 2, 3), target=1.10),
        Workload("rnn", "RNN 50 steps, batch 16, hidden 64, tanh", rnn, rnn_grad, (Wx, Wh, bh, xs, h0), (0, 1, 2),
                 target=1.25),
    ]
