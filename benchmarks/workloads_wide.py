"""The wider workloads of issue 12: scalar double loops, small-matrix recurrences, stencils,
a large elementwise loss, an LSTM, call overhead, Jacobians and the memory of a long loop.

Each program is plain NumPy code; each hand-written adjoint is what an expert writes for it
(the forward sweep keeping what the reverse sweep needs, then the reverse sweep with fused,
in-place updates and batched products). ``check_hand_written`` compares every hand-written
adjoint with central finite differences before anything is timed.
"""
import math

import numpy as np

# soft-DTW 64×64 (a scalar double loop with a soft-minimum): one copy of the program and its
# hand-written adjoint, in numba_loops.py (the numba tests read it too)
from numba_loops import soft_dtw, soft_dtw_grad


# ---- Kalman filter: 200 steps, 4-dimensional state and observation ---------------------

def kalman(F, Q, R, H, zs, x0, P0):
    x = x0
    P = P0
    total = 0.0
    for t in range(zs.shape[0]):
        x = F @ x
        P = F @ P @ F.T + Q
        y = zs[t] - H @ x
        S = H @ P @ H.T + R
        Si = np.linalg.inv(S)
        K = P @ H.T @ Si
        x = x + K @ y
        P = P - K @ H @ P
        total = total + y @ Si @ y + np.linalg.slogdet(S)[1]
    return total


def kalman_grad(F, Q, R, H, zs, x0, P0):
    """Adjoints of F, Q and R: each step's predicted state and covariance, gain and inverse
    innovation covariance are kept; the reverse sweep runs the step's adjoint equations."""
    steps = zs.shape[0]
    xs, Ps, xps, Pps, ys, Sis, Ks = [], [], [], [], [], [], []
    x, P = x0, P0
    FT, HT = F.T, H.T
    for t in range(steps):
        xs.append(x)
        Ps.append(P)
        xp = F @ x
        Pp = F @ P @ FT + Q
        y = zs[t] - H @ xp
        Si = np.linalg.inv(H @ Pp @ HT + R)
        K = Pp @ HT @ Si
        x = xp + K @ y
        P = Pp - K @ H @ Pp
        xps.append(xp)
        Pps.append(Pp)
        ys.append(y)
        Sis.append(Si)
        Ks.append(K)
    dF = np.zeros_like(F)
    dQ = np.zeros_like(Q)
    dR = np.zeros_like(R)
    dx = np.zeros_like(x0)
    dP = np.zeros_like(P0)
    for t in range(steps - 1, -1, -1):
        xp, Pp, y, Si, K = xps[t], Pps[t], ys[t], Sis[t], Ks[t]
        SiT = Si.T
        # total += y Si y + log det S
        dy = (Si + SiT) @ y + K.T @ dx
        dSi = np.outer(y, y)
        dS = SiT.copy()
        # x = xp + K y; P = Pp - K H Pp
        dxp = dx
        HPp = H @ Pp
        dK = np.outer(dx, y) - dP @ HPp.T
        dPp = dP - HT @ (K.T @ dP)
        # K = Pp H' Si
        dPp += dK @ SiT @ H
        dSi += HPp @ dK
        # Si = inv(S); S = H Pp H' + R
        dS -= SiT @ dSi @ SiT
        dPp += HT @ dS @ H
        dR += dS
        # y = z - H xp
        dxp = dxp - HT @ dy
        # Pp = F P F' + Q; xp = F x
        dQ += dPp
        dF += dPp @ F @ Ps[t].T + dPp.T @ F @ Ps[t] + np.outer(dxp, xs[t])
        dP = FT @ dPp @ F
        dx = FT @ dxp
    return dF, dQ, dR


def kalman_inputs(rng, steps=200, n=4):
    F = np.eye(n) + 0.05 * rng.standard_normal((n, n))
    A = rng.standard_normal((n, n))
    Q = 0.1 * (A @ A.T / n + np.eye(n))
    B = rng.standard_normal((n, n))
    R = 0.2 * (B @ B.T / n + np.eye(n))
    H = np.eye(n) + 0.1 * rng.standard_normal((n, n))
    zs = np.cumsum(rng.standard_normal((steps, n)) * 0.3, axis=0)
    return F, Q, R, H, zs, np.zeros(n), np.eye(n)


