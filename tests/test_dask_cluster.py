"""The gradient of a logistic-regression loss over a chunked Dask array, computed on a
``dask.distributed.LocalCluster`` of two worker processes, matches NumPy's.

The issue's size (2,000,000 × 20) runs in ``examples/dask_logistic_regression.py``; here a
smaller array keeps the test well under a minute on a shared machine."""
import dask
import dask.array as da
import numpy as np
import pytest
from dask.distributed import Client, LocalCluster

import srcad
from conftest import load_example


def logistic_loss(w, X, y):
    return np.mean(np.logaddexp(0.0, -y * (X @ w))) + 1e-3 * np.sum(w ** 2)


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit="1GiB") as cluster, Client(cluster) as client:
        yield client


def test_logistic_regression_gradient_on_a_local_cluster(client):
    rows, features = 50_000, 20
    chunks = rows // 8
    data = da.random.default_rng(0)  # made on the workers, chunk by chunk
    X = data.normal(size=(rows, features), chunks=(chunks, features))
    y = da.sign(X @ np.linspace(-1, 1, features) + data.normal(size=rows, chunks=chunks))
    X, y = client.persist([X, y])  # the data lives on the workers
    X_np, y_np = client.compute([X, y], sync=True)
    rng = np.random.default_rng(1)
    w = rng.normal(size=features) * 0.1

    graphs = []

    def counting_get(dsk, keys, **kwargs):
        graphs.append(keys)
        return client.get(dsk, keys, **kwargs)

    with dask.config.set(scheduler=counting_get):
        value, grad = srcad.differentiable(logistic_loss).value_and_grad(w, X, y)
        assert graphs == [] and isinstance(grad, da.Array) and grad.shape == (features,)
        value, grad = dask.compute(value, grad)
    assert len(graphs) == 1  # forward and reverse, one graph on the cluster

    expected = srcad.grad(logistic_loss)(w, X_np, y_np)
    np.testing.assert_allclose(grad, expected, rtol=1e-10)
    np.testing.assert_allclose(value, logistic_loss(w, X_np, y_np), rtol=1e-12)
    # and against central finite differences of the loss itself, along a random direction
    u = rng.normal(size=features)
    eps = 1e-6
    numeric = (logistic_loss(w + eps * u, X_np, y_np) - logistic_loss(w - eps * u, X_np, y_np)) / (2 * eps)
    assert abs(numeric - grad @ u) <= 1e-7 + 1e-5 * abs(numeric)


def test_the_example_trains_on_the_cluster(client):
    example = load_example("dask_logistic_regression")
    X, y = example.make_data(rows=10_000, features=5, chunk_rows=2_500)
    X, y = client.persist([X, y])
    X_np, y_np = client.compute([X, y], sync=True)
    penalty = 1e-3
    w, value, _ = example.fit_lbfgs(X, y, penalty, iterations=50)
    # the optimum NumPy's gradient sees: zero gradient, and the loss value there
    np.testing.assert_allclose(srcad.grad(example.loss)(w, X_np, y_np, penalty), 0.0, atol=1e-5)
    np.testing.assert_allclose(value, example.loss(w, X_np, y_np, penalty), rtol=1e-10)
    w_steps, value_steps, _ = example.fit_gradient_steps(X, y, penalty, iterations=3)
    assert value_steps > value  # three plain steps are not at the optimum yet
    np.testing.assert_allclose(value_steps, example.loss(w_steps, X_np, y_np, penalty), rtol=1e-10)
