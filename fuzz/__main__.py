"""python -m fuzz --n 500 --seed S [--modes rev,fwd,hess] [--features a,b | -a,-b] [--out DIR]"""
import argparse
import random
import sys

from .generate import FEATURES
from .oracle import MODES
from .run import report, run


def parse_modes(text):
    modes = []
    for m in text.split(","):
        modes += ["hvp", "gog"] if m == "hess" else [m]
    unknown = set(modes) - set(MODES)
    if unknown:
        raise SystemExit(f"unknown modes {sorted(unknown)}; choose from {MODES} or hess")
    return modes


def parse_features(text):
    """``a,b`` keeps only those; ``-a,-b`` drops those from all."""
    if not text:
        return FEATURES
    names = [t.strip() for t in text.split(",") if t.strip()]
    unknown = {n.lstrip("-") for n in names} - set(FEATURES)
    if unknown:
        raise SystemExit(f"unknown features {sorted(unknown)}; choose from {', '.join(FEATURES)}")
    if all(n.startswith("-") for n in names):
        return tuple(f for f in FEATURES if f"-{f}" not in names)
    return tuple(n for n in names if not n.startswith("-"))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=None, help="random if omitted")
    parser.add_argument("--modes", default="rev,fwd,hess")
    parser.add_argument("--features", default="", help=f"from: {', '.join(FEATURES)}")
    parser.add_argument("--out", default=None, help="directory for minimal reproducers")
    parser.add_argument("--minimize-budget", type=float, default=60.0, help="seconds per failure group (0: off)")
    parser.add_argument("--size", type=float, default=1.0, help="program size factor")
    parser.add_argument("--time", type=float, default=None, help="stop generating after this many seconds")
    parser.add_argument("--minimize-refusals", action="store_true", help="also shrink one program per refusal reason")
    parser.add_argument("--quiet", action="store_true")
    a = parser.parse_args(argv)
    seed = a.seed if a.seed is not None else random.randrange(1_000_000)
    modes = parse_modes(a.modes)
    print(f"fuzz: seed {seed}, {a.n} programs, modes {','.join(modes)}", flush=True)
    log = None if a.quiet else (lambda s: print(s, flush=True))
    stats = run(a.n, seed, modes, parse_features(a.features), budget=a.minimize_budget, log=log,
                deadline=a.time, size=a.size, minimize_refusals=a.minimize_refusals)
    print(report(stats, modes, a.out))
    return 1 if stats.failures else 0


if __name__ == "__main__":
    sys.exit(main())
