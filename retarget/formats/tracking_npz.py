"""Motion `.npz` for the tracking trainers: BeyondMimic, mjlab and holosoma, one dialect each.

All three share the keys (float64; T frames, B bodies; quaternions **wxyz**, world z-up)::

    fps             (1,)          frame rate [Hz] (int when integral: BeyondMimic writes array([50]))
    joint_pos       (T, 29)       joint angles [rad]   holosoma: (T, 36) MuJoCo qpos = pelvis xyz, wxyz, joints
    joint_vel       (T, 29)       [rad/s]              holosoma: (T, 35) qvel = pelvis lin. vel.,
                                                                         ang. vel. (world), joints
    body_pos_w      (T, B, 3)     body origins in the world [m]
    body_quat_w     (T, B, 4)     body orientations, wxyz
    body_lin_vel_w  (T, B, 3)     [m/s], central finite differences
    body_ang_vel_w  (T, B, 3)     [rad/s], world frame, central differences on SO(3)

and differ in the order of joints and bodies, which BeyondMimic and mjlab read **by position**:

* ``beyondmimic``: IsaacLab breadth-first order, 30 bodies (:data:`retarget.formats.orders.ISAACLAB_G1_BODIES`).
* ``mjlab``: MuJoCo depth-first order, 30 bodies without fixed links.
* ``holosoma``: reads joints and bodies by name and fails on any body of its G1 the file lacks, so the
  file has holosoma's 51 bodies (:data:`retarget.formats.orders.HOLOSOMA_G1_BODIES`, body 0 = world).

The consumers read no other key; the writer adds ``joint_names``, ``body_names`` (the order
written), ``human_joints_w`` (T, 24, 3) and a JSON ``metadata`` string naming the dialect, so
this package reads its own files back by name. A file without names is read by position only
when the dialect is known: BeyondMimic's and mjlab's files have the same shapes, so a nameless
(T, 29) file is refused unless the caller names the dialect (CLI: ``--from``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from retarget.asap_pkl import RobotMotion, atomic_write
from retarget.errors import ConfigError, MotionFileError
from retarget.formats.base import CONVENTIONS, DEFAULT_OPTIONS, FormatOptions, LoadedMotion
from retarget.formats.kinematics import BodyPoses, body_poses, select_bodies
from retarget.formats.motion_ops import check_frames, empty_human_joints, robot_for_joint_names
from retarget.formats.orders import (
    CONSUMER_ROBOT,
    HOLOSOMA_MARKERS,
    MUJOCO_G1_JOINTS,
    consumer_order,
    holosoma_body_list,
)
from retarget.formats.tracking_checks import check_arrays, check_body_poses
from retarget.formats.velocity import angular_velocity_w, linear_velocity
from retarget.npz_io import load_npz_arrays, numeric_array, scalar_number
from retarget.rotations import quat_normalize
from robots.registry import RobotSpec

DIALECTS: tuple[str, ...] = ("beyondmimic", "mjlab", "holosoma")
DEFAULT_FPS = 50.0
"""BeyondMimic, mjlab and holosoma train on 50 Hz motions."""
ROOT_BODY = "pelvis"
_QPOS_ROOT, _QVEL_ROOT = 7, 6


def _fps_array(fps: float) -> np.ndarray:
    return np.array([round(fps)]) if abs(fps - round(fps)) < 1e-9 else np.array([float(fps)])


def _orders(dialect: str, robot: RobotSpec) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(joint order, body order) a dialect writes."""
    if robot.name != CONSUMER_ROBOT:
        raise ConfigError(f"{dialect} files hold the 29-dof G1 ({CONSUMER_ROBOT}); got a motion on {robot.name}")
    if dialect == "holosoma":
        return MUJOCO_G1_JOINTS, holosoma_body_list()
    order = consumer_order(dialect)
    return order.joints, order.bodies


