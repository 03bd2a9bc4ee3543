"""What a compilation took as fixed from module state is guarded (probe 21B): a rule template's
module-level names and the module attributes its ``if`` tests decide on (in memory and in the
persistent cache), the module attributes a helper srcad inlines reads (in the persistent
cache's key), and a global srcad resolved that code it runs as written would rebind during the
call (refused when compiled). Each gradient is compared with central finite differences in
random directions; a refusal must name the user's file and line."""
import importlib
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import srcad
from srcad import cache_store, pipeline

RNG = np.random.default_rng(21)


def _agrees_with_differences(f, g, x, directions=3, eps=1e-6):
    """``g`` (srcad's gradient of ``f`` at ``x``) against central differences along random directions."""
    for _ in range(directions):
        u = RNG.standard_normal(x.shape)
        fd = (f(x + eps * u) - f(x - eps * u)) / (2 * eps)
        np.testing.assert_allclose(np.vdot(g, u), fd, rtol=1e-5, atol=1e-7)


@pytest.fixture
def modules(tmp_path, monkeypatch):
    """``make(name, text)``: a module of that source in a fresh directory, imported."""
    monkeypatch.syspath_prepend(str(tmp_path))
    made = []

    def make(name, text):
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))
        importlib.invalidate_caches()
        sys.modules.pop(name, None)
        made.append(name)
        return importlib.import_module(name)

    yield make
    for name in made:
        sys.modules.pop(name, None)


