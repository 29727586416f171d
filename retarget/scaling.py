"""Scale the human skeleton to the robot: one scale per limb segment, from rest lengths.

Each SMPL bone takes the ratio robot length / human length of the matched segment it
belongs to (thigh, shank, upper arm, forearm+hand, pelvis→hip, trunk, neck+head), so the
matched targets lie where the robot's links can reach. The root trajectory is scaled by
the leg-length ratio, which keeps stride length and pelvis height proportional to the legs.
Lengths are measured in the rest poses: SMPL's T-pose and the robot at q = 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from retarget.skeleton import Skeleton
from retarget.smpl_sequence import NUM_SMPL_JOINTS, SMPL_JOINT_NAMES
from robots.registry import RobotSpec

if TYPE_CHECKING:
    import mujoco

# SMPL bone (child joint index) → segment it belongs to.
_SEGMENT_OF_BONE: dict[int, str] = {
    1: "pelvis_hip",
    2: "pelvis_hip",
    4: "thigh",
    5: "thigh",
    7: "shank",
    8: "shank",
    10: "shank",
    11: "shank",
    3: "trunk",
    6: "trunk",
    9: "trunk",
    13: "trunk",
    14: "trunk",
    16: "trunk",
    17: "trunk",
    12: "head",
    15: "head",
    18: "upper_arm",
    19: "upper_arm",
    20: "forearm",
    21: "forearm",
    22: "forearm",
    23: "forearm",
}

# Segment → (from SMPL joint, to SMPL joint), measured on the left side of both bodies.
_SEGMENT_ENDS: dict[str, tuple[int, int]] = {
    "pelvis_hip": (0, 1),
    "thigh": (1, 4),
    "shank": (4, 7),
    "trunk": (0, 16),
    "head": (0, 15),
    "upper_arm": (16, 18),
    "forearm": (18, 22),
}


@dataclass(frozen=True)
class LimbScales:
    """Per-bone scale factors from the human skeleton to the robot."""

    bone_scale: np.ndarray
    """(24,) scale of the bone ending at each joint (entry 0 unused)."""
    root_scale: float
    """Scale of the pelvis trajectory (leg-length ratio)."""
    segment_scale: dict[str, float]


def robot_rest_points(model: mujoco.MjModel, robot: RobotSpec) -> dict[int, np.ndarray]:
    """World positions [m] of the matched points at q = 0, keyed by SMPL joint index."""
    import mujoco

    data = mujoco.MjData(model)
    data.qpos[:] = model.qpos0
    mujoco.mj_kinematics(model, data)
    return {p.smpl_joint: data.site(f"match_{p.name}").xpos.copy() for p in robot.matched_points}


def _solve_extension(a: np.ndarray, b: np.ndarray, length: float) -> float:
    """s >= 0 with |a + s·b| = length (a: already-scaled part, b: part to scale)."""
    bb, ab, aa = b @ b, a @ b, a @ a
    disc = ab * ab - bb * (aa - length * length)
    return float(max((-ab + np.sqrt(max(disc, 0.0))) / bb, 0.0))


def compute_limb_scales(skeleton: Skeleton, model: mujoco.MjModel, robot: RobotSpec) -> LimbScales:
    """Limb scales from the robot's MuJoCo model (see :func:`limb_scales_from_rest`)."""
    return limb_scales_from_rest(skeleton, robot_rest_points(model, robot))


def limb_scales_from_rest(skeleton: Skeleton, robo: dict[int, np.ndarray]) -> LimbScales:
    """Limb scales from the robot's matched points at q = 0 [m], keyed by SMPL joint index (any common
    origin: only differences are used)."""
    human = skeleton.rest_joints()
    seg: dict[str, float] = {}
    for name, (a, b) in _SEGMENT_ENDS.items():
        if name == "head":
            continue
        seg[name] = float(np.linalg.norm(robo[b] - robo[a]) / np.linalg.norm(human[b] - human[a]))
    # The head shares the trunk bones up to the chest; scale only neck and head so that
    # the pelvis→head distance matches the robot's.
    chest = human[9] - human[0]
    seg["head"] = _solve_extension(
        seg["trunk"] * chest, human[15] - human[9], float(np.linalg.norm(robo[15] - robo[0]))
    )
    bone = np.ones(NUM_SMPL_JOINTS)
    for j, name in _SEGMENT_OF_BONE.items():
        bone[j] = seg[name]
    human_leg = np.linalg.norm(human[4] - human[1]) + np.linalg.norm(human[7] - human[4])
    robot_leg = np.linalg.norm(robo[4] - robo[1]) + np.linalg.norm(robo[7] - robo[4])
    return LimbScales(bone_scale=bone, root_scale=float(robot_leg / human_leg), segment_scale=seg)


def scale_joints(joints_w: np.ndarray, parents: np.ndarray, scales: LimbScales) -> np.ndarray:
    """Scaled world joints (T, 24, 3): the pelvis path scaled about its first frame's
    ground point, every bone vector scaled by its segment's factor."""
    out = np.empty_like(joints_w)
    pelvis = joints_w[:, 0]
    anchor = np.array([pelvis[0, 0], pelvis[0, 1], 0.0])
    out[:, 0] = anchor + scales.root_scale * (pelvis - anchor)
    for j in range(1, NUM_SMPL_JOINTS):
        p = parents[j]
        out[:, j] = out[:, p] + scales.bone_scale[j] * (joints_w[:, j] - joints_w[:, p])
    return out


__all__ = [
    "SMPL_JOINT_NAMES",
    "LimbScales",
    "compute_limb_scales",
    "limb_scales_from_rest",
    "robot_rest_points",
    "scale_joints",
]
