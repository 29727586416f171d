"""The paper's tracking metrics (SMPLSim / PHC style), on tracked point trajectories.

For one episode with robot points ``p`` and reference points ``p̂`` of shape (T, P, 3) [m]:

* success: the mean point distance never exceeds 0.5 m;
* Eg-mpjpe [mm]: mean over frames and points of ‖p − p̂‖;
* Empjpe [mm]: the same after subtracting each frame's root (point 0) from both;
* Evel [mm/frame]: mean ‖Δp − Δp̂‖ of first differences between consecutive frames;
* Eacc [mm/frame²]: mean ‖Δ²p − Δ²p̂‖ of second differences.

Frames are policy steps (50 Hz here). Over many episodes the errors are averaged over all
frames of all episodes (frame-weighted), as the paper does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SUCCESS_DISTANCE_M = 0.5


@dataclass(frozen=True)
class TrackingMetrics:
    """Metrics of one or more episodes."""

    success_rate: float
    """Fraction of episodes whose mean point distance stayed ≤ 0.5 m."""
    eg_mpjpe_mm: float
    """Global mean per-point position error [mm]."""
    empjpe_mm: float
    """Root-relative mean per-point position error [mm]."""
    evel_mm_per_frame: float
    """Velocity error [mm/frame]."""
    eacc_mm_per_frame2: float
    """Acceleration error [mm/frame²]."""
    num_episodes: int
    """Episodes averaged."""
    num_frames: int
    """Frames averaged."""


@dataclass(frozen=True)
class _Sums:
    frames: int
    g: float
    local: float
    vel: float
    vel_frames: int
    acc: float
    acc_frames: int
    success: bool


def _episode_sums(pos: np.ndarray, ref: np.ndarray) -> _Sums:
    pos, ref = np.asarray(pos, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    if pos.shape != ref.shape or pos.ndim != 3 or pos.shape[-1] != 3:
        raise ValueError(f"expected two (T, P, 3) arrays of one shape, got {pos.shape} and {ref.shape}")
    dist = np.linalg.norm(pos - ref, axis=-1)  # (T, P)
    local = np.linalg.norm((pos - pos[:, :1]) - (ref - ref[:, :1]), axis=-1)
    vel = np.linalg.norm(np.diff(pos, axis=0) - np.diff(ref, axis=0), axis=-1)
    acc = np.linalg.norm(np.diff(pos, 2, axis=0) - np.diff(ref, 2, axis=0), axis=-1)
    return _Sums(
        frames=pos.shape[0],
        g=float(dist.mean(1).sum()),
        local=float(local.mean(1).sum()),
        vel=float(vel.mean(1).sum()) if vel.size else 0.0,
        vel_frames=vel.shape[0],
        acc=float(acc.mean(1).sum()) if acc.size else 0.0,
        acc_frames=acc.shape[0],
        success=bool((dist.mean(1) <= SUCCESS_DISTANCE_M).all()),
    )


def tracking_metrics(episodes: list[tuple[np.ndarray, np.ndarray]]) -> TrackingMetrics:
    """Metrics over episodes given as (robot points, reference points), each (T, P, 3) [m]."""
    if not episodes:
        raise ValueError("no episodes to evaluate")
    sums = [_episode_sums(p, r) for p, r in episodes]
    frames = sum(s.frames for s in sums)
    vel_frames = sum(s.vel_frames for s in sums)
    acc_frames = sum(s.acc_frames for s in sums)
    return TrackingMetrics(
        success_rate=float(np.mean([s.success for s in sums])),
        eg_mpjpe_mm=1e3 * sum(s.g for s in sums) / frames,
        empjpe_mm=1e3 * sum(s.local for s in sums) / frames,
        evel_mm_per_frame=1e3 * sum(s.vel for s in sums) / max(vel_frames, 1),
        eacc_mm_per_frame2=1e3 * sum(s.acc for s in sums) / max(acc_frames, 1),
        num_episodes=len(sums),
        num_frames=frames,
    )
