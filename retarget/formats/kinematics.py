"""Robot motion → MuJoCo configurations and world body poses (forward kinematics).

Writers of formats that carry body poses (BeyondMimic `.npz`, GMR `local_body_pos`) and the
floor / mirroring checks use these. Bodies are the MuJoCo bodies of the robot built from its
URDF (every URDF link, fixed ones included), in MuJoCo's depth-first tree order, world excluded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import mujoco
import numpy as np

from retarget.asap_pkl import RobotMotion, motion_qpos
from retarget.rotations import quat_to_matrix
from robots.mujoco_model import build_mujoco_model
from robots.registry import RobotSpec


@dataclass(frozen=True)
class BodyPoses:
    """World poses of every robot body over a motion."""

    names: tuple[str, ...]
    """Body names, MuJoCo tree order, world excluded (index 0 is the root link)."""
    pos_w: np.ndarray
    """(T, B, 3) [m] body frame origins in the world."""
    quat_w: np.ndarray
    """(T, B, 4) body orientations in the world, wxyz."""


def body_poses(motion: RobotMotion, robot: RobotSpec) -> BodyPoses:
    """Forward kinematics of every body in every frame."""
    model = build_mujoco_model(robot)
    data = mujoco.MjData(model)
    qpos = motion_qpos(motion, robot)
    pos = np.empty((len(qpos), model.nbody - 1, 3))
    quat = np.empty((len(qpos), model.nbody - 1, 4))
    for t, q in enumerate(qpos):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        pos[t] = data.xpos[1:]
        quat[t] = data.xquat[1:]
    names = tuple(model.body(i).name for i in range(1, model.nbody))
    return BodyPoses(names=names, pos_w=pos, quat_w=quat)


def select_bodies(
    poses: BodyPoses,
    names: tuple[str, ...],
    markers: Mapping[str, tuple[str | None, tuple[float, float, float]]] | None = None,
) -> BodyPoses:
    """The poses of `names`, in that order, looked up by name. A name the robot lacks is taken from
    `markers` (name → parent link, offset in its frame [m]; orientation of the parent; parent None: a
    point fixed in the world, identity orientation)."""
    markers = markers or {}
    index = {n: i for i, n in enumerate(poses.names)}
    pos, quat = [], []
    for name in names:
        if name in index:
            pos.append(poses.pos_w[:, index[name]])
            quat.append(poses.quat_w[:, index[name]])
            continue
        if name not in markers:
            raise KeyError(f"robot has no body {name!r}")
        parent, offset_b = markers[name]
        if parent is None:
            pos.append(np.tile(np.asarray(offset_b, dtype=np.float64), (len(poses.pos_w), 1)))
            quat.append(np.tile([1.0, 0.0, 0.0, 0.0], (len(poses.pos_w), 1)))
            continue
        q = poses.quat_w[:, index[parent]]
        pos.append(poses.pos_w[:, index[parent]] + quat_to_matrix(q) @ np.asarray(offset_b))
        quat.append(q)
    return BodyPoses(names=tuple(names), pos_w=np.stack(pos, axis=1), quat_w=np.stack(quat, axis=1))


@dataclass(frozen=True)
class FootCheck:
    """Where the feet are in one frame: is the motion on the floor and not mirrored?"""

    sole_height_m: tuple[float, float]
    """Lowest sole point of the (left, right) foot above the floor [m]."""
    left_of_right_m: float
    """(left foot − right foot) along the pelvis +y (left) axis [m]; negative means mirrored."""


def foot_check(motion: RobotMotion, robot: RobotSpec, frame: int = 0) -> FootCheck:
    """Sole heights and left/right placement of the feet in one frame."""
    model = build_mujoco_model(robot)
    data = mujoco.MjData(model)
    data.qpos[:] = motion_qpos(motion, robot)[frame]
    mujoco.mj_kinematics(model, data)
    heights, origins = [], []
    for link in robot.foot_links:
        body = data.body(link)
        soles = body.xpos + robot.sole_points_b(link) @ body.xmat.reshape(3, 3).T
        heights.append(float(soles[:, 2].min()))
        origins.append(body.xpos.copy())
    pelvis_y_w = quat_to_matrix(motion.root_quat_w[frame])[:, 1]
    return FootCheck(
        sole_height_m=(heights[0], heights[1]), left_of_right_m=float((origins[0] - origins[1]) @ pelvis_y_w)
    )


def lowest_sole_heights_m(motion: RobotMotion, robot: RobotSpec) -> np.ndarray:
    """(T,) height of the lowest sole point in each frame [m] (negative: below the floor)."""
    model = build_mujoco_model(robot)
    data = mujoco.MjData(model)
    feet = [(model.body(link).id, robot.sole_points_b(link)) for link in robot.foot_links]
    lowest = np.empty(motion.num_frames)
    for t, q in enumerate(motion_qpos(motion, robot)):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        lowest[t] = min(float((data.xpos[b] + s @ data.xmat[b].reshape(3, 3).T)[:, 2].min()) for b, s in feet)
    return lowest


def ground_motion(motion: RobotMotion, robot: RobotSpec) -> tuple[RobotMotion, float]:
    """The motion shifted vertically so that its typical contact height, the median over frames of
    the lowest sole point, is z = 0; and the shift [m]. Some tools store clips below the floor and
    lift them when loading (GMT's airkick_stand.pkl: lowest sole −4.2 cm in frame 0, drifting to
    −7.8 cm). The median, unlike the minimum the retargeting pipeline uses on its own clean output,
    is not pulled by a few penetrating frames, and a jump shorter than half the clip stays in the air."""
    shift = -float(np.median(lowest_sole_heights_m(motion, robot)))
    up = np.array([0.0, 0.0, shift])
    human = motion.human_joints_w + up if np.any(motion.human_joints_w) else motion.human_joints_w
    return replace(motion, root_pos_w=motion.root_pos_w + up, human_joints_w=human), shift
