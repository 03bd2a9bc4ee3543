"""The code that runs is the code that was differentiated: every binding the compiler resolved
(globals, closure cells, attribute paths, NumPy's own functions, the function's code and
its source file) is checked, and a changed one means new code or a clear refusal."""
import importlib
import importlib.util
import sys
import textwrap
import types

import numpy as np
import pytest

import srcad
from srcad.errors import SourceUnavailableError
from srcad.testing import check_grads, check_jvp

X = np.array([0.2, 0.7, -0.5])


class Config:
    pass


cfg = Config()
cfg.act = np.tanh


def through_attribute(x):
    return np.sum(cfg.act(x) * x)


def calls_through_attribute(x):
    return through_attribute(x) * 2.0


def check_all_modes(fun, args=(X,)):
    check_grads(fun, args, modes=("rev",))
    check_jvp(fun, args)


@pytest.fixture
def restore_cfg():
    yield
    cfg.act = np.tanh


def test_attribute_held_callable_rebound_after_first_use(restore_cfg):
    d = srcad.differentiable(through_attribute)
    tanh_grad = d.grad(X)
    np.testing.assert_allclose(tanh_grad, (1 - np.tanh(X) ** 2) * X + np.tanh(X))
    check_all_modes(through_attribute)
    cfg.act = np.sin
    np.testing.assert_allclose(d.grad(X), np.cos(X) * X + np.sin(X))  # the same wrapper notices
    check_all_modes(through_attribute)  # a fresh one does not reuse the tanh code
    check_all_modes(calls_through_attribute)  # nor does a caller whose callee's binding changed


def test_attribute_rebound_under_a_caller(restore_cfg):
    d = srcad.differentiable(calls_through_attribute)
    d.grad(X)
    cfg.act = np.sin
    np.testing.assert_allclose(d.grad(X), 2 * (np.cos(X) * X + np.sin(X)))


def make_with_nonlocal():
    act = np.tanh

    def f(x):
        return np.sum(act(x) ** 2)

    def use_sin():
        nonlocal act
        act = np.sin

    return f, use_sin


def test_closure_cell_rebound_with_nonlocal():
    f, use_sin = make_with_nonlocal()
    d = srcad.differentiable(f)
    np.testing.assert_allclose(d.grad(X), 2 * np.tanh(X) * (1 - np.tanh(X) ** 2))
    use_sin()
    np.testing.assert_allclose(d.grad(X), 2 * np.sin(X) * np.cos(X))
    check_all_modes(f)
    y, pullback = d.vjp(X)
    np.testing.assert_allclose(pullback(1.0), 2 * np.sin(X) * np.cos(X))


def uses_numpy_sin(x):
    return np.sum(np.sin(x) * x)


def my_sin(x):  # what a monkeypatch might put in place of np.sin
    return 2.0 * x ** 3


def test_monkeypatched_numpy_function(monkeypatch):
    d = srcad.differentiable(uses_numpy_sin)
    np.testing.assert_allclose(d.grad(X), np.cos(X) * X + np.sin(X))
    expected = 8.0 * X ** 3  # of sum(my_sin(x) * x)
    monkeypatch.setattr(np, "sin", my_sin)
    np.testing.assert_allclose(d.grad(X), expected)  # differentiates what np.sin is now
    check_all_modes(uses_numpy_sin)


def uses_numpy_cos_rule(x):
    return np.sum(np.sin(x) ** 2)


def test_monkeypatched_function_a_rule_emits(monkeypatch):
    """The rule of np.sin emits ``np.cos``: generated code reading ``np.cos`` while it is
    patched would compute another derivative silently; the guard recompiles instead."""
    d = srcad.differentiable(uses_numpy_cos_rule)
    expected = 2 * np.sin(X) * np.cos(X)
    np.testing.assert_allclose(d.grad(X), expected)
    monkeypatch.setattr(np, "cos", lambda x: np.zeros_like(x))
    with pytest.raises(srcad.errors.SrcadError, match="numpy.cos, which has been replaced"):
        d.grad(X)  # np.cos is no longer NumPy's: no silent result
    monkeypatch.undo()
    np.testing.assert_allclose(d.grad(X), expected)


def swapped_b(x):
    return np.sum(x ** 3)


def test_code_swapped_like_autoreload():
    def f(x):
        return np.sum(x ** 2)

    d = srcad.differentiable(f)
    np.testing.assert_allclose(d.grad(X), 2 * X)
    f.__code__ = swapped_b.__code__
    np.testing.assert_allclose(d.grad(X), 3 * X ** 2)  # the same wrapper: the new code's gradient


