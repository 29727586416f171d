"""Which format a path is, and one entry point to read or write any robot motion format.

Formats are chosen by name (``fmt``) or from the file: the extension, and for the two
extensions shared by several formats the keys and shapes inside (``.npz``: ``joint_pos`` for the
tracking dialects, told apart by :func:`retarget.formats.tracking_npz.dialect_of`, AMASS
``poses``/``trans``, joint positions ``joints_w``; ``.pkl``: ASAP's clip dict or GMR's
``root_pos``/``dof_pos``). Writing a ``.pkl`` means ASAP unless ``fmt='gmr'``, an ``.npz``
BeyondMimic unless ``fmt`` says mjlab or holosoma. Key names and shapes are facts of each layout,
so this never guesses: a file they do not settle is refused and the caller names its format;
conventions a file cannot carry (a bare CSV's quaternion order) are explicit options
(:class:`FormatOptions`).
"""

from __future__ import annotations

import functools
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from retarget.asap_pkl import RobotMotion
from retarget.errors import ConfigError, MotionFileError
from retarget.formats import asap, gmr_pkl, tracking_npz, unitree_csv
from retarget.formats.base import DEFAULT_OPTIONS, FormatOptions, LoadedMotion
from retarget.formats.kinematics import ground_motion
from retarget.formats.motion_ops import convert_dof
from retarget.npz_io import load_npz_arrays
from retarget.safe_pickle import safe_load
from robots.registry import RobotSpec, load_robot_spec


@dataclass(frozen=True)
class RobotFormat:
    """A robot motion format this package reads and writes, named for the consumer that reads it."""

    name: str
    read: Callable[..., list[LoadedMotion]]
    """``read(path, options) -> list[LoadedMotion]``."""
    write: Callable[..., Path]
    """``write(path, motion, robot, options) -> Path``, atomically."""
    extension: str
    default_fps: float | None
    """Rate the format is usually exchanged at [Hz]; None keeps the source rate."""
    robots: tuple[str, ...]
    """Robots the consumer accepts, the default target first; empty: any bundled robot."""
    summary: str


def _dialect(fn: Callable[..., Any], dialect: str) -> Callable[..., Any]:
    return functools.partial(fn, dialect=dialect)


_G29 = ("g1_29dof",)
ROBOT_FORMATS: dict[str, RobotFormat] = {
    f.name: f
    for f in (
        RobotFormat(
            "asap",
            asap.read,
            asap.write,
            ".pkl",
            None,
            (),
            "ASAP / HumanoidVerse motion library (joblib), 23- or 29-dof, root_rot xyzw",
        ),
        RobotFormat(
            "beyondmimic",
            _dialect(tracking_npz.read, "beyondmimic"),
            _dialect(tracking_npz.write, "beyondmimic"),
            ".npz",
            tracking_npz.DEFAULT_FPS,
            _G29,
            "BeyondMimic .npz: IsaacLab order, 29 joints, 30 bodies, wxyz, 50 Hz",
        ),
        RobotFormat(
            "mjlab",
            _dialect(tracking_npz.read, "mjlab"),
            _dialect(tracking_npz.write, "mjlab"),
            ".npz",
            tracking_npz.DEFAULT_FPS,
            _G29,
            "mjlab .npz: MuJoCo depth-first order, 29 joints, 30 bodies, wxyz, 50 Hz",
        ),
        RobotFormat(
            "holosoma",
            _dialect(tracking_npz.read, "holosoma"),
            _dialect(tracking_npz.write, "holosoma"),
            ".npz",
            tracking_npz.DEFAULT_FPS,
            _G29,
            "holosoma .npz: joint_pos = qpos (T, 36), joint_vel = qvel (T, 35), read by name, 50 Hz",
        ),
        RobotFormat(
            "gmr",
            gmr_pkl.read,
            gmr_pkl.write,
            ".pkl",
            None,
            ("g1_29dof", "g1_23dof"),
            "GMR pickle: root_rot xyzw, GMR's 38 bodies, loads under numpy 1.x and 2.x",
        ),
        RobotFormat(
            "csv",
            unitree_csv.read,
            unitree_csv.write,
            ".csv",
            unitree_csv.DEFAULT_FPS,
            _G29,
            "Unitree CSV: root pos, root quat xyzw (wxyz: ProtoMotions), 29 joints, no header, 30 Hz",
        ),
    )
}
HUMAN_FORMATS: tuple[str, ...] = ("bvh", "joints", "amass", "gvhmr", "wham", "tram")
"""Human motion inputs: they are retargeted, not converted."""
ALL_FORMATS: tuple[str, ...] = tuple(ROBOT_FORMATS) + HUMAN_FORMATS


def target_robot(fmt: str, source: RobotSpec, requested: str | None = None) -> RobotSpec:
    """The robot a motion is written on for `fmt`: `requested` when given (and the consumer takes
    it), else the consumer's robot (29-dof consumers) or the source's (ASAP)."""
    robots = ROBOT_FORMATS[fmt].robots
    name = requested or (robots[0] if robots else source.name)
    if robots and name not in robots:
        raise ConfigError(f"{fmt} files hold the {' or '.join(robots)} joints; --robot {name} does not fit")
    return load_robot_spec(name)


