"""Benchmarks: srcad against a hand-written NumPy adjoint, autograd, PyTorch, JAX and tangent-ad.

    make bench            # or: python benchmarks/run.py [--quick] [--only mlp,lstm] [--systems hand,srcad]
    SRCAD_BENCH_QUICK=1   # the same as --quick: a few short rounds, no fresh processes

The workloads are in ``workloads.py`` and ``workloads_wide.py`` (issue 12's), the peers in
``systems.py`` (one missing or unable to run a program shows n/a, with the reason under Notes),
the report in ``report.py``. All systems run in one process. Every hand-written adjoint is
checked against central finite differences, and every system's gradient against the
hand-written adjoint, before anything is timed. Each call is timed timeit-style (a number of
calls chosen so one measurement lasts ``--min-time``, garbage collection off) in
alternating rounds, so drifts of the machine hit every system alike; a system's time is
its best round. Results are ratios to the hand-written adjoint, written to
``benchmarks/RESULTS.md`` and plotted in ``benchmarks/results.png``.
"""
import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # before NumPy is imported: one BLAS thread everywhere
if hasattr(os, "sched_setaffinity") and os.environ.get("SRCAD_BENCH_PIN", "1") == "1":
    # JAX (XLA) ignores the thread variables and sizes its pools by the CPUs it may use:
    # one CPU for the whole process keeps every system single-threaded.
    os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import timeit  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.append(os.path.dirname(HERE))  # srcad from this checkout when it is not installed

import systems  # noqa: E402
import workloads  # noqa: E402
import workloads_wide  # noqa: E402

from report import SLOW_CALL, command, fmt_time, machine, plot, write_report  # noqa: E402
VERY_SLOW_CALL = 1.0  # seconds: calls slower than this (eager JAX on long loops) are timed once


def timer_for(call):
    return timeit.Timer(call)


def calibrate(call, min_time):
    """The number of calls whose total lasts at least ``min_time`` (timeit's autorange, scaled)."""
    timer = timer_for(call)
    number = 1
    while True:
        elapsed = timer.timeit(number)
        if elapsed >= min_time:
            return number, elapsed / number
        number = max(number * 2, int(number * min_time / max(elapsed, 1e-9) * 1.2))


def check(grads, expected, label):
    """None if ``grads`` match the hand-written ones, else a description of the mismatch."""
    if len(grads) != len(expected):
        return f"{label}: {len(grads)} gradients, expected {len(expected)}"
    for i, (g, e) in enumerate(zip(grads, expected)):
        g = np.asarray(g)
        if g.shape != e.shape:
            return f"{label}: gradient {i} has shape {g.shape}, expected {e.shape}"
        if not np.allclose(g, e, rtol=1e-7, atol=1e-10):
            return f"{label}: gradient {i} differs from the hand-written one by up to {np.max(np.abs(g - e)):.3g}"
    return None


def check_hand_written(w):
    """None if the hand-written adjoint agrees with central finite differences, else why not."""
    if w.kind == "jacobian":
        rng = np.random.default_rng(3)
        x = w.args[w.wrt_tuple[0]]
        direction, eps = rng.standard_normal(np.shape(x)), 1e-6

        def at(step):
            args = list(w.args)
            args[w.wrt_tuple[0]] = x + step * direction
            return w.function(*args)

        numeric = (at(eps) - at(-eps)) / (2 * eps)
        if not np.allclose(w.hand(*w.args) @ direction, numeric, rtol=1e-5, atol=1e-8):
            return "the closed-form Jacobian differs from finite differences"
        return None
    return workloads_wide.finite_difference_check(w.function, w.hand, w.args, w.wrt_tuple, w.v)


