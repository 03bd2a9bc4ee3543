"""Every worked example of the PyTorch ``backward(gradient)`` tutorials, done with srcad.

PyTorch's ``y.backward(gradient=v)`` leaves vᵀJ in ``x.grad``; srcad computes the same
vector-Jacobian product from plain NumPy code, by generating an adjoint function.
Run: ``make demo`` (or ``python examples/seeds.py``).
"""
from typing import Any

import numpy as np
from numpy.typing import NDArray

import srcad

Array = NDArray[np.float64]


def show(label: str, value: Any) -> None:
    print(f"{label:<46} {np.array2string(np.asarray(value), separator=', ')}")


# 1. y = x·M, one forward pass, three pullbacks (PyTorch: retain_graph=True) -----------
@srcad.differentiable
def linear(x: Array, M: Array) -> Array:
    return x @ M


x = np.array([[2.0, 1.0]])
M = np.array([[1.0, 2.0], [3.0, 4.0]])
y, pullback = linear.vjp(x, M)
show("y = x @ M", y)
for seed in ([[1.0, 0.0]], [[0.0, 1.0]], [[1.0, 1.0]]):
    show(f"x.grad for v = {seed}", pullback(np.array(seed)))


# 2. y = x², scalar and elementwise ---------------------------------------------------
@srcad.differentiable
def square(x: Any) -> Any:
    return x**2


show("y = x**2 at x = 1, v = 1", square.adjoint(1.0))
show("y = x**2 at x = 1, v = 100", square.adjoint(1.0, 100.0))
xs = np.linspace(-1, 1, 5)
show("y = x**2 on linspace(-1, 1, 5), v = ones", square.adjoint(xs, np.ones_like(xs)))


# 3. y = sum(x) with the builtin sum -------------------------------------------------
@srcad.differentiable
def total(x: Array) -> Any:
    return sum(x)


show("y = sum(x) at [1, 2]", total.grad(np.array([1.0, 2.0])))
show("y = sum(x) at [1, 2], v = 100", total.adjoint(np.array([1.0, 2.0]), 100.0))


# 4. the gradient of (x·x·w).sum() ---------------------------------------------------
@srcad.differentiable
def weighted(x: Array, w: Array) -> Any:
    return (x * x * w).sum()


show("y = (x*x*w).sum() at x = [-1, 2], w = [3, 5]", weighted.grad(np.array([-1.0, 2.0]), np.array([3.0, 5.0])))


# 5. a row-wise function of a matrix, integer weights --------------------------------
@srcad.differentiable
def rowwise(x: Array, w: NDArray[Any]) -> Any:
    return (x * w).sum(1)


X = np.arange(6, dtype=float).reshape(3, 2)
show("y = (x*w).sum(1), v = ones(3)", rowwise.adjoint(X, np.array([-1, 1]), np.ones(3)))


# 6. the derivative of f(x) = (-x³, 5x) at x = 1, one component at a time -------------
@srcad.differentiable
def curve(x: float) -> Array:
    return np.stack([-(x**3), 5 * x]).reshape(1, -1)


y, pullback = curve.vjp(1.0)
show("y(1)", y)
show("y_1'(1) (v = [1, 0])", pullback(np.array([[1.0, 0.0]])))
show("y_2'(1) (v = [0, 1])", pullback(np.array([[0.0, 1.0]])))


# 7. the doubling loop: y = 2x, doubled while ||y|| < 1000 ----------------------------
@srcad.differentiable
def doubling(x: Array) -> Array:
    y = x * 2
    while np.linalg.norm(y) < 1000:
        y = y * 2
    return y


x0 = np.array([1.2, -0.9, 1.5])  # ||2x|| < 1000 until the ninth doubling
v = np.array([0.1, 1.0, 0.0001])
y = doubling(x0)
show("doubling loop: y", y)
show("x.grad for v = [0.1, 1.0, 0.0001]", doubling.adjoint(x0, v))
show("  = 512 * v (the loop doubled nine times)", 512 * v)


# 8. a linear layer and a sigmoid over a 9×9 grid ------------------------------------
def sigmoid(z: Array) -> Array:
    return 1.0 / (1.0 + np.exp(-z))


@srcad.differentiable(wrt=("X", "Y"))
def layer(X: Array, Y: Array, W: Array, b: Array) -> Array:
    n = X.shape[0]
    XY = np.stack([X, Y], -1).reshape(n * n, 2)
    return sigmoid(XY @ W.T + b)


N = 9
Yg, Xg = np.mgrid[-4:4:N * 1j, -4:4:N * 1j]
W = np.array([[0.5, -0.3]])
b = np.array([0.0])
Z = layer(Xg, Yg, W, b)
grad_X, grad_Y = layer.adjoint(Xg, Yg, W, b, np.ones_like(Z))
print(f"{'linear + sigmoid on a 9x9 grid:':<46} X {Xg.shape}, Y {Yg.shape}, Z {Z.shape}, "
      f"grad_X {grad_X.shape}, grad_Y {grad_Y.shape}")
show("grad_X at the centre (= W[0,0] σ'(0) = 0.125)", grad_X[4, 4])

print("\nThe generated adjoint of `weighted` (srcad.show):\n")
srcad.show(weighted)
