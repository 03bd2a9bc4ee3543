"""N-body gravitation: total energy, pairwise in loops and vectorised."""
import numpy as np

from realistic import Case


def energy_loops(pos, vel, mass):
    n = pos.shape[0]
    kinetic = 0.0
    for i in range(n):
        kinetic += 0.5 * mass[i] * np.sum(vel[i] ** 2)
    potential = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            r = np.linalg.norm(pos[i] - pos[j])
            potential -= mass[i] * mass[j] / r
    return kinetic + potential


def energy_vectorised(pos, mass, soft=0.1):
    diff = pos[:, None, :] - pos[None, :, :]
    r = np.sqrt(np.sum(diff ** 2, axis=-1) + soft ** 2)
    iu = np.triu_indices(len(mass), k=1)
    return -np.sum((mass[:, None] * mass[None, :] / r)[iu])


def leapfrog_energy(pos, vel, mass):
    dt = 0.01
    for step in range(5):
        diff = pos[None, :, :] - pos[:, None, :]
        r3 = (np.sum(diff ** 2, axis=-1) + 0.1) ** 1.5
        acc = np.sum(mass[None, :, None] * diff / r3[:, :, None], axis=1)
        vel = vel + dt * acc
        pos = pos + dt * vel
    return energy_loops(pos, vel, mass)


def cases():
    rng = np.random.default_rng(8)
    pos, vel = rng.standard_normal((4, 3)), rng.standard_normal((4, 3)) * 0.3
    mass = rng.uniform(0.5, 2.0, 4)
    return [
        Case("nbody.energy_loops", energy_loops, (pos, vel, mass), (0, 1, 2)),
        Case("nbody.energy_vectorised", energy_vectorised, (pos, mass), (0, 1)),
        Case("nbody.leapfrog", leapfrog_energy, (pos, vel, mass), (0, 1)),
    ]
