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
from retarget.npz_io import numeric_array, read_npz, scalar_number
from robots.registry import RobotSpec, load_robot_spec
from trainers.delta.collection import Trajectory, check_trajectory

LOG_KEYS: tuple[str, ...] = (
    "time_s",
    "fps",
    "joint_names",
    "dof_pos",
    "dof_vel",
    "action",
    "pd_target",
    "root_pos_w",
    "root_quat_w",
    "root_lin_vel_w",
    "root_ang_vel_w",
    "motion_id",
)


def read_robot_log(path: str | Path, robot: RobotSpec | None = None) -> Trajectory:
    """One trajectory from a robot log; joints reordered to ``robot``'s order. Raises :class:`MotionFileError`."""
    robot = load_robot_spec() if robot is None else robot
    path = Path(path)
    data = read_npz(path, "robot log", tuple(LOG_KEYS))
    names = [str(n) for n in np.asarray(data["joint_names"]).reshape(-1)]
    absent = [n for n in robot.joint_names if n not in names]
    if absent:
        raise MotionFileError(path, f"robot log lacks joints of {robot.name}: {absent}")
    cols = np.array([names.index(n) for n in robot.joint_names])
    fps = scalar_number(path, data["fps"], "fps", "robot log", positive=True)
    time_s = numeric_array(path, data, "time_s", "robot log")
    num = time_s.shape[0]
    if time_s.ndim != 1 or num < 2:
        raise MotionFileError(path, f"'time_s' must be (T,) with at least 2 ticks, found shape {time_s.shape}")
    if not np.isfinite(time_s).all() or not (np.diff(time_s) > 0).all():
        raise MotionFileError(path, "'time_s' must be finite and strictly increasing")
    expected = {
        "dof_pos": (num, len(names)),
        "dof_vel": (num, len(names)),
        "action": (num, len(names)),
        "pd_target": (num, len(names)),
        "root_pos_w": (num, 3),
        "root_quat_w": (num, 4),
        "root_lin_vel_w": (num, 3),
        "root_ang_vel_w": (num, 3),
    }
    arrays = {}
    for key, shape in expected.items():
        arrays[key] = numeric_array(path, data, key, "robot log")
        if arrays[key].shape != shape:
            raise MotionFileError(path, f"{key!r} has shape {arrays[key].shape}, expected {shape}")
        if not np.isfinite(arrays[key]).all():
            raise MotionFileError(path, f"{key!r} holds NaN or infinite values")
    norm = np.linalg.norm(arrays["root_quat_w"], axis=1, keepdims=True)
    if not (norm > 1e-6).all():
        raise MotionFileError(path, f"'root_quat_w' has zero quaternions in {int((norm <= 1e-6).sum())} tick(s)")
    quat = arrays["root_quat_w"] / norm
    phase = (
        numeric_array(path, data, "phase", "robot log")
        if "phase" in data
        else (time_s - time_s[0]) / (time_s[-1] - time_s[0])
    )
    if phase.shape != (num,) or not np.isfinite(phase).all():
        raise MotionFileError(path, f"'phase' must be ({num},) finite values, found shape {phase.shape}")
    action_scale = (
        scalar_number(path, data["action_scale"], "action_scale", "robot log") if "action_scale" in data else 0.25
    )
    traj = Trajectory(
        motion_id=str(data["motion_id"]),
        fps=fps,
        root_pos_w=arrays["root_pos_w"],
        root_quat_w=quat,
        root_lin_vel_w=arrays["root_lin_vel_w"],
        root_ang_vel_w=arrays["root_ang_vel_w"],
        dof_pos=arrays["dof_pos"][:, cols],
        dof_vel=arrays["dof_vel"][:, cols],
        action=arrays["action"][:, cols],
        pd_target=arrays["pd_target"][:, cols],
        phase=phase,
        action_scale=action_scale,
        source=str(data.get("source", f"robot log {path.name}")),
    )
    check_trajectory(traj, path)
    return traj


def write_robot_log(path: str | Path, traj: Trajectory, joint_names: tuple[str, ...], time_s: np.ndarray) -> Path:
    """The inverse of :func:`read_robot_log` (used to make example logs and in tests)."""
    path = Path(path)
    atomic_write(path, lambda tmp: _savez(tmp, traj, joint_names, time_s))
    return path


def _savez(tmp: Path, traj: Trajectory, joint_names: tuple[str, ...], time_s: np.ndarray) -> None:
    with open(tmp, "wb") as f:
        np.savez(
            f,
            time_s=time_s,
            fps=np.float64(traj.fps),
            joint_names=np.array(joint_names),
            dof_pos=traj.dof_pos,
            dof_vel=traj.dof_vel,
            action=traj.action,
            pd_target=traj.pd_target,
            root_pos_w=traj.root_pos_w,
            root_quat_w=traj.root_quat_w,
            root_lin_vel_w=traj.root_lin_vel_w,
            root_ang_vel_w=traj.root_ang_vel_w,
            motion_id=np.array(traj.motion_id),
            phase=traj.phase,
            action_scale=np.float64(traj.action_scale),
            source=np.array(traj.source),
        )
