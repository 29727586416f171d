"""Joint-space metrics: URDF position and velocity limits, and smoothness.

Derivatives are finite differences at the clip's frame rate: velocity by forward differences
(q[t+1] - q[t])·fps, acceleration and jerk by the 2nd and 3rd forward differences ·fps², ·fps³.
These are exact for the polynomials of matching degree, which the tests use.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LimitReport:
    """Frames that break a limit and by how much."""

    frames: int
    """Frames (or frame-to-frame steps, for velocities) where any joint exceeds its limit."""
    max_excess: float
    """Largest excess over a limit (0 when none) [rad or rad/s]."""
    worst_joint: int
    """Index of the joint with the largest excess (-1 when none)."""


def _report(excess: np.ndarray, tolerance: float) -> LimitReport:
    if excess.size == 0:
        return LimitReport(0, 0.0, -1)
    frames = int((excess > tolerance).any(axis=1).sum())
    worst = float(excess.max())
    if worst <= 0.0:
        return LimitReport(frames, 0.0, -1)
    return LimitReport(frames, worst, int(np.unravel_index(np.argmax(excess), excess.shape)[1]))


def position_limits(dof_pos: np.ndarray, lower_rad: np.ndarray, upper_rad: np.ndarray, tol: float) -> LimitReport:
    """Joint angles (T, D) [rad] against the URDF range."""
    excess = np.maximum(dof_pos - upper_rad, lower_rad - dof_pos)
    return _report(excess, tol)


def joint_speeds(dof_pos: np.ndarray, fps: float) -> np.ndarray:
    """(T-1, D) [rad/s] joint speeds by forward differences."""
    return np.diff(dof_pos, axis=0) * fps


def velocity_limits(dof_pos: np.ndarray, fps: float, limit_rad_s: np.ndarray, tol: float) -> LimitReport:
    """Joint speeds against the URDF velocity limits."""
    return _report(np.abs(joint_speeds(dof_pos, fps)) - limit_rad_s, tol)


def max_speed_ratio(dof_pos: np.ndarray, fps: float, limit_rad_s: np.ndarray) -> float:
    """Largest |q̇| / limit over joints and frames (1.0 = at the limit)."""
    speeds = np.abs(joint_speeds(dof_pos, fps))
    return float((speeds / limit_rad_s).max()) if speeds.size else 0.0


def mean_abs_derivative(dof_pos: np.ndarray, fps: float, order: int) -> float:
    """Mean over frames and joints of |d^order q / dt^order| [rad/s^order] (NaN if too few frames)."""
    if dof_pos.shape[0] <= order:
        return float("nan")
    return float(np.abs(np.diff(dof_pos, n=order, axis=0)).mean() * fps**order)
