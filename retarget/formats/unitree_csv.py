"""Unitree-style motion CSV: one frame per row, no column names.

Each row is ``root_x, root_y, root_z, quaternion (4), joint angles (D)``: positions in metres
(world, z-up), angles in radians in the robot's URDF joint order, D = 29 for Unitree's G1
(23 accepted for ASAP's G1). Two quaternion orders circulate: **xyzw** in Unitree's LAFAN1
retargets, **wxyz** in ProtoMotions' exports. Nothing in a bare row tells them apart, so the
order is an explicit option. Unitree's files have no header line, and readers depend on that
(BeyondMimic's ``csv_to_npz --frame_range`` counts rows with ``skiprows``; pandas with
``header=None`` fails on a ``#`` line), so the writer writes bare rows unless asked for a header:
one leading ``#`` line stating the order, rate, robot and joint names, which ``np.loadtxt`` skips
and this reader uses. Unitree's files are 30 Hz; a file without a header needs its rate given.

A safety net, not a detector: when the chosen order puts the pelvis upside down in most frames
while the other order keeps it upright, the read fails instead of returning the flipped motion.
This catches a wxyz file read as xyzw (a near-identity quaternion becomes a 180° roll); an xyzw
file read as wxyz mostly turns into a yaw error of 180° that no such check can see, which is
why the order must be stated.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

from retarget.asap_pkl import RobotMotion, atomic_write
from retarget.errors import MotionFileError
from retarget.formats.base import CONVENTIONS, DEFAULT_OPTIONS, FormatOptions, LoadedMotion
from retarget.formats.motion_ops import check_frames, empty_human_joints, robot_for_dof
from retarget.rotations import quat_normalize, quat_to_matrix, quat_wxyz_to_xyzw, quat_xyzw_to_wxyz
from robots.registry import RobotSpec, load_robot_spec

DEFAULT_FPS = 30.0
HEADER_PREFIX = "# asap-retarget "


def _header_lines(motion: RobotMotion, robot: RobotSpec, quat_order: str, source: str) -> list[str]:
    meta = {
        "format": "unitree_csv",
        "robot": robot.name,
        "clip": motion.name,
        "fps": motion.fps,
        "quat_order": quat_order,
        **CONVENTIONS,
        "source": source,
        "columns": ["root_x", "root_y", "root_z"] + [f"quat_{c}" for c in quat_order] + list(robot.joint_names),
    }
    return [HEADER_PREFIX + json.dumps(meta)]


def write(path: str | Path, motion: RobotMotion, robot: RobotSpec, options: FormatOptions = DEFAULT_OPTIONS) -> Path:
    order = options.quat_order or "xyzw"
    quat = motion.root_quat_w if order == "wxyz" else quat_wxyz_to_xyzw(motion.root_quat_w)
    rows = np.concatenate([motion.root_pos_w, quat, motion.dof_pos], axis=1)
    header = _header_lines(motion, robot, order, options.source) if options.csv_header else []

    def _save(tmp: Path) -> None:
        with open(tmp, "w") as fh:
            fh.writelines(line + "\n" for line in header)
            # 17 significant digits: the text round-trips every float64 exactly.
            np.savetxt(fh, rows, fmt="%.17g", delimiter=",")

    atomic_write(Path(path), _save)
    return Path(path)


def _read_header(path: Path) -> dict:
    with open(path) as fh:
        for line in fh:
            if not line.startswith("#"):
                break
            if line.startswith(HEADER_PREFIX):
                try:
                    header = json.loads(line[len(HEADER_PREFIX) :])
                except json.JSONDecodeError as exc:
                    raise MotionFileError(path, f"unreadable header line ({exc})") from exc
                if not isinstance(header, dict):
                    raise MotionFileError(path, f"the header line must hold a JSON object, found {header!r}")
                return header
    return {}


def _upside_down_fraction(quat_wxyz: np.ndarray) -> float:
    """Fraction of frames whose pelvis z axis points below the horizon."""
    return float((quat_to_matrix(quat_normalize(quat_wxyz))[:, 2, 2] < 0.0).mean())


def read(path: str | Path, options: FormatOptions = DEFAULT_OPTIONS) -> list[LoadedMotion]:
    path = Path(path)
    if not path.is_file():
        raise MotionFileError(path, "file does not exist")
    if path.stat().st_size == 0:
        raise MotionFileError(path, "empty file: a motion CSV holds one row per frame")
    try:
        header = _read_header(path)
    except UnicodeDecodeError as exc:
        raise MotionFileError(path, f"not a text CSV file ({exc.reason} at byte {exc.start})") from exc
    order = options.quat_order or header.get("quat_order")
    if order is None:
        raise MotionFileError(
            path,
            "the root quaternion order is not stated in the file: pass quat_order 'xyzw' (Unitree, "
            "LAFAN1) or 'wxyz' (ProtoMotions) (CLI: --quat-order)",
        )
    if header.get("quat_order") not in (None, order):
        raise MotionFileError(path, f"the header says quat_order {header['quat_order']!r}, the option says {order!r}")
    fps = options.csv_fps or header.get("fps")
    if fps is None:
        raise MotionFileError(
            path, "the frame rate is not stated in the file: pass csv_fps (CLI: --in-fps; Unitree's CSVs are 30 Hz)"
        )
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not np.isfinite(fps) or fps <= 0:
        raise MotionFileError(path, f"the frame rate must be a positive number, found {fps!r}")
    try:
        with warnings.catch_warnings():
            # numpy warns "input contained no data" (with its own source line) for a file of blank or "#" lines;
            # that case is refused below in one line
            warnings.simplefilter("ignore", UserWarning)
            rows = np.loadtxt(path, delimiter=",", ndmin=2, comments="#")
    except (ValueError, UnicodeDecodeError) as exc:
        raise MotionFileError(path, f"not a numeric CSV ({exc})") from exc
    if rows.size == 0:
        raise MotionFileError(path, "empty file: no data rows (only blank or '#' lines); expected one row per frame")
    robot = load_robot_spec(header["robot"]) if "robot" in header else robot_for_dof(rows.shape[1] - 7, path)
    if rows.shape[1] != 7 + robot.num_dof:
        raise MotionFileError(
            path, f"rows must have 7 + {robot.num_dof} columns for {robot.name}; found {rows.shape[1]}"
        )
    quat = rows[:, 3:7] if order == "wxyz" else quat_xyzw_to_wxyz(rows[:, 3:7])
    check_frames(path, root_pos_w=rows[:, :3], root_quat_w=quat, dof_pos=rows[:, 7:])
    other = quat_xyzw_to_wxyz(rows[:, 3:7]) if order == "wxyz" else rows[:, 3:7]
    if _upside_down_fraction(quat) > 0.5 and _upside_down_fraction(other) < 0.5:
        raise MotionFileError(
            path,
            f"read as {order}, the pelvis is upside down in {_upside_down_fraction(quat):.0%} of frames; "
            f"the other order keeps it upright: check the quaternion order",
        )
    motion = RobotMotion(
        name=header.get("clip") or path.stem,
        fps=float(fps),
        root_pos_w=rows[:, :3].copy(),
        root_quat_w=quat_normalize(quat),
        dof_pos=rows[:, 7:].copy(),
        human_joints_w=empty_human_joints(len(rows)),
    )
    return [LoadedMotion(motion, robot)]
