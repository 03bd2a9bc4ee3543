"""Loop workloads: srcad's generated NumPy adjoint against a hand-written NumPy adjoint.

    python benchmarks/loops_profile.py [--quick] [--profile NAME] [--show NAME]

Soft-DTW 64x64 (a scalar double loop of soft-minimums), a Kalman filter (200 steps, 4x4
matrices), a heat-equation stencil (128x128, 100 steps of slices), and the memory a
100,000-step scalar loop's gradient keeps per step. Everything runs in one process with
single-threaded BLAS; every hand-written adjoint is checked against central finite
differences and srcad's gradient against it before anything is timed. The two are timed
alternately (round after round), and the ratio srcad / hand-written of the best rounds is
printed (lower is faster). ``--profile NAME`` prints cProfile's view of srcad's gradient of
one workload; ``--show NAME`` prints its generated adjoint.
"""
import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # before NumPy is imported

import argparse  # noqa: E402
import cProfile  # noqa: E402
import math  # noqa: E402
import pstats  # noqa: E402
import sys  # noqa: E402
import timeit  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's srcad
import srcad  # noqa: E402


# The programs and their hand-written adjoints are make bench's (one copy of each):
# soft-DTW in numba_loops.py, the Kalman filter and the heat equation in workloads_wide.py.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from numba_loops import soft_dtw, soft_dtw_grad  # noqa: E402
from workloads_wide import heat, heat_grad, kalman, kalman_grad, kalman_inputs  # noqa: E402


# ---- a long scalar loop (memory) ---------------------------------------------------------

def scalar_loop(x, n):
    s = x
    for i in range(n):
        s = np.sin(s) * 0.9 + 0.1
    return s


def scalar_loop_grad(x, n):
    s = x
    cs = []
    for i in range(n):
        cs.append(math.cos(s))
        s = math.sin(s) * 0.9 + 0.1
    g = 1.0
    for c in reversed(cs):
        g = g * 0.9 * c
    return g


# ---- checking and timing -----------------------------------------------------------------

def finite_difference_check(fn, hand, args, wrt, seed=0, eps=1e-6, rtol=1e-5):
    """The hand-written adjoint against central differences in a random direction."""
    rng = np.random.default_rng(seed)
    grads = hand(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    dirs = [rng.standard_normal(np.shape(args[i])) for i in wrt]
    plus, minus = list(args), list(args)
    for i, u in zip(wrt, dirs):
        plus[i], minus[i] = args[i] + eps * u, args[i] - eps * u
    numeric = (fn(*plus) - fn(*minus)) / (2 * eps)
    analytic = sum(float(np.sum(g * u)) for g, u in zip(grads, dirs))
    assert abs(numeric - analytic) <= 1e-7 + rtol * max(abs(numeric), abs(analytic), 1), (numeric, analytic)


def workloads():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(64), rng.standard_normal(64)
    u0 = np.zeros((128, 128))
    u0[40:80, 50:90] = 1.0
    u0 += 0.1 * rng.standard_normal(u0.shape)
    return {
        "soft-DTW": ("soft-DTW 64x64", soft_dtw, soft_dtw_grad, (x, y, 0.1), (0, 1)),
        "kalman": ("Kalman filter, 200 steps, 4x4", kalman, kalman_grad, kalman_inputs(rng), (0, 1, 2)),
        "heat": ("heat equation 128x128, 100 steps", heat, heat_grad, (u0, 0.1, 100), (0, 1)),
    }


def alternate(calls, rounds, min_time):
    """Best time per call of each of ``calls``, timed round after round in turn."""
    numbers = []
    for call in calls:
        number, timer = 1, timeit.Timer(call)
        while (elapsed := timer.timeit(number)) < min_time / 4:
            number = max(number * 2, int(number * min_time / 4 / max(elapsed, 1e-9)))
        numbers.append(number)
    best = [math.inf] * len(calls)
    for _ in range(rounds):
        for k, (call, number) in enumerate(zip(calls, numbers)):
            best[k] = min(best[k], timeit.Timer(call).timeit(number) / number)
    return best


def memory_per_step(steps=100_000):
    """Bytes the gradient of a ``steps``-step scalar loop holds at its peak, per step."""
    grad = srcad.grad(scalar_loop)
    grad(0.3, steps)  # compiled outside the measurement
    tracemalloc.start()
    grad(0.3, steps)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter rounds")
    parser.add_argument("--profile", choices=["soft-DTW", "kalman", "heat"])
    parser.add_argument("--show", choices=["soft-DTW", "kalman", "heat"])
    args = parser.parse_args()
    rounds, min_time = (3, 0.1) if args.quick else (7, 0.3)
    table = workloads()
    for key, (title, fn, hand, call_args, wrt) in table.items():
        if args.profile not in (None, key) or args.show not in (None, key):
            continue
        finite_difference_check(fn, hand, call_args, wrt)
        grad = srcad.grad(fn, wrt=wrt)
        for a, b in zip(grad(*call_args), hand(*call_args)):
            np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10)
        if args.show:
            made = srcad.differentiable(fn, wrt=wrt)
            made.adjoint(*call_args)  # the source shown is the one specialised on these shapes
            print(made.adjoint_source)
            continue
        if args.profile:
            profiler = cProfile.Profile()
            profiler.runcall(lambda: [grad(*call_args) for _ in range(5)])
            pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
            continue
        t_srcad, t_hand = alternate([lambda: grad(*call_args), lambda: hand(*call_args)], rounds, min_time)
        print(f"{title:36s} hand {t_hand * 1e3:8.3f} ms  srcad {t_srcad * 1e3:8.3f} ms  "
              f"ratio {t_srcad / t_hand:5.2f}")
    if args.profile is None and args.show is None:
        finite_difference_check(scalar_loop, scalar_loop_grad, (0.3, 1000), (0,))
        np.testing.assert_allclose(srcad.grad(scalar_loop)(0.3, 1000), scalar_loop_grad(0.3, 1000), rtol=1e-9)
        print(f"scalar loop, 100,000 steps: {memory_per_step():.1f} B per step at the peak (tracemalloc)")


if __name__ == "__main__":
    main()