# ---- heat equation: 128×128 grid, 100 explicit steps, slices ----------------------------

def heat(u0, kappa, steps):
    u = u0
    for step in range(steps):
        lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
        u = u + kappa * np.pad(lap, 1, mode="constant")
    return np.sum(u * u)


def heat_grad(u0, kappa, steps):
    """Every step's Laplacian kept in one array; the reverse sweep applies the (symmetric)
    stencil to the interior of the adjoint, in place."""
    n, m = u0.shape
    laps = np.empty((steps, n - 2, m - 2))
    scratch = np.empty((n - 2, m - 2))
    u = u0.copy()
    for step in range(steps):
        lap = laps[step]
        np.add(u[:-2, 1:-1], u[2:, 1:-1], out=lap)
        lap += u[1:-1, :-2]
        lap += u[1:-1, 2:]
        lap -= 4.0 * u[1:-1, 1:-1]
        np.multiply(lap, kappa, out=scratch)
        u[1:-1, 1:-1] += scratch
    du = 2.0 * u
    dkappa = 0.0
    for step in range(steps - 1, -1, -1):
        inner = du[1:-1, 1:-1]
        dkappa += np.vdot(inner, laps[step])
        np.multiply(inner, kappa, out=scratch)
        du[1:-1, 1:-1] -= 4.0 * scratch
        du[:-2, 1:-1] += scratch
        du[2:, 1:-1] += scratch
        du[1:-1, :-2] += scratch
        du[1:-1, 2:] += scratch
    return du, dkappa


# ---- logistic regression: 10,000 samples, 100 features, L2 penalty ----------------------

def logistic(w, b, X, y, lam):
    margins = y * (X @ w + b)
    return np.mean(np.logaddexp(0.0, -margins)) + 0.5 * lam * np.sum(w * w)


def logistic_grad(w, b, X, y, lam):
    margins = y * (X @ w + b)
    # d mean(log(1 + e^-m)) / dm = -sigmoid(-m) / n, computed without overflow as e^-|m| / (1 + e^-|m|)
    e = np.exp(-np.abs(margins))
    weight = np.where(margins >= 0, e, 1.0)
    weight /= 1.0 + e
    weight *= y
    weight *= -1.0 / len(y)
    dw = X.T @ weight
    dw += lam * w
    return dw, weight.sum()


# ---- LSTM: 50 steps, batch 32, input 64, hidden 128 -------------------------------------

def lstm(Wx, Wh, b, xs, target):
    H = Wh.shape[0]
    h = np.zeros((xs.shape[1], H))
    c = np.zeros((xs.shape[1], H))
    for t in range(xs.shape[0]):
        a = xs[t] @ Wx + h @ Wh + b
        i = 1.0 / (1.0 + np.exp(-a[:, :H]))
        f = 1.0 / (1.0 + np.exp(-a[:, H:2 * H]))
        o = 1.0 / (1.0 + np.exp(-a[:, 2 * H:3 * H]))
        g = np.tanh(a[:, 3 * H:])
        c = f * c + i * g
        h = o * np.tanh(c)
    return 0.5 * np.sum((h - target) ** 2)


