"""Compiled code and the persistent cache (SRCAD_CACHE_DIR) treat Dask arrays by class,
shape, dtype and chunking — never by their data (a graph is not hashed, nor computed)."""
import dask
import dask.array as da
import numpy as np
import pytest

import srcad
from srcad import cache, cache_store
from srcad import code_cache
from srcad import compile as srcad_compile
from srcad import pipeline
from srcad.guards import protocol_array_key

pytestmark = pytest.mark.skipif(not cache_store._SUPPORTED, reason="the persistent cache needs POSIX O_NOFOLLOW and dir_fd")



def loss(w, X):
    return np.sum(np.logaddexp(0.0, X @ w))


def _no_computation(*args, **kwargs):
    raise AssertionError("a graph was computed")


def test_the_key_is_class_shape_dtype_and_chunks():
    x = da.ones((6, 4), chunks=(3, 2))
    assert protocol_array_key(x) == (da.Array, (6, 4), np.dtype(np.float64), ((3, 3), (2, 2)))
    assert protocol_array_key(x * 2) == protocol_array_key(x)  # another graph, the same key
    assert protocol_array_key(x.rechunk((2, 4))) != protocol_array_key(x)


def test_entries_per_chunking_and_a_round_trip_without_the_pipeline(cache_dir, monkeypatch):
    rng = np.random.default_rng(0)
    w, X_np = rng.normal(size=4), rng.normal(size=(6, 4))
    expected = srcad.grad(loss)(w, X_np)
    with dask.config.set(scheduler=_no_computation):
        fresh = srcad.grad(loss)(w, da.from_array(X_np, chunks=(3, 4)))
        assert len(list(cache_dir.iterdir())) == 2  # and the NumPy one
        srcad.grad(loss)(w, da.from_array(X_np + 1.0, chunks=(3, 4)))  # other data: the same entry
        assert len(list(cache_dir.iterdir())) == 2
        # other chunks: the same entry (code for a Dask argument is not specialised on its shape)
        srcad.grad(loss)(w, da.from_array(X_np, chunks=(2, 4)))
        assert len(list(cache_dir.iterdir())) == 2

        monkeypatch.setattr(srcad_compile, "_CACHE", code_cache.CodeCache())

        def no_transform(*a, **k):
            raise AssertionError("the pipeline ran although the code was cached")

        monkeypatch.setattr(pipeline, "transform", no_transform)
        cached = srcad.grad(loss)(w, da.from_array(X_np, chunks=(3, 4)))
    np.testing.assert_array_equal(cached.compute(scheduler="sync"), fresh.compute(scheduler="sync"))
    np.testing.assert_allclose(cached.compute(scheduler="sync"), expected, rtol=1e-12)


def test_a_dask_global_is_described_by_shape_dtype_and_chunks():
    x = da.ones((6, 4), chunks=(3, 2))
    described = cache._describe(x, ())
    assert "(6, 4)" in described and "float64" in described and "((3, 3), (2, 2))" in described
    assert cache._describe(x + 1, ()) == described
