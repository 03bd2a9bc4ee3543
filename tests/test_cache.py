"""The persistent cache (SRCAD_CACHE_DIR): safety of the directory and the entries, and
round trips that must give the same gradients as a fresh transformation."""
import json
import os
import stat
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import srcad
from srcad import cache_store
from srcad import code_cache
from srcad import compile as srcad_compile
from srcad import pipeline
from srcad.testing import check_grads

pytestmark = pytest.mark.skipif(not cache_store._SUPPORTED, reason="the persistent cache needs POSIX O_NOFOLLOW and dir_fd")



def entries(path):
    return sorted(p.name for p in path.iterdir())


def model(W, b, xs):
    h = np.zeros(W.shape[1])
    loss = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + b + 0.5 * h)
        loss = loss + np.sum(h ** 2)
    return loss * np.exp(-np.mean(np.abs(b)))


def model_inputs():
    rng = np.random.default_rng(3)
    return rng.standard_normal((4, 3)) * 0.5, rng.standard_normal(3), rng.standard_normal((5, 4))


act = np.tanh


def uses_global(x):
    return np.sum(act(x))


def helper(x):
    return np.sin(x) * x


def calls_helper(x):
    return np.sum(helper(x) ** 2)


# ---- the directory

def test_directory_is_created_private(cache_dir):
    assert cache_store.store("material", "payload")
    assert stat.S_IMODE(os.stat(cache_dir).st_mode) == 0o700
    assert cache_store.load("material") == "payload"


def test_no_environment_variable_means_no_cache(tmp_path, monkeypatch):
    monkeypatch.delenv(cache_store.ENV_VAR, raising=False)
    assert cache_store.store("material", "payload") is False
    assert cache_store.load("material") is None
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("mode", [0o755, 0o750, 0o701, 0o770])
def test_directory_with_wider_permissions_is_refused(cache_dir, mode):
    cache_dir.mkdir()
    os.chmod(cache_dir, mode)
    with pytest.warns(cache_store.CacheWarning, match="must be 700"):
        assert cache_store.store("material", "payload") is False
    assert entries(cache_dir) == []
    assert cache_store.load("material") is None  # warned once only: no second warning expected here


def test_directory_of_another_user_is_refused(cache_dir, monkeypatch):
    cache_dir.mkdir(mode=0o700)
    real_uid = os.getuid()
    monkeypatch.setattr(cache_store.os, "getuid", lambda: real_uid + 1)
    with pytest.warns(cache_store.CacheWarning, match=f"belongs to uid {real_uid}"):
        assert cache_store.store("material", "payload") is False
    assert entries(cache_dir) == []


def test_symlinked_directory_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_store, "_warned", set())
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    monkeypatch.setenv(cache_store.ENV_VAR, str(link))
    with pytest.warns(cache_store.CacheWarning, match="symlink is refused"):
        assert cache_store.store("material", "payload") is False
    assert list(real.iterdir()) == []


def test_a_file_in_place_of_the_directory_is_refused(cache_dir):
    cache_dir.write_text("not a directory")
    with pytest.warns(cache_store.CacheWarning):
        assert cache_store.load("material") is None


def test_platform_without_nofollow_caches_nothing(cache_dir, monkeypatch):
    monkeypatch.setattr(cache_store, "_SUPPORTED", False)
    with pytest.warns(cache_store.CacheWarning, match="caches nothing"):
        assert cache_store.store("material", "payload") is False
    assert not cache_dir.exists()


# ---- the entries

def test_entry_is_private_and_carries_its_hashes(cache_dir):
    assert cache_store.store("material", "payload")
    (name,) = entries(cache_dir)
    assert name == cache_store._digest("material")
    info = os.stat(cache_dir / name)
    assert stat.S_IMODE(info.st_mode) == 0o600
    header = (cache_dir / name).read_text().split("\n\n")[0].split("\n")
    assert header == [cache_store.FORMAT, f"key {name}", f"sha256 {cache_store._digest('payload')}"]


def test_write_replaces_atomically_and_leaves_no_temporary(cache_dir, monkeypatch):
    assert cache_store.store("material", "old")
    replaced = []
    real_replace = os.replace

    def spy(src, dst, **kwargs):
        replaced.append((src, dst, kwargs.get("src_dir_fd") is not None))
        assert cache_store.load("material") == "old"  # readers see the whole old entry until the rename
        return real_replace(src, dst, **kwargs)

    monkeypatch.setattr(cache_store.os, "replace", spy)
    assert cache_store.store("material", "new")
    (src, dst, relative), = replaced
    assert dst == cache_store._digest("material") and src.endswith(".tmp") and relative
    assert cache_store.load("material") == "new"
    assert entries(cache_dir) == [cache_store._digest("material")]


def test_failed_write_keeps_the_old_entry(cache_dir, monkeypatch):
    assert cache_store.store("material", "old")

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache_store.os, "fsync", broken_fsync)
    with pytest.warns(cache_store.CacheWarning, match="could not write"):
        assert cache_store.store("material", "new") is False
    assert cache_store.load("material") == "old"
    assert entries(cache_dir) == [cache_store._digest("material")]  # the temporary file is gone


