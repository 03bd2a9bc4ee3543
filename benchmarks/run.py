"""Benchmarks: srcad against a hand-written NumPy adjoint, autograd, PyTorch and JAX.

    make bench            # or: python benchmarks/run.py [--quick] [--only mlp,rnn]

All systems run in one process. Every system's gradient is checked against the
hand-written adjoint before it is timed. Each call is timed timeit-style (a number of
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
import platform  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
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

FIRST_USE_TARGET = 0.030  # seconds
SLOW_CALL = 0.05  # seconds: calls slower than this get fewer rounds
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


# ---- report

def machine():
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    blas = ""
    try:
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]["name"] + " " + config["Build Dependencies"]["blas"]["version"]
    except Exception:  # older NumPy has no dict mode; the BLAS name is a nicety
        pass
    return {
        "cpu": f"{cpu}, {os.cpu_count()} logical cores",
        "os": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "numpy": f"{np.__version__}" + (f" ({blas})" if blas else ""),
    }


def command():
    threads = " ".join(f"{k}={os.environ[k]}" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"))
    python = os.path.relpath(sys.executable) if sys.executable.startswith(os.getcwd()) else sys.executable
    return f"{threads} {python} {' '.join([os.path.relpath(os.path.abspath(sys.argv[0]))] + sys.argv[1:])}"


def fmt_time(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def ratio_cell(result, hand):
    kind, value = result
    if kind == "time":
        return f"{value / hand:.2f}×"
    return "n/a" if kind == "skipped" else "**wrong gradient**"


def met_cell(ratio, target, unit="×"):
    """'yes', or by how much the target is missed."""
    if ratio <= target:
        return "yes"
    return f"**no**: {ratio:.2f}{unit}, {100 * (ratio / target - 1):.0f} % over"


# ---- memory: a long scalar loop's gradient

def memory_per_step(w):
    """Per system (hand-written, srcad f.adjoint, srcad vjp + pullback): the peak of memory
    NumPy and Python allocate during one gradient (tracemalloc), divided by the steps."""
    import srcad

    steps = w.args[-1]
    d = srcad.differentiable(w.function, wrt=w.wrt)

    def vjp_and_pullback():
        _, pullback = d.vjp(*w.args)
        return pullback()

    calls = {systems.Hand.key: lambda: w.hand(*w.args), systems.SrcadAdjoint.key: lambda: d.adjoint(*w.args),
             systems.SrcadVjp.key: vjp_and_pullback}
    expected = w.hand(*w.args)
    out = {}
    for key, call in calls.items():
        grads = call()  # compiles first
        problem = check(tuple(np.asarray(g) for g in grads), tuple(np.asarray(e) for e in expected), key)
        if problem is not None:
            out[key] = ("wrong", problem)
            continue
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            base = tracemalloc.get_traced_memory()[0]
            call()
            out[key] = ("bytes", (tracemalloc.get_traced_memory()[1] - base) / steps)
        finally:
            tracemalloc.stop()
    return out


def write_report(path, table, chosen, meta, first, fresh, jax_first, notes, memory=None):
    hand_key = systems.Hand.key
    lines = [
        "# srcad benchmarks",
        "",
        f"Generated by `benchmarks/run.py` on {meta['date']}. Command (what `make bench` runs):",
        "",
        f"    {meta['command']}",
        "",
        f"- Machine: {meta['machine']['cpu']}; {meta['machine']['os']}",
        f"- {meta['machine']['python']}; NumPy {meta['machine']['numpy']}",
        f"- Systems: {'; '.join(meta['versions'])}",
        f"- Timing: best of {meta['rounds']} alternating rounds (fewer for calls over {SLOW_CALL * 1e3:.0f} ms), "
        f"each round ≥ {meta['min_time'] * 1e3:.0f} ms of calls (timeit, GC off), all systems in one process, "
        "the process pinned to one CPU (one BLAS/intra-op thread for every system). Every gradient was checked against the hand-written adjoint "
        "(`np.allclose`, rtol 1e-7) before timing.",
        "",
        "## Time per gradient, as a ratio to the hand-written NumPy adjoint",
        "",
    ]
    others = [s for s in chosen if s.key != hand_key]
    header = ["workload", "hand-written"] + [s.label for s in others] + ["srcad target", "met"]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for w, results in table:
        hand = results.get(hand_key)
        if hand is None or hand[0] != "time":
            continue
        row = [w.title, fmt_time(hand[1])]
        row += [ratio_cell(results[s.key], hand[1]) if s.key in results else "–" for s in others]
        srcad = results.get(systems.SrcadAdjoint.key)
        met = "–"
        if srcad is not None and srcad[0] == "time" and w.target:
            met = met_cell(srcad[1] / hand[1], w.target)
        row += [f"≤ {w.target:.2f}×" if w.target else "–", met]
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "Absolute times per gradient:", ""]
    header = ["workload"] + [s.label for s in chosen]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for w, results in table:
        cells = [w.key]
        for s in chosen:
            r = results.get(s.key)
            cells.append(fmt_time(r[1]) if r and r[0] == "time" else ("–" if r is None else r[0]))
        lines.append("| " + " | ".join(cells) + " |")
    srcad_overheads = []
    for w, results in table:
        if w.key.startswith("seed") and results.get("srcad", ("",))[0] == "time" and results[hand_key][0] == "time":
            srcad_overheads.append(f"{w.key}: {fmt_time(results['srcad'][1] - results[hand_key][1])}")
    if srcad_overheads:
        lines += ["", f"srcad overhead per call on the seed product (target ≤ ~2 µs): {'; '.join(srcad_overheads)}."]
    if memory is not None:
        w, per_system = memory
        lines += ["", f"## Memory per step: {w.title}", "",
                  "Peak memory traced (`tracemalloc`: NumPy's buffers and Python objects) during one gradient, "
                  f"divided by the {w.args[-1]:,} steps.", "",
                  "| system | bytes per step | target |", "|---|---|---|"]
        labels = {s.key: s.label for s in systems.ALL}
        for key, (kind, value) in per_system.items():
            cell = f"{value:.1f} B" if kind == "bytes" else f"**{kind}**: {value}"
            target = "–"
            if key == systems.SrcadAdjoint.key and kind == "bytes":
                target = f"≤ {w.target:.0f} B: {met_cell(value, w.target, ' B')}"
            lines.append(f"| {labels[key]} | {cell} | {target} |")
    if first is not None:
        best, median = min(first["first"]), statistics.median(first["first"])
        compile_time = best - first["steady"]
        lines += [
            "",
            "## First use: transform + compile",
            "",
            f"The model `workloads.small_model` ({first['lines']} lines, a 5-step loop), gradient for 2 arguments.",
            "",
            "| what | time | target |",
            "|---|---|---|",
            f"| first call in this process, srcad's in-memory cache cleared (best of {len(first['first'])}; "
            f"median {fmt_time(median)}) | {fmt_time(best)} | ≤ 30 ms: "
            f"{'yes' if best <= FIRST_USE_TARGET else '**no**'} |",
            f"| of which transform + compile (first call − steady call) | {fmt_time(compile_time)} | |",
            f"| steady call of the same `f.adjoint` | {fmt_time(first['steady'])} | |",
            f"| cached use: a new `srcad.differentiable(f)` wrapper, first call (in-memory cache warm) | "
            f"{fmt_time(first['rewrap'])} | microseconds: "
            f"{'yes' if first['rewrap'] - first['steady'] < 1e-4 else '**no**'} |",
            f"| of which the new wrapper's first-call overhead (− steady call) | "
            f"{fmt_time(first['rewrap'] - first['steady'])} | |",
        ]
        if jax_first is not None:
            lines.append(f"| for scale: JAX `jit(grad)` first call (trace + compile) | {fmt_time(jax_first)} | |")
        if first["problem"]:
            lines.append(f"\n**{first['problem']}**")
    if fresh is not None:
        cold = min(r["first"] for r in fresh["cold"])
        warm = min(r["first"] for r in fresh["warm"])
        lines += [
            "",
            "## First use in a fresh process, and the persistent cache (`SRCAD_CACHE_DIR`)",
            "",
            "Time of the first `f.adjoint` call in a new interpreter (after `import srcad`), "
            f"best of {len(fresh['cold'])} processes each:",
            "",
            "| what | first call | `import srcad` |",
            "|---|---|---|",
            f"| no persistent cache | {fmt_time(cold)} | {fmt_time(min(r['import'] for r in fresh['cold']))} |",
            f"| `SRCAD_CACHE_DIR` set, cache empty (fills it) | {fmt_time(min(r['first'] for r in fresh['filling']))} | "
            f"{fmt_time(min(r['import'] for r in fresh['filling']))} |",
            f"| `SRCAD_CACHE_DIR` set, cache warm | {fmt_time(warm)} | "
            f"{fmt_time(min(r['import'] for r in fresh['warm']))} |",
            "",
            f"The warm cache saves {fmt_time(cold - warm)} ({cold / warm:.1f}× faster first use); "
            f"gradients with the cached code {'equal' if fresh['same'] else '**differ from**'} the freshly "
            "transformed ones.",
        ]
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    lines += [
        "",
        "## How the systems are run",
        "",
        "- **hand-written NumPy**: `benchmarks/workloads.py` and `benchmarks/workloads_wide.py` (issue 12's "
        "workloads), the adjoint an expert writes for the same program: the forward sweep with the program's "
        "own operations, keeping what the reverse sweep needs in preallocated arrays, then the reverse sweep "
        "with no bookkeeping, in-place updates, and (RNN, LSTM) the weight adjoints as one product over all "
        "steps. Each is checked against central finite differences in a random direction before anything is "
        "timed; the Jacobian's row is the closed form diag(1 − y²) W.",
        "- **srcad jacobian_50**: `srcad.jacobian(f, mode=\"rev\")` in the f.adjoint column; autograd "
        "`jacobian`, PyTorch `torch.autograd.functional.jacobian`, JAX `jacrev`. **seed_dot** calls "
        "`srcad.adjoint(f)(x, M, v)`.",
        "- **tangent-ad** (source transformation as well): `tangent.grad`, or `tangent.autodiff` with the "
        "cotangent last; it refuses attribute reads such as `F.T` and item assignment (n/a).",
        "- n/a: the peer cannot run the program (the reason is under Notes): autograd and JAX have no item "
        "assignment (soft-DTW); `jax.jit` would unroll the Kalman filter's and heat equation's Python loops "
        "(5.5 minutes of XLA compilation for the Kalman filter), so only eager JAX runs them. PyTorch runs the "
        "NumPy program with `np` bound to `torch` plus `pad`, `logaddexp` and `dot` in NumPy's spelling, "
        "float64 by default.",
        "- Memory: `tracemalloc` peak during one gradient (after a warm-up call) minus what was traced before, "
        "divided by the steps; NumPy reports its buffers to tracemalloc.",
        "- **srcad f.adjoint**: the joint adjoint (forward and reverse sweeps in one call); "
        "**srcad f.vjp + pullback**: the split forward/backward pair (`y, pullback = f.vjp(...)`, `pullback(v)`).",
        "- **autograd**, **PyTorch eager**, **JAX**: the same model code with `np` rebound to "
        "`autograd.numpy`, `torch` or `jax.numpy` (float64 everywhere, `jax_enable_x64`); inputs "
        "converted once outside the timing; JAX calls end with `block_until_ready`, and its "
        "compilation happens before timing. `jax.jit` cannot trace the scalar loop's Python `if` on "
        "a value, so it runs the same loop with `np.where` (`workloads.logsumexp_loop_where`). "
        "For a cotangent, autograd uses `make_vjp`, PyTorch `grad_outputs`, JAX `jax.vjp`.",
        "",
        "![ratios](results.png)",
        "",
    ]
    generated = {line for line in lines if line.startswith("## ")}
    lines += kept_sections(path, generated)
    with open(path, "w") as f:
        f.write("\n".join(lines))


def kept_sections(path, generated):
    """The sections of an existing report this script does not write (other benchmarks'
    results, written by hand): kept, after the generated ones."""
    try:
        with open(path) as f:
            old = f.read().splitlines()
    except OSError:
        return []
    kept, keep = [], False
    for line in old:
        if line.startswith("## "):
            keep = line not in generated and not line.startswith(_GENERATED_HEADINGS)
        if keep:
            kept.append(line)
    return kept + [""] if kept and kept[-1] else kept


# every heading write_report may write (a section left out this run is not kept from the last one)
_GENERATED_HEADINGS = ("## Time per gradient, as a ratio to the hand-written NumPy adjoint",
                       "## Memory per step: ", "## First use: transform + compile",
                       "## First use in a fresh process, and the persistent cache (`SRCAD_CACHE_DIR`)",
                       "## Notes", "## How the systems are run")


def plot(path, table, chosen):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as exc:
        print(f"no plot: matplotlib unavailable ({exc})")
        return
    others = [s for s in chosen if s.key != systems.Hand.key]
    rows = [(w, r) for w, r in table if r.get(systems.Hand.key, ("",))[0] == "time"]
    fig, ax = plt.subplots(figsize=(11, 5.5))
    width = 0.8 / max(len(others), 1)
    for j, s in enumerate(others):
        xs, ys = [], []
        for i, (w, r) in enumerate(rows):
            if r.get(s.key, ("",))[0] == "time":
                xs.append(i + (j - (len(others) - 1) / 2) * width)
                ys.append(r[s.key][1] / r[systems.Hand.key][1])
        ax.bar(xs, ys, width, label=s.label)
        if s.key == systems.SrcadAdjoint.key:
            for x, (w, r) in zip(xs, [(w, r) for w, r in rows if r.get(s.key, ("",))[0] == "time"]):
                if w.target:
                    ax.plot([x - width, x + width], [w.target] * 2, color="black", linewidth=2)
    ax.axhline(1.0, color="grey", linewidth=1, linestyle="--")
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([w.key for w, _ in rows])
    ax.set_ylabel("time ÷ hand-written NumPy adjoint (log)")
    ax.set_title("Gradient time relative to a hand-written adjoint (black bars: srcad targets)")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


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
            print(f"  {key:24} {value:.1f} B per step" if kind == "bytes" else f"  {key:24} {kind}: {value}",
                  flush=True)
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
