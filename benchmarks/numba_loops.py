"""Scalar-loop programs with srcad's numba backend, against a hand-written NumPy adjoint.

    python benchmarks/numba_loops.py [--quick]

Soft-DTW 64x64 (a double loop of scalar soft-minimums), RK4 on the Lorenz system (1,000
steps of a helper called four times per step) and a Kalman filter's log-likelihood (200
predict/update steps of a 4x4 state, with ``np.linalg.inv`` and ``det``). Everything runs in one process,
single-threaded; every gradient is checked against the hand-written adjoint before it is
timed; a time is the best of several rounds of calls. Printed: times as ratios to the
hand-written NumPy adjoint (lower is faster), and the first call's time (numba compiling).
JAX jit runs too where it is installed.
"""
import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # before NumPy and numba are imported

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import timeit  # noqa: E402

_STARTED = time.perf_counter()  # before NumPy and srcad are imported
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's srcad
import srcad  # noqa: E402


# ---- soft-DTW ----------------------------------------------------------------------------

def softmin3(a, b, c, gamma):
    m = min(a, b, c)
    s = np.exp(-(a - m) / gamma) + np.exp(-(b - m) / gamma) + np.exp(-(c - m) / gamma)
    return m - gamma * np.log(s)


def soft_dtw(x, y, gamma):
    n = x.shape[0]
    m = y.shape[0]
    R = np.full((n + 1, m + 1), 1e10)
    R[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            d = (x[i - 1] - y[j - 1]) ** 2
            R[i, j] = d + softmin3(R[i - 1, j], R[i, j - 1], R[i - 1, j - 1], gamma)
    return R[n, m]


def soft_dtw_grad(x, y, gamma):
    """Hand-written: the forward recursion keeps each cell's soft-min weights; the reverse
    recursion sends each cell's adjoint to its three predecessors and to x, y."""
    n, m = x.shape[0], y.shape[0]
    R = np.full((n + 1, m + 1), 1e10)
    R[0, 0] = 0.0
    W = np.zeros((n + 1, m + 1, 3))
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            a, b, c = R[i - 1, j], R[i, j - 1], R[i - 1, j - 1]
            lo = min(a, b, c)
            ea, eb, ec = math.exp(-(a - lo) / gamma), math.exp(-(b - lo) / gamma), math.exp(-(c - lo) / gamma)
            s = ea + eb + ec
            W[i, j, 0], W[i, j, 1], W[i, j, 2] = ea / s, eb / s, ec / s
            R[i, j] = (x[i - 1] - y[j - 1]) ** 2 + lo - gamma * math.log(s)
    dR = np.zeros((n + 1, m + 1))
    dR[n, m] = 1.0
    dx, dy = np.zeros(n), np.zeros(m)
    for i in range(n, 0, -1):
        for j in range(m, 0, -1):
            g = dR[i, j]
            dR[i - 1, j] += g * W[i, j, 0]
            dR[i, j - 1] += g * W[i, j, 1]
            dR[i - 1, j - 1] += g * W[i, j, 2]
            dd = 2.0 * (x[i - 1] - y[j - 1]) * g
            dx[i - 1] += dd
            dy[j - 1] -= dd
    return dx, dy


# ---- RK4 on the Lorenz system ------------------------------------------------------------

def lorenz(s, sigma, rho, beta):
    dx = sigma * (s[1] - s[0])
    dy = s[0] * (rho - s[2]) - s[1]
    dz = s[0] * s[1] - beta * s[2]
    return np.array([dx, dy, dz])


def rk4(s0, params, h, steps):
    s = s0
    for t in range(steps):
        k1 = lorenz(s, params[0], params[1], params[2])
        k2 = lorenz(s + 0.5 * h * k1, params[0], params[1], params[2])
        k3 = lorenz(s + 0.5 * h * k2, params[0], params[1], params[2])
        k4 = lorenz(s + h * k3, params[0], params[1], params[2])
        s = s + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return np.sum(s * s)


def _lorenz_vjp(g, s, sigma, rho, beta):
    """gᵀ J of ``lorenz`` at ``s``: the adjoint of the state and of (sigma, rho, beta)."""
    x, y, z = s
    ds = np.array([-sigma * g[0] + (rho - z) * g[1] + y * g[2],
                   sigma * g[0] - g[1] + x * g[2],
                   -x * g[1] - beta * g[2]])
    return ds, np.array([g[0] * (y - x), g[1] * x, -g[2] * z])


def rk4_grad(s0, params, h, steps):
    """Hand-written: keep each step's four stage inputs; pull back through the stages."""
    sigma, rho, beta = params
    s = s0
    stages = []
    for t in range(steps):
        k1 = lorenz(s, sigma, rho, beta)
        u2 = s + 0.5 * h * k1
        k2 = lorenz(u2, sigma, rho, beta)
        u3 = s + 0.5 * h * k2
        k3 = lorenz(u3, sigma, rho, beta)
        u4 = s + h * k3
        k4 = lorenz(u4, sigma, rho, beta)
        stages.append((s, u2, u3, u4))
        s = s + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    ds = 2.0 * s
    dp = np.zeros(3)
    for s, u2, u3, u4 in reversed(stages):
        dk4 = h / 6.0 * ds
        a4, p4 = _lorenz_vjp(dk4, u4, sigma, rho, beta)
        dk3 = h / 3.0 * ds + h * a4
        a3, p3 = _lorenz_vjp(dk3, u3, sigma, rho, beta)
        dk2 = h / 3.0 * ds + 0.5 * h * a3
        a2, p2 = _lorenz_vjp(dk2, u2, sigma, rho, beta)
        dk1 = h / 6.0 * ds + 0.5 * h * a2
        a1, p1 = _lorenz_vjp(dk1, s, sigma, rho, beta)
        ds = ds + a4 + a3 + a2 + a1
        dp = dp + p4 + p3 + p2 + p1
    return ds, dp


# ---- Kalman filter ------------------------------------------------------------------------

def kalman(F, Q, R, H, x0, P0, ys):
    """The log-likelihood (up to a constant) of observations ``ys`` under a linear-Gaussian
    model: transition F, noise Q, observation H, noise R."""
    x = x0
    P = P0
    ll = 0.0
    for t in range(ys.shape[0]):
        x = F @ x
        P = F @ P @ F.T + Q
        v = ys[t] - H @ x
        S = H @ P @ H.T + R
        Si = np.linalg.inv(S)
        K = P @ H.T @ Si
        x = x + K @ v
        P = P - K @ H @ P
        ll = ll - 0.5 * (v @ Si @ v + np.log(np.linalg.det(S)))
    return ll


def kalman_grad(F, Q, R, H, x0, P0, ys):
    """Hand-written: keep each step's state, covariances, innovation, inverse and gain; pull
    back through update and predict (general matrices: no symmetry assumed)."""
    x, P = x0, P0
    tape = []
    ll = 0.0
    for t in range(ys.shape[0]):
        xp = F @ x
        Pp = F @ P @ F.T + Q
        v = ys[t] - H @ xp
        S = H @ Pp @ H.T + R
        Si = np.linalg.inv(S)
        K = Pp @ H.T @ Si
        tape.append((x, P, Pp, v, Si, K))
        x = xp + K @ v
        P = Pp - K @ H @ Pp
        ll = ll - 0.5 * (v @ Si @ v + np.log(np.linalg.det(S)))
    gF, gQ, gR = np.zeros_like(F), np.zeros_like(Q), np.zeros_like(R)
    gx, gP = np.zeros_like(x0), np.zeros_like(P0)
    for x, P, Pp, v, Si, K in reversed(tape):
        gSi = -0.5 * np.outer(v, v)
        gv = -0.5 * (Si + Si.T) @ v + K.T @ gx
        gS = -0.5 * Si.T
        HPp = H @ Pp
        gK = -gP @ HPp.T + np.outer(gx, v)
        gPp = gP - (K @ H).T @ gP + gK @ Si.T @ H
        gSi += (Pp @ H.T).T @ gK
        gS += -Si.T @ gSi @ Si.T
        gPp += H.T @ gS @ H
        gR += gS
        gxp = gx - H.T @ gv
        gF += gPp @ F @ P.T + gPp.T @ F @ P + np.outer(gxp, x)
        gQ += gPp
        gx = F.T @ gxp
        gP = F.T @ gPp @ F
    return gF, gQ, gR

def kalman_args(steps=200, seed=1):
    """A constant-velocity model in 2-D: a 4x4 state, 2 observed positions."""
    rng = np.random.default_rng(seed)
    dt = 0.1
    F = np.eye(4) + dt * np.array([[0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 0], [0, 0, 0, 0.0]])
    Q = 0.01 * np.eye(4) + 0.001 * np.ones((4, 4))
    R = 0.1 * np.eye(2)
    H = np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0]])
    x0, P0 = np.zeros(4), np.eye(4)
    ys = np.cumsum(rng.standard_normal((steps, 2)) * 0.3, axis=0)
    return F, Q, R, H, x0, P0, ys


