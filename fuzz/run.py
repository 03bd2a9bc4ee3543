"""A fuzzing batch: generate, screen inputs, check every mode, group, minimise, report."""
import collections
import pathlib
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

from . import oracle
from .generate import FEATURES, NEW_FEATURES
from .minimize import minimize, signature
from .program import draw_args, generate


@dataclass
class Failure:
    program: object
    args: list
    mode: str
    outcome: object
    minimal: str = ""
    signature: str = ""


@dataclass
class Stats:
    programs: int = 0
    invalid: collections.Counter = field(default_factory=collections.Counter)
    results: dict = field(default_factory=lambda: collections.defaultdict(collections.Counter))  # mode -> status
    refusals: collections.Counter = field(default_factory=collections.Counter)  # (mode, reason) -> n
    refusal_example: dict = field(default_factory=dict)
    failures: dict = field(default_factory=lambda: collections.defaultdict(list))  # key -> [Failure]
    by_feature: dict = field(default_factory=lambda: collections.defaultdict(collections.Counter))  # (feature, mode) -> status
    noise: int = 0
    seconds: float = 0.0

    def passed(self):
        return sum(c["pass"] for c in self.results.values())


def screen(program, directory, tries=8):
    """(fn, args): the program loaded, at inputs at least ``oracle.MARGIN`` from every branch
    boundary and kink; raises ``oracle.Invalid`` if it cannot."""
    try:
        fn = oracle.load(program.source, directory, program.entry)
        probe = oracle.load(program.source, directory, program.entry, instrument=True)
    except Exception as e:
        raise oracle.Invalid(f"the program does not load: {type(e).__name__}: {e}")
    for attempt in range(tries):
        args = program.args if attempt == 0 else draw_args(program.spec, np.random.default_rng(
            [program.seed, attempt]))
        oracle.run_plain(fn, args)
        if oracle.margin(probe, args) >= oracle.MARGIN:
            return fn, args
    raise oracle.Invalid("no inputs away from branch boundaries and kinks")


def still_failing(program, args, mode, key, directory, status="fail"):
    """The minimiser's test: the variant runs cleanly, away from kinks, leaves no more code
    unexecuted than the program it shrinks (so nothing changes in dead code) and fails as before."""
    def test(text, changed_line=None):
        try:
            fn = oracle.load(text, directory, program.entry)
            probe = oracle.load(text, directory, program.entry, instrument=True)
            dead = oracle.unexecuted(fn, args, text)
            if len(dead) > test.dead or changed_line in dead:
                return False
            oracle.run_plain(fn, args)
            if oracle.margin(probe, args) < oracle.MARGIN:
                return False
        except Exception:
            return False
        outcome = oracle.check(mode, fn, program, args)
        if outcome.status == status and outcome.key == key:
            test.dead = len(dead)
            return True
        return False
    try:
        test.dead = len(oracle.unexecuted(oracle.load(program.source, directory, program.entry), args,
                                          program.source))
    except Exception:
        test.dead = 10**6
    return test


def run(n, seed, modes=oracle.DEFAULT_MODES, features=FEATURES, minimize_each=1, budget=60.0, log=print,
        deadline=None, size=1.0, directory=None, minimize_refusals=False):
    """Fuzz ``n`` programs from ``seed``; minimise the first ``minimize_each`` failures of each key
    (and with ``minimize_refusals`` one program per refusal reason)."""
    stats = Stats()
    directory = pathlib.Path(directory or tempfile.mkdtemp(prefix="srcad_fuzz_"))
    directory.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    for i in range(n):
        if deadline is not None and time.monotonic() - start > deadline:
            if log:
                log(f"time is up after {i} programs")
            break
        stats.programs += 1
        program = generate(seed * 1_000_003 + i, features, size)
        try:
            fn, args = screen(program, directory)
        except oracle.Invalid as e:
            stats.invalid[oracle.normalise(e)] += 1
            continue
        for mode in modes:
            outcome = oracle.check(mode, fn, program, args)
            stats.results[mode][outcome.status] += 1
            for feature in program.uses:
                stats.by_feature[(feature, mode)][outcome.status] += 1
            if outcome.key == "noise":
                stats.noise += 1
            if outcome.status == "refused":
                stats.refusals[(mode, outcome.key)] += 1
                stats.refusal_example.setdefault((mode, outcome.key), Failure(program, args, mode, outcome))
            elif outcome.status == "fail":
                stats.failures[outcome.key].append(Failure(program, args, mode, outcome))
        if log and (i + 1) % 50 == 0:
            log(f"{i + 1} programs, {sum(len(v) for v in stats.failures.values())} failures "
                f"in {len(stats.failures)} groups, {time.monotonic() - start:.0f} s")
    for key, failures in stats.failures.items():
        for failure in failures[:minimize_each]:
            test = still_failing(failure.program, failure.args, failure.mode, key, directory)
            failure.minimal = minimize(failure.program.source, failure.program.entry, test, budget=budget) \
                if budget > 0 else failure.program.source
            failure.signature = signature(failure.minimal, failure.program.entry)
    if minimize_refusals:
        for (mode, key), example in stats.refusal_example.items():
            test = still_failing(example.program, example.args, mode, key, directory, status="refused")
            example.minimal = minimize(example.program.source, example.program.entry, test, budget=budget / 2)
            example.signature = signature(example.minimal, example.program.entry)
    stats.seconds = time.monotonic() - start
    return stats


