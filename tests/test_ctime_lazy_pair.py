"""The forward/backward pair is made from the joint adjoint's statements only when first needed:
what it says, how it runs and how errors through it read do not depend on when that is.

(No timings here: benchmarks/compile_time.py measures them.)
"""
import linecache
import os
import traceback

import numpy as np
import pytest

import srcad
from source_lines import line_ending_with
from srcad import cache_store
from srcad import code_cache
from srcad import compile as srcad_compile
from srcad import pipeline
from srcad.testing import check_grads

HERE = os.path.abspath(__file__)


def line_of(text):
    return line_ending_with(HERE, text)


def roots(x, W):
    h = np.tanh(x @ W)
    total = 0.0
    for i in range(2):
        h = h * 0.5 + np.sqrt(x[i] * x[i])  # <root>
        total = total + np.sum(h * h)
    return total


def inputs():
    rng = np.random.default_rng(5)
    return rng.standard_normal(3), rng.standard_normal((3, 3))


@pytest.fixture
def fresh_cache(monkeypatch):
    monkeypatch.setattr(srcad_compile, "_CACHE", code_cache.CodeCache())


def test_the_pair_made_after_grad_ran_is_the_pair_made_first(fresh_cache, monkeypatch):
    x, W = inputs()
    later = srcad.differentiable(roots, wrt=(0, 1))
    grads = later.adjoint(x, W)
    later_text = later.vjp_source
    monkeypatch.setattr(srcad_compile, "_CACHE", code_cache.CodeCache())
    first = srcad.differentiable(roots, wrt=(0, 1))
    y, pullback = first.vjp(x, W)  # the pair is made before any code runs
    assert later_text == first.vjp_source
    assert "def roots_backward(" in later_text and "copy_value" not in later.adjoint_source
    for g, h in zip(pullback(1.0), grads):
        np.testing.assert_allclose(g, h, rtol=1e-12)
    check_grads(later, (x, W), wrt=(0, 1))  # the pullback is called twice there


def test_an_error_in_a_backward_made_late_names_its_own_line_and_the_users(fresh_cache):
    x, W = inputs()
    x[0] = 0.0  # sqrt(0): fine forward, its derivative divides by zero
    f = srcad.differentiable(roots, wrt=(0, 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        f.adjoint(x, W)  # the pair is not made yet
    y, pullback = f.vjp(x, W)
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError) as info:
        pullback(1.0)
    entries = [(fs.filename, fs.lineno, fs.name) for fs in traceback.extract_tb(info.value.__traceback__)]
    user = next(i for i, e in enumerate(entries) if e[0] == HERE and e[1] == line_of("# <root>"))
    generated = entries[user + 1]
    assert generated[0].startswith("<srcad-generated ") and "vjp" in generated[0], entries
    line = linecache.getline(generated[0], generated[1])
    assert "np.sqrt" not in line and "/" in line, line  # the reverse sweep's line, as compiled


@pytest.mark.skipif(not cache_store._SUPPORTED, reason="the persistent cache needs POSIX O_NOFOLLOW and dir_fd")
def test_the_disk_cache_keeps_the_pair(cache_dir, monkeypatch):
    x, W = inputs()
    made = srcad.differentiable(roots, wrt=(0, 1))
    grads = made.adjoint(x, W)
    text = made.vjp_source
    monkeypatch.setattr(srcad_compile, "_CACHE", code_cache.CodeCache())

    def no_transform(*a, **k):
        raise AssertionError("the pipeline ran although the code was cached")

    monkeypatch.setattr(pipeline, "transform", no_transform)
    loaded = srcad.differentiable(roots, wrt=(0, 1))
    y, pullback = loaded.vjp(x, W)
    assert loaded.vjp_source == text
    for g, h in zip(pullback(1.0), grads):
        np.testing.assert_allclose(g, h, rtol=1e-12)
    check_grads(loaded, (x, W), wrt=(0, 1))
