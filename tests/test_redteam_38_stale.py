"""A rule of yours whose function is replaced after srcad read it (``h_vjp.__code__ = ...``,
which IPython's ``%autoreload`` does to every function of a module it reloads, or its
``__defaults__`` rebound) is read again: srcad parsed a template once, when it was registered,
and kept generating, and serving compiled code made from, the old one (found by a red-team
probe of stale code, helper 188). Checked against central finite differences of what Python
runs now, in every mode."""
import importlib
import sys
import textwrap

import numpy as np
import pytest
from lang_checks import check_all_modes, made_by

import srcad
from srcad.testing import check_grads

X = np.array([0.3, -0.4, 0.9])

RULES = """
import numpy as np
import srcad
import srcad.extend

@srcad.custom_vjp
def h(x, k=1.0):
    return np.sin(k * x)

@h.defvjp
def h_vjp(y, x, k=1.0):
    d[x] += d[y] * k * np.cos(k * x)

@h.defjvp
def h_jvp(y, x, k=1.0):
    t[y] += t[x] * k * np.cos(k * x)

def h2(x, k=1.0):
    return np.sin(2 * k * x)

def h2_vjp(y, x, k=1.0):
    d[x] += d[y] * 2 * k * np.cos(2 * k * x)

def h2_jvp(y, x, k=1.0):
    t[y] += t[x] * 2 * k * np.cos(2 * k * x)

def f(x):
    return np.sum(h(x) * x)

def f_k(x):
    return np.sum(h(x, 1.5) * x)

def e(x):
    return np.sin(x)

@srcad.extend.register_elementwise(e)
def e_slope(y, x):
    return np.cos(x)

def e2(x):
    return np.sin(2 * x)

def e2_slope(y, x):
    return 2 * np.cos(2 * x)

def p(x, a):
    return np.sin(x) * a

@srcad.extend.register_partials(p)
def p_partials(y, x, a):
    return {x: np.cos(x) * a, a: np.sin(x)}

def p2(x, a):
    return np.sin(2 * x) * a

def p2_partials(y, x, a):
    return {x: 2 * np.cos(2 * x) * a, a: np.sin(2 * x)}

def f_e(x):
    return np.sum(e(x) * x)

def f_p(x):
    return np.sum(p(x, 1.5) * x)
"""


@pytest.fixture
def rules(tmp_path, monkeypatch):
    """A fresh module of rules (a module per test: its functions are changed in place)."""
    name = f"redteam38_rules_{len(sys.modules)}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(RULES))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield importlib.import_module(name)
    sys.modules.pop(name, None)


def swap_code(m):
    """What %autoreload does when the rule's file now says sin(2kx): the function and its
    rules get the new code, in place."""
    m.h.fn.__code__ = m.h2.__code__
    m.h_vjp.__code__ = m.h2_vjp.__code__
    m.h_jvp.__code__ = m.h2_jvp.__code__
    for fn, new in ((m.e, m.e2), (m.e_slope, m.e2_slope), (m.p, m.p2), (m.p_partials, m.p2_partials)):
        fn.__code__ = new.__code__


def swap_defaults(m):
    for fn in (m.h.fn, m.h_vjp, m.h_jvp):
        fn.__defaults__ = (2.0,)


@pytest.mark.parametrize("change", [swap_code, swap_defaults])
@pytest.mark.parametrize("name", ["f", "f_k", "f_e", "f_p"])
def test_a_rule_changed_in_place_after_compiling_is_read_again(rules, change, name):
    f = getattr(rules, name)
    grad = srcad.grad(f)
    _, pullback = srcad.vjp(f, X)
    check_all_modes(f, (X,))
    change(rules)
    if change is swap_defaults and name != "f":  # (k passed, or no defaults: nothing changes)
        check_all_modes(f, (X,))
        return
    check_grads(f, (X,))  # fresh transforms, code made before the change in the cache
    check_all_modes(f, (X,))
    np.testing.assert_allclose(grad(X), srcad.grad(f)(X), rtol=1e-12)  # the transform made before
    assert made_by(lambda: grad(X)) == 0  # and then steady


@pytest.mark.parametrize("name", ["f", "f_e", "f_p"])
def test_a_rule_changed_in_place_before_first_use_is_read_as_it_is(rules, name):
    swap_code(rules)
    check_all_modes(getattr(rules, name), (X,))



@pytest.mark.parametrize("change", [swap_code, swap_defaults])
def test_the_persistent_cache_holds_code_of_a_rule_of_yours_for_that_rule_only(rules, cache_dir, monkeypatch, change):
    from srcad import code_cache, pipeline
    from srcad import compile as srcad_compile

    check_grads(rules.f, (X,))
    assert list(cache_dir.iterdir())  # code made from a rule of yours is cached
    transform = pipeline.transform

    def no_transform(*a, **k):
        raise AssertionError("the pipeline ran although the code was cached")

    monkeypatch.setattr(srcad_compile, "_CACHE", code_cache.CodeCache())
    monkeypatch.setattr(pipeline, "transform", no_transform)
    check_grads(rules.f, (X,))  # read from the entry
    change(rules)
    monkeypatch.setattr(pipeline, "transform", transform)
    check_all_modes(rules.f, (X,))  # the code loaded is guarded on the rule as it was
    monkeypatch.setattr(srcad_compile, "_CACHE", code_cache.CodeCache())
    check_all_modes(rules.f, (X,))  # and the entry made from the old rule is not used


@pytest.mark.parametrize("name, template", [("f_e", "e_slope"), ("f_p", "p_partials")])
def test_a_rule_whose_file_was_edited_before_first_use_is_refused(rules, name, template):
    """An elementwise or partials template is parsed on first use: its file, edited since the
    module was imported (``np.cos(x)`` now ``np.cos(x) * 2``), no longer holds the code that
    runs. It read the new text, a derivative of no code that runs."""
    path = rules.__file__
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text.replace("np.cos(x)", "np.cos(x) * 2"))
    with pytest.raises(srcad.SourceUnavailableError, match=rf"{template}.*not the code that runs.*reload"):
        srcad.grad(getattr(rules, name))(X)
