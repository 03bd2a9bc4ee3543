"""Models held in objects: parameters and settings are attributes, the loss is a method."""
import types

import numpy as np

import srcad
from realistic import Case


class RidgeModel:
    """Least squares with an L2 penalty; the data and settings live on the object."""

    def __init__(self, X, y, reg):
        self.X = X
        self.y = y
        self.cfg = types.SimpleNamespace(reg=reg, scale=0.5)

    def loss(self, w):
        r = self.X @ w - self.y
        return self.cfg.scale * np.mean(r ** 2) + self.cfg.reg * np.dot(w, w)


class Quadratic:
    """A model whose loss is decorated: ``obj.energy.grad(x)`` is how it is called."""

    def __init__(self, A, b):
        self.A = A
        self.b = b

    @srcad.differentiable
    def energy(self, x):
        return 0.5 * x @ self.A @ x - self.b @ x + np.sum(np.cosh(x))


class Softplus:
    def __init__(self, beta):
        self.beta = beta

    def __call__(self, z):
        return np.log1p(np.exp(self.beta * z)) / self.beta


class TwoStage:
    """A loss that calls another method and a callable attribute of the object."""

    def __init__(self, W, beta):
        self.W = W
        self.act = Softplus(beta)

    def features(self, x):
        return self.act(self.W @ x)

    def loss(self, x):
        h = self.features(x)
        return np.sum(h * h) + np.sum(np.sin(x))


class Welford:
    """Parameters passed as a dict the method reads by key."""

    def __init__(self, params):
        self.params = params

    def loss(self, x):
        p = self.params
        z = np.tanh(p["W"] @ x + p["b"])
        return np.sum(z ** 2) * p["gain"]


def cases():
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((8, 3)), rng.standard_normal(8)
    ridge = RidgeModel(X, y, 0.1)
    A = rng.standard_normal((4, 4))
    quad = Quadratic(A @ A.T + np.eye(4), rng.standard_normal(4))
    two = TwoStage(rng.standard_normal((5, 3)), 1.5)
    wel = Welford({"W": rng.standard_normal((4, 3)), "b": rng.standard_normal(4), "gain": 0.7})
    return [
        Case("objects.ridge_bound_method", ridge.loss, (rng.standard_normal(3),), 0),
        Case("objects.decorated_method", quad.energy, (rng.standard_normal(4) * 0.5,), 0),
        Case("objects.method_calls_method", two.loss, (rng.standard_normal(3),), 0),
        Case("objects.dict_attribute", wel.loss, (rng.standard_normal(3),), 0),
    ]
