"""First use (transform + compile) of generated 15 / 60 / 250-line functions.

    python benchmarks/compile_time.py                 # best-of-N first-use times
    python benchmarks/compile_time.py --profile 250   # cProfile of one 250-line first use
    python benchmarks/compile_time.py --stages 250    # milliseconds per pipeline stage
    python benchmarks/compile_time.py --sample 250    # sampled profile: share of time per function

cProfile's per-call bookkeeping inflates small functions called often (tree walks) several
times over; ``--sample`` interrupts the process every millisecond of CPU time instead and
counts the functions on the stack (POSIX only).

The functions are written to a temporary module (srcad reads source files) and mix what
real numeric code does: straight-line vector arithmetic and reductions, matrix products,
short loops carrying a state, and calls of a module-level helper (compiled as a callee).
"""
import argparse
import atexit
import cProfile
import importlib.util
import io
import os
import pstats
import random
import shutil
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TARGETS = {15: 0.030, 60: 0.100, 250: 0.400}  # seconds, issue 12

HELPER = '''
def act(z, w):
    a = np.tanh(z) * 0.5
    return a + w * z
'''


def _statement(rng, k, vectors, scalars):
    """Lines binding ``t{k}`` (a vector) or ``s{k}`` (a scalar) from earlier values."""
    a, b = rng.sample(vectors, 2) if len(vectors) > 1 else (vectors[0], vectors[0])
    c = rng.choice(scalars)
    kind = rng.choice(["arith", "arith", "ufunc", "matmul", "reduce", "helper", "loop", "branch"])
    if kind == "arith":
        return [f"t{k} = {a} * {c} + {b} * 0.5"], f"t{k}", None
    if kind == "ufunc":
        fn = rng.choice(["np.sin", "np.cos", "np.tanh", "np.exp"])
        return [f"t{k} = {fn}({a} * 0.1) - {b}"], f"t{k}", None
    if kind == "matmul":
        return [f"t{k} = {a} @ W + {b}"], f"t{k}", None
    if kind == "reduce":
        return [f"s{k} = np.sum({a} * {b}) * 0.01"], None, f"s{k}"
    if kind == "helper":
        return [f"t{k} = act({a}, {c})"], f"t{k}", None
    if kind == "loop":
        return [f"t{k} = {a} * 1.0",
                "for i in range(3):",
                f"    t{k} = np.tanh(t{k} @ W) * 0.5 + {b}",
                f"    acc = acc + np.sum(t{k} ** 2)"], f"t{k}", None
    return [f"if {c} > 0.0:",
            f"    t{k} = {a} * {c}",
            "else:",
            f"    t{k} = {a} - {b}"], f"t{k}", None


def source(lines, seed=0):
    """A function ``f(x, W, s)`` of exactly ``lines`` lines (its ``def`` included)."""
    rng = random.Random(seed)
    body = ["acc = 0.0", "t0 = x * s"]
    vectors, scalars = ["x", "t0"], ["s", "acc"]
    k = 1
    while True:
        new, vector, scalar = _statement(rng, k, vectors, scalars)
        if len(body) + len(new) > lines - 2:
            break
        body += new
        vectors += [vector] if vector else []
        scalars += [scalar] if scalar else []
        k += 1
    while len(body) < lines - 2:
        body.append(f"acc = acc + np.sum({rng.choice(vectors)}) * 0.1")
    body.append(f"return acc + np.sum({vectors[-1]} * {vectors[-2]}) + {scalars[-1]}")
    return f"def f{lines}(x, W, s):\n" + "".join(f"    {line}\n" for line in body)


