"""Robot-arm forward kinematics: chains of cos/sin, homogeneous transforms built from scalars."""
import numpy as np

from realistic import Case


def planar_fk(thetas, lengths):
    x, y, phi = 0.0, 0.0, 0.0
    for theta, l in zip(thetas, lengths):
        phi = phi + theta
        x = x + l * np.cos(phi)
        y = y + l * np.sin(phi)
    return np.array([x, y])


def reach_loss(thetas, lengths, target):
    p = planar_fk(thetas, lengths)
    return np.sum((p - target) ** 2)


def dh_transform(theta, d, a, alpha):
    ct, st = np.cos(theta), np.sin(theta)
    ca, sa = np.cos(alpha), np.sin(alpha)
    return np.array([[ct, -st * ca, st * sa, a * ct],
                     [st, ct * ca, -ct * sa, a * st],
                     [0.0, sa, ca, d],
                     [0.0, 0.0, 0.0, 1.0]])


def dh_chain(q, d, a, alpha):
    T = np.eye(4)
    for i in range(len(q)):
        T = T @ dh_transform(q[i], d[i], a[i], alpha[i])
    return T[:3, 3] @ np.array([1.0, 2.0, 3.0]) + np.trace(T[:3, :3])


def cumulative_angles(thetas, lengths):
    phis = np.cumsum(thetas)
    pts = np.stack([lengths * np.cos(phis), lengths * np.sin(phis)], axis=1)
    joints = np.cumsum(pts, axis=0)
    return np.sum(np.linalg.norm(np.diff(joints, axis=0), axis=1)) + joints[-1] @ joints[-1]


def cases():
    rng = np.random.default_rng(10)
    q = rng.uniform(-1, 1, 3)
    return [
        Case("robotics.planar_reach", reach_loss, (q, np.array([1.0, 0.8, 0.5]), np.array([0.7, 1.1])), (0, 1)),
        Case("robotics.dh_chain", dh_chain, (q, rng.uniform(0, 1, 3), rng.uniform(0.5, 1, 3), rng.uniform(-1, 1, 3)), (0, 3)),
        Case("robotics.cumulative", cumulative_angles, (rng.uniform(-1, 1, 4), rng.uniform(0.5, 1, 4)), (0, 1)),
    ]
