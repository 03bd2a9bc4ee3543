"""A fixed-seed batch of the adversarial fuzzer (fuzz/): random well-formed NumPy programs,
checked in every mode against finite differences. Fails with the minimal reproducer of each
failure group. ``SRCAD_FUZZ_N=2000`` for a longer hunt; ``make fuzz`` for a random seed."""
import os
import re
import time

import numpy as np
import pytest

from fuzz.generate import FEATURES
from fuzz import oracle
from fuzz.oracle import DEFAULT_MODES as MODES, Timeout, time_limit
from fuzz.program import generate
from fuzz.run import report, run

SEED = 20261123
N = int(os.environ.get("SRCAD_FUZZ_N", 30))


def test_fuzz_fixed_seed_batch(tmp_path):
    # the same N programs on every machine, whatever its load: no deadline on generation;
    # each failure group is minimised for at most 3 s
    stats = run(N, SEED, MODES, log=None, budget=3.0, directory=tmp_path)
    assert stats.programs == N
    assert not stats.failures, "\n" + report(stats, MODES)


def test_generator_is_deterministic_and_restrictable():
    a, b = generate(7), generate(7)
    assert a.source == b.source and a.entry == b.entry
    for seed in range(20):
        source = generate(seed, features=("elementwise",)).source
        for construct in ("for ", "while ", " if ", "lambda", ".append(", "+=", "] = ", "dataclass", "NamedTuple"):
            assert construct not in source, (construct, source)
    assert {"loops", "closures", "views", "stores", "fancy", "helpers", "records"} <= set(FEATURES)
    built = [generate(seed, features=("records", "elementwise")).source for seed in range(20)]
    constructed = [s for s in built if any(re.search(rf"^\s+\w+ = {c}\(", s, re.M)
                                           for c in re.findall(r"^class (\w+)", s, re.M))]
    assert len(constructed) >= 5  # records are built in function bodies
    assert any(re.search(r"\b(?!self\b)\w+\.(first|second)\b|\.scaled\(", s) for s in constructed)  # and read