def _literal(x):
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {_literal(v)}" for k, v in x.items()) + "}"
    if isinstance(x, (list, tuple)):
        inner = ", ".join(_literal(v) for v in x)
        return f"[{inner}]" if isinstance(x, list) else f"({inner}{',' if len(x) == 1 else ''})"
    if isinstance(x, np.ndarray):
        return f"np.array({x.tolist()!r})"
    return repr(x)


def reproducer(failure, key):
    """A runnable file: the minimal program and the failing check."""
    p = failure.program
    args = _literal(list(failure.args))
    return (f"# srcad fuzz: {key}\n# seed {p.seed}, mode {failure.mode}; constructs: {failure.signature}\n"
            f"# detail: {failure.outcome.detail.splitlines()[0][:300] if failure.outcome.detail else ''}\n"
            f"{failure.minimal or p.source}\n\n"
            f"if __name__ == '__main__':  # PYTHONPATH=<srcad checkout> python this_file.py\n"
            f"    import numpy as np\n"
            f"    from fuzz.reproduce import reproduce\n"
            f"    reproduce(__file__, {p.entry!r}, {args}, {p.wrt!r}, {failure.mode!r}, {p.scalar_output!r})\n")


def report(stats, modes, out=None):
    """The summary as text; with ``out``, minimal reproducers are written there too."""
    lines = [f"programs: {stats.programs} in {stats.seconds:.0f} s; not usable: {sum(stats.invalid.values())}"]
    for reason, count in stats.invalid.most_common():
        lines.append(f"    {count:5d}  {reason}")
    for mode in modes:
        c = stats.results[mode]
        lines.append(f"{mode}: passed {c['pass']}, refused {c['refused']}, failed {c['fail']}, n/a {c['n/a']}")
    lines.append(f"finite differences at their limit (passed a loose recheck): {stats.noise}")
    if stats.by_feature:
        lines.append("programs using a feature (passed/refused/failed per mode):")
    for feature in NEW_FEATURES:
        counts = [(mode, stats.by_feature[(feature, mode)]) for mode in modes if (feature, mode) in stats.by_feature]
        if counts:
            lines.append(f"    {feature:11s} " + "  ".join(f"{mode} {c['pass']}/{c['refused']}/{c['fail']}"
                                                    for mode, c in counts))
    lines.append("refusals by reason:")
    out = pathlib.Path(out) if out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
    for number, ((mode, reason), count) in enumerate(stats.refusals.most_common(), 1):
        example = stats.refusal_example[(mode, reason)]
        lines.append(f"    {count:5d}  [{mode}] {reason}  (e.g. seed {example.program.seed})")
        if out and example.minimal:
            path = out / f"refusal{number:02d}.py"
            path.write_text(reproducer(example, f"refused: {reason}"))
            lines.append(f"      minimal: {path}")
    lines.append(f"failure groups: {len(stats.failures)}")
    for number, (key, failures) in enumerate(sorted(stats.failures.items(), key=lambda kv: -len(kv[1])), 1):
        first = failures[0]
        lines.append(f"  #{number}: {len(failures)} x {key}   [{first.signature}]  seeds "
                     + ", ".join(str(f.program.seed) for f in failures[:5]))
        if out:
            path = out / f"group{number:02d}.py"
            path.write_text(reproducer(first, key))
            lines.append(f"      reproducer: {path}")
        else:
            lines.append("      " + (first.minimal or first.program.source).replace("\n", "\n      "))
    return "\n".join(lines)
