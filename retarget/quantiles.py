"""Median and percentile of 1-D arrays with numpy's results, without numpy's general-purpose wrappers.

``np.percentile`` and ``np.median`` cost 30-50 µs a call in argument handling; a clip asks for a few hundred
(a floor per stance phase, the contact detector's ground heights, the floor fit's robust rounds). These sort
and interpolate the same way, so every result is the same float.
"""

from __future__ import annotations

import numpy as np


def median(values: np.ndarray) -> float:
    """numpy's median of a non-empty 1-D array (the mean of the two middle values when their count is even)."""
    ordered = np.sort(values)
    mid = len(ordered) // 2
    return float(ordered[mid]) if len(ordered) % 2 else float((ordered[mid - 1] + ordered[mid]) / 2)


def row_percentiles(values: np.ndarray, percent: float) -> np.ndarray:
    """(R,) numpy's default (linear) `percent` percentile of each row of a non-empty (R, N) array."""
    ordered = np.sort(values, axis=1)
    index = (ordered.shape[1] - 1) * (percent / 100.0)
    lo = int(np.floor(index))
    frac = index - lo
    below, above = ordered[:, lo], ordered[:, min(lo + 1, ordered.shape[1] - 1)]
    rise = above - below
    # numpy interpolates from the nearer neighbour (its `_lerp`): the same rounding.
    return above - rise * (1.0 - frac) if frac >= 0.5 else below + rise * frac


def percentile(values: np.ndarray, percent: float) -> float:
    """numpy's default (linear) `percent` percentile of a non-empty array, flattened."""
    return float(row_percentiles(np.reshape(values, (1, -1)), percent)[0])
