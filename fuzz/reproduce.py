"""Run a reproducer file's failing check (the ``if __name__ == '__main__'`` block calls this)."""
import importlib.util
import pathlib
import sys
import types

from . import oracle


def reproduce(path, entry, args, wrt, mode, scalar_output):
    path = pathlib.Path(path)
    spec = importlib.util.spec_from_file_location(f"repro_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    program = types.SimpleNamespace(wrt=tuple(wrt), scalar_output=scalar_output)
    outcome = oracle.check(mode, oracle.entry_of(module, entry), program, list(args))
    print(f"{mode}: {outcome.status} {outcome.key}\n{outcome.detail}")
    return outcome