def bench_workload(w, chosen, rounds, min_time):
    """Per system: ('time', seconds) or ('skipped', why) or ('wrong', why)."""
    results, calls = {}, {}
    expected = None
    problem = check_hand_written(w)
    if problem is not None:
        raise AssertionError(f"{w.key}: the hand-written adjoint is wrong: {problem}")
    for system in chosen:
        try:
            call, to_numpy = system.prepare(w)
            grads = to_numpy(call())  # also compiles, for the systems that do
        except systems.Unavailable as exc:
            results[system.key] = ("skipped", str(exc))
            continue
        except Exception as exc:  # a system that cannot run the program is reported, not fatal
            results[system.key] = ("skipped", f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
            continue
        if expected is None:
            expected = tuple(np.asarray(g) for g in grads)  # the hand-written adjoint comes first
        problem = check(grads, expected, system.label)
        if problem is not None:
            print(f"  GRADIENT MISMATCH {w.key}: {problem}")
            results[system.key] = ("wrong", problem)
            continue
        calls[system.key] = call
    plan = {}
    for key, call in calls.items():
        number, per_call = calibrate(call, min_time)
        wanted = rounds if per_call < SLOW_CALL else max(2, rounds // 3) if per_call < VERY_SLOW_CALL else 1
        plan[key] = (timer_for(call), number, wanted)
    best = {key: float("inf") for key in plan}
    keys = list(plan)
    for r in range(rounds):
        for key in keys[r % len(keys):] + keys[:r % len(keys)]:
            timer, number, wanted = plan[key]
            if r < wanted:
                best[key] = min(best[key], timer.timeit(number) / number)
    for key, seconds in best.items():
        results[key] = ("time", seconds)
    return results


# ---- first use: transform + compile

def first_use(repeats):
    import srcad
    from srcad import compile as srcad_compile

    args = workloads.small_model_inputs(np.random.default_rng(1))
    wrt = (0, 1)
    expected = srcad.differentiable(workloads.small_model, wrt=wrt).adjoint(*args)
    firsts = []
    for _ in range(repeats):
        srcad_compile._CACHE.clear()
        d = srcad.differentiable(workloads.small_model, wrt=wrt)
        start = time.perf_counter()
        grads = d.adjoint(*args)
        firsts.append(time.perf_counter() - start)
    problem = check(grads, expected, "srcad first use")
    warm = srcad.differentiable(workloads.small_model, wrt=wrt)
    warm.adjoint(*args)
    number, _ = calibrate(lambda: warm.adjoint(*args), 0.05)
    steady = min(timeit.Timer(lambda: warm.adjoint(*args)).repeat(7, number)) / number
    number, _ = calibrate(lambda: srcad.differentiable(workloads.small_model, wrt=wrt).adjoint(*args), 0.05)
    rewrap = min(timeit.Timer(lambda: srcad.differentiable(workloads.small_model, wrt=wrt).adjoint(*args))
                 .repeat(7, number)) / number
    lines = sum(1 for line in __import__("inspect").getsource(workloads.small_model).splitlines() if line.strip())
    return {"first": firsts, "steady": steady, "rewrap": rewrap, "lines": lines, "problem": problem}


def first_use_child():
    """Run in a fresh process: time the import and the first gradient of the small model."""
    start = time.perf_counter()
    import srcad

    imported = time.perf_counter()
    args = workloads.small_model_inputs(np.random.default_rng(1))
    d = srcad.differentiable(workloads.small_model, wrt=(0, 1))
    before = time.perf_counter()
    grads = d.adjoint(*args)
    first = time.perf_counter() - before
    print(json.dumps({"import": imported - start, "first": first,
                      "grads": [np.asarray(g).tolist() for g in grads]}))


def fresh_processes(repeats):
    """First use in fresh processes, with no persistent cache and with a warm one."""
    def child(env):
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--first-use-child"], env=env,
                             capture_output=True, text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    base = {k: v for k, v in os.environ.items() if k != "SRCAD_CACHE_DIR"}
    cold, filling, warm = [], [], []
    for _ in range(repeats):
        cold.append(child(base))
        cache_dir = tempfile.mkdtemp(prefix="srcad-bench-")
        try:
            env = dict(base, SRCAD_CACHE_DIR=os.path.join(cache_dir, "cache"))
            filling.append(child(env))
            warm.append(child(env))
        finally:
            shutil.rmtree(cache_dir, ignore_errors=True)
    same = all(np.array_equal(np.asarray(a), np.asarray(b)) for r in warm for a, b in zip(r["grads"], cold[0]["grads"]))
    return {"cold": cold, "filling": filling, "warm": warm, "same": same}


def jax_first_use():
    """JAX's trace + compile of the same small model, for scale (None if JAX is missing)."""
    try:
        jax, jnp = systems.JaxJit()._modules()
    except systems.Unavailable:
        return None
    args = [jnp.asarray(a) for a in workloads.small_model_inputs(np.random.default_rng(1))]
    gradient = jax.jit(jax.grad(systems.rebind(workloads.small_model, jnp), argnums=(0, 1)))
    start = time.perf_counter()
    jax.block_until_ready(gradient(*args))
    return time.perf_counter() - start


# ---- memory: a long scalar loop's gradient

def memory_per_step(w):
    """Per system (hand-written, srcad f.adjoint, srcad vjp + pullback): the peak of memory
    NumPy and Python allocate during one gradient (tracemalloc), divided by the steps; and
    what each step adds, (peak at 2N steps − peak at N) ÷ N, without the fixed part (the
    arguments' copies, the result, the frames) that the first figure spreads over the steps."""
    import srcad

    steps = w.args[-1]
    d = srcad.differentiable(w.function, wrt=w.wrt)
    calls = {systems.Hand.key: lambda *args: w.hand(*args), systems.SrcadAdjoint.key: lambda *args: d.adjoint(*args),
             systems.SrcadVjp.key: lambda *args: d.vjp(*args)[1]()}
    expected = w.hand(*w.args)
    out = {}
    for key, call in calls.items():
        grads = call(*w.args)  # compiles first
        problem = check(tuple(np.asarray(g) for g in grads), tuple(np.asarray(e) for e in expected), key)
        if problem is not None:
            out[key] = ("wrong", problem)
            continue
        peaks = [_peak_memory(call, w.args[:-1] + (n,)) for n in (steps, 2 * steps)]
        out[key] = ("bytes", (peaks[0] / steps, (peaks[1] - peaks[0]) / steps))
    return out


def _peak_memory(call, args):
    call(*args)  # compiled for these arguments (a new trip count may be a new specialisation)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        call(*args)
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--min-time", type=float, default=0.03, help="seconds of calls per measurement")
    parser.add_argument("--only", default="", help="comma-separated workload keys (default: all)")
    parser.add_argument("--systems", default="", help="comma-separated system keys (default: all)")
    parser.add_argument("--quick", action="store_true", help="few short rounds, no fresh processes: a smoke test")
    parser.add_argument("--out", default=HERE, help="directory for RESULTS.md and results.png")
    parser.add_argument("--first-use-child", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.first_use_child:
        return first_use_child()
    if opts.quick or os.environ.get("SRCAD_BENCH_QUICK") == "1":
        opts.quick, opts.rounds, opts.min_time = True, 3, 0.01
    chosen = [s for s in systems.ALL if not opts.systems or s.key in opts.systems.split(",") or s.key == "hand"]
    only = opts.only.split(",") if opts.only else []
    todo = [w for w in workloads.workloads() + workloads_wide.workloads() if not only or w.key in only]
    started = time.perf_counter()
    table, notes, versions = [], [], []
    for s in chosen:
        try:
            version = s.version()
        except systems.Unavailable as exc:
            version = f"{s.label}: not available"
            notes.append(f"{s.label} skipped: {exc}")
        if version and version not in versions:
            versions.append(version)
    for w in todo:
        print(f"{w.key}: {w.title}", flush=True)
        results = bench_workload(w, chosen, opts.rounds, opts.min_time)
        hand = results[systems.Hand.key][1]
        for s in chosen:
            kind, value = results[s.key]
            shown = f"{fmt_time(value):>12}  {value / hand:7.2f}×" if kind == "time" else f"{kind}: {value}"
            print(f"  {s.label:24} {shown}", flush=True)
            if kind == "wrong":
                notes.append(f"{w.key}: {value}")
            elif kind == "skipped" and not any(value in n for n in notes):
                notes.append(f"{w.key}, {s.label} skipped: {value}")
        table.append((w, results))
    memory = None
    memory_loop = workloads_wide.memory_workload()
    if not only or memory_loop.key in only:
        print(f"{memory_loop.key}: {memory_loop.title}", flush=True)
        problem = check_hand_written(memory_loop)
        if problem is not None:
            raise AssertionError(f"{memory_loop.key}: the hand-written adjoint is wrong: {problem}")
        memory = (memory_loop, memory_per_step(memory_loop))
        for key, (kind, value) in memory[1].items():
            print(f"  {key:24} {value[0]:.2f} B per step at the peak, {value[1]:.2f} B a step adds" if kind == "bytes"
                  else f"  {key:24} {kind}: {value}", flush=True)
    first = fresh = jax_first = None
    if not only or "first_use" in only:
        print("first use: transform + compile", flush=True)
        first = first_use(3 if opts.quick else 9)
        print(f"  first call {fmt_time(min(first['first']))}, steady {fmt_time(first['steady'])}, "
              f"new wrapper {fmt_time(first['rewrap'])}", flush=True)
        if any(s.key == systems.JaxJit.key for s in chosen):
            jax_first = jax_first_use()
        if not opts.quick:
            fresh = fresh_processes(3)
            print(f"  fresh process: no cache {fmt_time(min(r['first'] for r in fresh['cold']))}, "
                  f"warm cache {fmt_time(min(r['first'] for r in fresh['warm']))}", flush=True)
    meta = {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "command": command(),
        "machine": machine(),
        "versions": versions,
        "rounds": opts.rounds,
        "min_time": opts.min_time,
    }
    os.makedirs(opts.out, exist_ok=True)
    write_report(os.path.join(opts.out, "RESULTS.md"), table, chosen, meta, first, fresh, jax_first, notes, memory)
    plot(os.path.join(opts.out, "results.png"), table, chosen)
    print(f"wrote {os.path.join(opts.out, 'RESULTS.md')} and results.png in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
