"""One-step replay of recorded transitions: from recorded s_t with the recorded target q*_t,
what a model predicts for s_{t+1}.

Both system identification (which model parameters make the prediction match the recording) and the
delta-dynamics baseline (the residual s_{t+1} − f_sim(s_t, a_t) as a label) start here. A delayed
actuator's history is filled with the *previous* recorded target, q*_{t−1}, which is what a delayed
robot was still executing at the start of step t (before the first frame: the start pose, held).
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from retarget.rotations import quat_to_matrix
from trainers.delta.collection import Trajectory
from trainers.delta.replay import reset_to_frame
from trainers.real.stepper import PdRobot

VELOCITY_WEIGHT_S = 0.02
"""Velocities enter residuals multiplied by one policy step [s], so that they weigh like the positions they move."""


def state_vector(q, qd, root_pos_w, root_lin_vel_w, root_ang_vel_w) -> np.ndarray:
    """[q, 0.02·q̇, root position, 0.02·root velocities] along the last axis: positions [rad], [m] and velocities
    × one policy step, in comparable units (the residual system identification and Δa labels minimize)."""
    w = VELOCITY_WEIGHT_S
    return np.concatenate([q, w * qd, root_pos_w, w * root_lin_vel_w, w * root_ang_vel_w], axis=-1)


@dataclass(frozen=True)
class NextStates:
    """(M, ·) next states of M transitions, world frame, wxyz quaternions."""

    dof_pos: np.ndarray
    dof_vel: np.ndarray
    root_pos_w: np.ndarray
    root_quat_w: np.ndarray
    root_lin_vel_w: np.ndarray
    root_ang_vel_w: np.ndarray

    def vector(self) -> np.ndarray:
        """(M, 2D + 9) :func:`state_vector` of every next state."""
        return state_vector(self.dof_pos, self.dof_vel, self.root_pos_w, self.root_lin_vel_w, self.root_ang_vel_w)


def previous_targets(traj: Trajectory) -> np.ndarray:
    """(T, D) the PD target in force when frame t was observed: q*_{t−1}, and the start pose before the first frame."""
    return np.concatenate([traj.dof_pos[:1], traj.pd_target[:-1]], axis=0)


def transitions(trajs: list[Trajectory]) -> list[tuple[Trajectory, int]]:
    """Every recorded (trajectory, t) with a next frame t + 1."""
    return [(traj, t) for traj in trajs for t in range(traj.num_frames - 1)]


def recorded_next(pairs: list[tuple[Trajectory, int]]) -> NextStates:
    """The recorded s_{t+1} of every transition."""
    return NextStates(
        np.array([tr.dof_pos[t + 1] for tr, t in pairs]),
        np.array([tr.dof_vel[t + 1] for tr, t in pairs]),
        np.array([tr.root_pos_w[t + 1] for tr, t in pairs]),
        np.array([tr.root_quat_w[t + 1] for tr, t in pairs]),
        np.array([tr.root_lin_vel_w[t + 1] for tr, t in pairs]),
        np.array([tr.root_ang_vel_w[t + 1] for tr, t in pairs]),
    )


def predict_next(model: mujoco.MjModel, pairs: list[tuple[Trajectory, int]]) -> NextStates:
    """f_model(s_t, q*_t) for every transition: reset to the recording, hold the recorded target one policy step."""
    robot = PdRobot(model)
    out: dict[str, list[np.ndarray]] = {k: [] for k in NextStates.__dataclass_fields__}
    for traj, t in pairs:
        previous = traj.pd_target[t - 1] if t > 0 else traj.dof_pos[0]  # as previous_targets(traj)[t]
        reset_to_frame(robot, traj, t, held_target=previous)
        robot.step_policy(traj.pd_target[t])
        quat = robot.root_quat_w
        out["dof_pos"].append(robot.dof_pos)
        out["dof_vel"].append(robot.dof_vel)
        out["root_pos_w"].append(robot.root_pos_w)
        out["root_quat_w"].append(quat)
        out["root_lin_vel_w"].append(robot.root_lin_vel_w)
        out["root_ang_vel_w"].append(quat_to_matrix(quat) @ robot.root_ang_vel_b)
    return NextStates(**{k: np.array(v) for k, v in out.items()})


def one_step_rms(model: mujoco.MjModel, pairs: list[tuple[Trajectory, int]], target: NextStates | None = None) -> float:
    """RMS of the one-step residual (:meth:`NextStates.vector` units) of ``model`` over the transitions."""
    target = recorded_next(pairs) if target is None else target
    return residual_rms(predict_next(model, pairs), target)


def residual_rms(predicted: NextStates, target: NextStates) -> float:
    """RMS of ``predicted − target`` in :meth:`NextStates.vector` units."""
    return float(np.sqrt(np.mean((predicted.vector() - target.vector()) ** 2)))
