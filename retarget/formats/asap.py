"""ASAP motion libraries (`.pkl`), 23-dof (ASAP's G1) and 29-dof (Unitree's full G1).

A thin layer over :mod:`retarget.asap_pkl`, which owns the layout and its invariants; the
29-dof variant is the same layout with D = 29: ``pose_aa`` (T, 1+29+3, 3), ``dof`` (T, 29).
The robot is identified by the number of joint angles per frame (23 or 29). ASAP's layout has
no room for metadata beyond ``fps``; quaternions in ``root_rot`` are xyzw.
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
from retarget.formats.base import FormatOptions, LoadedMotion
from retarget.formats.motion_ops import robot_for_dof
from robots.registry import RobotSpec


def read(path: str | Path, options: FormatOptions = FormatOptions()) -> list[LoadedMotion]:
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


def write(path: str | Path, motion: RobotMotion, robot: RobotSpec, options: FormatOptions = FormatOptions()) -> Path:
    """A one-clip library keyed by the motion's name (ASAP's loader takes any key)."""
    return write_motion_library(Path(path), {motion.name: motion_to_asap_dict(motion, robot)})
