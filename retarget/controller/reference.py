"""The reference motion at the controller's rate: configurations, velocities and the points it tracks."""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from retarget.resample import interpolation_weights
from retarget.rotations import quat_slerp


@dataclass(frozen=True)
class ControlReference:
    """A reference motion sampled at the control rate (step k at time k·dt)."""

    dt_s: float
    """Control period [s]."""
    qpos: np.ndarray
    """(K, nq) MuJoCo configurations (free joint first, quaternion wxyz)."""
    qvel: np.ndarray
    """(K, nv) velocities (finite differences on the manifold; the last row repeats)."""
    site_pos_w: np.ndarray
    """(K, S, 3) [m] the tracked points (matched sites) in the world."""
    body_pos_w: np.ndarray
    """(K, B, 3) [m] every body but the world, for ASAP's mean body distance."""
    target_offset_rad: np.ndarray
    """(K, D) feed-forward added to the reference joint angles to make the nominal PD target [rad]:
    (τ_ff + Kd·q̇_ref)/Kp, so the PD actuator alone produces the reference's torques at zero error."""

    @property
    def num_steps(self) -> int:
        return int(self.qpos.shape[0])


def interpolate_qpos(qpos: np.ndarray, fps_in: float, times_s: np.ndarray) -> np.ndarray:
    """(len(times), nq) free-base configurations at `times_s`: linear positions and joints, slerped root."""
    idx, alpha = interpolation_weights(times_s, len(qpos), fps_in)
    nxt = np.minimum(idx + 1, len(qpos) - 1)
    out = (1.0 - alpha)[:, None] * qpos[idx] + alpha[:, None] * qpos[nxt]
    out[:, 3:7] = quat_slerp(qpos[idx, 3:7], qpos[nxt, 3:7], alpha)
    return out


def positions(model: mujoco.MjModel, qpos: np.ndarray, site_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(T, S, 3) site and (T, B, 3) body world positions of each configuration (B excludes the world)."""
    data = mujoco.MjData(model)
    sites = np.empty((len(qpos), len(site_ids), 3))
    bodies = np.empty((len(qpos), model.nbody - 1, 3))
    for k, q in enumerate(qpos):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        sites[k] = data.site_xpos[site_ids]
        bodies[k] = data.xpos[1:]
    return sites, bodies


def control_reference(
    model: mujoco.MjModel,
    qpos: np.ndarray,
    fps: float,
    dt_s: float,
    site_ids: np.ndarray,
    dof_qvel: np.ndarray,
    kp: np.ndarray,
    kd: np.ndarray,
    joint_torque_nm: np.ndarray | None = None,
    velocity_feedforward: bool = True,
) -> ControlReference:
    """Resample (T, nq) `qpos` at `fps` [Hz] to the control period `dt_s` and compute what the cost needs.
    `joint_torque_nm` (T, D) are the joint torques the motion needs (inverse dynamics with contact
    forces, :func:`retarget.filter.dynamics.analyse_dynamics`), fed forward through the PD targets."""
    duration_s = (len(qpos) - 1) / fps
    times = np.arange(int(np.floor(duration_s / dt_s + 1e-9)) + 1) * dt_s
    q = interpolate_qpos(qpos, fps, times)
    qvel = np.zeros((len(q), model.nv))
    for k in range(len(q) - 1):
        mujoco.mj_differentiatePos(model, qvel[k], dt_s, q[k], q[k + 1])
    if len(q) > 1:
        qvel[-1] = qvel[-2]
    sites, bodies = positions(model, q, site_ids)
    offset = np.zeros((len(q), len(kp)))
    if velocity_feedforward:
        offset += kd * qvel[:, dof_qvel] / kp
    if joint_torque_nm is not None:
        idx, alpha = interpolation_weights(times, len(joint_torque_nm), fps)
        nxt = np.minimum(idx + 1, len(joint_torque_nm) - 1)
        tau = (1.0 - alpha)[:, None] * joint_torque_nm[idx] + alpha[:, None] * joint_torque_nm[nxt]
        offset += tau / kp
    return ControlReference(dt_s=dt_s, qpos=q, qvel=qvel, site_pos_w=sites, body_pos_w=bodies, target_offset_rad=offset)
