"""The heat equation by an explicit finite-difference stencil."""
import numpy as np

from realistic import Case


def evolve(u, alpha, dt, dx2):
    lap = (np.roll(u, 1, axis=0) + np.roll(u, -1, axis=0) + np.roll(u, 1, axis=1)
           + np.roll(u, -1, axis=1) - 4 * u) / dx2
    return u + alpha * dt * lap


def heat_periodic(u0, alpha):
    u = u0
    for _ in range(10):
        u = evolve(u, alpha, 0.1, 1.0)
    return np.sum(u ** 3)


def iterate(field, field0, a, dx2, dt):
    field[1:-1] = field0[1:-1] + a * dt * (field0[2:] - 2 * field0[1:-1] + field0[:-2]) / dx2


def heat_in_place(u0, a):
    field = u0.copy()
    field0 = u0.copy()
    for m in range(15):
        iterate(field, field0, a, 1.0, 0.2)
        field0 = field.copy()
    return np.sum(np.sin(field))


def heat_slices(u0, kappa):
    u = u0.copy()
    for n in range(12):
        un = u.copy()
        u[1:-1, 1:-1] = un[1:-1, 1:-1] + kappa * (un[2:, 1:-1] + un[:-2, 1:-1] + un[1:-1, 2:] + un[1:-1, :-2]
                                                 - 4 * un[1:-1, 1:-1])
        u[0, :] = u[1, :]
        u[-1, :] = u[-2, :]
    return np.sum(u * u)


def cases():
    rng = np.random.default_rng(15)
    return [
        Case("heat.periodic_roll", heat_periodic, (rng.standard_normal((5, 6)), 0.2), (0, 1)),
        Case("heat.helper_in_place", heat_in_place, (rng.standard_normal(9), 0.8), (0, 1)),
        Case("heat.slice_stencil", heat_slices, (rng.standard_normal((6, 5)), 0.15), (0, 1)),
    ]