def write(
    path: str | Path, motion: RobotMotion, robot: RobotSpec, options: FormatOptions = DEFAULT_OPTIONS, *, dialect: str
) -> Path:
    """Write `motion` (on the 29-dof G1) in `dialect`, at the motion's own rate."""
    joints, bodies = _orders(dialect, robot)
    poses = select_bodies(body_poses(motion, robot), bodies, HOLOSOMA_MARKERS if dialect == "holosoma" else None)
    columns = [robot.joint_names.index(j) for j in joints]
    joint_pos = motion.dof_pos[:, columns].astype(np.float64)
    joint_vel = linear_velocity(joint_pos, motion.fps)
    if dialect == "holosoma":
        root_vel = np.concatenate(
            [linear_velocity(motion.root_pos_w, motion.fps), angular_velocity_w(motion.root_quat_w, motion.fps)], axis=1
        )  # holosoma's own files store the root angular velocity in the world frame
        joint_pos = np.concatenate([motion.root_pos_w, quat_normalize(motion.root_quat_w), joint_pos], axis=1)
        joint_vel = np.concatenate([root_vel, joint_vel], axis=1)
    metadata = {
        "format": dialect,
        "robot": robot.name,
        "clip": motion.name,
        "quat_order": "wxyz",
        "fps": motion.fps,
        **CONVENTIONS,
        "joint_order": "by position, as joint_names",
        "body_order": "by position, as body_names",
        "velocities": "central finite differences (one-sided at the ends); angular: world frame, "
        "log(q[t+1] q[t-1]^-1) / (2 dt)",
        "source": options.source,
    }
    arrays: dict[str, Any] = {
        "fps": _fps_array(motion.fps),
        "joint_pos": joint_pos,
        "joint_vel": joint_vel,
        "body_pos_w": poses.pos_w,
        "body_quat_w": poses.quat_w,
        "body_lin_vel_w": linear_velocity(poses.pos_w, motion.fps),
        "body_ang_vel_w": angular_velocity_w(poses.quat_w, motion.fps),
        "joint_names": np.array(joints),
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


def _metadata(data: dict[str, np.ndarray]) -> dict:
    try:
        meta = json.loads(str(data["metadata"])) if "metadata" in data else {}
    except (json.JSONDecodeError, TypeError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _names(data: dict[str, np.ndarray], key: str) -> list[str] | None:
    return [str(n) for n in np.asarray(data[key]).reshape(-1)] if key in data else None


def dialect_of(path: Path, data: dict[str, np.ndarray]) -> str:
    """The dialect a tracking `.npz` is in, from its shapes and name keys; raises when they do not tell."""
    if "joint_pos" not in data:
        raise MotionFileError(path, f"not a tracking motion .npz: no 'joint_pos' (found {sorted(data)})")
    joint_pos, joint_vel = np.asarray(data["joint_pos"]), np.asarray(data.get("joint_vel", np.zeros((0, 0))))
    joint_names = _names(data, "joint_names")
    num_joints = len(joint_names) if joint_names is not None else None
    if joint_pos.ndim == 2 and num_joints is not None and joint_pos.shape[1] == num_joints + _QPOS_ROOT:
        return "holosoma"
    declared = _metadata(data).get("format")
    if declared in DIALECTS:
        return str(declared)
    if joint_names is not None:
        for dialect in ("beyondmimic", "mjlab"):
            if tuple(joint_names) == consumer_order(dialect).joints:
                return dialect
        return "named"
    qvel_cols = joint_vel.shape[1] if joint_vel.ndim == 2 else None
    raise MotionFileError(
        path,
        f"'joint_pos' {joint_pos.shape} (joint_vel {qvel_cols} columns) without 'joint_names': BeyondMimic "
        "(IsaacLab joint and body order) and mjlab (MuJoCo order) files have the same shapes and holosoma's "
        "are read by name, so the order cannot be known; name the dialect (CLI: --from beyondmimic or --from mjlab)",
    )


def _fps(path: Path, data: dict[str, np.ndarray]) -> float:
    if "fps" not in data:
        raise MotionFileError(path, "has no 'fps'")
    return scalar_number(path, data["fps"], "fps", "tracking motion", positive=True)


def read(
    path: str | Path, options: FormatOptions = DEFAULT_OPTIONS, *, dialect: str | None = None
) -> list[LoadedMotion]:
    """The motion of a tracking `.npz`. Names in the file win; a nameless file is read by position
    in `dialect` (``beyondmimic`` or ``mjlab``), which must then be given."""
    path = Path(path)
    data = load_npz_arrays(path, "tracking motion .npz", frame_keys=("joint_pos",))
    found = dialect_of(path, data) if dialect is None or "joint_names" in data else dialect
    joint_pos = numeric_array(path, data, "joint_pos", "tracking motion")
    if joint_pos.ndim != 2:
        raise MotionFileError(path, f"'joint_pos' must be (T, columns); found {joint_pos.shape}")
    names = _names(data, "joint_names")
    if names is None:
        if found == "holosoma":
            raise MotionFileError(path, "a holosoma motion needs 'joint_names' (holosoma reads joints by name)")
        names = list(consumer_order(found).joints)
    robot, columns = robot_for_joint_names(names, path)
    bodies = _names(data, "body_names")
    if bodies is None and found in ("beyondmimic", "mjlab"):
        bodies = list(consumer_order(found).bodies)
    check_arrays(path, data, None if bodies is None else len(bodies))
    if found == "holosoma":
        if joint_pos.shape[1] != _QPOS_ROOT + len(names):
            raise MotionFileError(
                path, f"holosoma 'joint_pos' must be (T, 7 + {len(names)}) qpos; found {joint_pos.shape}"
            )
        root_pos, root_quat, dof = joint_pos[:, :3], joint_pos[:, 3:7], joint_pos[:, _QPOS_ROOT:]
    else:
        if joint_pos.shape[1] != len(names):
            raise MotionFileError(path, f"'joint_pos' must be (T, {len(names)}); found {joint_pos.shape}")
        for key in ("body_pos_w", "body_quat_w"):
            if key not in data:
                raise MotionFileError(path, f"has no {key!r} to take the root pose from")
        root = 0 if bodies is None else (bodies.index(ROOT_BODY) if ROOT_BODY in bodies else -1)
        if root < 0:
            raise MotionFileError(path, f"'body_names' has no {ROOT_BODY!r} to take the root pose from")
        root_pos = numeric_array(path, data, "body_pos_w", "tracking motion")[:, root]
        root_quat = numeric_array(path, data, "body_quat_w", "tracking motion")[:, root]
        dof = joint_pos
    dof = dof[:, columns]
    human = np.asarray(data["human_joints_w"], dtype=np.float64) if "human_joints_w" in data else None
    if human is None or human.shape != (len(dof), 24, 3):
        human = empty_human_joints(len(dof))
    check_frames(path, root_pos_w=root_pos, root_quat_w=root_quat, dof_pos=dof)
    name = str(_metadata(data).get("clip") or path.stem)
    motion = RobotMotion(
        name=name,
        fps=_fps(path, data),
        root_pos_w=root_pos,
        root_quat_w=quat_normalize(root_quat),
        dof_pos=dof,
        human_joints_w=human,
    )
    if "body_pos_w" in data and "body_quat_w" in data and bodies is not None:
        ours = body_poses(motion, robot)
        if "joint_names" not in data:
            _check_order_by_kinematics(path, ours, np.asarray(data["body_pos_w"], dtype=np.float64), found)
        check_body_poses(path, data, bodies, ours, motion)
    return [LoadedMotion(motion, robot)]


_LEG_BODIES = tuple(f"{s}_{j}_link" for s in ("left", "right") for j in ("hip_roll", "knee", "ankle_roll"))
LEG_ORDER_TOLERANCE_M = 0.02
"""How far a nameless file's leg bodies may sit from our forward kinematics of its joints read in the stated
order. The G1 models of the consumers agree on the legs to 1e-6 m; a wrong order moves them by decimetres."""


def _check_order_by_kinematics(path: Path, poses: BodyPoses, pos_w: np.ndarray, dialect: str) -> None:
    """Refuse a nameless file whose bodies do not follow from its joints (`poses`: our forward kinematics of
    them) in `dialect`'s order: the order a caller states (``--from``) is checked, not trusted."""
    bodies = consumer_order(dialect).bodies
    if pos_w.ndim != 3 or pos_w.shape[1] != len(bodies):
        raise MotionFileError(
            path, f"'body_pos_w' must be (T, {len(bodies)}, 3) in {dialect} order; found {pos_w.shape}"
        )
    ours = select_bodies(poses, _LEG_BODIES)
    theirs = pos_w[:, [bodies.index(n) for n in _LEG_BODIES]]
    error_m = float(np.abs(ours.pos_w - theirs).max())
    if error_m > LEG_ORDER_TOLERANCE_M:
        other = "mjlab" if dialect == "beyondmimic" else "beyondmimic"
        raise MotionFileError(
            path,
            f"read in {dialect} order, its leg bodies sit up to {error_m:.3f} m from where its joint angles put "
            f"them: it is not a {dialect} file (try --from {other})",
        )
