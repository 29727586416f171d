"""Observation terms as named functions, and the documented layouts they build.

Actor frame (F = 3 + 3 + D + D + D + 1 = 76 for the 23-dof G1), in this order:

    base_ang_vel_b · ang_vel_scale      (3)   [rad/s]
    projected_gravity_b                 (3)   unit vector
    dof_pos − q_default                 (D)   [rad]
    dof_vel · dof_vel_scale             (D)   [rad/s]
    last_action                         (D)   policy units
    phase                               (1)   φ ∈ [0, 1]

Actor observation: ``history_len`` frames, newest first: ``obs[:, k*F:(k+1)*F]`` is the frame of
k policy steps ago (ASAP's 5-step history). Critic observation: the actor observation, then
base_lin_vel_b · lin_vel_scale (3), the reference points relative to the robot root in the
robot's base frame (3P), and reference − robot point positions in the base frame (3P).
"""

from __future__ import annotations

import numpy as np

from retarget.rotations import quat_to_matrix


def to_base(rot_w: np.ndarray, vec_w: np.ndarray) -> np.ndarray:
    """Express world vectors (N, ..., 3) in base frames given as rotation matrices (N, 3, 3)."""
    flat = vec_w.reshape(vec_w.shape[0], -1, 3)
    return np.matmul(flat, rot_w).reshape(vec_w.shape)  # row vectors: v_b = v_w · R


def rotate_to_base(root_quat_w: np.ndarray, vec_w: np.ndarray) -> np.ndarray:
    """Express world vectors (N, ..., 3) in each environment's base frame (root quat (N, 4))."""
    return to_base(quat_to_matrix(root_quat_w), vec_w)


def projected_gravity_b(root_quat_w: np.ndarray) -> np.ndarray:
    """(N, 3) the world's down direction in the base frame ([0, 0, −1] when upright)."""
    down = np.broadcast_to(np.array([0.0, 0.0, -1.0]), (root_quat_w.shape[0], 3))
    return rotate_to_base(root_quat_w, down)


def actor_frame(
    base_ang_vel_b: np.ndarray,
    root_quat_w: np.ndarray,
    dof_pos_rel: np.ndarray,
    dof_vel: np.ndarray,
    last_action: np.ndarray,
    phase: np.ndarray,
    ang_vel_scale: float,
    dof_vel_scale: float,
) -> np.ndarray:
    """(N, F) one actor frame in the layout above."""
    return np.concatenate(
        [
            base_ang_vel_b * ang_vel_scale,
            projected_gravity_b(root_quat_w),
            dof_pos_rel,
            dof_vel * dof_vel_scale,
            last_action,
            phase[:, None],
        ],
        axis=1,
    )


def critic_extras(
    root_pos_w: np.ndarray,
    root_quat_w: np.ndarray,
    base_lin_vel_w: np.ndarray,
    point_pos_w: np.ndarray,
    ref_point_pos_w: np.ndarray,
    lin_vel_scale: float,
) -> np.ndarray:
    """(N, 3 + 6P) the privileged part of the critic observation."""
    n = root_pos_w.shape[0]
    rot = quat_to_matrix(root_quat_w)
    lin_b = to_base(rot, base_lin_vel_w) * lin_vel_scale
    ref_local = to_base(rot, ref_point_pos_w - root_pos_w[:, None])
    diff_local = to_base(rot, ref_point_pos_w - point_pos_w)
    return np.concatenate([lin_b, ref_local.reshape(n, -1), diff_local.reshape(n, -1)], axis=1)


def frame_size(num_dof: int) -> int:
    """F, the length of one actor frame."""
    return 3 + 3 + 3 * num_dof + 1