def test_a_seed_gives_the_same_programs_in_every_process():
    """``SEED=...`` repeats a run: the programs may not depend on hash randomization or on where
    objects were allocated (a scope's builtins were once looked up by ``id``, which a dead
    scope's id, reused, answered: seeds gave other programs after other work)."""
    import hashlib
    import subprocess
    import sys

    script = ("import hashlib, sys; sys.path.insert(0, '.'); from fuzz.program import generate; "
              "print(hashlib.sha1('\\n'.join(generate(s).source for s in range(120, 170)).encode()).hexdigest())")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    digests = {subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": str(h)}).stdout for h in (1, 2, 3)}
    assert len(digests) == 1
    garbage = [generate(s) for s in range(5)]  # other work first, in this process
    del garbage
    here = hashlib.sha1("\n".join(generate(s).source for s in range(120, 170)).encode()).hexdigest()
    assert {here + "\n"} == digests


def test_check_time_limit_counts_cpu_time_not_waiting():
    # a loaded machine must not turn a slow check into a "timeout" failure
    with time_limit(0.05):
        time.sleep(0.2)
    with pytest.raises(Timeout):
        with time_limit(0.05):
            while True:
                pass


def test_fuzz_numba_backend_batch(tmp_path):
    # the compiled backend against the NumPy backend on a few programs (numba compiles for seconds)
    pytest.importorskip("numba")
    stats = run(int(os.environ.get("SRCAD_FUZZ_NUMBA_N", 6)), SEED + 1, ("numba",), log=None, budget=3.0,
                directory=tmp_path)
    assert not stats.failures, "\n" + report(stats, ("numba",))


def test_language_features_are_generated_and_run(tmp_path):
    # each feature of the language srcad claims shows its construct in most programs asked for it,
    # and those programs run as plain Python (the entry maybe a bound method of a module's object)
    from fuzz.oracle import Invalid
    from fuzz.run import screen
    constructs = {"methods": r"super\(\)\.|@property|\b\w+\.\w+\(", "generators": r"\bfor \w+ in [^\]]*\)\)|map\(|filter\(",
                  "keywords": r"\*\*\w+|\*\w+\)|\*, ", "try": r"^\s+try:$", "replace": r"_replace\(|dataclasses\.replace\(",
                  "joins": r"\+= [\(\[]|\) \+ \(|\] \+ \[|\*\w+ = |, \*\w+ =",
                  "held": r"^\s+self\.\w+ = (functools\.partial\(|lambda z:|\w+\.(tanh|sin|arctan|square|expm1)$|\w+$)",
                  "layers": r"^\w+ = \[\w+\([\d.]+\)", "keyed": r"\b(max|min|sorted)\(\w+, key=lambda \w+: "}
    for feature, construct in constructs.items():
        features = (feature, "records" if feature == "replace" else "helpers", "elementwise", "loops")
        features += ("methods",) * (feature in ("held", "layers"))  # (what they hold and list are its classes)
        features += ("lists",) * (feature == "keyed")  # (whose items it picks)
        # (24 seeds: 'replace' shows in about a third of the programs asked for it, which 12 seeds
        # left at the threshold, so a change elsewhere in the generator tipped it)
        programs = [generate(seed, features=features) for seed in range(24)]
        using = [p for p in programs if feature in p.uses and re.search(construct, p.source, re.M)]
        assert len(using) >= 4, (feature, [p.source for p in programs[:2]])
        ran = 0
        for p in using[:3]:
            try:
                screen(p, tmp_path)
                ran += 1
            except Invalid:
                pass
        assert ran >= 2, feature


def test_keyed_reads_are_kept_away_from_ties_of_their_keys(tmp_path):
    # max/min/sorted with key= pick an item by its key: the oracle's margin is the gap between
    # the keys (not the items), so inputs where two keys (nearly) tie are redrawn
    from fuzz.oracle import load, margin
    source = ("import numpy as np\n\n\ndef f(x, y):\n    xs = [x]\n    xs.append(y)\n"
              "    best = max(xs, key=lambda v: np.sum(v * 2.0))\n"
              "    last = sorted(xs, key=lambda v: np.sum(v))[-1]\n    return np.sum(best * last)\n")
    fn = load(source, tmp_path, "f", instrument=True)
    x = np.array([0.5, 1.0])
    for y, gap in ((x + 0.25, 0.5), (x[::-1] + 1e-4, 2e-4), (x[::-1].copy(), 0.0)):
        assert margin(fn, (x, y)) == pytest.approx(gap, abs=1e-12)
    generated = [generate(seed, features=("keyed", "lists", "elementwise")) for seed in range(40)]
    keyed = [p for p in generated if "keyed" in p.uses]
    assert keyed and all(re.search(r"\b(max|min|sorted)\(\w+, key=lambda \w+: ", p.source) for p in keyed)


def test_stepping_helpers_step_a_state_in_loops_and_pass(tmp_path):
    # a helper returning (state, err) is unpacked back into the state in for loops and in while
    # loops whose test reads its err; those programs run and srcad's gradients pass the oracle
    features = ("stepping", "elementwise", "loops", "helpers", "branches")
    programs = [generate(seed, features=features) for seed in range(30)]
    stepping = [p for p in programs if "stepping" in p.uses]
    stepped = r"^(\s+)(\w+), (\w+) = \w+\(\2\b"
    assert sum(bool(re.search(stepped, p.source, re.M)) for p in stepping) >= 5
    assert any(re.search(r"^\s+while \w+ < \d and (\w+) [<>] [-\d.]+:\n\s+\w+ \+= 1\n\s+\w+, \1 = \w+\(", p.source, re.M)
               for p in stepping)
    stats = run(8, SEED + 2, MODES[:2], features=features, log=None, budget=3.0, directory=tmp_path)
    assert not stats.failures, "\n" + report(stats, MODES[:2])
    assert stats.by_feature[("stepping", "rev")]["pass"] >= 3


def test_cache_helpers_return_dicts_read_back_by_key(tmp_path):
    # a helper returning a dict of its intermediates (a literal, dict(...), or built key by key) is
    # bound by its callers and read back by key; those programs pass the oracle. The feature is
    # drawn from a stream of its own: programs without a cache helper are unchanged by it
    features = ("caches", "elementwise", "loops", "helpers", "containers")
    programs = [generate(seed, features=features) for seed in range(30)]
    caching = [p for p in programs if "caches" in p.uses]
    assert len(caching) >= 8
    returns = r"^\s+return (\{'\w+': |dict\(\w+=|\w+$)"
    assert all(re.search(returns, p.source, re.M) for p in caching)
    assert any(re.search(r"^\s+(\w+)\['\w+'\] = .*\n(\s+\1\['\w+'\] = .*\n)*\s+return \1$", p.source, re.M)
               for p in caching)
    assert all(re.search(r"\['(z|h|pre|act|norm|out)'\](?! = )", p.source) for p in caching)  # read back
    without = tuple(f for f in FEATURES if f != "caches")
    unchanged = [seed for seed in range(20) if generate(seed).source == generate(seed, features=without).source]
    assert len(unchanged) >= 4
    stats = run(8, SEED + 3, MODES[:2], features=features, log=None, budget=3.0, directory=tmp_path)
    assert not stats.failures, "\n" + report(stats, MODES[:2])
    assert stats.by_feature[("caches", "rev")]["pass"] >= 3


def test_a_cache_helper_never_calls_dict_where_a_module_object_is_named_dict(tmp_path, monkeypatch):
    # seeds 113694341106 and 113695341098: the methods feature's object (or layers' list) named
    # 'dict', and a cache helper returning dict(...): the program raised TypeError (not usable).
    # The pool is small here so that 'dict' is drawn often (the real pool holds srcad's own
    # names, which change with srcad: a fixed seed would not keep drawing it)
    import fuzz.generate

    pool = ("dict", "x", "y", "z", "w", "acc", "buf", "tmp", "total", "row", "val", "item", "mask", "k", "h")
    monkeypatch.setattr(fuzz.generate, "name_pool", lambda: pool)
    found = 0
    for seed in range(200):
        program = generate(seed, features=("methods", "layers", "caches", "elementwise"))
        if not (re.search(r"^dict = ", program.source, re.M) and "caches" in program.uses):
            continue
        found += 1
        (tmp_path / str(seed)).mkdir()
        fn = oracle.load(program.source, tmp_path / str(seed), program.entry)
        oracle.run_plain(fn, program.args)
    assert found >= 3


def test_parts_helpers_are_unpacked_with_a_star_and_spread_into_calls(tmp_path):
    # a helper returning three parts is unpacked with a star (the starred list read later) or
    # spread into a helper taking them; those programs pass the oracle. The feature is drawn from
    # a stream of its own: programs without the helpers are unchanged by it
    features = ("starred", "elementwise", "loops", "containers", "branches")
    programs = [generate(seed, features=features) for seed in range(40)]
    starred = [p for p in programs if "starred" in p.uses]
    assert len(starred) >= 8
    unpacked = r"^\s+(\w+, \*\w+|\*\w+, \w+) = \w+\("
    spread = r"^\s+\w+ = \w+\((\*\w+\(.*\)|.*, \*\w+\(.*\)\[1:\])\)$"
    assert sum(bool(re.search(unpacked, p.source, re.M)) for p in starred) >= 4
    assert sum(bool(re.search(spread, p.source, re.M)) for p in starred) >= 4
    without = tuple(f for f in FEATURES if f != "starred")
    unchanged = [seed for seed in range(20) if generate(seed).source == generate(seed, features=without).source]
    assert len(unchanged) >= 6
    stats = run(14, SEED + 4, MODES[:2], features=features, log=None, budget=3.0, directory=tmp_path)
    assert not stats.failures, "\n" + report(stats, MODES[:2])
    assert stats.by_feature[("starred", "rev")]["pass"] >= 3


def test_local_lists_and_getters_are_looped_and_picked_and_pass_the_oracle(tmp_path):
    # lists of objects, lambdas and functions made in the entry and looped over (some unrolled by
    # srcad, some refused: mutated, aliased, read after the loop); itemgetter/attrgetter keys and
    # maps. Drawn from streams of their own after the entry's body: programs without them unchanged
    features = ("local_lists", "getters", "elementwise", "loops")
    programs = [generate(seed, features=features) for seed in range(40)]
    listed = [p for p in programs if "local_lists" in p.uses]
    getting = [p for p in programs if "getters" in p.uses]
    assert len(listed) >= 12 and len(getting) >= 12
    loop = r"^    for (\w+) in (\w+):\n        \w+ = \1\(\w+\)$"
    assert sum(bool(re.search(loop, p.source, re.M)) for p in listed) >= 8
    assert sum(bool(re.search(r"for \w+, \w+ in zip\(", p.source)) for p in listed) >= 2
    assert sum(bool(re.search(r"\.(item|attr)getter\(", p.source)) for p in getting) == len(getting)
    without = tuple(f for f in FEATURES if f not in ("local_lists", "getters"))
    unchanged = [seed for seed in range(20) if generate(seed).source == generate(seed, features=without).source]
    assert len(unchanged) >= 3
    stats = run(14, SEED + 5, MODES[:2], features=features, log=None, budget=3.0, directory=tmp_path)
    assert not stats.failures, "\n" + report(stats, MODES[:2])
    assert stats.by_feature[("local_lists", "rev")]["pass"] >= 2
    assert stats.by_feature[("getters", "rev")]["pass"] >= 2
