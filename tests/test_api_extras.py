"""What users reach for around the transforms: ``srcad.testing`` after ``import srcad``,
pickling a decorated function (by reference, like any function), and ``srcad.show``
printing the adjoints of the helpers the function calls. Gradients are checked against
finite differences."""
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import srcad
from srcad.testing import check_grads

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(code, cwd):
    """Run ``code`` as a script in a fresh interpreter (a file: srcad reads functions' source)."""
    script = cwd / "script.py"
    script.write_text(textwrap.dedent(code))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, str(cwd)])}
    done = subprocess.run([sys.executable, str(script)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_srcad_testing_is_reachable_after_import_srcad(tmp_path):
    out = _run("""
        import numpy as np
        import srcad
        print(*srcad.testing.check_grads(lambda x: np.sum(np.sin(x)), (np.array([0.1, 0.2]),), v=1.0).tolist())
    """, tmp_path)
    np.testing.assert_allclose([float(v) for v in out.split()], np.cos([0.1, 0.2]), rtol=1e-12)


MODULE = """
import numpy as np
import srcad


@srcad.differentiable(argnums=1)
def energy(x, w):
    return np.sum(np.tanh(w @ x) ** 2)


class Model:
    @srcad.differentiable
    def loss(self, x):
        return np.sum(x ** 3)


def plain(x, w):
    return np.sum(np.sin(w @ x))
"""


def test_a_decorated_module_level_function_pickles_by_reference(tmp_path):
    (tmp_path / "pickled_module.py").write_text(MODULE)
    path = str(tmp_path / "functions.pickle")
    _run(f"""
        import pickle, srcad
        import pickled_module as m
        open({path!r}, "wb").write(pickle.dumps([m.energy, m.Model.loss, srcad.differentiable(m.plain, wrt=1)]))
    """, tmp_path)
    assert b"pickled_module" in open(path, "rb").read()  # a reference to the module attribute, not the code
    out = _run(f"""
        import pickle
        import numpy as np
        import srcad
        energy, loss, plain = pickle.loads(open({path!r}, "rb").read())  # in another process
        import pickled_module as m
        assert energy is m.energy and loss is m.Model.loss and plain is not m.plain
        x, w = np.array([0.3, -0.4]), np.array([[0.5, 1.0], [-1.5, 0.2]])
        np.testing.assert_allclose(energy.grad(x, w), srcad.testing.check_grads(m.energy, (x, w), wrt=1, v=1.0),
                                   rtol=1e-12)
        np.testing.assert_allclose(plain.grad(x, w), srcad.testing.check_grads(m.plain, (x, w), wrt=1, v=1.0),
                                   rtol=1e-12)
        print("ok")
    """, tmp_path)
    assert out.strip() == "ok"


class Holder:
    @srcad.differentiable
    def loss(self, x):
        return np.sum(x ** 2)


def test_a_method_bound_to_an_object_is_refused_with_what_to_do():
    with pytest.raises(TypeError, match="pickle the object and read the method"):
        pickle.dumps(Holder().loss)


def helper(x):
    return np.sin(x) * x


def inner(x):
    return helper(x) ** 2


def calls_helpers(x):
    return np.sum(inner(x) + helper(x))


def test_show_prints_the_helpers_adjoints_each_once(capsys):
    x = np.array([0.2, 0.5, 0.9])
    check_grads(calls_helpers, (x,), v=1.0)
    srcad.show(calls_helpers, x)
    out = capsys.readouterr().out
    assert "def calls_helpers_adjoint(" in out
    for name in ("inner", "helper"):
        assert out.count(f"def {name}_forward(") == 1 and out.count(f"def {name}_backward(") == 1
    assert "# called above: helper's adjoint" in out
