"""The text srcad reads must be the code that runs (srcad.sourcecheck): a file edited after its
module was imported, or code that shares a file name with other code, is refused, never
differentiated in place of the code that runs."""
import importlib
import linecache
import sys

import numpy as np
import pytest

import srcad
from srcad import sourcecheck
from srcad.testing import check_grads


@pytest.fixture
def module_on_disk(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "edited_model.py"
    path.write_text("import numpy as np\n\n\ndef loss(x):\n    return np.sum(x ** 2)\n")
    sys.modules.pop("edited_model", None)
    module = importlib.import_module("edited_model")
    yield path, module
    sys.modules.pop("edited_model", None)


def test_a_file_edited_after_import_is_refused(module_on_disk):
    path, module = module_on_disk
    path.write_text("import numpy as np\n\n\ndef loss(x):\n    return np.sum(x ** 3)\n")
    linecache.checkcache(str(path))
    x = np.array([1.0, 2.0])
    with pytest.raises(srcad.SourceUnavailableError) as info:
        srcad.grad(module.loss)(x)  # the code that runs squares; the file now cubes
    message = str(info.value)
    assert message.startswith(f"{path}:4:") and "is not the code that runs" in message
    assert "reload its module" in message and "source=text" in message
    module = importlib.reload(module)
    np.testing.assert_allclose(srcad.grad(module.loss)(x), 3 * x ** 2)
    check_grads(module.loss, (x,))


def test_code_that_shares_its_file_name_with_other_text_is_refused():
    # python -c on 3.13 keeps the -c text under "<string>", the name every exec'd string has too
    filename = "<string>"
    saved = linecache.cache.get(filename)
    shown = "def f(x):\n    return np.sum(x * 2.0)\n"
    linecache.cache[filename] = (len(shown), None, shown.splitlines(keepends=True), filename)
    try:
        namespace = {"np": np}
        exec(compile("def f(x):\n    return np.sum(x * 3.0)\n", filename, "exec"), namespace)
        with pytest.raises(srcad.SourceUnavailableError, match="is not the code that runs"):
            srcad.grad(namespace["f"])(np.ones(2))
        d = srcad.differentiable(namespace["f"], source="def f(x):\n    return np.sum(x * 3.0)\n")
        np.testing.assert_allclose(srcad.grad(d)(np.ones(2)), [3.0, 3.0])
    finally:
        if saved is None:
            linecache.cache.pop(filename, None)
        else:
            linecache.cache[filename] = saved


def outer(a):
    def inner(x):
        return np.sum(np.sin(x) * a)

    return inner


class Base:
    def energy(self, x):
        return np.sum(x ** 2)


class Derived(Base):
    def energy(self, x):
        return super().energy(x) * 2.0

    def scaled(self, x):
        return np.sum(x ** 2) * self.factor

    factor = 2.0


def test_closures_methods_and_lambdas_of_a_file_pass_the_check():
    x = np.array([0.5, -1.0])
    np.testing.assert_allclose(srcad.grad(outer(2.0))(x), 2.0 * np.cos(x))
    np.testing.assert_allclose(srcad.grad(lambda t: np.sum(t ** 3))(x), 3 * x ** 2)
    check_grads(Derived().scaled, (x,))
    sourcecheck.check(Derived.energy, __file__)  # super(): a __class__ cell, compiled in its class
    check_grads(srcad.grad(outer(3.0)), (x,), v=np.ones(2))  # generated code read again
