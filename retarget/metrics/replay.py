"""Replay a robot motion through MuJoCo kinematics: link poses, sole points, and contacts.

One pass over the frames computes everything the metrics need from the robot: every body's
world pose, every site (the matched hand and head points), and the penetrating contacts of
the G1 collision geometry. Self-contacts exclude the floor; MuJoCo itself already skips
parent-child pairs and bodies welded together by fixed joints (hands, head, logo), and the
G1 at q = 0 has no contacts, so what remains are real interpenetrations.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from retarget.asap_pkl import RobotMotion, motion_qpos
from robots.mujoco_model import build_mujoco_model
from robots.registry import RobotSpec


@dataclass(frozen=True)
class RobotReplay:
    """Per-frame kinematics of a robot motion (T frames)."""

    model: mujoco.MjModel
    body_pos_w: np.ndarray
    """(T, nbody, 3) [m] body frame origins in the world."""
    body_rot_w: np.ndarray
    """(T, nbody, 3, 3) body orientations in the world."""
    site_pos_w: np.ndarray
    """(T, nsite, 3) [m] site positions (the matched points ``match_<name>``)."""
    sole_points_w: np.ndarray
    """(T, 2, k, 3) [m] the lowest points of each foot's collision spheres (0 left, 1 right)."""
    self_contact_depth_m: np.ndarray
    """(T,) [m] deepest self-penetration per frame (0 when none)."""
    floor_penetration_m: np.ndarray
    """(T,) [m] deepest penetration of any collision geom into the floor per frame (0 when none)."""

    def body(self, name: str) -> np.ndarray:
        """(T, 3) [m] world position of a body."""
        return self.body_pos_w[:, self.model.body(name).id]

    def site(self, name: str) -> np.ndarray:
        """(T, 3) [m] world position of a site."""
        return self.site_pos_w[:, self.model.site(name).id]


def _contact_depths(model: mujoco.MjModel, data: mujoco.MjData, floor_geoms: set[int]) -> tuple[float, float]:
    self_depth = floor_depth = 0.0
    for i in range(data.ncon):
        contact = data.contact[i]
        depth = -float(contact.dist)
        if contact.geom1 in floor_geoms or contact.geom2 in floor_geoms:
            floor_depth = max(floor_depth, depth)
        else:
            self_depth = max(self_depth, depth)
    return self_depth, floor_depth


def replay_motion(robot: RobotSpec, motion: RobotMotion) -> RobotReplay:
    """Run kinematics and collision detection on every frame of `motion`."""
    model = build_mujoco_model(robot)
    data = mujoco.MjData(model)
    qpos = motion_qpos(motion, robot, model)
    floor_geoms = {g for g in range(model.ngeom) if model.geom_bodyid[g] == 0}
    feet = [(model.body(link).id, robot.sole_points_b(link)) for link in robot.foot_links]
    num_frames = len(qpos)
    body_pos = np.empty((num_frames, model.nbody, 3))
    body_rot = np.empty((num_frames, model.nbody, 3, 3))
    site_pos = np.empty((num_frames, model.nsite, 3))
    self_depth = np.zeros(num_frames)
    floor_depth = np.zeros(num_frames)
    for t in range(num_frames):
        data.qpos[:] = qpos[t]
        mujoco.mj_kinematics(model, data)
        mujoco.mj_collision(model, data)
        body_pos[t] = data.xpos
        body_rot[t] = data.xmat.reshape(-1, 3, 3)
        site_pos[t] = data.site_xpos
        self_depth[t], floor_depth[t] = _contact_depths(model, data, floor_geoms)
    soles = np.stack(
        [body_pos[:, b, None, :] + np.einsum("tij,kj->tki", body_rot[:, b], pts) for b, pts in feet], axis=1
    )
    return RobotReplay(
        model=model,
        body_pos_w=body_pos,
        body_rot_w=body_rot,
        site_pos_w=site_pos,
        sole_points_w=soles,
        self_contact_depth_m=self_depth,
        floor_penetration_m=floor_depth,
    )
