"""ASAP motion libraries (`.pkl`), 23-dof (ASAP's G1) and 29-dof (Unitree's full G1).

A thin layer over :mod:`retarget.asap_pkl`, which owns the layout and its invariants; the
29-dof variant is the same layout with D = 29: ``pose_aa`` (T, 1+29+3, 3), ``dof`` (T, 29).
The robot is identified by the number of joint angles per frame (23 or 29). ASAP's layout has
no room for metadata beyond ``fps``; quaternions in ``root_rot`` are xyzw.

Clip keys and ASAP's folder mode: given a folder of one-clip files, ASAP looks each clip up under
the file name cut at its **first dot** (``kick_v1.5.pkl`` → ``kick_v1``). A one-clip file is
therefore keyed by its file name, and a file name with a dot before ``.pkl`` is refused (renaming
a path the user chose would hide the problem). Clip names made up by this package (batch outputs)
go through :func:`asap_clip_key`, which replaces each dot with an underscore.
"""

from __future__ import annotations

from pathlib import Path

from retarget.asap_pkl import (
    RobotMotion,
    asap_dict_to_motion,
    motion_to_asap_dict,
    read_motion_library,
    write_motion_library,
)
from retarget.errors import MotionFileError
from retarget.formats.base import DEFAULT_OPTIONS, FormatOptions, LoadedMotion
from retarget.formats.motion_ops import robot_for_dof
from robots.registry import RobotSpec


def read(path: str | Path, options: FormatOptions = DEFAULT_OPTIONS) -> list[LoadedMotion]:
    """Every clip of an ASAP library (or the one named by ``options.clip``)."""
    library = read_motion_library(path)
    if options.clip is not None:
        if options.clip not in library:
            raise MotionFileError(path, f"no clip {options.clip!r}; clips: {', '.join(library)}")
        library = {options.clip: library[options.clip]}
    out = []
    for name, clip in library.items():
        robot = robot_for_dof(clip["dof"].shape[1], path)
        out.append(LoadedMotion(asap_dict_to_motion(name, clip), robot))
    return out


def asap_clip_key(name: str) -> str:
    """`name` usable as an ASAP clip key and file name in folder mode: each '.' becomes '_'."""
    return name.replace(".", "_")


def folder_mode_key(path: str | Path) -> str:
    """The key ASAP's folder mode looks a one-clip file up under: the file name cut at its first dot."""
    key = Path(path).name.split(".")[0]
    if Path(path).name != key + ".pkl":
        raise MotionFileError(
            path,
            f"ASAP's folder mode would look this clip up as {key!r} (it cuts the file name at the first dot) "
            f"and fail; use a name without dots before .pkl, e.g. {asap_clip_key(Path(path).stem)}.pkl",
        )
    return key


def write(path: str | Path, motion: RobotMotion, robot: RobotSpec, options: FormatOptions = DEFAULT_OPTIONS) -> Path:
    """A one-clip library keyed by the file name, so ASAP finds it in folder mode as in library mode."""
    return write_motion_library(Path(path), {folder_mode_key(path): motion_to_asap_dict(motion, robot)})