def lstm_grad(Wx, Wh, b, xs, target):
    """Gates of every step kept in one array (i, f, o as sigmoids, g as tanh); the reverse
    sweep only runs the recurrence, and the weight adjoints are one product each."""
    steps, batch, inputs = xs.shape
    H = Wh.shape[0]
    hs = np.zeros((steps + 1, batch, H))
    cs = np.zeros((steps + 1, batch, H))
    gates = np.empty((steps, batch, 4 * H))
    for t in range(steps):
        a = gates[t]
        np.matmul(xs[t], Wx, out=a)
        a += hs[t] @ Wh
        a += b
        sig = a[:, :3 * H]
        np.negative(sig, out=sig)
        np.exp(sig, out=sig)
        sig += 1.0
        np.reciprocal(sig, out=sig)
        np.tanh(a[:, 3 * H:], out=a[:, 3 * H:])
        i, f, o, g = a[:, :H], a[:, H:2 * H], a[:, 2 * H:3 * H], a[:, 3 * H:]
        c = cs[t + 1]
        np.multiply(f, cs[t], out=c)
        c += i * g
        np.tanh(c, out=hs[t + 1])
        hs[t + 1] *= o
    das = np.empty_like(gates)
    dh = hs[steps] - target
    dc = np.zeros((batch, H))
    for t in range(steps - 1, -1, -1):
        a = gates[t]
        i, f, o, g = a[:, :H], a[:, H:2 * H], a[:, 2 * H:3 * H], a[:, 3 * H:]
        tc = np.tanh(cs[t + 1])
        da = das[t]
        np.multiply(dh, tc, out=da[:, 2 * H:3 * H])  # d o
        tc *= tc
        np.subtract(1.0, tc, out=tc)
        tc *= o
        tc *= dh
        dc += tc
        np.multiply(dc, cs[t], out=da[:, H:2 * H])  # d f
        np.multiply(dc, g, out=da[:, :H])  # d i
        np.multiply(dc, i, out=da[:, 3 * H:])  # d g
        dc *= f
        sig = a[:, :3 * H]
        da[:, :3 * H] *= sig * (1.0 - sig)
        da[:, 3 * H:] *= 1.0 - g * g
        if t:
            dh = da @ Wh.T
    flat = das.reshape(-1, 4 * H)
    dWx = xs.reshape(-1, inputs).T @ flat
    dWh = hs[:-1].reshape(-1, H).T @ flat
    return dWx, dWh, flat.sum(axis=0)


def lstm_inputs(rng, steps=50, batch=32, inputs=64, hidden=128):
    return (rng.standard_normal((inputs, 4 * hidden)) / np.sqrt(inputs),
            rng.standard_normal((hidden, 4 * hidden)) / np.sqrt(hidden),
            rng.standard_normal(4 * hidden) * 0.1,
            rng.standard_normal((steps, batch, inputs)),
            rng.standard_normal((batch, hidden)) * 0.5)


# ---- call overhead: the seed product through np.dot, and a 10×10 product ----------------

def seed_dot(x, M):
    return np.dot(x, M)


def seed_dot_vjp(x, M, v):
    return v @ M.T, x.T @ v


def matmul_both(A, B):
    return A @ B


def matmul_both_vjp(A, B, v):
    return v @ B.T, A.T @ v


# ---- a Jacobian: R^50 -> R^50 -----------------------------------------------------------

def layer(x, W, b):
    return np.tanh(W @ x + b)


def layer_jacobian(x, W, b):
    """The closed form: diag(1 - y²) W."""
    y = np.tanh(W @ x + b)
    return (1.0 - y * y)[:, None] * W


# ---- memory: a 100,000-step scalar loop ---------------------------------------------------

def scalar_recurrence(a, x0, steps):
    x = x0
    for t in range(steps):
        x = x + a * np.sin(x)
    return x


def scalar_recurrence_grad(a, x0, steps):
    """One float per step (the state before it), in one preallocated array."""
    xs = np.empty(steps)
    x = x0
    for t in range(steps):
        xs[t] = x
        x = x + a * math.sin(x)
    da, dx = 0.0, 1.0
    for t in range(steps - 1, -1, -1):
        s = xs[t]
        da += dx * math.sin(s)
        dx *= 1.0 + a * math.cos(s)
    return da, dx


# ---- checking the hand-written adjoints -------------------------------------------------