@pytest.fixture
def transforms(monkeypatch):
    """How many times the pipeline has run (a compilation, not a cache hit)."""
    count = [0]
    original = pipeline.transform

    def counted(*args, **kwargs):
        count[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(pipeline, "transform", counted)
    return count


RULE_WITH_CONSTANT = """
    import numpy as np
    import srcad

    K = 2.0

    @srcad.custom_vjp
    def scaled_sin(x):
        return np.sin(K * x)

    @scaled_sin.defvjp
    def scaled_sin_vjp(y, x):
        d[x] += d[y] * K * np.cos(K * x)

    def f(x):
        return np.sum(scaled_sin(x))

    def f2(x):
        return np.sum(scaled_sin(x) * x)
"""


def test_a_rules_module_constant_rebound_recompiles(modules):
    m = modules("facts_rule_constant", RULE_WITH_CONSTANT)
    x = np.array([0.3, 0.7])
    g = srcad.grad(m.f)
    _agrees_with_differences(m.f, g(x), x)  # the rule first used with K = 2
    m.K = 3.0
    _agrees_with_differences(m.f, g(x), x)  # the same derivative object, called again
    _agrees_with_differences(m.f, srcad.grad(m.f)(x), x)
    _agrees_with_differences(m.f2, srcad.grad(m.f2)(x), x)  # another function, first made now


def test_a_rules_unchanged_constant_compiles_once(modules, transforms):
    m = modules("facts_rule_constant_kept", RULE_WITH_CONSTANT)
    x = np.array([0.3, 0.7])
    g = srcad.grad(m.f)
    for _ in range(5):
        _agrees_with_differences(m.f, g(x), x, directions=1)
    assert transforms[0] == 1


def test_a_rules_decided_flag_rebound(modules):
    m = modules("facts_rule_flag", """
        import numpy as np
        import srcad

        FLAG = True

        @srcad.custom_vjp
        def power(x):
            return x ** 2 if FLAG else x ** 3

        @power.defvjp
        def power_vjp(y, x):
            if FLAG:
                d[x] += d[y] * 2 * x
            else:
                d[x] += d[y] * 3 * x ** 2

        def f(x):
            return np.sum(power(x))
    """)
    x = np.array([0.3, 0.7])
    _agrees_with_differences(m.f, srcad.grad(m.f)(x), x)
    m.FLAG = False
    _agrees_with_differences(m.f, srcad.grad(m.f)(x), x)


SQUARE_RULE = """
    import numpy as np
    import {config}
    from srcad.extend import register_vjp

    def sq(x):
        return x ** 2 if {config}.SQUARE else x ** 3

    @register_vjp(sq)
    def sq_vjp(y, x):
        if {config}.SQUARE:
            d[x] += d[y] * 2 * x
        else:
            d[x] += d[y] * 3 * x ** 2

    def f(x):
        return np.sum(sq(x))
"""


def test_a_registered_rules_decision_on_a_module_attribute(modules):
    config = modules("facts_square_config", "SQUARE = True\n")
    m = modules("facts_square_rule", SQUARE_RULE.format(config="facts_square_config"))
    x = np.array([0.3, 0.7])
    g = srcad.grad(m.f)
    _agrees_with_differences(m.f, g(x), x)
    config.SQUARE = False
    _agrees_with_differences(m.f, g(x), x)


# ---- the persistent cache, across processes

def _run_child(tmp_path, script, cache_dir):
    env = dict(os.environ, SRCAD_CACHE_DIR=str(cache_dir), PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join([str(tmp_path), os.path.dirname(os.path.dirname(srcad.__file__))]))
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


_CHILD = """
    import json, sys, warnings
    sys.dont_write_bytecode = True
    warnings.simplefilter("ignore")
    import numpy as np, srcad
    from srcad import pipeline
    count = [0]
    original = pipeline.transform
    def counted(*args, **kwargs):
        count[0] += 1
        return original(*args, **kwargs)
    pipeline.transform = counted
    import m
    x = np.array([0.3, 0.7])
    rng = np.random.default_rng(0)
    try:
        g = srcad.grad(m.f)(x)
    except srcad.SrcadError as e:
        print(json.dumps({"refused": str(e), "transforms": count[0]}))
        raise SystemExit
    eps = 1e-6
    us = rng.standard_normal((3, 2))
    fd = [(m.f(x + eps * u) - m.f(x - eps * u)) / (2 * eps) for u in us]
    print(json.dumps({"along": [float(np.vdot(g, u)) for u in us], "fd": fd, "transforms": count[0]}))
"""


def _right(result):
    assert "refused" not in result, result["refused"]
    np.testing.assert_allclose(result["along"], result["fd"], rtol=1e-5, atol=1e-7)


@pytest.mark.skipif(not cache_store._SUPPORTED, reason="the persistent cache needs POSIX O_NOFOLLOW and dir_fd")
def test_disk_cache_holds_a_rules_decision_on_a_module_attribute(tmp_path):
    cache_dir = tmp_path / "cache"
    (tmp_path / "m.py").write_text(textwrap.dedent(SQUARE_RULE.format(config="cfgr")))
    (tmp_path / "cfgr.py").write_text("SQUARE = True\n")
    first = _run_child(tmp_path, _CHILD, cache_dir)
    _right(first)
    (tmp_path / "cfgr.py").write_text("SQUARE = False\n")
    second = _run_child(tmp_path, _CHILD, cache_dir)
    _right(second)
    assert second["transforms"] == 1  # the entry made for SQUARE = True is not used
    third = _run_child(tmp_path, _CHILD, cache_dir)
    _right(third)
    assert third["transforms"] == 0  # nothing changed since: the entry is used


@pytest.mark.skipif(not cache_store._SUPPORTED, reason="the persistent cache needs POSIX O_NOFOLLOW and dir_fd")
def test_disk_cache_key_covers_what_an_inlined_helper_reads(tmp_path):
    cache_dir = tmp_path / "cache"
    (tmp_path / "m.py").write_text(textwrap.dedent("""
        import numpy as np
        import cfgc

        def step(y):
            z = np.imag(y * cfgc.C) + y * cfgc.D
            return z

        def f(x):
            for i in range(2):
                x = step(x)
            return np.sum(x)
    """))
    (tmp_path / "cfgc.py").write_text("C = 2.0\nD = 1.5\n")
    _right(_run_child(tmp_path, _CHILD, cache_dir))
    (tmp_path / "cfgc.py").write_text("C = 1.0 + 2.0j\nD = 1.5\n")
    second = _run_child(tmp_path, _CHILD, cache_dir)
    assert "refused" in second and "m.py:6" in second["refused"], second  # complex C: refused at the helper's line
    assert second["transforms"] == 1


def test_a_module_attribute_turned_complex_after_compiling_is_refused(modules):
    config = modules("facts_complex_config", "C = 2.0\n")
    m = modules("facts_complex_user", """
        import numpy as np
        import facts_complex_config

        def g(x):
            z = np.imag(x * facts_complex_config.C) + x
            return np.sum(z)
    """)
    x = np.array([0.3, 0.7])
    d = srcad.grad(m.g)
    _agrees_with_differences(m.g, d(x), x)
    config.C = 1.0 + 2.0j
    with pytest.raises(srcad.SrcadError, match=r"facts_complex_user\.py:6: 'facts_complex_config\.C' is complex"):
        d(x)


# ---- code srcad runs as written, rebinding during the call what the code was compiled for

def test_a_call_that_rebinds_a_resolved_global_is_refused(modules):
    m = modules("facts_configure", """
        import types
        import numpy as np

        act = np.sin
        cfg = types.SimpleNamespace(act=np.sin)

        def configure():
            global act
            act = np.cos

        def f(x):
            configure()
            return np.sum(act(x) * x)

        def configure_attribute():
            cfg.act = np.cos

        def f_attribute(x):
            configure_attribute()
            return np.sum(cfg.act(x) * x)

        def configure_reflectively():
            globals()["act"] = np.cos

        def f_reflectively(x):
            configure_reflectively()
            return np.sum(act(x) * x)
    """)
    x = np.array([0.3, 0.7])
    for f, line, what in ((m.f, 10, "rebinds the global 'act'"), (m.f_attribute, 17, "sets the attribute 'act'"),
                          (m.f_reflectively, 24, r"may rebind globals through globals\(\)")):
        with pytest.raises(srcad.SrcadError, match=rf"facts_configure\.py:{line}: \w+ {what} while {f.__name__} runs"):
            srcad.grad(f)(x)


def test_a_call_that_rebinds_something_else_is_differentiated(modules, transforms):
    m = modules("facts_counter", """
        import numpy as np

        act = np.sin
        calls = 0
        settings = {"scale": 2.0}

        def count():
            global calls
            calls += 1

        def f(x):
            count()
            return np.sum(act(x) * x) * settings["scale"]
    """)
    x = np.array([0.3, 0.7])
    g = srcad.grad(m.f)
    for _ in range(3):
        _agrees_with_differences(m.f, g(x), x, directions=1)
    assert transforms[0] == 1


HOLES = """
    import importlib
    import operator
    import sys
    import numpy as np

    act = np.sin

    class Cfg:
        act = staticmethod(np.sin)

    inst = Cfg()

    class Cfg2:
        act = np.sin

    def make_closure():
        a = np.sin
        def inner(x):
            return np.sum(a(x))
        return inner

    inner = make_closure()

    def apply(x, a=np.sin):
        return np.sum(a(x))

    def r_sysmod():
        sys.modules[__name__].act = np.cos

    def r_import_module():
        importlib.import_module(__name__).act = np.cos

    def r_fglobals():
        r_fglobals.__globals__["act"] = np.cos

    def r_update():
        g = r_update.__globals__
        g.update(act=np.cos)

    def r_setitem():
        operator.setitem(r_setitem.__globals__, "act", np.cos)

    def r_cell():
        inner.__closure__[0].cell_contents = np.cos

    def r_defaults():
        h = apply
        h.__defaults__ = (np.cos,)

    def r_class():
        Cfg.act = staticmethod(np.cos)

    def r_alias():
        c = Cfg2
        c.act = np.cos

    def r_reload():
        importlib.reload(sys.modules[__name__])

    def f_sysmod(x):
        r_sysmod()
        return np.sum(act(x))

    def f_import_module(x):
        r_import_module()
        return np.sum(act(x))

    def f_fglobals(x):
        r_fglobals()
        return np.sum(act(x))

    def f_update(x):
        r_update()
        return np.sum(act(x))

    def f_setitem(x):
        r_setitem()
        return np.sum(act(x))

    def f_cell(x):
        r_cell()
        return inner(x)

    def f_defaults(x):
        r_defaults()
        return apply(x)

    def f_class(x):
        r_class()
        return np.sum(inst.act(x))

    def f_alias(x):
        r_alias()
        return np.sum(Cfg2.act(x))

    def f_reload(x):
        r_reload()
        return np.sum(act(x))
"""


@pytest.mark.parametrize("name, line, what", [
    ("sysmod", 29, "sets the attribute 'act'"),
    ("import_module", 32, "sets the attribute 'act'"),
    ("fglobals", 35, "reads __globals__"),
    ("update", 38, "reads __globals__"),  # (where the namespace is taken: the update is a line below)
    ("setitem", 42, "reads __globals__"),
    ("cell", 45, "reads __closure__"),
    ("defaults", 49, "sets the attribute '__defaults__'"),
    ("class", 52, "sets the attribute 'act'"),  # srcad guarded inst.act: Cfg holds it
    ("alias", 56, "sets the attribute 'act'"),  # a class of yours, though its type is `type`
    ("reload", 59, r"reloads a module"),
])
def test_a_call_that_rebinds_by_another_way_is_refused_at_the_store(modules, name, line, what):
    m = modules(f"facts_holes_{name}", HOLES)
    f = getattr(m, f"f_{name}")
    with pytest.raises(srcad.SrcadSyntaxError, match=rf"facts_holes_{name}\.py:{line}: r_{name} {what}"):
        srcad.grad(f)(np.array([0.3, 0.7]))


def test_ordinary_code_near_guarded_names_is_differentiated(modules, transforms):
    m = modules("facts_ordinary", """
        import dataclasses
        import functools
        import logging
        import numpy as np

        act = np.sin
        calls = 0
        log = logging.getLogger("facts_ordinary")

        @dataclasses.dataclass(frozen=True)
        class Point:
            scale: float

        class Counter:
            def __init__(self):
                self.n = 0
                self.act = "a label, on an object of yours not guarded"

            def bump(self, **kw):
                for k, v in kw.items():
                    setattr(self, k, v)
                self.n += 1

        counter = Counter()

        def memo(fn):
            cache = {}
            @functools.wraps(fn)
            def wrapped(k):
                if k not in cache:
                    cache[k] = fn(k)
                return cache[k]
            return wrapped

        @memo
        def factor(k):
            return 2.0 * k

        def helper():
            global calls
            calls += 1
            counter.bump(label="x")
            logging.basicConfig(level=logging.WARNING)
            log.debug("called")

        def f(x):
            helper()
            p = Point(factor(1.0))
            return np.sum(act(x) * x) * p.scale
    """)
    x = np.array([0.3, 0.7])
    g = srcad.grad(m.f)
    for _ in range(2):
        _agrees_with_differences(m.f, g(x), x, directions=1)
    assert transforms[0] == 1
