"""The small per-frame problem of layer 2: which contact forces best supply a wrench.

Each sole point in contact may push with a force inside a linearised friction cone: a
non-negative combination of the four edges (±μ, 0, 1) and (0, ±μ, 1) of the friction
pyramid (unilateral normal force, bounded tangential force). Forces only at the corners
of the sole keep the centre of pressure inside the foot's support polygon by
construction. The wrench (force, moment about the centre of mass) the motion needs is
matched by non-negative least squares; what is left is the "hand of god" wrench that no
contact can supply.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls

from retarget.rotations import skew

MOMENT_ARM_M = 0.2
"""Moments are weighted in the fit as forces acting at this lever arm [m] (about the foot's
half length), so N and N·m residuals count alike at the scale of the support polygon."""

SPREAD_WEIGHT = 0.03
"""Weight of a small penalty on the pyramid coefficients: among the force sets that supply the
wrench equally well (double support is redundant) it picks the evenly spread one, with the
least tangential force, instead of an arbitrary extreme that needs large hip torques. It
costs at most a few newtons of residual."""


def pyramid_edges(mu: float) -> np.ndarray:
    """(4, 3) edges of the linearised friction cone for a floor with normal +z."""
    return np.array([[mu, 0.0, 1.0], [-mu, 0.0, 1.0], [0.0, mu, 1.0], [0.0, -mu, 1.0]])


@dataclass(frozen=True)
class ContactSolution:
    forces_w: np.ndarray
    """(K, 3) [N] force at each contact point (world axes)."""
    residual_force_n: np.ndarray
    """(3,) [N] force the contacts cannot supply (needed minus supplied)."""
    residual_moment_nm: np.ndarray
    """(3,) [N·m] moment about the centre of mass the contacts cannot supply."""


def solve_contact_forces(
    points_w: np.ndarray, com_w: np.ndarray, force_n: np.ndarray, moment_nm: np.ndarray, mu: float
) -> ContactSolution:
    """Contact forces at `points_w` (K, 3) closest to the wrench (force, moment about `com_w`)."""
    if len(points_w) == 0:
        return ContactSolution(np.zeros((0, 3)), force_n.copy(), moment_nm.copy())
    edges = pyramid_edges(mu)  # (4, 3)
    lever = skew(points_w - com_w)  # (K, 3, 3)
    # Columns: for each point k and edge e, the wrench of a unit push along that edge.
    force_cols = np.tile(edges.T, (1, len(points_w)))  # (3, 4K)
    moment_cols = np.einsum("kij,ej->ike", lever, edges).reshape(3, -1)  # (3, 4K)
    basis = np.vstack([force_cols, moment_cols / MOMENT_ARM_M])
    target = np.concatenate([force_n, moment_nm / MOMENT_ARM_M])
    num_cols = basis.shape[1]
    weights, _ = nnls(
        np.vstack([basis, SPREAD_WEIGHT * np.eye(num_cols)]), np.concatenate([target, np.zeros(num_cols)])
    )
    forces = weights.reshape(len(points_w), 4) @ edges
    supplied = basis @ weights
    return ContactSolution(
        forces_w=forces,
        residual_force_n=force_n - supplied[:3],
        residual_moment_nm=moment_nm - supplied[3:] * MOMENT_ARM_M,
    )
