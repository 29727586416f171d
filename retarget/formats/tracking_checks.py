"""What a tracking `.npz` (BeyondMimic, mjlab, holosoma) must satisfy before it is read, beyond its key names.

The trainers read the body arrays as they are, with no check of their own: a zero quaternion, an array one
frame short or bodies that do not follow from the joints train silently on a wrong reference. So every array
the consumers read is checked here (numbers, one row per frame, finite), every body quaternion must be a unit
quaternion, and the body poses must be where our forward kinematics of the file's own joint angles puts them.
Each refusal names the file and the key.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from retarget.asap_pkl import RobotMotion
from retarget.errors import MotionFileError
from retarget.formats.kinematics import BodyPoses, select_bodies
from retarget.formats.orders import HOLOSOMA_MARKERS
from retarget.npz_io import numeric_array

JOINT_KEYS: tuple[str, ...] = ("joint_pos", "joint_vel")
BODY_KEYS: dict[str, int] = {"body_pos_w": 3, "body_quat_w": 4, "body_lin_vel_w": 3, "body_ang_vel_w": 3}
"""The body arrays the consumers read, with their last dimension."""

QUAT_NORM_TOLERANCE = 0.01
"""How far a stored body quaternion's norm may be from 1. Our writer's files and the bundled holosoma sample are
unit to 7e-16, a float32 file to about 1e-7; the consumers use the quaternions without normalising them, and a
zero or scaled quaternion is not an orientation."""

FK_POSITION_TOLERANCE_M = 0.03
"""How far a stored body origin may sit from our forward kinematics of the file's root pose and joint angles.
Our writer's own files agree to 5e-16 m (39 bundled clips × 3 dialects); the bundled holosoma sample, made with
holosoma's own G1 model, to 0.0103 m (its waist bodies, 9-10 mm from the unitree_ros URDF); measured by
bench/bench_tracking_checks.py. About three times that leaves another consumer's G1 model room, while a body
taken from another frame, joint or order is decimetres off."""

FK_ANGLE_TOLERANCE_RAD = 0.01
"""How far a stored body orientation may be from our forward kinematics: our files agree to 8e-8 rad, the
holosoma sample to 1.5e-6 rad; a body quaternion taken from another body or frame is off by tenths of a radian."""


def check_arrays(path: Path, data: dict[str, np.ndarray], num_bodies: int | None) -> None:
    """Every consumer array present holds finite numbers with `joint_pos`'s frame count; body arrays are
    (T, B, 3 or 4) with one B (`num_bodies` when the file names its bodies); body quaternions are unit."""
    num_frames = len(np.asarray(data["joint_pos"]))
    for key in (*JOINT_KEYS, *BODY_KEYS):
        if key not in data:
            continue
        arr = numeric_array(path, data, key, "tracking motion")
        if arr.ndim == 0 or len(arr) != num_frames:
            found = "a single value" if arr.ndim == 0 else f"{len(arr)} frames"
            raise MotionFileError(
                path, f"{key!r} has {found}, 'joint_pos' {num_frames}: every array needs one row per frame"
            )
        if key in BODY_KEYS:
            expected = f"(T, {'B' if num_bodies is None else num_bodies}, {BODY_KEYS[key]})"
            if (
                arr.ndim != 3
                or arr.shape[2] != BODY_KEYS[key]
                or (num_bodies is not None and arr.shape[1] != num_bodies)
            ):
                raise MotionFileError(path, f"{key!r} must have shape {expected}; found {arr.shape}")
            num_bodies = arr.shape[1]
        elif arr.ndim != 2:
            raise MotionFileError(path, f"{key!r} must have shape (T, columns); found {arr.shape}")
        bad = ~np.isfinite(arr.reshape(num_frames, -1)).all(axis=1)
        if bad.any():
            raise MotionFileError(
                path, f"{key!r} has NaN or inf in {bad.sum()} frame(s), first at frame {np.flatnonzero(bad)[0]}"
            )
    if "body_quat_w" in data:
        norms = np.linalg.norm(np.asarray(data["body_quat_w"], dtype=np.float64), axis=-1)
        off = np.abs(norms - 1.0) > QUAT_NORM_TOLERANCE
        if off.any():
            t, b = np.argwhere(off)[0]
            raise MotionFileError(
                path,
                f"'body_quat_w' holds {off.sum()} quaternion(s) that are not unit (first: frame {t}, body {b}, norm "
                f"{norms[t, b]:.3g}); each must be a rotation, wxyz",
            )


def body_pose_errors(
    data: dict[str, np.ndarray], bodies: tuple[str, ...] | list[str], ours: BodyPoses
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(bodies compared, (T, K) position error [m], (T, K) orientation error [rad]) of the file's `body_pos_w`
    and `body_quat_w` (bodies named `bodies`, by position) against our forward kinematics `ours`. Bodies our G1
    lacks (and holosoma's markers do not place) are left out."""
    known = [(i, name) for i, name in enumerate(bodies) if name in ours.names or name in HOLOSOMA_MARKERS]
    if not known:
        return [], np.zeros((len(ours.pos_w), 0)), np.zeros((len(ours.pos_w), 0))
    fk = select_bodies(ours, tuple(name for _, name in known), HOLOSOMA_MARKERS)
    index = [i for i, _ in known]
    pos_w = np.asarray(data["body_pos_w"], dtype=np.float64)[:, index]
    quat_w = np.asarray(data["body_quat_w"], dtype=np.float64)[:, index]
    dot = np.abs(np.sum(quat_w / np.linalg.norm(quat_w, axis=-1, keepdims=True) * fk.quat_w, axis=-1))
    return [name for _, name in known], np.linalg.norm(pos_w - fk.pos_w, axis=-1), 2.0 * np.arccos(dot.clip(0, 1))


def check_body_poses(
    path: Path, data: dict[str, np.ndarray], bodies: tuple[str, ...] | list[str], ours: BodyPoses, motion: RobotMotion
) -> None:
    """Refuse a file whose body poses are not where our forward kinematics `ours` of its `motion` puts them."""
    names, error_m, error_rad = body_pose_errors(data, bodies, ours)
    for key, error, tolerance, unit in (
        ("body_pos_w", error_m, FK_POSITION_TOLERANCE_M, "m"),
        ("body_quat_w", error_rad, FK_ANGLE_TOLERANCE_RAD, "rad"),
    ):
        if error.size and error.max() > tolerance:
            t, b = np.unravel_index(int(error.argmax()), error.shape)
            raise MotionFileError(
                path,
                f"{key!r} disagrees with 'joint_pos' by forward kinematics: body {names[b]!r} is "
                f"{error.max():.3g} {unit} from where the joint angles put it (frame {t}; tolerance {tolerance:g} "
                f"{unit}, in {int((error > tolerance).any(axis=1).sum())} of {motion.num_frames} frames)",
            )
