"""Types shared by the format modules: what a reader returns and the options a format may need."""

from __future__ import annotations

from dataclasses import dataclass

from retarget.asap_pkl import RobotMotion
from retarget.errors import ConfigError
from robots.registry import RobotSpec

QUAT_ORDERS: tuple[str, ...] = ("wxyz", "xyzw")

CONVENTIONS = {
    "frame": "world, z-up (gravity along -z); root = pelvis link frame",
    "length_unit": "m",
    "angle_unit": "rad",
}
"""Conventions every writer records (plus quaternion order, rate, robot and joint names)."""


@dataclass(frozen=True)
class LoadedMotion:
    """A robot motion read from a file, with the robot it was made for."""

    motion: RobotMotion
    robot: RobotSpec


@dataclass(frozen=True)
class FormatOptions:
    """Choices a format cannot always read from the file itself. Each is explicit: a reader that
    needs one and finds it neither in the file nor here raises, it never guesses."""

    quat_order: str | None = None
    """CSV only: root quaternion order, 'xyzw' (Unitree / LAFAN1) or 'wxyz' (ProtoMotions).
    Reading: required unless the file's header states it. Writing: default 'xyzw'."""
    csv_fps: float | None = None
    """CSV only: frame rate [Hz] of a file whose header does not state it (Unitree's CSVs are 30 Hz)."""
    csv_header: bool = False
    """CSV only: write a '#' line stating the conventions. Off by default: Unitree's CSVs have no header
    and BeyondMimic's ``csv_to_npz --frame_range`` would be shifted by it (``np.loadtxt`` skips it)."""
    ground: bool = False
    """Reading: shift each clip vertically so its typical contact height (median over frames of the
    lowest sole point) is the floor, z = 0. Off by default: a reader returns what the file holds."""
    clip: str | None = None
    """Multi-clip inputs (ASAP libraries): the clip to read; None reads all."""
    source: str = ""
    """Where the motion came from, recorded in the output's metadata when the format allows."""

    def __post_init__(self) -> None:
        if self.quat_order is not None and self.quat_order not in QUAT_ORDERS:
            raise ConfigError(f"quaternion order must be one of {', '.join(QUAT_ORDERS)}, got {self.quat_order!r}")
        if self.csv_fps is not None and not self.csv_fps > 0:
            raise ConfigError(f"CSV frame rate must be positive, got {self.csv_fps}")


DEFAULT_OPTIONS = FormatOptions()
"""The options a reader or writer uses when given none (frozen, so one shared instance is safe)."""