def test_tampered_payload_is_rejected(cache_dir):
    assert cache_store.store("material", "payload")
    path = cache_dir / cache_store._digest("material")
    path.write_text(path.read_text().replace("payload", "pAyload"))
    assert cache_store.load("material") is None


def test_entry_under_another_key_is_rejected(cache_dir):
    assert cache_store.store("material", "payload")
    os.rename(cache_dir / cache_store._digest("material"), cache_dir / cache_store._digest("other material"))
    assert cache_store.load("other material") is None


def test_entry_of_another_format_is_rejected(cache_dir):
    assert cache_store.store("material", "payload")
    path = cache_dir / cache_store._digest("material")
    path.write_text(path.read_text().replace(cache_store.FORMAT, "srcad-cache 0"))
    assert cache_store.load("material") is None


def test_symlinked_entry_is_not_followed(cache_dir, tmp_path):
    assert cache_store.store("material", "payload")
    name = cache_store._digest("material")
    elsewhere = tmp_path / "elsewhere"
    os.rename(cache_dir / name, elsewhere)
    (cache_dir / name).symlink_to(elsewhere)
    assert cache_store.load("material") is None


def test_group_writable_entry_is_rejected(cache_dir):
    assert cache_store.store("material", "payload")
    os.chmod(cache_dir / cache_store._digest("material"), 0o620)
    assert cache_store.load("material") is None


def test_entry_that_is_not_a_regular_file_is_rejected(cache_dir):
    cache_dir.mkdir(mode=0o700)
    (cache_dir / cache_store._digest("material")).mkdir()
    assert cache_store.load("material") is None


# ---- generated code through the cache

def test_round_trip_skips_the_pipeline_and_gives_the_same_gradients(cache_dir, monkeypatch):
    args = model_inputs()
    fresh = srcad.differentiable(model, wrt=(0, 1)).adjoint(*args)
    assert len(entries(cache_dir)) == 1

    monkeypatch.setattr(srcad_compile, "_CACHE", code_cache.CodeCache())

    def no_transform(*a, **k):
        raise AssertionError("the pipeline ran although the code was cached")

    monkeypatch.setattr(pipeline, "transform", no_transform)
    d = srcad.differentiable(model, wrt=(0, 1))
    cached = d.adjoint(*args)
    for g, h in zip(cached, fresh):
        np.testing.assert_array_equal(g, h)
    assert "def model_adjoint" in d.adjoint_source
    check_grads(d, args, wrt=(0, 1))


