"""Foot and floor metrics: stance sole height, tilt and sliding; penetration; floating.

Stance is the HUMAN's (from the source clip): a good retarget puts the robot's foot flat and
still on the floor exactly when the human's foot is planted. Per foot and frame:

* sole height: the lowest of the foot's sole points (bottoms of its collision spheres) [m];
* tilt: the angle between the foot link's z axis and world z [rad] (0 = flat);
* sliding: horizontal speed of the sole centre (mean of the sole points), by forward
  differences between consecutive frames that are both stance frames of that foot [m/s].

The floor is z = 0 in the robot's world (ASAP's files and ours are grounded that way).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from retarget.contact_targets import flat_ankle_height_w
from retarget.metrics.replay import RobotReplay


@dataclass(frozen=True)
class StanceSamples:
    """Per-(frame, foot) samples in human stance, pooled over both feet."""

    sole_height_m: np.ndarray
    """(n,) [m] lowest sole point of the stance foot."""
    tilt_rad: np.ndarray
    """(n,) [rad] stance foot tilt from horizontal."""
    tilt_flat_rad: np.ndarray
    """(k,) [rad] the same, in the stance samples where the human foot is flat (all of them if not given)."""
    slide_speed_m_s: np.ndarray
    """(m,) [m/s] horizontal sole-centre speed between consecutive stance frames."""


def foot_tilt_rad(replay: RobotReplay, foot_links: tuple[str, str]) -> np.ndarray:
    """(T, 2) [rad] angle between each foot's z axis and world z."""
    ids = [replay.model.body(link).id for link in foot_links]
    cos_z = replay.body_rot_w[:, ids, 2, 2]  # world-z component of the foot's z axis
    return np.arccos(np.clip(cos_z, -1.0, 1.0))


def human_foot_flat(joints_w: np.ndarray, stance: np.ndarray, tolerance_m: float) -> np.ndarray:
    """(T, 2) bool: the human foot's ankle is within `tolerance_m` of its flat-foot height
    (:func:`retarget.contact_targets.flat_ankle_height_w`: the heel is not raised). Joints (T, 24, 3) [m]."""
    ankle, toe = joints_w[:, [7, 8]], joints_w[:, [10, 11]]
    return np.asarray(ankle[..., 2] - flat_ankle_height_w(ankle, toe, stance) <= tolerance_m)


def stance_samples(
    replay: RobotReplay, foot_links: tuple[str, str], stance: np.ndarray, fps: float, flat: np.ndarray | None = None
) -> StanceSamples:
    """Sole height, tilt and sliding of the robot's feet while the human's feet are planted; `flat` (T, 2) marks
    the frames whose human foot is flat (:func:`human_foot_flat`)."""
    lowest = replay.sole_points_w[..., 2].min(axis=2)  # (T, 2)
    tilt = foot_tilt_rad(replay, foot_links)
    centre_xy = replay.sole_points_w[..., :2].mean(axis=2)  # (T, 2, 2)
    step_speed = np.linalg.norm(np.diff(centre_xy, axis=0), axis=-1) * fps  # (T-1, 2)
    both_stance = stance[1:] & stance[:-1]
    return StanceSamples(
        sole_height_m=lowest[stance],
        tilt_rad=tilt[stance],
        tilt_flat_rad=tilt[stance if flat is None else stance & flat],
        slide_speed_m_s=step_speed[both_stance],
    )


def lowest_sole_height_m(replay: RobotReplay) -> np.ndarray:
    """(T,) [m] the lowest sole point of both feet per frame."""
    return replay.sole_points_w[..., 2].min(axis=(1, 2))


def floating_frames(replay: RobotReplay, stance: np.ndarray, threshold_m: float) -> tuple[int, int]:
    """(frames where the human has a foot down but the robot's lowest sole is above `threshold_m`,
    frames where the human has a foot down)."""
    human_down = stance.any(axis=1)
    floating = human_down & (lowest_sole_height_m(replay) > threshold_m)
    return int(floating.sum()), int(human_down.sum())
