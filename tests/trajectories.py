"""Test helper shared by the delta-action and fine-tuning tests: recorded trajectories cut to some frames."""

from __future__ import annotations

import dataclasses

import numpy as np

from trainers.delta.collection import Trajectory


def frames(traj: Trajectory, rows: slice) -> Trajectory:
    """``traj`` cut to the frames ``rows``: each array field is per frame ((T, ...)); the scalars are kept."""
    per_frame = {
        f.name: getattr(traj, f.name)[rows]
        for f in dataclasses.fields(traj)
        if isinstance(getattr(traj, f.name), np.ndarray)
    }
    return dataclasses.replace(traj, **per_frame)
