"""One root exception type for everything the toolchain reports to a user.

Every message names the file (when there is one), what was expected and what was
found, so a data engineer reading a batch log knows which clip to fix and how.
The CLI turns any :class:`AsapRetargetError` into exit code 1 with its message. The root type and the errors
robot files raise are defined in :mod:`robots.errors` (the lowest package) and re-exported here.
"""

from __future__ import annotations

from robots.errors import AsapRetargetError, MotionFileError, UnknownRobotError

__all__ = ["AsapRetargetError", "BodyModelError", "ConfigError", "MotionFileError", "UnknownRobotError"]


class BodyModelError(AsapRetargetError):
    """The optional SMPL/SMPL-H/SMPL-X body model is missing or unusable."""


class ConfigError(AsapRetargetError):
    """A configuration value outside its valid range."""
