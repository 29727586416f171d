"""One root exception type for everything the toolchain reports to a user.

Every message names the file (when there is one), what was expected and what was
found, so a data engineer reading a batch log knows which clip to fix and how.
The CLI turns any :class:`AsapRetargetError` into exit code 1 with its message.
"""

from __future__ import annotations

from pathlib import Path


class AsapRetargetError(Exception):
    """Root of all errors this package raises on purpose."""


class MotionFileError(AsapRetargetError):
    """A motion file is missing, corrupt, truncated, or holds invalid data."""

    def __init__(self, path: str | Path | None, problem: str):
        self.path = None if path is None else Path(path)
        self.problem = problem
        where = f"{self.path}: " if self.path is not None else ""
        super().__init__(f"{where}{problem}")


class UnknownRobotError(AsapRetargetError):
    """A robot name that is not one of the bundled descriptions."""


class BodyModelError(AsapRetargetError):
    """The optional SMPL/SMPL-H/SMPL-X body model is missing or unusable."""


class ConfigError(AsapRetargetError):
    """A configuration value outside its valid range."""