def finite_difference_check(fn, hand, args, wrt, v=None, rng=None, eps=1e-6, rtol=1e-5):
    """None if ``hand(*args[, v])`` agrees with central differences of ``vᵀ fn`` in a random
    direction for every ``wrt`` argument, else what differs."""
    rng = rng if rng is not None else np.random.default_rng(7)
    grads = hand(*args) if v is None else hand(*args, v)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for g, position in zip(grads, wrt):
        x = args[position]
        direction = rng.standard_normal(np.shape(x)) if np.ndim(x) else float(rng.standard_normal())

        def at(step):
            moved = list(args)
            moved[position] = x + step * direction
            out = fn(*moved)
            return float(np.sum(out * v)) if v is not None else float(out)

        numeric = (at(eps) - at(-eps)) / (2 * eps)
        analytic = float(np.sum(np.asarray(g) * direction))
        if not math.isclose(numeric, analytic, rel_tol=rtol, abs_tol=rtol * 1e-3):
            return f"argument {position}: finite differences {numeric:.10g}, hand-written {analytic:.10g}"
    return None


# ---- the workloads ------------------------------------------------------------------------

UNROLLED = ("not run: jax.jit unrolls the Python loop (XLA took 5.5 minutes to compile the Kalman filter's "
            "200 steps on this machine); a lax.scan rewrite would be another program")

def workloads(seed=0):
    from workloads import Workload

    rng = np.random.default_rng(seed)
    series_x, series_y = np.cumsum(rng.standard_normal((2, 64)), axis=1)
    n, features = 10_000, 100
    X = rng.standard_normal((n, features))
    w_true = rng.standard_normal(features) / np.sqrt(features)
    labels = np.where(X @ w_true + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    x, M, v = rng.standard_normal((1, 2)), rng.standard_normal((2, 2)), rng.standard_normal((1, 2))
    A, B, V = rng.standard_normal((3, 10, 10))
    x50, W50, b50 = rng.standard_normal(50), rng.standard_normal((50, 50)) / np.sqrt(50), rng.standard_normal(50)
    return [
        Workload("soft_dtw", "soft-DTW 64×64 (scalar double loop, soft-min)", soft_dtw, soft_dtw_grad,
                 (series_x, series_y, 0.5), (0, 1), target=1.3),
        Workload("kalman", "Kalman filter, 200 steps, 4×4", kalman, kalman_grad, kalman_inputs(rng), (0, 1, 2),
                 target=1.3, jax_jit=UNROLLED),
        Workload("heat", "heat-equation stencil 128², 100 steps (slices)", heat, heat_grad,
                 (rng.standard_normal((128, 128)), 0.2, 100), (0, 1), target=1.2, jax_jit=UNROLLED),
        Workload("logistic", "logistic regression 10,000×100", logistic, logistic_grad,
                 (rng.standard_normal(features) * 0.1, 0.1, X, labels, 1e-3), (0, 1), target=1.1),
        Workload("lstm", "LSTM 50 steps, batch 32, hidden 128", lstm, lstm_grad, lstm_inputs(rng), (0, 1, 2),
                 target=1.15),
        Workload("seed_dot", "seed product via np.dot (1×2 · 2×2), srcad.adjoint(f)(x, M, v)", seed_dot,
                 seed_dot_vjp, (x, M), (0, 1), v=v, target=1.8, companion=True),
        Workload("matmul_10", "10×10 @ 10×10, both operands, cotangent v", matmul_both, matmul_both_vjp, (A, B),
                 (0, 1), v=V, target=1.4),
        Workload("jacobian_50", "jacobian(mode=\"rev\") of tanh(W x + b), ℝ⁵⁰→ℝ⁵⁰, vs the closed form", layer,
                 layer_jacobian, (x50, W50, b50), 0, target=5.0, kind="jacobian"),
    ]


def memory_workload():
    """The long scalar loop whose gradient's memory per step is measured (issue 12: ≤ 8–16 B)."""
    from workloads import Workload

    return Workload("memory_loop", "a 100,000-step scalar loop (x ← x + a·sin x)",
                    scalar_recurrence, scalar_recurrence_grad, (0.3, 0.7, 100_000), (0, 1), target=16.0)
