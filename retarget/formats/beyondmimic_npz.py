"""BeyondMimic / whole_body_tracking / mjlab motion `.npz`.

Keys written (float64; T frames, D joints, B bodies)::

    fps             (1,)          frame rate [Hz] (int when integral, as BeyondMimic writes it)
    joint_pos       (T, D)        joint angles [rad], in the order of joint_names
    joint_vel       (T, D)        [rad/s], central finite differences
    body_pos_w      (T, B, 3)     body origins in the world [m], z-up
    body_quat_w     (T, B, 4)     body orientations, quaternion **wxyz**
    body_lin_vel_w  (T, B, 3)     [m/s], central finite differences
    body_ang_vel_w  (T, B, 3)     [rad/s], world frame, central differences on SO(3)
    joint_names     (D,)          robot joint names (URDF order)
    body_names      (B,)          MuJoCo bodies of the robot (every URDF link), tree order; body 0 = pelvis
    human_joints_w  (T, 24, 3)    the scaled SMPL joints the robot followed [m] (zeros when unknown)
    metadata        ()            JSON: robot, quaternion order, units, frame, rate, how velocities were made

Reading accepts the layouts seen in the wild: ``joint_pos`` with D columns (BeyondMimic, mjlab)
with the root pose taken from the body named ``pelvis``, or with 7 + D columns (holosoma: the
MuJoCo ``qpos``, root position and wxyz quaternion first). Joint columns are matched to the
robot by ``joint_names``; a file without names is refused (IsaacLab and MuJoCo order the G1's
joints differently, so the order cannot be inferred). Velocities in the file are not read: they
are recomputed on writing.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from retarget.asap_pkl import RobotMotion, atomic_write
from retarget.errors import MotionFileError
from retarget.formats.base import CONVENTIONS, FormatOptions, LoadedMotion
from retarget.formats.kinematics import body_poses
from retarget.formats.motion_ops import check_frames, empty_human_joints, robot_for_joint_names
from retarget.formats.velocity import angular_velocity_w, linear_velocity
from retarget.npz_io import load_npz_arrays, numeric_array, scalar_number
from retarget.rotations import quat_normalize
from robots.registry import RobotSpec

ROOT_BODY = "pelvis"
DEFAULT_FPS = 50.0


def _fps_array(fps: float) -> np.ndarray:
    return np.array([round(fps)]) if abs(fps - round(fps)) < 1e-9 else np.array([float(fps)])


def write(path: str | Path, motion: RobotMotion, robot: RobotSpec, options: FormatOptions = FormatOptions()) -> Path:
    """Write the motion at its own rate (resample first for another rate)."""
    poses = body_poses(motion, robot)
    metadata = {
        "format": "beyondmimic_npz",
        "robot": robot.name,
        "clip": motion.name,
        "quat_order": "wxyz",
        "fps": motion.fps,
        **CONVENTIONS,
        "velocities": "central finite differences (one-sided at the ends); angular: world frame, "
        "log(q[t+1] q[t-1]^-1) / (2 dt)",
        "source": options.source,
    }
    arrays = {
        "fps": _fps_array(motion.fps),
        "joint_pos": motion.dof_pos.astype(np.float64),
        "joint_vel": linear_velocity(motion.dof_pos, motion.fps),
        "body_pos_w": poses.pos_w,
        "body_quat_w": poses.quat_w,
        "body_lin_vel_w": linear_velocity(poses.pos_w, motion.fps),
        "body_ang_vel_w": angular_velocity_w(poses.quat_w, motion.fps),
        "joint_names": np.array(robot.joint_names),
        "body_names": np.array(poses.names),
        "human_joints_w": np.asarray(motion.human_joints_w, dtype=np.float64),
        "metadata": np.array(json.dumps(metadata)),
    }
    path = Path(path)

    def _save(tmp: Path) -> None:
        with open(tmp, "wb") as fh:  # a file object keeps numpy from appending ".npz" to the temp name
            np.savez(fh, **arrays)

    atomic_write(path, _save)
    return path


def _require(path: Path, data: dict[str, np.ndarray], *keys: str) -> None:
    missing = [k for k in keys if k not in data]
    if missing:
        raise MotionFileError(path, f"not a BeyondMimic/mjlab motion .npz: missing keys {missing} (found {sorted(data)})")


def read(path: str | Path, options: FormatOptions = FormatOptions()) -> list[LoadedMotion]:
    path = Path(path)
    data = load_npz_arrays(path, "BeyondMimic .npz")
    _require(path, data, "fps", "joint_pos")
    if "joint_names" not in data:
        raise MotionFileError(
            path, "has no 'joint_names': the joint order of 'joint_pos' cannot be known (IsaacLab and MuJoCo "
            "order the G1's joints differently); add the names to the file"
        )
    robot, columns = robot_for_joint_names(list(np.asarray(data["joint_names"]).reshape(-1)), path)
    fps = scalar_number(path, data["fps"], "fps", "BeyondMimic motion", positive=True)
    joint_pos = numeric_array(path, data, "joint_pos", "BeyondMimic motion")
    if joint_pos.ndim != 2 or joint_pos.shape[1] not in (robot.num_dof, robot.num_dof + 7):
        raise MotionFileError(
            path, f"'joint_pos' must be (T, {robot.num_dof}) or (T, 7 + {robot.num_dof}) qpos; found {joint_pos.shape}"
        )
    if joint_pos.shape[1] == robot.num_dof + 7:  # holosoma: full MuJoCo qpos
        root_pos, root_quat, dof = joint_pos[:, :3], joint_pos[:, 3:7], joint_pos[:, 7:]
    else:
        _require(path, data, "body_pos_w", "body_quat_w", "body_names")
        bodies = [str(n) for n in np.asarray(data["body_names"]).reshape(-1)]
        if ROOT_BODY not in bodies:
            raise MotionFileError(path, f"'body_names' has no {ROOT_BODY!r} to take the root pose from")
        root = bodies.index(ROOT_BODY)
        root_pos = numeric_array(path, data, "body_pos_w", "BeyondMimic motion")[:, root]
        root_quat = numeric_array(path, data, "body_quat_w", "BeyondMimic motion")[:, root]
        dof = joint_pos
    dof = dof[:, columns]
    human = np.asarray(data["human_joints_w"], dtype=np.float64) if "human_joints_w" in data else None
    if human is None or human.shape != (len(dof), 24, 3):
        human = empty_human_joints(len(dof))
    check_frames(path, root_pos_w=root_pos, root_quat_w=root_quat, dof_pos=dof)
    name = path.stem
    if "metadata" in data:
        try:
            name = json.loads(str(data["metadata"])).get("clip", name) or name
        except (json.JSONDecodeError, AttributeError):
            pass
    motion = RobotMotion(
        name=name, fps=fps, root_pos_w=root_pos, root_quat_w=quat_normalize(root_quat), dof_pos=dof, human_joints_w=human
    )
    return [LoadedMotion(motion, robot)]
