"""Run one realistic program in one mode and say how it went: ``right``, ``refused`` (a srcad
error naming the program's file), ``unclear`` (a srcad error that does not name it), ``wrong``
(disagrees with finite differences) or ``crash`` (any other exception).

``python -m realistic.checks`` (from tests/) prints the table for every program."""
import os
import sys
import traceback

import numpy as np

import srcad
from srcad.testing import check_grads, check_jvp

MODES = ("reverse", "forward", "hvp", "grad_of_grad")
TOLERANCES = dict(rtol=1e-4, atol=1e-6)


def is_scalar_valued(case):
    y = case.fun(*case.args)
    return not isinstance(y, (tuple, list, dict)) and np.ndim(y) == 0


def applies(case, mode):
    """Second order is checked where the program returns a number (a loss)."""
    return mode in ("reverse", "forward") or is_scalar_valued(case)


def run(case, mode):
    """Check ``case`` in ``mode`` against central finite differences; raises what it finds."""
    if mode == "reverse":
        check_grads(case.fun, case.args, wrt=case.wrt, mode="both", modes=("rev",), **TOLERANCES)
    elif mode == "forward":
        check_jvp(case.fun, case.args, wrt=case.wrt, **TOLERANCES)
    elif mode == "hvp":
        check_jvp(srcad.grad(case.fun, wrt=case.wrt), case.args, wrt=case.wrt, directions=2, **TOLERANCES)
    elif mode == "grad_of_grad":
        check_grads(srcad.grad(case.fun, wrt=case.wrt), case.args, wrt=case.wrt, mode="both", modes=("rev",), directions=2,
                    **TOLERANCES)
    else:
        raise ValueError(mode)


def outcome(case, mode):
    """``(verdict, message)`` for ``case`` in ``mode``."""
    try:
        run(case, mode)
    except srcad.SrcadError as exc:
        module_file = os.path.basename(sys.modules[case.fun.__module__].__file__)
        clear = module_file in str(exc)
        return ("refused" if clear else "unclear"), f"{type(exc).__name__}: {exc}"
    except AssertionError as exc:
        return "wrong", str(exc)
    except Exception as exc:  # noqa: BLE001 — a crash is what is being recorded
        return "crash", "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return "right", ""


def main():
    from realistic import all_cases

    counts = {}
    for case in all_cases():
        for mode in MODES:
            if not applies(case, mode):
                continue
            verdict, message = outcome(case, mode)
            counts[verdict] = counts.get(verdict, 0) + 1
            line = f"{case.name:40s} {mode:13s} {verdict}"
            print(line + (f"  {message.splitlines()[0][:300] if message else ''}" if verdict != "right" else ""), flush=True)
    print(counts)


if __name__ == "__main__":
    main()
