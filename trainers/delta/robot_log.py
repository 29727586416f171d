"""Real-robot logs into the collection format: what a lab with a G1 and motion capture writes.

Log file (``.npz``, one trajectory; arrays at the policy rate, joints in any order, named):

=================  =======  ============================================================
key                shape    meaning
=================  =======  ============================================================
``time_s``         (T,)     time of each control tick [s] (uniform at 1/``fps``)
``fps``            ()       control (policy) rate [Hz]
``joint_names``    (D,)     joint names; reordered here to the robot spec's order
``dof_pos``        (T, D)   joint encoder positions at the tick [rad]
``dof_vel``        (T, D)   joint velocities [rad/s]
``action``         (T, D)   policy action sent at the tick (policy units)
``pd_target``      (T, D)   PD target sent to the motors [rad]
``root_pos_w``     (T, 3)   pelvis position from motion capture, world z-up [m]
``root_quat_w``    (T, 4)   pelvis orientation from motion capture, **wxyz**
``root_lin_vel_w`` (T, 3)   pelvis linear velocity, world frame [m/s]
``root_ang_vel_w`` (T, 3)   pelvis angular velocity, world frame [rad/s]
``motion_id``      ()       the motion-library clip the policy tracked
``phase``          (T,)     optional: motion phase φ at the tick (default: time / duration)
``action_scale``   ()       optional: q* = action_scale·a + offset (default 0.25)
``source``         ()       optional: free text (robot serial, date, lab)
=================  =======  ============================================================
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from retarget.asap_pkl import atomic_write
from retarget.errors import MotionFileError
from retarget.npz_io import read_npz
from robots.registry import RobotSpec, load_robot_spec
from trainers.delta.collection import Trajectory

LOG_KEYS: tuple[str, ...] = ("time_s", "fps", "joint_names", "dof_pos", "dof_vel", "action", "pd_target",
                             "root_pos_w", "root_quat_w", "root_lin_vel_w", "root_ang_vel_w", "motion_id")  # fmt: skip


def read_robot_log(path: str | Path, robot: RobotSpec | None = None) -> Trajectory:
    """One trajectory from a robot log; joints reordered to ``robot``'s order. Raises :class:`MotionFileError`."""
    robot = load_robot_spec() if robot is None else robot
    path = Path(path)
    data = read_npz(path, "robot log", tuple(LOG_KEYS))
    names = [str(n) for n in data["joint_names"]]
    absent = [n for n in robot.joint_names if n not in names]
    if absent:
        raise MotionFileError(path, f"robot log lacks joints of {robot.name}: {absent}")
    cols = np.array([names.index(n) for n in robot.joint_names])
    num = data["time_s"].shape[0]
    expected = {"dof_pos": (num, len(names)), "dof_vel": (num, len(names)), "action": (num, len(names)),
                "pd_target": (num, len(names)), "root_pos_w": (num, 3), "root_quat_w": (num, 4),
                "root_lin_vel_w": (num, 3), "root_ang_vel_w": (num, 3)}  # fmt: skip
    for key, shape in expected.items():
        if data[key].shape != shape:
            raise MotionFileError(path, f"{key!r} has shape {data[key].shape}, expected {shape}")
        if not np.isfinite(data[key]).all():
            raise MotionFileError(path, f"{key!r} holds NaN or infinite values")
    quat = data["root_quat_w"] / np.linalg.norm(data["root_quat_w"], axis=1, keepdims=True)
    duration = max(float(data["time_s"][-1] - data["time_s"][0]), 1e-9)
    phase = data["phase"] if "phase" in data else (data["time_s"] - data["time_s"][0]) / duration
    return Trajectory(
        motion_id=str(data["motion_id"]), fps=float(data["fps"]), root_pos_w=data["root_pos_w"].astype(float),
        root_quat_w=quat, root_lin_vel_w=data["root_lin_vel_w"].astype(float),
        root_ang_vel_w=data["root_ang_vel_w"].astype(float), dof_pos=data["dof_pos"][:, cols].astype(float),
        dof_vel=data["dof_vel"][:, cols].astype(float), action=data["action"][:, cols].astype(float),
        pd_target=data["pd_target"][:, cols].astype(float), phase=np.asarray(phase, dtype=float),
        action_scale=float(data.get("action_scale", 0.25)), source=str(data.get("source", f"robot log {path.name}")),
    )  # fmt: skip


def write_robot_log(path: str | Path, traj: Trajectory, joint_names: tuple[str, ...], time_s: np.ndarray) -> Path:
    """The inverse of :func:`read_robot_log` (used to make example logs and in tests)."""
    path = Path(path)
    atomic_write(path, lambda tmp: _savez(tmp, traj, joint_names, time_s))
    return path


def _savez(tmp: Path, traj: Trajectory, joint_names: tuple[str, ...], time_s: np.ndarray) -> None:
    with open(tmp, "wb") as f:
        np.savez(f, time_s=time_s, fps=np.float64(traj.fps), joint_names=np.array(joint_names),
                 dof_pos=traj.dof_pos, dof_vel=traj.dof_vel, action=traj.action, pd_target=traj.pd_target,
                 root_pos_w=traj.root_pos_w, root_quat_w=traj.root_quat_w, root_lin_vel_w=traj.root_lin_vel_w,
                 root_ang_vel_w=traj.root_ang_vel_w, motion_id=np.array(traj.motion_id), phase=traj.phase,
                 action_scale=np.float64(traj.action_scale), source=np.array(traj.source))  # fmt: skip
