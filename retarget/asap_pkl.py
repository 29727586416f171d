"""ASAP motion libraries (`.pkl`): write them exactly as ASAP's loader reads them, read
them back safely, and check the invariants that loader relies on.

Layout (joblib dict, one entry per clip, key = clip name)::

    root_trans_offset  (T, 3)          float32  pelvis position in the world [m]
    pose_aa            (T, 1+D+3, 3)   float32  row 0 root rotation (axis-angle), rows 1..D
                                                joint axis × angle, last 3 rows zero
                                                (ASAP's extended hand/head bodies)
    dof                (T, D)          float32  joint angles [rad], URDF order
    root_rot           (T, 4)          float64  pelvis orientation, quaternion **xyzw**
    smpl_joints        (T, 24, 3)      float32  scaled human joints in the world [m]
    fps                int or float             true frame rate [Hz]
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from retarget.atomic_io import atomic_write
from retarget.errors import MotionFileError
from retarget.rotations import quat_to_rotvec, quat_wxyz_to_xyzw, quat_xyzw_to_wxyz, rotvec_to_quat
from robots.registry import RobotSpec

if TYPE_CHECKING:
    import mujoco

NUM_EXTENDED_BODIES = 3
REQUIRED_KEYS: tuple[str, ...] = ("root_trans_offset", "pose_aa", "dof", "root_rot", "smpl_joints", "fps")


@dataclass(frozen=True)
class RobotMotion:
    """A retargeted robot motion in this package's conventions (wxyz, SI)."""

    name: str
    fps: float
    """Frame rate [Hz]."""
    root_pos_w: np.ndarray
    """(T, 3) [m] pelvis position in the world."""
    root_quat_w: np.ndarray
    """(T, 4) pelvis orientation in the world, quaternion wxyz."""
    dof_pos: np.ndarray
    """(T, D) [rad] joint angles in the robot spec's order."""
    human_joints_w: np.ndarray
    """(T, 24, 3) [m] the scaled human joints the robot followed (zeros when unknown)."""

    @property
    def num_frames(self) -> int:
        return int(self.dof_pos.shape[0])


def motion_qpos(motion: RobotMotion, robot: RobotSpec | str, model: mujoco.MjModel | None = None) -> np.ndarray:
    """(T, nq) MuJoCo configurations of ``motion`` on ``robot`` (free joint: position, unit quaternion wxyz).

    ``model`` defaults to the robot's bundled MuJoCo model; pass one to reuse it (a scene with extra bodies)."""
    from retarget.errors import ConfigError
    from robots.mujoco_model import build_mujoco_model, dof_qpos_indices
    from robots.registry import load_robot_spec

    robot = load_robot_spec(robot) if isinstance(robot, str) else robot
    if motion.dof_pos.shape[1] != robot.num_dof:
        raise ConfigError(f"motion has {motion.dof_pos.shape[1]} joints, robot {robot.name} has {robot.num_dof}")
    model = build_mujoco_model(robot) if model is None else model
    qpos = np.tile(model.qpos0, (motion.num_frames, 1))
    qpos[:, 0:3] = motion.root_pos_w
    qpos[:, 3:7] = motion.root_quat_w / np.linalg.norm(motion.root_quat_w, axis=1, keepdims=True)
    qpos[:, dof_qpos_indices(model, robot)] = motion.dof_pos
    return qpos


def _fps_value(fps: float) -> int | float:
    # ASAP's own files store an int; keep that when the rate is integral, else the true rate.
    # (a NaN or infinite rate is kept as it is, for the structural check to refuse by name)
    return round(fps) if np.isfinite(fps) and abs(fps - round(fps)) < 1e-9 else float(fps)


def motion_to_asap_dict(motion: RobotMotion, robot: RobotSpec) -> dict[str, Any]:
    num_frames, num_dof = motion.dof_pos.shape
    if num_dof != robot.num_dof:
        raise ValueError(f"motion has {num_dof} joints, robot {robot.name} has {robot.num_dof}")
    pose_aa = np.zeros((num_frames, 1 + num_dof + NUM_EXTENDED_BODIES, 3), dtype=np.float64)
    pose_aa[:, 0] = quat_to_rotvec(motion.root_quat_w)
    pose_aa[:, 1 : 1 + num_dof] = robot.urdf.joint_axes_b[None] * motion.dof_pos[:, :, None]
    return {
        "root_trans_offset": motion.root_pos_w.astype(np.float32),
        "pose_aa": pose_aa.astype(np.float32),
        "dof": motion.dof_pos.astype(np.float32),
        "root_rot": quat_wxyz_to_xyzw(motion.root_quat_w).astype(np.float64),
        "smpl_joints": motion.human_joints_w.astype(np.float32),
        "fps": _fps_value(motion.fps),
    }


def asap_dict_to_motion(name: str, clip: dict[str, Any]) -> RobotMotion:
    return RobotMotion(
        name=name,
        fps=float(clip["fps"]),
        root_pos_w=np.asarray(clip["root_trans_offset"], dtype=np.float64),
        root_quat_w=quat_xyzw_to_wxyz(np.asarray(clip["root_rot"], dtype=np.float64)),
        dof_pos=np.asarray(clip["dof"], dtype=np.float64),
        human_joints_w=np.asarray(clip["smpl_joints"], dtype=np.float64),
    )


