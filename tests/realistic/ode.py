"""ODE integration: a classic RK4 stepper driving a right-hand side helper (Lorenz)."""
import numpy as np

from realistic import Case


def lorenz(state, sigma, rho, beta):
    x, y, z = state
    return np.array([sigma * (y - x), x * (rho - z) - y, x * y - beta * z])


def rk4_step(f, y, dt, args):
    k1 = f(y, *args)
    k2 = f(y + 0.5 * dt * k1, *args)
    k3 = f(y + 0.5 * dt * k2, *args)
    k4 = f(y + dt * k3, *args)
    return y + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)


def lorenz_final(y0, params, dt=0.01, steps=25):
    y = y0
    for _ in range(steps):
        y = rk4_step(lorenz, y, dt, (params[0], params[1], params[2]))
    return np.sum(y ** 2)


def rk4_lorenz(y0, sigma, rho, beta):
    dt = 0.01
    y = y0
    traj = [y0]
    for _ in range(20):
        k1 = lorenz(y, sigma, rho, beta)
        k2 = lorenz(y + 0.5 * dt * k1, sigma, rho, beta)
        k3 = lorenz(y + 0.5 * dt * k2, sigma, rho, beta)
        k4 = lorenz(y + dt * k3, sigma, rho, beta)
        y = y + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        traj.append(y)
    traj = np.vstack(traj)
    return np.mean(traj[:, 2]) + 0.01 * np.sum(np.diff(traj[:, 0]) ** 2)


def pendulum_energy(theta0, omega0, length):
    g = 9.81
    dt = 0.02
    th, om = theta0, omega0
    for _ in range(30):
        om = om - dt * g / length * np.sin(th)
        th = th + dt * om
    return 0.5 * length ** 2 * om ** 2 + g * length * (1 - np.cos(th))


def cases():
    return [
        Case("ode.rk4_helper_star_args", lorenz_final, (np.array([1.0, 1.2, 0.9]), np.array([10.0, 28.0, 8 / 3])), (0, 1)),
        Case("ode.rk4_inline_vstack", rk4_lorenz, (np.array([1.0, 1.2, 0.9]), 10.0, 28.0, 8 / 3), (0, 2)),
        Case("ode.pendulum_scalars", pendulum_energy, (0.5, -0.3, 1.2), (0, 1, 2)),
    ]
