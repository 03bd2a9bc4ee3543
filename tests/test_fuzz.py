"""A fixed-seed batch of the adversarial fuzzer (fuzz/): random well-formed NumPy programs,
checked in every mode against finite differences. Fails with the minimal reproducer of each
failure group. ``SRCAD_FUZZ_N=2000`` for a longer hunt; ``make fuzz`` for a random seed."""
import os

from fuzz.generate import FEATURES
from fuzz.oracle import MODES
from fuzz.program import generate
from fuzz.run import report, run

SEED = 20261123
N = int(os.environ.get("SRCAD_FUZZ_N", 80))


def test_fuzz_fixed_seed_batch(tmp_path):
    # time-bounded: generation stops after 50 s, each failure group is minimised for at most 3 s
    stats = run(N, SEED, MODES, log=None, deadline=50.0, budget=3.0, directory=tmp_path)
    assert stats.programs >= 20
    assert not stats.failures, "\n" + report(stats, MODES)


def test_generator_is_deterministic_and_restrictable():
    a, b = generate(7), generate(7)
    assert a.source == b.source and a.entry == b.entry
    plain = generate(7, features=("elementwise",))
    for construct in ("for ", "while ", "if ", "lambda", "def ", ".append("):
        assert construct not in plain.source.split("\n", 3)[-1].split(":", 1)[1] or construct == "def "
    assert set(FEATURES) >= {"loops", "closures", "views", "stores", "fancy", "helpers"}