def test_code_swapped_with_its_new_source(tmp_path):
    """What %autoreload does: the module file changes and the function's __code__ is replaced."""
    path = tmp_path / "srcad_autoreloaded.py"
    path.write_text("import numpy as np\n\ndef f(x):\n    return np.sum(x ** 2)\n")
    module = _import(path)
    d = srcad.differentiable(module.f)
    np.testing.assert_allclose(d.grad(X), 2 * X)
    path.write_text("import numpy as np\n\ndef f(x):\n    return np.sum(x ** 3)\n")
    fresh = compile(path.read_text(), str(path), "exec")
    module.f.__code__ = next(c for c in fresh.co_consts if isinstance(c, types.CodeType))
    np.testing.assert_allclose(d.grad(X), 3 * X ** 2)
    check_all_modes(module.f)


def test_source_edited_on_disk_after_import_is_refused(tmp_path):
    path = tmp_path / "srcad_edited.py"
    path.write_text("import numpy as np\n\ndef f(x):\n    return np.sum(np.sin(x))\n")
    module = _import(path)
    path.write_text("import numpy as np\n\ndef f(x):\n    return np.sum(np.cos(x))\n")
    import linecache

    linecache.checkcache(str(path))
    with pytest.raises(SourceUnavailableError, match="edited after the module was imported") as info:
        srcad.grad(module.f)(X)
    assert str(path) in str(info.value)
    module = _import(path)  # what the message says to do: import it again
    check_all_modes(module.f)


@pytest.mark.parametrize("edited", ["\n\ndef f(x):\n", "\ndef g(x):\n", "\ndef f(x:\n"])
def test_an_edit_that_moves_or_breaks_the_def_says_to_reload(tmp_path, edited):
    """Lines added above the function, the def renamed, or a syntax error at its first line: the
    text srcad finds there is no def of it (3.13 may find the moved def, which is not the code that runs),
    and the message says the file may have been edited."""
    path = tmp_path / "srcad_moved.py"
    path.write_text("import numpy as np\n\ndef f(x):\n    return np.sum(np.sin(x))\n")
    module = _import(path)
    path.write_text("import numpy as np\n" + edited + "    return np.sum(np.cos(x))\n")
    import linecache

    linecache.checkcache(str(path))
    with pytest.raises(SourceUnavailableError, match="edited after (its|the) module was imported") as info:
        srcad.grad(module.f)(X)
    assert f"{path}:3" in str(info.value) and "importlib.reload" in str(info.value)


def test_unchanged_sources_of_every_kind_are_accepted(tmp_path):
    """Methods (mangled names, super), closures, nested defs, lambdas, imported modules,
    future annotations: the recompiled source is the running code."""
    path = tmp_path / "srcad_kinds.py"
    path.write_text(textwrap.dedent('''
        from __future__ import annotations
        import numpy as np
        import numpy


        class Base:
            def scale(self):
                return 2.0


        class Model(Base):
            __k = 3.0

            def loss(self, x):
                def inner(t: float) -> float:
                    return numpy.sin(t) * self._Model__k
                return np.sum(inner(x)) * super().scale()


        def make(a):
            def f(x):
                return np.sum(np.tanh(x) * a)
            return f


        square = lambda x: np.sum(x * x)


        def long_loop(x):  # jumps past 256 bytes: EXTENDED_ARG where the standalone copy has none
            s = 0.0
            for k in range(2):
                s = s + np.sin(x[0]) * np.cos(x[1]) + np.tanh(x[2])
                s = s + np.sin(x[0]) * np.cos(x[1]) + np.tanh(x[2])
                s = s + np.sin(x[0]) * np.cos(x[1]) + np.tanh(x[2])
                s = s + np.sin(x[0]) * np.cos(x[1]) + np.tanh(x[2])
                s = s + np.sin(x[0]) * np.cos(x[1]) + np.tanh(x[2])
                s = s + np.sin(x[0]) * np.cos(x[1]) + np.tanh(x[2])
                s = s + np.sin(x[0]) * np.cos(x[1]) + np.tanh(x[2])
                s = s + np.sin(x[0]) * np.cos(x[1]) + np.tanh(x[2])
            return s
    '''))
    module = _import(path)
    model = module.Model()
    check_grads(srcad.differentiable(module.Model.loss, wrt=1), (model, X), wrt=1)
    check_all_modes(module.make(1.5))
    check_all_modes(module.square)
    check_all_modes(module.long_loop)


def _import(path):
    name = path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
