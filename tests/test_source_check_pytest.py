"""A function whose asserts pytest rewrote (a helper defined in a test file, or a module named on
pytest's command line) is not the code its source says: refused, with pytest named as the
reason and what to do, not 'the file was edited'."""
import ast
import importlib.util
import sys

import numpy as np
import pytest
from _pytest.assertion.rewrite import rewrite_asserts

import srcad

SOURCE = '''
import numpy as np

def checked_energy(x):
    assert x.ndim == 1, "a vector"
    return np.sum(x ** 2)

def plain_energy(x):
    return np.sum(x ** 2)
'''


def _module(tmp_path, rewrite):
    path = tmp_path / f"rewritten_{rewrite}.py"
    path.write_text(SOURCE)
    tree = ast.parse(SOURCE)
    if rewrite:
        rewrite_asserts(tree, SOURCE.encode(), str(path))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    exec(compile(tree, str(path), "exec"), module.__dict__)
    return module


def test_a_function_with_rewritten_asserts_is_refused_naming_pytest(tmp_path):
    module = _module(tmp_path, rewrite=True)
    with pytest.raises(srcad.SourceUnavailableError, match="pytest rewrote its assert statements") as info:
        srcad.grad(module.checked_energy)(np.ones(3))
    assert "rewritten_True.py:4" in str(info.value) and "--assert=plain" in str(info.value)
    # a function of the same module with no assert is its source: differentiated
    np.testing.assert_allclose(srcad.grad(module.plain_energy)(np.arange(3.0)), 2 * np.arange(3.0))


def test_the_same_module_not_rewritten_is_differentiated(tmp_path):
    module = _module(tmp_path, rewrite=False)
    np.testing.assert_allclose(srcad.grad(module.checked_energy)(np.arange(3.0)), 2 * np.arange(3.0))
