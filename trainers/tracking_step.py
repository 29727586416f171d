"""Reward assembly and the failure test of one tracking step (pure functions of a :class:`TrackingState`)."""

from __future__ import annotations

import numpy as np

from trainers.config import RewardConfig
from trainers.state import TrackingState


def mean_point_distance_m(s: TrackingState) -> np.ndarray:
    """(N,) mean Euclidean distance [m] between robot and reference tracked points."""
    return np.linalg.norm(s.point_pos_w - s.ref_point_pos_w, axis=-1).mean(axis=1)


def failed(s: TrackingState, max_mean_distance_m: float) -> np.ndarray:
    """(N,) bool: drifted too far from the reference (ASAP's rule), or the state is not finite."""
    dist = mean_point_distance_m(s)
    finite = np.isfinite(s.point_pos_w).all(axis=(1, 2)) & np.isfinite(s.dof_vel).all(axis=1)
    return ~finite | ~(dist <= max_mean_distance_m)


def compute_reward(
    s: TrackingState, cfg: RewardConfig, penalty_scale: float, policy_dt_s: float
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Total reward (N,) and each term's contribution by function name (for logging only)."""
    dt = policy_dt_s if cfg.scale_by_dt else 1.0
    total = np.zeros(s.dof_pos.shape[0])
    terms: dict[str, np.ndarray] = {}
    for term in cfg.tracking:
        value = term.weight * np.exp(-term.fn(s) / term.sigma) * dt
        terms[term.fn.__name__] = value
        total += value
    for penalty in cfg.penalties:
        scale = penalty_scale if penalty.curriculum else 1.0
        value = penalty.weight * scale * penalty.fn(s) * dt
        terms[penalty.fn.__name__] = value
        total += value
    # A non-finite state (a diverged simulation) must not poison the batch's statistics.
    total = np.nan_to_num(total, nan=0.0, posinf=0.0, neginf=0.0)
    return total, terms
