"""The files numba's disk cache hangs from (``$SRCAD_CACHE_DIR/numba``): written once, never
replaced, used only in a private directory and only with the contents they are named for."""
import os
import stat

import pytest

from srcad.backends import numba_cache


def test_a_file_is_written_once_privately_and_found_again(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("SRCAD_CACHE_DIR", str(directory))
    path = numba_cache.anchor_file("ab" * 32, "def f():\n    return 1\n")
    assert path == os.path.join(str(directory), "numba", f"srcad_{'ab' * 20}.py")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(directory / "numba").st_mode) == 0o700
    stamp = os.stat(path).st_mtime_ns
    assert numba_cache.anchor_file("ab" * 32, "def f():\n    return 1\n") == path
    assert os.stat(path).st_mtime_ns == stamp  # numba keys its cache by this stamp: never rewritten


def test_a_file_with_other_contents_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("SRCAD_CACHE_DIR", str(tmp_path / "cache"))
    path = numba_cache.anchor_file("cd" * 32, "x = 1\n")
    with open(path, "w") as f:
        f.write("x = 2\n")
    assert numba_cache.anchor_file("cd" * 32, "x = 1\n") is None


def test_a_directory_others_may_enter_is_not_used(tmp_path, monkeypatch):
    directory = tmp_path / "shared"
    directory.mkdir(mode=0o755)
    os.chmod(directory, 0o755)
    monkeypatch.setenv("SRCAD_CACHE_DIR", str(directory))
    with pytest.warns(UserWarning, match="must be 700"):
        assert numba_cache.anchor_file("ef" * 32, "x = 1\n") is None
    assert not (directory / "numba").exists()


def test_without_the_variable_nothing_is_written(monkeypatch):
    monkeypatch.delenv("SRCAD_CACHE_DIR", raising=False)
    assert numba_cache.directory() is None
    assert numba_cache.anchor_file("01" * 32, "x = 1\n") is None
