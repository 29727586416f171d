"""Per-frame robot foot figures for plots: sole height above the floor and foot tilt."""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from robots.registry import load_robot_spec


@dataclass(frozen=True)
class FootTrack:
    """Both robot feet over a clip (index 0 left, 1 right)."""

    sole_height_m: np.ndarray
    """(T, 2) [m] height of the lowest sole point above z = 0 (negative: below the floor)."""
    tilt_deg: np.ndarray
    """(T, 2) [deg] angle between the foot's z axis and the world's z axis (0 = flat)."""


def track_feet(model: mujoco.MjModel, robot_name: str, qpos: np.ndarray) -> FootTrack:
    """Forward kinematics of every frame in `qpos` (T, nq) on `model`."""
    robot = load_robot_spec(robot_name)
    data = mujoco.MjData(model)
    feet = [(model.body(link).id, robot.sole_points_b(link)) for link in robot.foot_links]
    height = np.empty((len(qpos), 2))
    tilt = np.empty((len(qpos), 2))
    for t, q in enumerate(qpos):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        for f, (body, sole_b) in enumerate(feet):
            rot = data.xmat[body].reshape(3, 3)
            height[t, f] = (data.xpos[body] + sole_b @ rot.T)[:, 2].min()
            tilt[t, f] = np.degrees(np.arccos(np.clip(rot[2, 2], -1.0, 1.0)))
    return FootTrack(sole_height_m=height, tilt_deg=tilt)