# ---- JAX, where installed ----------------------------------------------------------------

def _jax_versions():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    def jsoft_dtw(x, y, gamma):
        n, m = x.shape[0], y.shape[0]
        R = jnp.full((n + 1, m + 1), 1e10).at[0, 0].set(0.0)

        def row(i, R):
            def cell(j, R):
                r = jnp.stack([R[i - 1, j], R[i, j - 1], R[i - 1, j - 1]])
                soft = -gamma * jax.scipy.special.logsumexp(-r / gamma)
                return R.at[i, j].set((x[i - 1] - y[j - 1]) ** 2 + soft)
            return jax.lax.fori_loop(1, m + 1, cell, R)

        return jax.lax.fori_loop(1, n + 1, row, R)[n, m]

    def jrk4(s0, params, h, steps):
        def f(s):
            return jnp.stack([params[0] * (s[1] - s[0]), s[0] * (params[1] - s[2]) - s[1],
                              s[0] * s[1] - params[2] * s[2]])

        def step(s, _):
            k1 = f(s)
            k2 = f(s + 0.5 * h * k1)
            k3 = f(s + 0.5 * h * k2)
            k4 = f(s + h * k3)
            return s + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4), None

        s, _ = jax.lax.scan(step, s0, None, length=steps)
        return jnp.sum(s * s)

    def jkalman(F, Q, R, H, x0, P0, ys):
        def step(carry, y):
            x, P, ll = carry
            x = F @ x
            P = F @ P @ F.T + Q
            v = y - H @ x
            S = H @ P @ H.T + R
            Si = jnp.linalg.inv(S)
            K = P @ H.T @ Si
            ll = ll - 0.5 * (v @ Si @ v + jnp.log(jnp.linalg.det(S)))
            return (x + K @ v, P - K @ H @ P, ll), None

        (_, _, ll), _ = jax.lax.scan(step, (x0, P0, 0.0), ys)
        return ll

    return {"soft-DTW": jax.jit(jax.grad(jsoft_dtw, (0, 1))),
            "RK4": jax.jit(jax.grad(jrk4, (0, 1)), static_argnums=(3,)),
            "Kalman": jax.jit(jax.grad(jkalman, (0, 1, 2)))}