def test_round_trip_in_a_fresh_process(cache_dir, tmp_path):
    script = tmp_path / "user_model.py"
    script.write_text(textwrap.dedent("""
        import json, sys
        import numpy as np
        import srcad
        from srcad import pipeline

        def f(x, W):
            h = np.tanh(x @ W)
            return np.sum(h * h) + np.sum(np.exp(-W))

        if sys.argv[1] == "cached":
            def no_transform(*a, **k):
                raise AssertionError("the pipeline ran although the code was cached")
            pipeline.transform = no_transform
        rng = np.random.default_rng(0)
        x, W = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
        print(json.dumps([g.tolist() for g in srcad.differentiable(f, wrt=(0, 1)).adjoint(x, W)]))
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [os.path.dirname(os.path.dirname(srcad.__file__)),
                                                                      os.environ.get("PYTHONPATH")])))

    def run(mode):
        out = subprocess.run([sys.executable, str(script), mode], env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    first = run("fresh")
    assert len(entries(cache_dir)) == 1
    second = run("cached")
    assert second == first
    x = np.array(first[0])
    assert x.shape == (3, 4) and np.all(np.isfinite(x))


def test_rebinding_a_global_callee_is_a_different_entry(cache_dir, monkeypatch):
    x = np.linspace(0.1, 1.0, 4)
    np.testing.assert_allclose(srcad.grad(uses_global)(x), 1 - np.tanh(x) ** 2)
    monkeypatch.setattr(srcad_compile, "_CACHE", code_cache.CodeCache())
    monkeypatch.setitem(globals(), "act", np.sin)
    np.testing.assert_allclose(srcad.grad(uses_global)(x), np.cos(x))
    assert len(entries(cache_dir)) == 2


def test_code_that_calls_another_differentiated_function_is_not_cached(cache_dir):
    x = np.linspace(-1.0, 1.0, 5)
    g = srcad.grad(calls_helper)(x)
    np.testing.assert_allclose(g, 2 * (np.sin(x) * x) * (np.cos(x) * x + np.sin(x)))
    # the callee's own code is cached; the caller's closes over the callee's generated functions
    (name,) = entries(cache_dir)
    payload = (cache_dir / name).read_text()
    assert "def helper_adjoint" in payload and "calls_helper_adjoint" not in payload


def test_entry_with_an_unknown_helper_is_a_miss(cache_dir, monkeypatch):
    args = model_inputs()
    fresh = srcad.differentiable(model, wrt=(0, 1)).adjoint(*args)
    (name,) = entries(cache_dir)
    path = cache_dir / name
    header, payload = path.read_text().split("\n\n", 1)
    fields = json.loads(payload)
    first = sorted(fields["closure"])[0]
    fields["closure"][first] = ["srcad.runtime", "no_such_helper"]
    payload = json.dumps(fields, sort_keys=True)
    lines = header.split("\n")
    path.write_text("\n".join(lines[:2] + [f"sha256 {cache_store._digest(payload)}"]) + "\n\n" + payload)
    monkeypatch.setattr(srcad_compile, "_CACHE", code_cache.CodeCache())
    again = srcad.differentiable(model, wrt=(0, 1)).adjoint(*args)  # transformed afresh
    for g, h in zip(again, fresh):
        np.testing.assert_array_equal(g, h)


# ---- entries that must never hang, import or run

def test_fifo_in_place_of_an_entry_does_not_hang(cache_dir):
    """Regression: the entry was opened blocking, so a FIFO under its name waited for a writer."""
    cache_dir.mkdir(mode=0o700)
    os.mkfifo(cache_dir / cache_store._digest("material"), 0o600)
    result = []
    reader = threading.Thread(target=lambda: result.append(cache_store.load("material")), daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive(), "loading an entry that is a FIFO hangs"
    assert result == [None]


def test_symlink_anywhere_in_the_directory_path_is_refused(tmp_path, monkeypatch):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    monkeypatch.setenv(cache_store.ENV_VAR, str(tmp_path / "link" / "srcad-cache"))
    monkeypatch.setattr(cache_store, "_warned", set())
    with pytest.warns(cache_store.CacheWarning, match="'link' in it is a symlink"):
        assert cache_store.store("material", "payload") is False
    assert not (real / "srcad-cache").exists()  # nothing created through the link


def _rewrite_entry(path, change):
    header, payload = path.read_text().split("\n\n", 1)
    fields = json.loads(payload)
    change(fields)
    payload = json.dumps(fields, sort_keys=True)
    lines = header.split("\n")
    path.write_text("\n".join(lines[:2] + [f"sha256 {cache_store._digest(payload)}"]) + "\n\n" + payload)


def test_an_entry_never_imports_the_modules_it_names(cache_dir, monkeypatch, tmp_path):
    marker = tmp_path / "imported"
    (tmp_path / "srcad_entry_named_module.py").write_text(
        f"open({str(marker)!r}, 'w').close()\ndef helper(x):\n    return x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    args = model_inputs()
    fresh = srcad.differentiable(model, wrt=(0, 1)).adjoint(*args)
    (name,) = entries(cache_dir)

    def name_the_module(fields):
        fields["closure"][sorted(fields["closure"])[0]] = ["srcad_entry_named_module", "helper"]

    _rewrite_entry(cache_dir / name, name_the_module)
    monkeypatch.setattr(srcad_compile, "_CACHE", code_cache.CodeCache())
    again = srcad.differentiable(model, wrt=(0, 1)).adjoint(*args)  # a miss: transformed afresh
    assert not marker.exists() and "srcad_entry_named_module" not in sys.modules
    for g, h in zip(again, fresh):
        np.testing.assert_array_equal(g, h)


def test_tampered_generated_code_never_runs(cache_dir, monkeypatch):
    args = model_inputs()
    srcad.differentiable(model, wrt=(0, 1)).adjoint(*args)
    (name,) = entries(cache_dir)
    path = cache_dir / name
    text = path.read_text()
    assert "np.tanh" in text or "tanh" in text
    path.write_text(text.replace("* (1 - ", "* (2 - ").replace("1 - ", "2 - "))  # a wrong derivative, old hash
    assert path.read_text() != text
    monkeypatch.setattr(srcad_compile, "_CACHE", code_cache.CodeCache())
    check_grads(srcad.differentiable(model, wrt=(0, 1)), args, wrt=(0, 1))


class Config:
    pass


cfg = Config()
cfg.act = np.tanh


def through_attribute(x):
    return np.sum(cfg.act(x))


def test_entry_is_used_only_for_the_attribute_bindings_it_was_made_for(cache_dir, monkeypatch):
    """Regression: the key described ``cfg`` by its type only, so a process where
    ``cfg.act`` is ``np.sin`` reused the code made for ``np.tanh``."""
    x = np.linspace(0.1, 1.0, 4)
    np.testing.assert_allclose(srcad.grad(through_attribute)(x), 1 - np.tanh(x) ** 2)
    monkeypatch.setattr(srcad_compile, "_CACHE", code_cache.CodeCache())  # as in a new process
    monkeypatch.setattr(cfg, "act", np.sin)
    np.testing.assert_allclose(srcad.grad(through_attribute)(x), np.cos(x))
    check_grads(through_attribute, (x,))
    monkeypatch.setattr(srcad_compile, "_CACHE", code_cache.CodeCache())
    monkeypatch.setattr(cfg, "act", np.tanh)  # the entry (one per key) is now sin's: a miss, never sin's code
    np.testing.assert_allclose(srcad.grad(through_attribute)(x), 1 - np.tanh(x) ** 2)