def load(lines, seed=0):
    """The generated function ``f{lines}`` from a fresh module file (kept for srcad to read)."""
    directory = tempfile.mkdtemp(prefix="srcad-compile-time-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    path = os.path.join(directory, f"generated_{lines}_{seed}.py")
    with open(path, "w") as file:
        file.write("import numpy as np\n" + HELPER + "\n\n" + source(lines, seed))
    spec = importlib.util.spec_from_file_location(f"generated_{lines}_{seed}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return getattr(module, f"f{lines}")


def arguments():
    rng = np.random.default_rng(0)
    return rng.standard_normal(5), rng.standard_normal((5, 5)) * 0.3, 0.7


def first_use(fn, clock=time.perf_counter):
    """Seconds for transform + compile + first call of the adjoint, with srcad's caches empty."""
    import srcad
    from srcad import compile as srcad_compile

    srcad_compile._CACHE.clear()
    args = arguments()
    start = clock()
    srcad.differentiable(fn, wrt=(0, 1)).adjoint(*args)
    return clock() - start


def stage_times(fn, repeats):
    """CPU seconds per pipeline stage (best of ``repeats`` first uses; nested: a callee's
    stages are part of the caller's ``reverse`` too). CPU time, not wall time, so other
    processes on a busy machine do not blur the comparison."""
    from srcad import compile as srcad_compile
    from srcad import pipeline, source_check

    totals = {}

    def timed(name, run):
        def wrapper(*args, **kwargs):
            start = time.process_time()
            try:
                return run(*args, **kwargs)
            finally:
                totals[name] = totals.get(name, 0.0) + time.process_time() - start
        return wrapper

    def stages(make):
        return lambda *args: [(name, timed(name, stage)) for name, stage in make(*args)]

    originals = (pipeline._stages, pipeline._forward_stages, pipeline.codegen, srcad_compile._load,
                 srcad_compile.module_attribute_guards)
    pipeline._stages, pipeline._forward_stages = stages(originals[0]), stages(originals[1])
    pipeline.codegen = timed("codegen", originals[2])
    srcad_compile._load = timed("compile", originals[3])
    srcad_compile.module_attribute_guards = timed("attribute guards", originals[4])
    # the source check, wherever it runs: the pipeline and the passes that read a callee's source
    check = source_check.check_source_is_code
    checking = [module for name, module in list(sys.modules.items()) if name.split(".")[0] == "srcad"
                and getattr(module, "check_source_is_code", None) is check]
    for module in checking:
        module.check_source_is_code = timed("check_source_is_code", check)
    best = {}
    try:
        for _ in range(repeats):
            totals.clear()
            total = first_use(fn, time.process_time)
            for name, seconds in list(totals.items()) + [("total", total)]:
                best[name] = min(best.get(name, seconds), seconds)
    finally:
        (pipeline._stages, pipeline._forward_stages, pipeline.codegen, srcad_compile._load,
         srcad_compile.module_attribute_guards) = originals
        for module in checking:
            module.check_source_is_code = check
    return best


def sampled_profile(fn, repeats, top):
    """Share of CPU-time samples in which each function is on the stack (inclusive) or running
    (own), over ``repeats`` first uses."""
    import collections
    import signal

    inclusive, own, total = collections.Counter(), collections.Counter(), [0]

    def sample(signum, frame):
        total[0] += 1
        seen = set()
        own[_where(frame)] += 1
        while frame is not None:
            where = _where(frame)
            if where not in seen:
                seen.add(where)
                inclusive[where] += 1
            frame = frame.f_back

    previous = signal.signal(signal.SIGPROF, sample)
    signal.setitimer(signal.ITIMER_PROF, 0.001, 0.001)
    try:
        for _ in range(repeats):
            first_use(fn)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, previous)
    for title, counts in (("on the stack", inclusive), ("running", own)):
        print(f"--- {title} ({total[0]} samples)")
        for where, n in counts.most_common(top):
            print(f"{n / total[0] * 100:5.1f}%  {where}")


def _where(frame):
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_code.co_name}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="15,60,250")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--profile", type=int, help="profile one first use of a function this long")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--sort", default="tottime")
    parser.add_argument("--stages", type=int, help="time each stage of a function this long")
    parser.add_argument("--sample", type=int, help="sampled profile of first uses of a function this long")
    opts = parser.parse_args()
    os.environ.pop("SRCAD_CACHE_DIR", None)
    if opts.stages:
        fn = load(opts.stages)
        first_use(fn)
        for name, seconds in sorted(stage_times(fn, opts.repeats).items(), key=lambda item: -item[1]):
            print(f"{name:34s} {seconds * 1e3:8.1f} ms")
        return
    if opts.sample:
        fn = load(opts.sample)
        first_use(fn)  # warm imports and rule tables
        sampled_profile(fn, opts.repeats, opts.top)
        return
    if opts.profile:
        fn = load(opts.profile)
        first_use(fn)  # warm imports and rule tables
        profile = cProfile.Profile()
        profile.enable()
        first_use(fn)
        profile.disable()
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats(opts.sort).print_stats(opts.top)
        print(out.getvalue())
        return
    first_use(load(15, seed=99))  # imports and rule tables are not part of a function's first use
    for lines in map(int, opts.sizes.split(",")):
        fn = load(lines)
        wall = min(first_use(fn) for _ in range(opts.repeats))
        cpu = min(first_use(fn, time.process_time) for _ in range(opts.repeats))
        target = TARGETS.get(lines)
        note = f"  (target {target * 1e3:.0f} ms)" if target else ""
        print(f"{lines:4d} lines: {wall * 1e3:8.1f} ms wall, {cpu * 1e3:8.1f} ms CPU{note}", flush=True)


if __name__ == "__main__":
    main()