def write_motion_library(path: str | Path, clips: dict[str, dict[str, Any]]) -> Path:
    """Write a library (one or many clips) atomically with joblib, as ASAP's loader expects."""
    # joblib (and the restricted unpickler built on it, below) loads here, not at import: retargeting a clip
    # needs this module's types but no pickling, and joblib costs 40-65 ms of every process's start-up.
    import joblib

    path = Path(path)
    atomic_write(path, lambda tmp: joblib.dump(clips, tmp))
    return path


def read_motion_library(path: str | Path) -> dict[str, dict[str, Any]]:
    """Read a library with the restricted unpickler and check its structure."""
    from retarget.safe_pickle import safe_load

    path = Path(path)
    data = safe_load(path)
    if not isinstance(data, dict) or not data:
        raise MotionFileError(path, f"expected a non-empty dict of clips, found {type(data).__name__}")
    # A single clip stored without the outer dict (some tools do this).
    if set(REQUIRED_KEYS) <= set(data):
        data = {path.stem: data}
    odd = [k for k in data if not isinstance(k, str)]
    if odd:
        raise MotionFileError(path, f"clip names must be strings, found {type(odd[0]).__name__} {odd[0]!r}")
    for name, clip in data.items():
        problems = structural_problems(clip)
        if problems:
            raise MotionFileError(path, f"clip {name!r}: " + "; ".join(problems))
    return data


def array_problems(clip: dict[str, Any], expected: dict[str, tuple[int, ...]]) -> list[str]:
    """Each ``clip[key]`` must be a regular numeric array of the expected shape holding finite values."""
    problems: list[str] = []
    for key, shape in expected.items():
        try:
            arr = np.asarray(clip[key])
        except (ValueError, TypeError):
            problems.append(f"'{key}' is not a regular array (ragged or mixed nested lists)")
            continue
        if arr.dtype.kind not in "biuf":
            problems.append(f"'{key}' must hold numbers, found {arr.dtype} values")
        elif arr.shape != shape:
            problems.append(f"'{key}' must have shape {shape}, found {arr.shape}")
        elif not np.isfinite(arr).all():
            problems.append(f"'{key}' has NaN or inf")
    return problems


def number_problems(clip: dict[str, Any], key: str, positive: bool = False) -> list[str]:
    """``clip[key]`` must be one finite (and, if asked, positive) number."""
    try:
        value = float(clip[key])
    except (TypeError, ValueError):
        value = float("nan")
    if not np.isfinite(value) or (positive and value <= 0):
        return [f"'{key}' must be a {'positive' if positive else 'finite'} number, found {clip[key]!r}"]
    return []


def structural_problems(clip: Any) -> list[str]:
    """What makes `clip` unloadable by ASAP's motion library (empty list when fine)."""
    if not isinstance(clip, dict):
        return [f"expected a dict of arrays, found {type(clip).__name__}"]
    missing = [k for k in REQUIRED_KEYS if k not in clip]
    if missing:
        return [f"missing keys {missing}"]
    try:
        dof = np.asarray(clip["dof"])
    except (ValueError, TypeError):
        return ["'dof' is not a regular array (ragged or mixed nested lists)"]
    if dof.dtype.kind not in "biuf":
        return [f"'dof' must hold numbers, found {dof.dtype} values"]
    if dof.ndim != 2 or dof.shape[0] == 0:
        return [f"'dof' must be (T, D) with T > 0, found {dof.shape}"]
    num_frames, num_dof = dof.shape
    expected = {
        "root_trans_offset": (num_frames, 3),
        "pose_aa": (num_frames, 1 + num_dof + NUM_EXTENDED_BODIES, 3),
        "root_rot": (num_frames, 4),
        "smpl_joints": (num_frames, 24, 3),
    }
    problems = array_problems(clip, expected) + number_problems(clip, "fps", positive=True)
    if problems or not np.isfinite(dof).all():
        return problems + (["'dof' has NaN or inf"] if not np.isfinite(dof).all() else [])
    pose_aa = np.asarray(clip["pose_aa"], dtype=np.float64)
    if np.abs(pose_aa[:, 1 : 1 + num_dof].sum(-1) - dof).max() > 1e-4:
        problems.append("'dof' differs from pose_aa[:, 1:D+1].sum(-1)")
    root_rot = np.asarray(clip["root_rot"], dtype=np.float64)
    if np.abs(np.linalg.norm(root_rot, axis=-1) - 1.0).max() > 1e-3:
        problems.append("'root_rot' quaternions are not unit length")
    else:
        from_aa = rotvec_to_quat(pose_aa[:, 0])
        dot = np.abs(np.sum(from_aa * quat_xyzw_to_wxyz(root_rot), axis=-1))
        if (1.0 - dot).max() > 1e-4:
            problems.append("pose_aa[:, 0] is not the root rotation stored in 'root_rot'")
    if np.abs(pose_aa[:, 1 + num_dof :]).max() > 0:
        problems.append("the last 3 rows of 'pose_aa' (extended bodies) must be zero")
    return problems
