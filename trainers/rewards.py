"""Reward terms as named functions, referenced by object from :class:`trainers.config.RewardConfig`.

Two kinds (ASAP's motion-tracking terms, ``humanoidverse`` ``motion_tracking.py``):

* tracking errors ``e(s) >= 0``; the term's reward is ``exp(-e / σ)`` (1 at zero error);
* penalties ``p(s) >= 0``, given a negative weight.

Each error is a mean of squares, as in ASAP, so σ has units of the squared quantity.
"""

from __future__ import annotations

import numpy as np

from retarget.rotations import quat_angle_between, quat_conj, quat_mul
from trainers.state import TrackingState


def _mean_sq(diff: np.ndarray) -> np.ndarray:
    """Mean over points and axes of squared differences: (N, k, 3) -> (N,)."""
    return np.mean(diff**2, axis=(1, 2))


# --- tracking errors -------------------------------------------------------------------------


def body_pos_upper_error(s: TrackingState) -> np.ndarray:
    """Upper-body point positions [m²]."""
    ids = s.layout.upper_point_ids
    return _mean_sq(s.point_pos_w[:, ids] - s.ref_point_pos_w[:, ids])


def body_pos_lower_error(s: TrackingState) -> np.ndarray:
    """Lower-body point positions [m²]."""
    ids = s.layout.lower_point_ids
    return _mean_sq(s.point_pos_w[:, ids] - s.ref_point_pos_w[:, ids])


def feet_pos_error(s: TrackingState) -> np.ndarray:
    """Feet positions [m²]."""
    ids = s.layout.feet_point_ids
    return _mean_sq(s.point_pos_w[:, ids] - s.ref_point_pos_w[:, ids])


def vr_3point_error(s: TrackingState) -> np.ndarray:
    """Hands and head positions [m²] (ASAP's ``teleop_vr_3point``)."""
    ids = s.layout.vr_point_ids
    return _mean_sq(s.point_pos_w[:, ids] - s.ref_point_pos_w[:, ids])


def body_rot_error(s: TrackingState) -> np.ndarray:
    """Mean squared geodesic angle between robot and reference body orientations [rad²]."""
    angle = quat_angle_between(s.body_quat_w, s.ref_body_quat_w)
    return np.mean(angle**2, axis=1)


def body_lin_vel_error(s: TrackingState) -> np.ndarray:
    """Point linear velocities [(m/s)²]."""
    return _mean_sq(s.point_lin_vel_w - s.ref_point_lin_vel_w)


def body_ang_vel_error(s: TrackingState) -> np.ndarray:
    """Body angular velocities [(rad/s)²]."""
    return _mean_sq(s.body_ang_vel_w - s.ref_body_ang_vel_w)


def joint_pos_error(s: TrackingState) -> np.ndarray:
    """Joint positions [rad²]."""
    return np.mean((s.dof_pos - s.ref_dof_pos) ** 2, axis=1)


def joint_vel_error(s: TrackingState) -> np.ndarray:
    """Joint velocities [(rad/s)²]."""
    return np.mean((s.dof_vel - s.ref_dof_vel) ** 2, axis=1)


# --- penalties --------------------------------------------------------------------------------


def action_rate(s: TrackingState) -> np.ndarray:
    """Sum of squared action changes between consecutive policy steps."""
    return np.sum((s.action - s.last_action) ** 2, axis=1)


def feet_orientation(s: TrackingState) -> np.ndarray:
    """Tilt of the soles: norm of the horizontal part of gravity seen in each foot frame, summed."""
    q = s.body_quat_w[:, s.layout.feet_body_ids]  # (N, 2, 4)
    g_w = np.zeros(q.shape[:-1] + (4,))
    g_w[..., 3] = -1.0
    g_b = quat_mul(quat_mul(quat_conj(q), g_w), q)[..., 1:]
    return np.sum(np.linalg.norm(g_b[..., :2], axis=-1), axis=1)


def feet_in_contact(s: TrackingState) -> np.ndarray:
    """(N, 2) bool: foot link origin below the contact height (no contact sensors needed)."""
    return s.point_pos_w[:, s.layout.feet_point_ids, 2] < s.foot_contact_height_m


def feet_slippage(s: TrackingState) -> np.ndarray:
    """Horizontal speed [m/s] of the feet that touch the floor, summed."""
    speed = np.linalg.norm(s.point_lin_vel_w[:, s.layout.feet_point_ids, :2], axis=-1)
    return np.sum(speed * feet_in_contact(s), axis=1)


def dof_pos_limits(s: TrackingState, soft_fraction: float = 0.95) -> np.ndarray:
    """How far [rad] joints go past the soft limits (the central ``soft_fraction`` of the range)."""
    mid = 0.5 * (s.dof_lower_rad + s.dof_upper_rad)
    half = 0.5 * (s.dof_upper_rad - s.dof_lower_rad) * soft_fraction
    below = np.clip(mid - half - s.dof_pos, 0.0, None)
    above = np.clip(s.dof_pos - (mid + half), 0.0, None)
    return np.sum(below + above, axis=1)


def dof_vel_limits(s: TrackingState, soft_fraction: float = 0.95) -> np.ndarray:
    """How far [rad/s] joint speeds exceed ``soft_fraction`` of the velocity limits."""
    return np.sum(np.clip(np.abs(s.dof_vel) - soft_fraction * s.dof_vel_limit_rad_s, 0.0, None), axis=1)


def torque_limits(s: TrackingState, soft_fraction: float = 0.95) -> np.ndarray:
    """How far [N·m] joint torques exceed ``soft_fraction`` of the effort limits."""
    return np.sum(np.clip(np.abs(s.actuator_force) - soft_fraction * s.effort_limit_nm, 0.0, None), axis=1)


def termination(s: TrackingState) -> np.ndarray:
    """1 where the episode failed this step (not where the motion ran out)."""
    return s.terminated.astype(np.float64)