def prepare_motion(
    motion: RobotMotion, robot: RobotSpec, fmt: str, requested: str | None = None
) -> tuple[RobotMotion, RobotSpec, list[str]]:
    """The motion on the robot `fmt` is written on, and one line per thing the user should know
    (a 23-dof motion widened to the 29-dof G1, joints dropped)."""
    target = target_robot(fmt, robot, requested)
    if target.name == robot.name:
        return motion, robot, []
    converted, lost = convert_dof(motion, robot, target)
    notes = []
    added = [n for n in target.joint_names if n not in robot.joint_names]
    if added:
        notes.append(
            f"{motion.name}: {robot.num_dof}-dof motion written for {fmt} ({target.num_dof} joints): "
            f"{target.name} kinematics with {len(added)} joints it lacks at zero ({', '.join(added[:2])}, …)"
        )
    if lost > 1e-6:
        notes.append(f"{motion.name}: dropped joints {target.name} lacks (max |q| = {lost:.3f} rad)")
    return converted, target, notes


def _npz_keys(path: Path) -> set[str]:
    try:
        with zipfile.ZipFile(path) as zf:
            return {n.removesuffix(".npy") for n in zf.namelist()}
    except (zipfile.BadZipFile, OSError) as exc:
        raise MotionFileError(path, f"not a readable .npz archive ({type(exc).__name__}: {exc})") from exc


def detect_input_format(path: str | Path) -> str:
    """The format of an existing file, from its extension and, for .npz/.pkl, its keys."""
    from retarget.readers.tram import is_tram_folder
    from retarget.readers.wham import is_wham_file

    path = Path(path)
    if is_tram_folder(path):
        return "tram"
    if not path.is_file():
        raise MotionFileError(path, "file does not exist")
    ext = path.suffix.lower()
    if ext in (".pt", ".npy"):
        return {".pt": "gvhmr", ".npy": "tram"}[ext]
    if ext == ".csv":
        return "csv"
    if ext == ".bvh":
        return "bvh"
    if ext == ".npz":
        keys = _npz_keys(path)
        if "joint_pos" in keys:
            found = tracking_npz.dialect_of(path, load_npz_arrays(path, "tracking motion .npz"))
            return "beyondmimic" if found == "named" else found  # named files are read by name, any order
        if "joints_w" in keys:
            return "joints"
        if "trans" in keys and ({"poses", "root_orient"} & keys):
            return "amass"
        raise MotionFileError(
            path,
            f"an .npz with keys {sorted(keys)} is none of: BeyondMimic/mjlab/holosoma (joint_pos), joint positions "
            "(joints_w), AMASS (poses/trans)",
        )
    if ext == ".pkl":
        if is_wham_file(path):
            return "wham"
        data = safe_load(path)
        if isinstance(data, dict) and set(gmr_pkl.REQUIRED_KEYS) <= set(data):
            return "gmr"
        return "asap"
    raise MotionFileError(path, f"unknown extension {ext!r}; known: .pkl, .npz, .csv, .bvh, .pt (GVHMR), .npy (TRAM)")


def output_format(path: str | Path, fmt: str | None = None) -> str:
    """The robot format to write: `fmt` when given, else from the extension (.pkl → asap)."""
    if fmt is not None:
        if fmt not in ROBOT_FORMATS:
            raise ConfigError(f"unknown output format {fmt!r}; valid choices: {', '.join(ROBOT_FORMATS)}")
        return fmt
    ext = Path(path).suffix.lower()
    for f in ROBOT_FORMATS.values():  # first match wins: .pkl is ASAP unless asked for gmr
        if f.extension == ext:
            return f.name
    raise ConfigError(
        f"{path}: cannot tell the output format from {ext!r}; use .pkl (asap, or --to gmr), .npz (beyondmimic; "
        "--to mjlab/holosoma) or .csv"
    )


def read_motions(
    path: str | Path, fmt: str | None = None, options: FormatOptions = DEFAULT_OPTIONS
) -> list[LoadedMotion]:
    """Every robot motion in a file of a robot format."""
    fmt = fmt or detect_input_format(path)
    if fmt not in ROBOT_FORMATS:
        raise ConfigError(f"{fmt!r} is not a robot motion format ({', '.join(ROBOT_FORMATS)})")
    loaded = ROBOT_FORMATS[fmt].read(path, options)
    if options.ground:
        loaded = [LoadedMotion(ground_motion(lm.motion, lm.robot)[0], lm.robot) for lm in loaded]
    return loaded


def write_motion(
    path: str | Path,
    motion: RobotMotion,
    robot: RobotSpec,
    fmt: str | None = None,
    options: FormatOptions = DEFAULT_OPTIONS,
) -> Path:
    """Write one robot motion in `fmt` (default: from the extension), at the motion's own rate,
    atomically, on the robot the consumer expects (:func:`prepare_motion`; what that changes is
    issued as a :class:`FormatNote` warning). Resample first
    (:func:`retarget.formats.motion_ops.resample_motion`) for another rate; :data:`ROBOT_FORMATS`
    gives each format's usual rate."""
    if motion.dof_pos.shape[1] != robot.num_dof:
        raise ConfigError(f"motion has {motion.dof_pos.shape[1]} joints but robot {robot.name} has {robot.num_dof}")
    if not np.isfinite(motion.fps) or motion.fps <= 0:
        raise ConfigError(f"motion frame rate must be positive, got {motion.fps}")
    fmt = output_format(path, fmt)
    motion, robot, notes = prepare_motion(motion, robot, fmt)
    for note in notes:
        warnings.warn(note, FormatNote, stacklevel=2)
    return ROBOT_FORMATS[fmt].write(path, motion, robot, options)


class FormatNote(UserWarning):
    """Something a writer changed so the consumer reads the file right (e.g. 23 → 29 joints)."""
