"""Assemble the whole-sequence IK problem from scaled human targets and human stance.

Tracked, in order: the robot's matched points (position), its matched frames (orientation),
and the sole points of both feet (floor constraint). In stance frames the ankle point and the
foot frame switch to the contact targets of :mod:`retarget.contact_targets` (fixed, flat, on
the floor) with the heavier contact weights.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from retarget.contact_targets import foot_targets
from retarget.sequence_ik import SequenceIkConfig, SequenceTargets
from retarget.tree_kinematics import TreeKinematics
from robots.registry import RobotSpec


@dataclass(frozen=True)
class SequenceProblem:
    kinematics: TreeKinematics
    num_points: int
    """Number of target points; the sole points follow them in the kinematics."""
    targets: SequenceTargets
    initial_state: tuple[np.ndarray, np.ndarray, np.ndarray]
    vertical_shift_m: np.ndarray
    """(T,) [m] per-frame vertical correction applied to the human targets."""
    stance: np.ndarray
    """(T, 2) human stance (left, right)."""


def _kinematics_for(robot: RobotSpec) -> TreeKinematics:
    points = [(p.body, p.offset_b) for p in robot.matched_points]
    for link in robot.foot_links:
        points += [(link, tuple(point)) for point in robot.sole_points_b(link)]
    return TreeKinematics(robot, points, [f.body for f in robot.matched_frames])


_KIN_CACHE: dict[str, TreeKinematics] = {}


def build_sequence_problem(
    robot: RobotSpec,
    human_targets_w: np.ndarray,
    frame_targets_rot_w: np.ndarray,
    stance: np.ndarray,
    config: SequenceIkConfig,
) -> SequenceProblem:
    """Args: scaled human joints (T, 24, 3), matched-frame target rotations (T, F, 3, 3), stance (T, 2)."""
    kin = _KIN_CACHE.get(robot.name) or _KIN_CACHE.setdefault(robot.name, _kinematics_for(robot))
    names = [p.name for p in robot.matched_points]
    ankle_idx = [names.index("left_ankle"), names.index("right_ankle")]
    frame_bodies = [f.body for f in robot.matched_frames]
    foot_frame_idx = [frame_bodies.index(link) for link in robot.foot_links]
    ankle_height_flat = -float(min(robot.sole_points_b(link)[:, 2].min() for link in robot.foot_links))
    ankle_joints = [robot.matched_points[i].smpl_joint for i in ankle_idx]
    feet = foot_targets(
        human_targets_w[:, ankle_joints], frame_targets_rot_w[:, foot_frame_idx], stance, ankle_height_flat
    )
    shifted = human_targets_w + np.stack(
        [np.zeros_like(feet.vertical_shift_m), np.zeros_like(feet.vertical_shift_m), feet.vertical_shift_m], 1
    )[:, None, :]
    num_frames = shifted.shape[0]
    point_pos = shifted[:, [p.smpl_joint for p in robot.matched_points]].copy()
    point_weight = np.full(point_pos.shape[:2], config.position_weight)
    frame_rot = frame_targets_rot_w.copy()
    frame_weight = np.full(frame_rot.shape[:2], config.orientation_weight)
    for foot in range(2):
        # A swing foot may not aim below the height at which its flat sole touches the floor.
        swing = ~feet.stance[:, foot]
        point_pos[swing, ankle_idx[foot], 2] = np.maximum(point_pos[swing, ankle_idx[foot], 2], ankle_height_flat)
        on = feet.stance[:, foot]
        point_pos[on, ankle_idx[foot]] = feet.ankle_pos_w[on, foot]
        point_weight[on, ankle_idx[foot]] = config.contact_position_weight
        frame_rot[on, foot_frame_idx[foot]] = feet.foot_rot_w[on, foot]
        frame_weight[on, foot_frame_idx[foot]] = config.contact_orientation_weight
    sole_counts = [len(robot.sole_points_b(link)) for link in robot.foot_links]
    sole_check = np.concatenate(
        [np.repeat(~feet.stance[:, foot : foot + 1], count, axis=1) for foot, count in enumerate(sole_counts)], axis=1
    )
    pelvis_idx = names.index("pelvis")
    pelvis_frame = frame_bodies.index(robot.urdf.root_link)
    init = (
        point_pos[:, pelvis_idx].copy(),
        frame_rot[:, pelvis_frame].copy(),
        np.zeros((num_frames, robot.num_dof)),
    )
    return SequenceProblem(
        kinematics=kin,
        num_points=len(names),
        targets=SequenceTargets(point_pos, point_weight, frame_rot, frame_weight, sole_check),
        initial_state=init,
        vertical_shift_m=feet.vertical_shift_m,
        stance=feet.stance,
    )
