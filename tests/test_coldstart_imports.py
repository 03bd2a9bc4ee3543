"""``import srcad`` does not import ``numpy.testing`` (~40 ms); code that calls its checks
(``np.testing.assert_*`` as statements, ``with np.testing.suppress_warnings()``) has imported
it, and srcad then treats them as before. Fresh processes, values against finite differences."""
import importlib.util
import json
import pathlib
import subprocess
import sys
import textwrap

import numpy as np

ROOT = str(pathlib.Path(importlib.util.find_spec("srcad").origin).parents[1])

PROGRAM = """
    import json, sys
    import numpy as np
    import srcad
    before = "numpy.testing" in sys.modules

    def f(x):
        y = np.sin(x) * 2.0
        np.testing.assert_array_less(np.abs(y), 3.0)  # a check: it runs, with no derivative
        with np.testing.suppress_warnings():
            z = y * x
        return np.sum(z)

    x = np.array([0.3, -0.8, 1.1])
    g = srcad.grad(f)(x)
    print(json.dumps({"before": before, "grad": list(g)}))
"""


def test_import_srcad_leaves_numpy_testing_unimported_and_its_checks_work(tmp_path):
    script = tmp_path / "program.py"  # srcad reads the function's source from its file
    script.write_text(textwrap.dedent(PROGRAM))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            cwd=ROOT, env={"PYTHONPATH": ROOT, "PATH": ""})
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["before"] is False
    x = np.array([0.3, -0.8, 1.1])
    f = lambda x: np.sum(np.sin(x) * 2.0 * x)
    u = np.array([0.4, -0.2, 0.9])
    numeric = (f(x + 1e-6 * u) - f(x - 1e-6 * u)) / 2e-6
    np.testing.assert_allclose(np.dot(out["grad"], u), numeric, rtol=1e-6)
