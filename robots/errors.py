"""The project's root error type and the errors robot files raise.

They live here, in the lowest package, so that ``robots`` imports nothing from ``retarget``; :mod:`retarget.errors`
re-exports them, and every error the toolchain raises on purpose is still one :class:`AsapRetargetError`.
Every message names the file (when there is one), what was expected and what was found.
"""

from __future__ import annotations

from pathlib import Path


class AsapRetargetError(Exception):
    """Root of all errors this package raises on purpose."""


class MotionFileError(AsapRetargetError):
    """A motion (or robot description) file is missing, corrupt, truncated, or holds invalid data."""

    def __init__(self, path: str | Path | None, problem: str):
        self.path = None if path is None else Path(path)
        self.problem = problem
        where = f"{self.path}: " if self.path is not None else ""
        super().__init__(f"{where}{problem}")


class UnknownRobotError(AsapRetargetError):
    """A robot name that is not one of the bundled descriptions."""
