"""Limb direction error: the angle between each robot segment and the matching human segment.

Directions do not depend on limb lengths, so the robot is compared with the unscaled source
human, independent of any solver's scaling. Segment map (robot ends are MuJoCo body origins
or matched-point sites; human ends are SMPL joints):

============  ===================================  ==================================  ===============
segment       robot from                           robot to                            human (SMPL)
============  ===================================  ==================================  ===============
thigh         ``<side>_hip_pitch_link``            ``<side>_knee_link``                hip → knee
shank         ``<side>_knee_link``                 site ``match_<side>_ankle``         knee → ankle
upper_arm     ``<side>_shoulder_roll_link``        ``<side>_elbow_link``               shoulder → elbow
forearm       ``<side>_elbow_link``                site ``match_<side>_hand``          elbow → wrist
trunk         ``pelvis``                           site ``match_head``                 pelvis → head
============  ===================================  ==================================  ===============

The human forearm ends at the wrist (SMPL 20/21), not the hand (22/23), so wrist flexion of
the human, which the G1 (fixed wrists) cannot follow, does not count as forearm error. Standing straight
(G1 at q = 0 vs SMPL's rest pose) the map has small built-in offsets from the different joint
placements of the two bodies: thigh 4.0°, shank 6.6°, trunk 1.5°.
"""

from __future__ import annotations

import numpy as np

from retarget.metrics.human import HumanReference
from retarget.metrics.replay import RobotReplay

# name → (robot from, robot to, human from, human to); robot names starting with "match_" are sites.
LIMB_SEGMENTS: dict[str, tuple[str, str, int, int]] = {
    "left_thigh": ("left_hip_pitch_link", "left_knee_link", 1, 4),
    "right_thigh": ("right_hip_pitch_link", "right_knee_link", 2, 5),
    "left_shank": ("left_knee_link", "match_left_ankle", 4, 7),
    "right_shank": ("right_knee_link", "match_right_ankle", 5, 8),
    "left_upper_arm": ("left_shoulder_roll_link", "left_elbow_link", 16, 18),
    "right_upper_arm": ("right_shoulder_roll_link", "right_elbow_link", 17, 19),
    "left_forearm": ("left_elbow_link", "match_left_hand", 18, 20),
    "right_forearm": ("right_elbow_link", "match_right_hand", 19, 21),
    "trunk": ("pelvis", "match_head", 0, 15),
}


def _robot_point(replay: RobotReplay, name: str) -> np.ndarray:
    return replay.site(name) if name.startswith("match_") else replay.body(name)


def angle_between_deg(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angle [deg] between vectors along the last axis (atan2 form: accurate near 0 and 180°)."""
    cross = np.linalg.norm(np.cross(a, b), axis=-1)
    dot = np.sum(a * b, axis=-1)
    return np.degrees(np.arctan2(cross, dot))


def limb_direction_errors_deg(replay: RobotReplay, human: HumanReference) -> dict[str, np.ndarray]:
    """Per segment, the (T,) angle [deg] between the robot and the human segment."""
    out: dict[str, np.ndarray] = {}
    for name, (r0, r1, h0, h1) in LIMB_SEGMENTS.items():
        robot_vec = _robot_point(replay, r1) - _robot_point(replay, r0)
        human_vec = human.joints_w[:, h1] - human.joints_w[:, h0]
        out[name] = angle_between_deg(robot_vec, human_vec)
    return out
