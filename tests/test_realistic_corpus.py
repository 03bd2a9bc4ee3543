"""The realistic corpus (tests/realistic/): every program in reverse (joint adjoint and the
pullback called twice), forward (jvp) and, for losses, second order (forward over reverse and
reverse over reverse), against central finite differences. A program srcad cannot take must be
refused with a srcad error naming the program's file and line; such programs are listed in
REFUSED with a fragment of the message; any other outcome (a wrong value, a crash, an unclear
error) fails."""
import pytest

from realistic import all_cases
from realistic.checks import MODES, applies, outcome

ALL = "reverse forward hvp grad_of_grad".split()

# program -> (modes, fragment of the refusal): what srcad does not take yet, and says so
# (a fragment starting with "unclear: " is a refusal that does not name the user's line)
REFUSED = {
    # the cutoff's adjoint through spectrum * mask(cutoff) needs a conjugate (forward mode is right)
    "images.fft_lowpass_cutoff": (["reverse", "hvp", "grad_of_grad"], "complex values only through"),
    # second order: the first adjoint's complex values reach np.abs's rule helper unit_phase,
    # which srcad differentiates through its source as a function of real arguments (refused at
    # the user's line, naming the generated one)
    "images.fft_lowpass": (["hvp", "grad_of_grad"], "while differentiating srcad's derivative of fft_lowpass"),
}

CASES = [(case, mode) for case in all_cases() for mode in MODES if applies(case, mode)]


def test_corpus_is_large_and_spread_over_domains():
    names = {case.name for case in all_cases()}
    assert len(names) == len(all_cases()) >= 30
    assert len({name.split(".")[0] for name in names}) >= 15
    assert set(REFUSED) <= names


@pytest.mark.parametrize("case,mode", CASES, ids=[f"{case.name}-{mode}" for case, mode in CASES])
def test_realistic_program(case, mode):
    verdict, message = outcome(case, mode)
    modes, fragment = REFUSED.get(case.name, ((), None))
    if mode in modes:  # the table stays true: an entry srcad now takes is removed from it
        assert verdict != "right", f"{case.name} is right in {mode} now: remove it from REFUSED"
        expected = "unclear" if fragment.startswith("unclear: ") else "refused"
        assert verdict == expected, f"expected a {expected} refusal, got {verdict}: {message}"
        assert fragment.removeprefix("unclear: ") in message, message
    else:
        assert verdict == "right", message
