"""Velocities from sampled poses: central finite differences, on SO(3) for rotations.

Linear quantities use ``np.gradient`` (central differences inside, one-sided at the two ends),
as BeyondMimic's ``csv_to_npz`` does with ``torch.gradient``. Rotations are differentiated on
the group, never component-wise on quaternions: the world-frame angular velocity at frame t is
``log(q[t+1] ⊗ q[t-1]⁻¹) / (2·dt)`` (one-sided at the ends), which is exact for a constant
angular velocity below π/(2·dt) rad/s.
"""

from __future__ import annotations

import numpy as np

from retarget.rotations import quat_conj, quat_mul, quat_to_rotvec


def linear_velocity(values: np.ndarray, fps: float) -> np.ndarray:
    """d/dt along axis 0 of `values` (any trailing shape) [unit/s]; zeros for a single frame."""
    values = np.asarray(values, dtype=np.float64)
    if values.shape[0] < 2:
        return np.zeros_like(values)
    return np.gradient(values, 1.0 / fps, axis=0)


def angular_velocity_w(quat_wxyz: np.ndarray, fps: float) -> np.ndarray:
    """(T, ..., 3) [rad/s] world-frame angular velocity of (T, ..., 4) world orientations (wxyz)."""
    q = np.asarray(quat_wxyz, dtype=np.float64)
    out = np.zeros(q.shape[:-1] + (3,))
    num_frames = q.shape[0]
    if num_frames < 2:
        return out
    # q_next ⊗ q_prev⁻¹ is the rotation applied in the world frame between the two samples.
    if num_frames > 2:
        out[1:-1] = quat_to_rotvec(quat_mul(q[2:], quat_conj(q[:-2]))) * (fps / 2.0)
    out[0] = quat_to_rotvec(quat_mul(q[1], quat_conj(q[0]))) * fps
    out[-1] = quat_to_rotvec(quat_mul(q[-1], quat_conj(q[-2]))) * fps
    return out
