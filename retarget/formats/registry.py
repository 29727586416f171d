"""Which format a path is, and one entry point to read or write any robot motion format.

Formats are chosen by name (``fmt``) or from the file: the extension, and for the two
extensions shared by several formats the keys inside (``.npz``: BeyondMimic ``body_pos_w`` /
``joint_pos``, AMASS ``poses``/``trans``, joint positions ``joints_w``; ``.pkl``: ASAP's clip
dict or GMR's ``root_pos``/``dof_pos``). Writing a ``.pkl`` means ASAP unless ``fmt='gmr'``.
Key names are facts of each layout, so this never guesses; conventions a file cannot carry (a
bare CSV's quaternion order) are explicit options (:class:`FormatOptions`).
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np

from retarget.asap_pkl import RobotMotion
from retarget.errors import ConfigError, MotionFileError
from retarget.formats import asap, beyondmimic_npz, gmr_pkl, unitree_csv
from retarget.formats.base import FormatOptions, LoadedMotion
from retarget.formats.kinematics import ground_motion
from retarget.safe_pickle import safe_load
from robots.registry import RobotSpec


@dataclass(frozen=True)
class RobotFormat:
    """A robot motion format this package reads and writes."""

    name: str
    module: ModuleType
    extension: str
    default_fps: float | None
    """Rate the format is usually exchanged at [Hz]; None keeps the source rate."""
    summary: str


ROBOT_FORMATS: dict[str, RobotFormat] = {
    f.name: f
    for f in (
        RobotFormat("asap", asap, ".pkl", None, "ASAP motion library (joblib), 23- or 29-dof, root_rot xyzw"),
        RobotFormat("beyondmimic", beyondmimic_npz, ".npz", beyondmimic_npz.DEFAULT_FPS,
                    "BeyondMimic / whole_body_tracking / mjlab .npz, quaternions wxyz, 50 Hz"),
        RobotFormat("csv", unitree_csv, ".csv", unitree_csv.DEFAULT_FPS,
                    "Unitree-style CSV: root pos, root quat (xyzw or wxyz, explicit), joint angles; 30 Hz"),
        RobotFormat("gmr", gmr_pkl, ".pkl", None, "GMR / GMT pickle, root_rot xyzw"),
    )
}  # fmt: skip
HUMAN_FORMATS: tuple[str, ...] = ("bvh", "joints", "amass", "gvhmr", "wham", "tram")
"""Human motion inputs: they are retargeted, not converted."""
ALL_FORMATS: tuple[str, ...] = tuple(ROBOT_FORMATS) + HUMAN_FORMATS


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
            return "beyondmimic"
        if "joints_w" in keys:
            return "joints"
        if "trans" in keys and ({"poses", "root_orient"} & keys):
            return "amass"
        raise MotionFileError(
            path, f"an .npz with keys {sorted(keys)} is none of: BeyondMimic (joint_pos), joint positions "
            "(joints_w), AMASS (poses/trans)"
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
        f"{path}: cannot tell the output format from {ext!r}; use .pkl (asap, or --to gmr), .npz (beyondmimic) or .csv"
    )


def read_motions(path: str | Path, fmt: str | None = None, options: FormatOptions = FormatOptions()) -> list[LoadedMotion]:
    """Every robot motion in a file of a robot format."""
    fmt = fmt or detect_input_format(path)
    if fmt not in ROBOT_FORMATS:
        raise ConfigError(f"{fmt!r} is not a robot motion format ({', '.join(ROBOT_FORMATS)})")
    loaded = ROBOT_FORMATS[fmt].module.read(path, options)
    if options.ground:
        loaded = [LoadedMotion(ground_motion(lm.motion, lm.robot)[0], lm.robot) for lm in loaded]
    return loaded


def write_motion(
    path: str | Path, motion: RobotMotion, robot: RobotSpec, fmt: str | None = None, options: FormatOptions = FormatOptions()
) -> Path:
    """Write one robot motion in `fmt` (default: from the extension), at the motion's own rate,
    atomically. Resample first (:func:`retarget.formats.motion_ops.resample_motion`) for another
    rate; :data:`ROBOT_FORMATS` gives each format's usual rate."""
    if motion.dof_pos.shape[1] != robot.num_dof:
        raise ConfigError(f"motion has {motion.dof_pos.shape[1]} joints but robot {robot.name} has {robot.num_dof}")
    if not np.isfinite(motion.fps) or motion.fps <= 0:
        raise ConfigError(f"motion frame rate must be positive, got {motion.fps}")
    return ROBOT_FORMATS[output_format(path, fmt)].module.write(path, motion, robot, options)
