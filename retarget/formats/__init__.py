"""Read and write the robot motion formats the humanoid community exchanges.

One writer per consumer dialect, named for the consumer (:data:`ROBOT_FORMATS`: asap, beyondmimic,
mjlab, holosoma, gmr, csv), in :mod:`.asap`, :mod:`.tracking_npz` (the three tracking `.npz`
dialects), :mod:`.gmr_pkl` and :mod:`.unitree_csv`, each with ``read(path, options)`` and
``write(path, motion, robot, options)`` around :class:`retarget.asap_pkl.RobotMotion` (wxyz, SI,
world z-up). The orders consumers read by position are data in :mod:`.orders`. Human inputs (BVH,
joint positions) live in :mod:`retarget.readers`.
"""

from retarget.formats.base import FormatOptions, LoadedMotion
from retarget.formats.motion_ops import convert_dof, resample_motion
from retarget.formats.registry import (
    ALL_FORMATS,
    HUMAN_FORMATS,
    ROBOT_FORMATS,
    detect_input_format,
    output_format,
    read_motions,
    write_motion,
)

__all__ = [
    "ALL_FORMATS",
    "HUMAN_FORMATS",
    "ROBOT_FORMATS",
    "FormatOptions",
    "LoadedMotion",
    "convert_dof",
    "detect_input_format",
    "output_format",
    "read_motions",
    "resample_motion",
    "write_motion",
]
