"""Checkpointing's memory/time trade: the adjoint of explicit time stepping
``u = u + dt * f(u)`` over a 1,000-float state, with and without ``srcad.checkpointed``.

    python benchmarks/checkpointing.py            # the table, and benchmarks/checkpointing.png
    python benchmarks/checkpointing.py --quick    # smaller loops

Peak memory is tracemalloc's peak during one gradient call (after a first call compiled the
code); time is the best of a few calls without tracemalloc. Segment length "√n" is the
default ``ceil(sqrt(n))``; the ratios are to the plain loop's adjoint of the same n.
"""
import argparse
import os
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import srcad  # noqa: E402
from srcad.checkpointing import segment_length  # noqa: E402


def f(u):
    return np.sin(u) - 0.1 * u


def stepping(u, dt, n, k):
    for t in srcad.checkpointed(range(n), segment=k):
        u = u + dt * f(u)
    return np.sum(u * u)


def stepping_plain(u, dt, n, k):
    for t in range(n):
        u = u + dt * f(u)
    return np.sum(u * u)


def measure(fn, u, n, k, repeats):
    grad = srcad.grad(fn)
    grad(u, 1e-3, n, k)  # compiles
    tracemalloc.start()
    grad(u, 1e-3, n, k)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        grad(u, 1e-3, n, k)
        best = min(best, time.perf_counter() - start)
    return peak, best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="loops of up to 5,000 steps")
    args = parser.parse_args()
    steps = [1000, 2000, 5000] if args.quick else [1000, 5000, 20000]
    u = np.linspace(0.0, 1.0, 1000)
    rows = []
    for n in steps:
        plain_peak, plain_time = measure(stepping_plain, u, n, None, 3)
        rows.append(("plain loop", n, "plain loop", plain_peak, plain_time, 1.0, 1.0))
        for kind, k in (("segments of √n", None), ("segments of 4√n", 4 * segment_length(n, None))):
            peak, seconds = measure(stepping, u, n, k, 3)
            rows.append((kind, n, segment_length(n, k), peak, seconds, peak / plain_peak, seconds / plain_time))
        assert np.array_equal(srcad.grad(stepping)(u, 1e-3, n, None), srcad.grad(stepping_plain)(u, 1e-3, n, None))
    print("| steps | segment length | peak memory | time | memory ratio | time ratio |")
    print("|---:|---:|---:|---:|---:|---:|")
    for _, n, k, peak, seconds, memory_ratio, time_ratio in rows:
        print(f"| {n:,} | {k} | {peak / 2 ** 20:.2f} MiB | {seconds * 1e3:.0f} ms | "
              f"{memory_ratio:.3f} | {time_ratio:.2f} |")
    plot(rows)


def plot(rows):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot")
        return
    fig, (memory, seconds) = plt.subplots(1, 2, figsize=(10, 4))
    for kind in dict.fromkeys(r[0] for r in rows):
        chosen = [r for r in rows if r[0] == kind]
        memory.plot([r[1] for r in chosen], [r[3] / 2 ** 20 for r in chosen], "o-", label=kind)
        seconds.plot([r[1] for r in chosen], [r[4] for r in chosen], "o-", label=kind)
    memory.set(xscale="log", yscale="log", xlabel="steps", ylabel="peak memory (MiB)",
               title="adjoint peak memory, 1,000-float state")
    seconds.set(xscale="log", yscale="log", xlabel="steps", ylabel="seconds", title="adjoint time")
    memory.legend()
    seconds.legend()
    fig.tight_layout()
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "checkpointing.png")
    fig.savefig(path, dpi=100)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