# ---- measuring ---------------------------------------------------------------------------

def best_time(call, rounds, min_time):
    """The least CPU time of ``call`` over ``rounds`` (each at least ``min_time`` long): on a
    loaded machine, wall time also counts the time other processes hold the CPU."""
    timer = timeit.Timer(call, timer=time.process_time)
    number = 1
    while True:
        elapsed = timer.timeit(number)
        if elapsed >= min_time:
            break
        number = max(number * 2, int(number * min_time / max(elapsed, 1e-9) * 1.2))
    return min(timer.timeit(number) / number for _ in range(rounds))


def workloads():
    """(title, program, hand-written adjoint, arguments, wrt, JAX key) of each workload."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(64), rng.standard_normal(64)
    s0, params = np.array([1.0, 1.0, 1.0]), np.array([10.0, 28.0, 8.0 / 3.0])
    return [("soft-DTW 64x64", soft_dtw, soft_dtw_grad, (x, y, 0.1), (0, 1), "soft-DTW"),
            ("RK4 Lorenz, 1,000 steps", rk4, rk4_grad, (s0, params, 0.001, 1000), (0, 1), "RK4"),
            ("Kalman, 200 steps, 4x4", kalman, kalman_grad, kalman_args(), (0, 1, 2), "Kalman")]


def check_against_finite_differences(fn, grads, args, wrt, eps=1e-6):
    """Central differences of ``fn`` in two random directions against ``grads``."""
    rng = np.random.default_rng(1)
    for _ in range(2):
        u = {k: rng.standard_normal(np.shape(args[k])) for k in wrt}

        def at(t):
            return fn(*[a + t * u[k] if k in u else a for k, a in enumerate(args)])

        numeric = (at(eps) - at(-eps)) / (2 * eps)
        analytic = sum(np.vdot(g, u[k]) for g, k in zip(grads, wrt))
        assert abs(analytic - numeric) <= 1e-5 * (1 + abs(numeric)), (fn.__name__, analytic, numeric)


def first_call(title):
    """This process's import time and first call of the numba gradient of workload ``title``
    (numba compiling, or loading from ``SRCAD_CACHE_DIR``), as one line of JSON."""
    import json

    import numba  # noqa: F401 - imported before the clock starts, counted in the process's time

    for name, fn, _, call_args, wrt, _ in workloads():
        if name == title:
            start = time.perf_counter()
            grad = srcad.grad(fn, wrt=wrt, backend="numba")
            grad(*call_args)
            print(json.dumps({"first call (s)": time.perf_counter() - start,
                              "process until then (s)": time.perf_counter() - _STARTED}))


def compile_times():
    """Each workload's first call in a fresh process, twice, with one new ``SRCAD_CACHE_DIR``:
    the first compiles, the second loads numba's cache."""
    import json
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as cache_dir:
        env = dict(os.environ, SRCAD_CACHE_DIR=cache_dir)
        for title, *_ in workloads():
            runs = [json.loads(subprocess.run([sys.executable, __file__, "--first-call", title], env=env, check=True,
                                              capture_output=True, text=True).stdout.splitlines()[-1])
                    for _ in range(2)]
            print(f"{title}: first process {runs[0]['first call (s)']:.1f} s "
                  f"(process {runs[0]['process until then (s)']:.1f} s); second process "
                  f"{runs[1]['first call (s)']:.2f} s (process {runs[1]['process until then (s)']:.1f} s)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter rounds")
    parser.add_argument("--compile-times", action="store_true",
                        help="first calls in a first and a second process sharing a new SRCAD_CACHE_DIR")
    parser.add_argument("--first-call", metavar="WORKLOAD", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.first_call:
        return first_call(args.first_call)
    if args.compile_times:
        return compile_times()
    rounds, min_time = (3, 0.05) if args.quick else (7, 0.2)
    jax_fns = _jax_versions()
    print(f"numpy {np.__version__}" + (f", numba {__import__('numba').__version__}"
                                        if __import__("importlib").util.find_spec("numba") else ", no numba")
          + (f", jax {__import__('jax').__version__}" if jax_fns else ", JAX not installed"))
    rows = []
    for title, fn, hand, call_args, wrt, jax_key in workloads():
        expected = hand(*call_args)
        check_against_finite_differences(fn, expected, call_args, wrt)
        numpy_grad = srcad.grad(fn, wrt=wrt)
        numba_grad = srcad.grad(fn, wrt=wrt, backend="numba")
        start = time.perf_counter()
        got = numba_grad(*call_args)
        first = time.perf_counter() - start
        candidates = {"srcad NumPy": numpy_grad, "srcad numba": numba_grad}
        if jax_fns:
            jgrad = jax_fns[jax_key]
            candidates["JAX jit"] = lambda *a, jgrad=jgrad: [g.block_until_ready() for g in jgrad(*a)]
        for name, g in candidates.items():
            for a, b in zip(g(*call_args) if name != "srcad numba" else got, expected):
                np.testing.assert_allclose(np.asarray(a), b, rtol=1e-8, atol=1e-10, err_msg=f"{title}: {name}")
        times = {"hand": [], **{name: [] for name in candidates}}
        calls = {"hand": hand, **candidates}
        for _ in range(rounds):  # alternating: the machine's load falls on every column alike
            for name, g in calls.items():
                times[name].append(best_time(lambda: g(*call_args), 1, min_time))
        base = min(times["hand"])
        row = {"workload": title, "hand (ms)": base * 1e3}
        row.update({name: min(times[name]) / base for name in candidates})
        row["numba first call (s)"] = first
        rows.append(row)
    keys = list(dict.fromkeys(k for r in rows for k in r))
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join(f"{r[k]:.4g}" if isinstance(r.get(k), float) else str(r.get(k, "-"))
                                for k in keys) + " |")


if __name__ == "__main__":
    main()
