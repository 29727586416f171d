"""Putting the nominal simulator into a recorded state and replaying recorded PD targets from there."""

from __future__ import annotations

import numpy as np

from retarget.rotations import quat_to_matrix
from trainers.delta.collection import Trajectory
from trainers.real.stepper import PdRobot, TargetCorrection


def reset_to_frame(robot: PdRobot, traj: Trajectory, t: int, held_target: np.ndarray | None = None) -> None:
    """The recorded state of frame ``t`` (world angular velocity turned into MuJoCo's body-frame one).

    A delayed actuator's history is filled with ``held_target`` (default: the frame's own target)."""
    rot = quat_to_matrix(traj.root_quat_w[t])
    held = traj.pd_target[t] if held_target is None else held_target
    robot.reset(
        traj.dof_pos[t],
        traj.dof_vel[t],
        targets=held,
        root_pos_w=traj.root_pos_w[t],
        root_quat_w=traj.root_quat_w[t],
        root_lin_vel_w=traj.root_lin_vel_w[t],
        root_ang_vel_b=rot.T @ traj.root_ang_vel_w[t],
    )


def replay(
    robot: PdRobot, traj: Trajectory, start: int, steps: int, correction: TargetCorrection | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """From frame ``start``, apply the recorded targets for ``steps`` policy steps, open loop.

    Returns (steps + 1, D) joint positions and (steps + 1, nbody − 1, 3) body positions [m], start included.
    """
    reset_to_frame(robot, traj, start)
    qs, bodies = [robot.dof_pos], [robot.body_pos_w]
    for t in range(start, start + steps):
        robot.step_policy(traj.pd_target[t], correction)
        qs.append(robot.dof_pos)
        bodies.append(robot.body_pos_w)
    return np.stack(qs), np.stack(bodies)


def recorded_body_positions(robot: PdRobot, traj: Trajectory, frames: np.ndarray) -> np.ndarray:
    """(len(frames), nbody − 1, 3) body positions of recorded frames (forward kinematics in ``robot``'s model)."""
    out = []
    for t in frames:
        reset_to_frame(robot, traj, int(t))
        out.append(robot.body_pos_w)
    return np.stack(out)
