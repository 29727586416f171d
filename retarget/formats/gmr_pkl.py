"""GMR / GMT robot motion pickle (a plain dict, one clip per file).

Keys (T frames, D joints, B bodies)::

    fps             float        frame rate [Hz] (GMT stores the true, fractional rate)
    root_pos        (T, 3)       pelvis position in the world [m], z-up
    root_rot        (T, 4)       pelvis orientation, quaternion **xyzw**
    dof_pos         (T, D)       joint angles [rad], URDF order (D = 23: ASAP's G1 layout; 29: full G1)
    local_body_pos  (T, B, 3)    body origins relative to the pelvis, in the pelvis frame [m] (or None)
    link_body_list  list[str]    names of those bodies (or None)

GMR itself writes ``local_body_pos`` and ``link_body_list`` as None; GMT fills them with GMR's
38 G1 bodies (:data:`retarget.formats.orders.GMR_G1_BODIES`, three of them markers the URDF
lacks), and so does this writer. GMR is a 29-dof consumer; GMT's own files hold ASAP's 23 joints
with the same 38 bodies, which the writer produces when asked for ``g1_23dof``. Files are read
only through :func:`retarget.safe_pickle.safe_load` (a pickle can run code when loaded), and
written so that numpy 1.x loads them too (:mod:`retarget.formats.numpy1_pickle`). The writer adds
one key, ``metadata`` (a dict of strings), stating the conventions; GMR's and GMT's loaders read
their keys by name and ignore it. Arrays are written as float64 so that a round trip is exact.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from retarget.asap_pkl import RobotMotion, atomic_write
from retarget.errors import MotionFileError
from retarget.formats.base import CONVENTIONS, DEFAULT_OPTIONS, FormatOptions, LoadedMotion
from retarget.formats.kinematics import body_poses, select_bodies
from retarget.formats.motion_ops import check_frames, empty_human_joints, robot_for_dof
from retarget.formats.numpy1_pickle import dumps_numpy1_compatible
from retarget.formats.orders import GMR_MARKERS, gmr_body_list
from retarget.rotations import quat_to_matrix, quat_wxyz_to_xyzw, quat_xyzw_to_wxyz
from retarget.safe_pickle import safe_load
from robots.registry import RobotSpec

REQUIRED_KEYS: tuple[str, ...] = ("fps", "root_pos", "root_rot", "dof_pos")


def local_body_positions(motion: RobotMotion, robot: RobotSpec) -> tuple[list[str], np.ndarray]:
    """GMR's body names and (T, 38, 3) body origins in the pelvis frame, relative to the pelvis [m]."""
    poses = select_bodies(body_poses(motion, robot), gmr_body_list(), GMR_MARKERS)
    rot_w = quat_to_matrix(motion.root_quat_w)  # (T, 3, 3), pelvis → world
    rel_w = poses.pos_w - motion.root_pos_w[:, None, :]
    return list(poses.names), np.einsum("tji,tbj->tbi", rot_w, rel_w)


def write(path: str | Path, motion: RobotMotion, robot: RobotSpec, options: FormatOptions = DEFAULT_OPTIONS) -> Path:
    names, local = local_body_positions(motion, robot)
    data = {
        "fps": float(motion.fps),
        "root_pos": np.asarray(motion.root_pos_w, dtype=np.float64),
        "root_rot": quat_wxyz_to_xyzw(motion.root_quat_w).astype(np.float64),
        "dof_pos": np.asarray(motion.dof_pos, dtype=np.float64),
        "local_body_pos": local,
        "link_body_list": names,
        "metadata": {
            "format": "gmr_pkl",
            "robot": robot.name,
            "clip": motion.name,
            "quat_order": "xyzw",
            "joint_names": list(robot.joint_names),
            "local_body_pos": "pelvis frame, relative to the pelvis",
            **CONVENTIONS,
            "source": options.source,
        },
    }

    payload = dumps_numpy1_compatible(data)
    atomic_write(Path(path), lambda tmp: Path(tmp).write_bytes(payload))
    return Path(path)


def read(path: str | Path, options: FormatOptions = DEFAULT_OPTIONS) -> list[LoadedMotion]:
    path = Path(path)
    data = safe_load(path)
    if not isinstance(data, dict):
        raise MotionFileError(path, f"expected a GMR/GMT dict, found {type(data).__name__}")
    missing = [k for k in REQUIRED_KEYS if k not in data]
    if missing:
        raise MotionFileError(path, f"not a GMR/GMT motion: missing keys {missing} (found {sorted(data)})")
    odd = [k for k in ("root_pos", "root_rot", "dof_pos") if np.asarray(data[k]).dtype.kind not in "biuf"]
    if odd:
        raise MotionFileError(path, f"{odd[0]!r} must hold numbers, found {np.asarray(data[odd[0]]).dtype} values")
    try:
        fps = float(data["fps"])
        root_pos = np.asarray(data["root_pos"], dtype=np.float64)
        quat = quat_xyzw_to_wxyz(np.asarray(data["root_rot"], dtype=np.float64))
        dof = np.asarray(data["dof_pos"], dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise MotionFileError(path, f"non-numeric motion arrays ({exc})") from exc
    if not np.isfinite(fps) or fps <= 0:
        raise MotionFileError(path, f"'fps' must be a positive number, found {data['fps']!r}")
    if root_pos.ndim != 2 or root_pos.shape[1] != 3 or quat.ndim != 2 or quat.shape[1] != 4 or dof.ndim != 2:
        raise MotionFileError(
            path,
            f"expected root_pos (T, 3), root_rot (T, 4), dof_pos (T, D); found {root_pos.shape}, "
            f"{np.shape(data['root_rot'])}, {dof.shape}",
        )
    robot = robot_for_dof(dof.shape[1], path)
    check_frames(path, root_pos_w=root_pos, root_quat_w=quat, dof_pos=dof)
    found = data.get("metadata")
    meta: dict = found if isinstance(found, dict) else {}
    motion = RobotMotion(
        name=str(meta.get("clip") or path.stem),
        fps=fps,
        root_pos_w=root_pos,
        root_quat_w=quat / np.linalg.norm(quat, axis=1, keepdims=True),
        dof_pos=dof,
        human_joints_w=empty_human_joints(len(dof)),
    )
    return [LoadedMotion(motion, robot)]


__all__ = ["local_body_positions", "read", "write"]
