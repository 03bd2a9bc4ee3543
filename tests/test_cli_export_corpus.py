"""Every function of the corpus, the model programs and the NumPy/SciPy library cases, exported
and run where srcad cannot be imported: each result equals ``srcad.differentiable(f).adjoint``'s
(which those suites check against finite differences) in type, shape and value."""
import importlib

import numpy as np
import pytest

import srcad
from srcad.arguments import CONTAINERS
from srcad.export import export_source
from test_cli_export import run_isolated, same

SUITES = ["test_corpus", "test_models", "test_library_numpy", "test_library_scipy"]


def cases(suite):
    """``(function, arguments, wrt)`` of a suite; library cases differentiate every float argument."""
    for case in importlib.import_module(suite).CASES:
        if callable(case[0]):
            yield case[:3]
        else:
            _, fn, args = case[:3]
            wrt = tuple(i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f")
            yield fn, tuple(args), wrt if len(wrt) > 1 else wrt[0]


@pytest.mark.parametrize("suite", SUITES)
def test_every_case_exports_and_computes_what_srcad_computes(suite, tmp_path):
    calls, expected = [], []
    for k, (fn, args, wrt) in enumerate(cases(suite)):
        params = srcad.dispatch.generated_params(srcad.api.unwrap(fn))
        containers = [p for p, a in zip(params, args) if isinstance(a, CONTAINERS)]
        d = srcad.differentiable(fn, wrt=wrt)
        y = fn(*args)
        if isinstance(y, CONTAINERS) or np.size(y) != 1:  # a cotangent is needed
            args = tuple(args) + (srcad.testing._random_like(y, np.random.default_rng(k)),)
        expected.append((fn.__qualname__, d.adjoint(*args)))
        (tmp_path / f"exported_{k}.py").write_text(export_source(fn, wrt, containers))
        calls.append((f"exported_{k}", f"{fn.__name__}_adjoint", tuple(args)))
    results = run_isolated(tmp_path, calls)
    wrong = [(name, status, str(got)[:200]) for (name, want), (status, got) in zip(expected, results)
             if status != "ok" or not same(got, want)]
    assert not wrong and len(results) == len(calls) > 5
