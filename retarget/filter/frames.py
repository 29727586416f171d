"""Per-frame masks and frame ranges: runs, persistence, margins, the ranges worth keeping.

A frame range is ``(start, stop)`` with ``stop`` exclusive, like a Python slice.
"""

from __future__ import annotations

import numpy as np


def runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """Maximal runs of True in a 1-D boolean mask, as (start, stop) ranges."""
    mask = np.asarray(mask, dtype=bool)
    if mask.size == 0:
        return []
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    starts = np.flatnonzero(edges == 1)
    stops = np.flatnonzero(edges == -1)
    return [(int(a), int(b)) for a, b in zip(starts, stops)]


def mask_from_ranges(ranges: list[tuple[int, int]], num_frames: int) -> np.ndarray:
    mask = np.zeros(num_frames, dtype=bool)
    for a, b in ranges:
        mask[a:b] = True
    return mask


def persistent(mask: np.ndarray, min_frames: int) -> np.ndarray:
    """Keep only runs of True at least `min_frames` long."""
    if min_frames <= 1:
        return np.asarray(mask, dtype=bool).copy()
    return mask_from_ranges([r for r in runs(mask) if r[1] - r[0] >= min_frames], len(mask))


def dilate(mask: np.ndarray, frames: int) -> np.ndarray:
    """Grow every True run by `frames` on both sides."""
    mask = np.asarray(mask, dtype=bool)
    if frames <= 0 or not mask.any():
        return mask.copy()
    grown = [(max(a - frames, 0), min(b + frames, len(mask))) for a, b in runs(mask)]
    return mask_from_ranges(grown, len(mask))


def good_ranges(bad: np.ndarray, min_frames: int) -> list[tuple[int, int]]:
    """Runs of good (False) frames at least `min_frames` long, longest first."""
    keep = [r for r in runs(~np.asarray(bad, dtype=bool)) if r[1] - r[0] >= min_frames]
    return sorted(keep, key=lambda r: (r[0] - r[1], r[0]))


def seconds_to_frames(seconds: float, fps: float) -> int:
    """Whole frames covering `seconds` at `fps` (at least 1)."""
    return max(int(np.ceil(seconds * fps - 1e-9)), 1)


def rolling_min(values: np.ndarray, window: int) -> np.ndarray:
    """(T,) the smallest value in each centred window of `window` frames (clipped at the ends).

    A value above a threshold in the rolling minimum was above it for the whole window:
    this is how "sustained" figures are reported.
    """
    values = np.asarray(values, dtype=float)
    if window <= 1 or len(values) == 0:
        return values.copy()
    half_lo, half_hi = (window - 1) // 2, window // 2
    padded = np.concatenate([np.full(half_lo, np.inf), values, np.full(half_hi, np.inf)])
    return np.lib.stride_tricks.sliding_window_view(padded, window).min(axis=1)


def noise_level_m(points_w: np.ndarray, window: int = 5) -> np.ndarray:
    """(T,) frame-to-frame noise of a point set (T, P, 3), in the units of the points.

    The fourth difference x[t-2] - 4x[t-1] + 6x[t] - 4x[t+1] + x[t+2], divided by √70, has the
    standard deviation σ of white noise added to x, while smooth motion sampled at 30 Hz
    barely shows in it (its response at 3 Hz is 1/100 of that at 15 Hz). Per frame: the
    median over points of that magnitude (noise moves every point; a fast limb only a few),
    averaged over `window` frames.
    """
    num = len(points_w)
    if num < 5:
        return np.zeros(num)
    d4 = points_w[4:] - 4 * points_w[3:-1] + 6 * points_w[2:-2] - 4 * points_w[1:-3] + points_w[:-4]
    per_frame = np.median(np.linalg.norm(d4, axis=-1), axis=1) / np.sqrt(70.0)
    if window > 1:
        per_frame = np.convolve(np.pad(per_frame, window // 2, mode="edge"), np.ones(window) / window, "valid")
    out = np.empty(num)
    out[2:-2] = per_frame[: num - 4]
    out[:2], out[-2:] = out[2], out[-3]
    return out
