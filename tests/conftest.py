import importlib.util
import pathlib

import numpy as np
import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def load_example(name):
    """Import ``examples/<name>.py`` as a module (the examples are not a package)."""
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A fresh persistent-cache directory in the environment, a fresh in-memory cache,
    warnings re-armed (tests of srcad.cache and srcad.cache_store)."""
    from srcad import cache_store
    from srcad import code_cache
    from srcad import compile as srcad_compile

    path = tmp_path / "srcad-cache"
    monkeypatch.setenv(cache_store.ENV_VAR, str(path))
    monkeypatch.setattr(srcad_compile, "_CACHE", code_cache.CodeCache())
    monkeypatch.setattr(cache_store, "_warned", set())
    return path
