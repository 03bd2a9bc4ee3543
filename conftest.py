"""pytest collects doctests from srcad/ too: a module that needs an optional extra is
collected only where that extra is installed (numba: `pip install srcad[numba]`; `make test`
installs it)."""
import importlib.util

collect_ignore = []
if importlib.util.find_spec("numba") is None:
    collect_ignore.append("srcad/backends/numba_runtime.py")
