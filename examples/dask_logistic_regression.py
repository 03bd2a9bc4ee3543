# mypy: disallow-untyped-calls=False
# (Dask and distributed ship no type information; srcad's own calls are checked)
"""Logistic regression trained out of core: the data is a chunked Dask array that never sits
in one process's memory, and the gradient is srcad's generated adjoint running on it.

    python examples/dask_logistic_regression.py                       # 2,000,000 x 20, local cluster
    python examples/dask_logistic_regression.py --rows 200000 --method gradient-steps
    python examples/dask_logistic_regression.py --scheduler tcp://10.0.0.5:8786

srcad.differentiable(loss).value_and_grad(w, X, y) builds the loss and its gradient lazily
(nothing is computed in the call); ``dask.compute`` evaluates the forward and reverse pass as
one graph, chunk by chunk on the workers. Only the 20 weights travel back to this process.

On a multi-machine cluster the code is the same: start ``dask scheduler`` on one machine and
``dask worker tcp://<scheduler-host>:8786`` on each of the others (srcad need not be
installed on the workers: the graph holds NumPy and Dask functions only), then pass
``--scheduler tcp://<scheduler-host>:8786``. Without it the example starts a
``LocalCluster`` of worker processes on this machine.
"""
import argparse
import contextlib
import time
from typing import Any, Optional, Sequence

import dask.array as da
import dask.base
import numpy as np
import scipy.optimize
from dask.distributed import Client, LocalCluster

import srcad


def loss(w: Any, X: Any, y: Any, penalty: float) -> Any:
    """Mean logistic loss of labels ``y`` in {-1, 1} plus an L2 penalty on the weights."""
    return np.mean(np.logaddexp(0.0, -y * (X @ w))) + penalty * np.sum(w ** 2)


loss_and_grad = srcad.differentiable(loss, wrt=0).value_and_grad


def make_data(rows: int, features: int, chunk_rows: int, seed: int = 0) -> tuple[Any, Any]:
    """A synthetic, separable-with-noise problem generated on the workers chunk by chunk."""
    random = da.random.default_rng(seed)
    X = random.normal(size=(rows, features), chunks=(chunk_rows, features))
    true_w = np.linspace(-1.0, 1.0, features)
    y = da.sign(X @ true_w + 0.5 * random.normal(size=rows, chunks=chunk_rows))
    return X, y


def fit_lbfgs(X: Any, y: Any, penalty: float, iterations: int) -> tuple[Any, float, int]:
    """``scipy.optimize.minimize`` with ``jac=True``: one graph computation per evaluation
    gives the loss and its gradient together."""
    def fun(w: Any) -> tuple[float, Any]:
        value, grad = dask.base.compute(*loss_and_grad(w, X, y, penalty))
        return float(value), np.asarray(grad)

    result = scipy.optimize.minimize(fun, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B",
                                     options={"maxiter": iterations})
    return result.x, result.fun, result.nfev


def fit_gradient_steps(X: Any, y: Any, penalty: float, iterations: int,
                       step: float = 2.0) -> tuple[Any, float, int]:
    """Plain gradient descent with a fixed step."""
    w = np.zeros(X.shape[1])
    for _ in range(iterations):
        _, grad = dask.base.compute(*loss_and_grad(w, X, y, penalty))
        w = w - step * grad
    return w, float(loss(w, X, y, penalty).compute()), iterations


def main(argv: Optional[Sequence[str]] = None) -> tuple[Any, float, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--chunk-rows", type=int, default=250_000)
    parser.add_argument("--iterations", type=int, default=15)
    parser.add_argument("--penalty", type=float, default=1e-4)
    parser.add_argument("--method", choices=("lbfgs", "gradient-steps"), default="lbfgs")
    parser.add_argument("--scheduler", help="address of a running scheduler, e.g. tcp://host:8786")
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the local cluster")
    args = parser.parse_args(argv)

    with contextlib.ExitStack() as stack:
        address = args.scheduler or stack.enter_context(
            LocalCluster(n_workers=args.workers, threads_per_worker=1, dashboard_address=None))
        client = stack.enter_context(Client(address))
        X, y = make_data(args.rows, args.features, min(args.chunk_rows, args.rows))
        X, y = client.persist([X, y])  # kept in the workers' memory (spilled to disk if need be)
        start = time.perf_counter()
        fit = fit_lbfgs if args.method == "lbfgs" else fit_gradient_steps
        w, value, evaluations = fit(X, y, args.penalty, args.iterations)
        elapsed = time.perf_counter() - start
        accuracy = float(da.mean(da.sign(X @ w) == y).compute())
        print(f"{args.rows} x {args.features}, {args.method}: loss {value:.5f}, training accuracy "
              f"{accuracy:.4f}, {evaluations} gradient evaluations in {elapsed:.1f} s")
    return w, value, accuracy


if __name__ == "__main__":
    main()
