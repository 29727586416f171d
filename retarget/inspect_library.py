"""Describe and validate a motion library: clips, frames, rate, joint ranges, verdict."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from retarget.asap_pkl import read_motion_library, structural_problems
from retarget.errors import MotionFileError
from robots.registry import ROBOT_NAMES, robot_for_dof_count


@dataclass(frozen=True)
class ClipReport:
    name: str
    frames: int
    fps: float
    duration_s: float
    joint_min_rad: np.ndarray
    joint_max_rad: np.ndarray
    robot: str | None
    problems: list[str] = field(default_factory=list)
    limit_violation_frames: int = 0
    """Frames where some joint is outside its URDF limit by more than 1e-3 rad."""

    @property
    def verdict(self) -> str:
        if self.problems:
            return "invalid"
        return "ok" if self.limit_violation_frames == 0 else "limits"


def inspect_library(path: str | Path) -> list[ClipReport]:
    """Read `path` safely and report on each clip."""
    library = read_motion_library(path)
    reports = []
    for name, clip in library.items():
        dof = np.asarray(clip["dof"], dtype=np.float64)
        try:
            robot = robot_for_dof_count(dof.shape[1])
        except MotionFileError:
            robot = None
        problems = structural_problems(clip)
        violations = 0
        if robot is None:
            problems.append(f"{dof.shape[1]} joints matches no bundled robot ({', '.join(ROBOT_NAMES)})")
        else:
            tol = 1e-3
            outside = (dof < robot.lower_rad - tol) | (dof > robot.upper_rad + tol)
            violations = int(outside.any(axis=1).sum())
        fps = float(clip["fps"])
        reports.append(
            ClipReport(
                name=name,
                frames=dof.shape[0],
                fps=fps,
                duration_s=(dof.shape[0] - 1) / fps,
                joint_min_rad=dof.min(axis=0),
                joint_max_rad=dof.max(axis=0),
                robot=None if robot is None else robot.name,
                problems=problems,
                limit_violation_frames=violations,
            )
        )
    return reports
