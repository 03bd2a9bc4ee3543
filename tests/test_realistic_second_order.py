"""Second order where first order works: the constructs issue 10 lists (``np.array`` of
scalars, stacking, kron, cross, sort, repeat with an axis, diff, max over an axis, fancy
indexing inside a helper, calls to user functions), and a boundary row copied from its
neighbour inside a loop (``u[0] = u[1]``), whose first-order adjoint copied a view after the
memory under it had changed, which the aliasing check refused when the adjoint was
differentiated again."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp


def neumann_boundaries(u0, kappa):
    u = u0.copy()
    for n in range(3):
        un = u.copy()
        u[1:-1] = un[1:-1] + kappa * (un[2:] - 2 * un[1:-1] + un[:-2])
        u[0] = u[1]
        u[-1] = u[-2]
    return np.sum(u ** 3)


def rows_shifted(m):
    a = m.copy()
    a[0, :] = a[1, :]
    a[2, :] = a[1, :] * 2.0
    return np.sum(np.sin(a))


def norm_twice_and_a_row(A):
    """The adjoint adds into ``dA[0]`` after ``dA`` was made from norm's reduced adjoint: the
    second derivative was refused as sharing memory with the cotangent (found by an
    adversarial probe)."""
    return np.linalg.norm(A) + np.sum(A[0] ** 3) + np.linalg.norm(A)


CASES = [(neumann_boundaries, (np.linspace(-1.0, 1.0, 6) ** 2, 0.2), (0, 1)),
         (rows_shifted, (np.arange(12.0).reshape(3, 4) / 7.0,), 0),
         (norm_twice_and_a_row, (np.arange(9.0).reshape(3, 3) / 5.0 - 0.7,), 0)]


@pytest.mark.parametrize("fun, args, wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_second_order_of_updates_through_neighbouring_views(fun, args, wrt):
    check_grads(fun, args, wrt=wrt)
    check_jvp(srcad.grad(fun, wrt=wrt), args, wrt=wrt, rtol=1e-4, atol=1e-6)
    check_grads(srcad.grad(fun, wrt=wrt), args, wrt=wrt, rtol=1e-4, atol=1e-6)


def array_of_scalars(x):
    a = np.array([x[0] * x[1], np.sin(x[2]), x[0] ** 2])
    return np.sum(a ** 3)


def stacked(x):
    return np.sum(np.vstack([x, x ** 2]) ** 2) + np.sum(np.hstack([x, np.cos(x)]) ** 3)


def kron_cross(x):
    m = x.reshape(2, 2)
    return np.sum(np.kron(m, m ** 2) ** 2) + np.sum(np.cross(x[:3], x[1:] ** 2) ** 2)


def sorted_repeated(x):
    r = np.repeat(x.reshape(2, 2), 2, axis=1)
    return np.sum(np.sort(x) ** 3 * np.arange(4)) + np.sum(r ** 3 * np.arange(8).reshape(2, 4))


def differences_and_maxima(x):
    return np.sum(np.diff(x ** 2) ** 3) + np.sum(np.max(x.reshape(2, 2) ** 3, axis=0) ** 2)


def gather(x, idx):
    return x[idx] ** 2


def fancy_in_helper(x):
    return np.sum(gather(x, np.array([0, 2, 2, 3])) ** 2) + np.sum(x[[1, 1, 0]] ** 3)


def energy(x):
    return np.sum(np.sin(x) ** 2)


def calls_user_function(x):
    return energy(x * 2) + energy(x) ** 2


CONSTRUCTS = [array_of_scalars, stacked, kron_cross, sorted_repeated, differences_and_maxima, fancy_in_helper,
              calls_user_function]


@pytest.mark.parametrize("fun", CONSTRUCTS, ids=[f.__name__ for f in CONSTRUCTS])
def test_second_order_of_issue_10_constructs(fun):
    x = np.array([0.3, -0.7, 1.1, 0.5])
    check_jvp(srcad.grad(fun), (x,), rtol=1e-4, atol=1e-6)
    check_grads(srcad.grad(fun), (x,), rtol=1e-4, atol=1e-6)


class Pendulum:
    """A simulation class in the usual style: parameters on the object, a method stepping a
    helper method, a Python float parameter the helper also reads."""
    g = 9.81

    def __init__(self, length, damping):
        self.length, self.damping = length, damping

    def deriv(self, state, m):
        return np.array([state[1], -self.g / self.length * np.sin(state[0]) - self.damping * state[1] / m])

    def run(self, state0, m, dt=0.01, n=20):
        s = state0.copy()
        energy = []
        for _ in range(n):
            k1 = self.deriv(s, m)
            k2 = self.deriv(s + dt * k1, m)
            s = s + 0.5 * dt * (k1 + k2)
            energy.append(0.5 * m * s[1] ** 2 + m * self.g * self.length * (1 - np.cos(s[0])))
        return np.mean(energy) + s[0]


def test_hvp_of_a_method_stepping_a_helper_with_a_float_parameter():
    # the adjoint's helper gradients were taken to share memory with the float 'm' and 'self'
    run = Pendulum(1.3, 0.2).run
    s0, u = np.array([1.5, -0.4]), np.array([0.3, -0.8])
    gradient = srcad.grad(run)
    eps = 1e-6
    numeric = (gradient(s0 + eps * u, 0.5) - gradient(s0 - eps * u, 0.5)) / (2 * eps)
    np.testing.assert_allclose(srcad.hvp(run)(s0, 0.5, u), numeric, rtol=1e-5, atol=1e-7)


def gaussian_fit_energy(samples):
    """An empirical covariance's log-determinant and a correlation penalty (np.cov, np.corrcoef)."""
    C = np.cov(samples, rowvar=False)
    R = np.corrcoef(samples, rowvar=False)
    return np.linalg.slogdet(C)[1] + 0.5 * np.sum(R ** 2) + np.cov(samples[:, 0], bias=True)


def test_every_mode_of_covariance_and_correlation():
    from lang_checks import check_all_modes

    samples = np.random.default_rng(5).standard_normal((7, 3))
    check_all_modes(gaussian_fit_energy, (samples,))
