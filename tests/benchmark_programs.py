"""The benchmarks' programs, for tests that check them (one copy of each program)."""
import importlib.util
import pathlib
import sys


def benchmark_module(name):
    """``benchmarks/<name>.py`` as a module (srcad reads the programs' source through it)."""
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", path)
    if spec.name in sys.modules:
        return sys.modules[spec.name]
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
