"""srcad is typed (``py.typed``): ``mypy --strict`` accepts the examples and a typed user
script, keeps a decorated function's signature (``ParamSpec``) through ``.grad`` and
``srcad.grad``, and reports a call that does not fit it. mypy runs in a subprocess."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# srcad is found through MYPYPATH (an editable install's import hook is invisible to mypy),
# which would make mypy check srcad's own modules as if they were the user's: only the
# user's files are checked here, as for an installed package. SciPy ships no types.
CONFIG = """\
[mypy]
cache_dir = {cache}

[mypy-srcad.*]
ignore_errors = True

[mypy-scipy.*]
ignore_missing_imports = True
"""

USER = '''\
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

import srcad

Array = NDArray[np.float64]


@srcad.differentiable
def loss(x: Array, w: Array, scale: float = 2.0) -> float:
    return float(scale * np.sum(np.tanh(x @ w) ** 2))


def residuals(x: Array, w: Array) -> Array:
    return np.tanh(x @ w)


def main() -> None:
    x, w = np.ones(3), np.ones((3, 2))
    value: float = loss(x, w)
    g: Array = loss.grad(x, w)
    (v, gw) = loss.value_and_grad(x, w, scale=3.0)
    y, pullback = loss.vjp(x, w)
    by_w: Callable[[Array, Array, float], Any] = srcad.grad(loss, argnums=1)
    both = srcad.value_and_grad(residuals, wrt=(0, 1))
    out, cotangents = srcad.vjp(residuals, x, w, argnums=1)
    jac = srcad.jacobian(residuals, argnums=(0, 1))(x, w)
    hess = srcad.hessian(loss)(x, w)
    hp = srcad.hessp(loss)(x, np.ones(3), w)
    checked = srcad.testing.check_grads(loss, (x, w), v=1.0)
    print(value, g, v, gw, y, pullback(1.0), by_w(x, w, 1.0), both, out, cotangents(np.ones(2)), jac, hess, hp,
          checked, srcad.stop_gradient(x))
    srcad.show(loss)
'''

WRONG = '''\
import numpy as np
from numpy.typing import NDArray

import srcad


@srcad.differentiable
def loss(x: NDArray[np.float64], w: NDArray[np.float64], scale: float = 2.0) -> float:
    return float(scale * np.sum(np.tanh(x @ w) ** 2))


def main() -> None:
    x, w = np.ones(3), np.ones((3, 2))
    loss.grad(x)
    srcad.grad(loss)(x, w, "3")
    name: str = loss(x, w)
    srcad.value_and_grad(loss)(x, w, scale="big")
'''


def _mypy(tmp_path, *paths):
    pytest.importorskip("mypy")  # installed by the test extra (pyproject.toml)
    config = tmp_path / "mypy.ini"
    config.write_text(CONFIG.format(cache=tmp_path / "cache"))
    env = {**os.environ, "MYPYPATH": ROOT}
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--config-file", str(config), *map(str, paths)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    return done.returncode, done.stdout + done.stderr


def test_py_typed_is_shipped():
    assert os.path.exists(os.path.join(ROOT, "srcad", "py.typed"))
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        text = f.read()
    assert 'srcad = ["py.typed"]' in text and '"mypy' in text


def test_mypy_strict_accepts_the_examples_and_a_typed_user_script(tmp_path):
    (tmp_path / "user.py").write_text(USER)
    code, out = _mypy(tmp_path, tmp_path / "user.py", os.path.join(ROOT, "examples"))
    assert code == 0, out


def test_mypy_strict_reports_calls_that_do_not_fit_the_signature(tmp_path):
    (tmp_path / "wrong.py").write_text(textwrap.dedent(WRONG))
    code, out = _mypy(tmp_path, tmp_path / "wrong.py")
    assert code == 1, out
    for line, message in [(14, 'Missing positional argument "w" in call to "grad"'),
                          (15, 'Argument 3 has incompatible type "str"; expected "float"'),
                          (16, 'Incompatible types in assignment (expression has type "float", variable has type "str")'),
                          (17, 'Argument "scale" has incompatible type "str"; expected "float"')]:
        assert f"wrong.py:{line}: error: {message}" in out, out
