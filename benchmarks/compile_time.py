"""First use (transform + compile) of generated 15 / 60 / 250-line functions.

    python benchmarks/compile_time.py                 # best-of-N first-use times
    python benchmarks/compile_time.py --profile 250   # cProfile of one 250-line first use

The functions are written to a temporary module (srcad reads source files) and mix what
real numeric code does: straight-line vector arithmetic and reductions, matrix products,
short loops carrying a state, and calls of a module-level helper (compiled as a callee).
"""
import argparse
import cProfile
import importlib.util
import io
import os
import pstats
import random
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


def first_use(fn):
    """Seconds for transform + compile + first call of the adjoint, with srcad's caches empty."""
    import srcad
    from srcad import compile as srcad_compile

    srcad_compile._CACHE.clear()
    args = arguments()
    start = time.perf_counter()
    srcad.differentiable(fn, wrt=(0, 1)).adjoint(*args)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="15,60,250")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--profile", type=int, help="profile one first use of a function this long")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--sort", default="tottime")
    opts = parser.parse_args()
    os.environ.pop("SRCAD_CACHE_DIR", None)
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
        best = min(first_use(fn) for _ in range(opts.repeats))
        target = TARGETS.get(lines)
        note = f"  (target {target * 1e3:.0f} ms)" if target else ""
        print(f"{lines:4d} lines: {best * 1e3:8.1f} ms{note}", flush=True)


if __name__ == "__main__":
    main()
