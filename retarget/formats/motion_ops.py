"""Operations on robot motions that every format conversion needs: find the robot a file was
made for, reorder joints by name, convert 23 ↔ 29 dof, resample to another rate.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from retarget.asap_pkl import RobotMotion
from retarget.errors import ConfigError, MotionFileError
from retarget.resample import interpolation_weights, sample_times
from retarget.rotations import quat_slerp
from robots.registry import ROBOT_NAMES, RobotSpec, load_robot_spec, robot_for_dof_count

robot_for_dof = robot_for_dof_count  # the name the format readers use


def robot_for_joint_names(
    names: list[str] | tuple[str, ...], path: str | Path | None = None
) -> tuple[RobotSpec, np.ndarray]:
    """The bundled robot whose joints are exactly `names` (any order) and the column index that
    puts a file's columns into the robot's order: ``dof_spec = dof_file[:, index]``."""
    names = [str(n) for n in names]
    for robot_name in ROBOT_NAMES:
        spec = load_robot_spec(robot_name)
        if sorted(names) == sorted(spec.joint_names):
            return spec, np.array([names.index(n) for n in spec.joint_names])
    raise MotionFileError(
        path, f"joint names {names[:4]}… ({len(names)}) match no bundled robot ({', '.join(ROBOT_NAMES)})"
    )


def convert_dof(motion: RobotMotion, source: RobotSpec, target: RobotSpec) -> tuple[RobotMotion, float]:
    """The motion on another G1 layout, joints matched by name. Joints the target has and the
    source lacks (the wrists, going 23 → 29) are set to zero; joints the target lacks are dropped.
    Returns the motion and the largest dropped angle [rad] (0 when nothing was lost)."""
    if source.name == target.name:
        return motion, 0.0
    missing = [n for n in target.joint_names if n not in source.joint_names]
    known = set(source.joint_names) & set(target.joint_names)
    if not known:
        raise ConfigError(f"robots {source.name} and {target.name} share no joint names")
    dof = np.zeros((motion.num_frames, target.num_dof))
    for j, name in enumerate(target.joint_names):
        if name not in missing:
            dof[:, j] = motion.dof_pos[:, source.joint_names.index(name)]
    dropped = [i for i, n in enumerate(source.joint_names) if n not in target.joint_names]
    lost = float(np.abs(motion.dof_pos[:, dropped]).max()) if dropped else 0.0
    return replace(motion, dof_pos=dof), lost


def resample_motion(motion: RobotMotion, fps_out: float) -> RobotMotion:
    """The motion at `fps_out` [Hz] over the same duration: root orientation by slerp, root
    position, joint angles and human joints by linear interpolation."""
    if not np.isfinite(fps_out) or fps_out <= 0:
        raise ConfigError(f"output frame rate must be positive, got {fps_out}")
    if abs(motion.fps - fps_out) < 1e-9 or motion.num_frames == 1:
        return replace(motion, fps=float(fps_out))
    times = sample_times(motion.num_frames, motion.fps, fps_out)
    i0, alpha = interpolation_weights(times, motion.num_frames, motion.fps)
    i1 = np.minimum(i0 + 1, motion.num_frames - 1)

    def lerp(a: np.ndarray) -> np.ndarray:
        w = alpha.reshape((-1,) + (1,) * (a.ndim - 1))
        return (1.0 - w) * a[i0] + w * a[i1]

    return replace(
        motion,
        fps=float(fps_out),
        root_pos_w=lerp(motion.root_pos_w),
        root_quat_w=quat_slerp(motion.root_quat_w[i0], motion.root_quat_w[i1], alpha),
        dof_pos=lerp(motion.dof_pos),
        human_joints_w=lerp(motion.human_joints_w),
    )


def empty_human_joints(num_frames: int) -> np.ndarray:
    """Zeros for formats that do not carry the human joints (RobotMotion's 'unknown')."""
    return np.zeros((num_frames, 24, 3))


def check_frames(path: str | Path, **arrays: np.ndarray) -> None:
    """Raise naming the file when arrays are empty, disagree in frame count, or hold NaN/inf."""
    counts = {k: len(v) for k, v in arrays.items()}
    if len(set(counts.values())) != 1:
        raise MotionFileError(path, f"arrays disagree on the number of frames: {counts}")
    if not next(iter(counts.values())):
        raise MotionFileError(path, "has zero frames")
    for key, arr in arrays.items():
        bad = ~np.isfinite(np.asarray(arr, dtype=np.float64).reshape(len(arr), -1)).all(axis=1)
        if bad.any():
            raise MotionFileError(
                path, f"'{key}' has NaN or inf in {bad.sum()} frame(s), first at frame {np.flatnonzero(bad)[0]}"
            )
    if "root_quat_w" in arrays:
        # Readers normalise; only norms far from 1 mean the columns are not a quaternion at all.
        # (GMT's own airkick_stand.pkl stores norms of 0.961…0.988.)
        norms = np.linalg.norm(arrays["root_quat_w"], axis=-1)
        if norms.min() < 0.5 or norms.max() > 1.5:
            raise MotionFileError(
                path, f"root quaternions have norms {norms.min():.3f}…{norms.max():.3f}, not a rotation"
            )
