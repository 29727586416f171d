"""Limb direction and pelvis height by an independent definition (beside the project's own, :mod:`.limbs`).

The project's own segments (:data:`retarget.metrics.limbs.LIMB_SEGMENTS`) end at the solver's matched points;
these end at points an outside evaluator picks from the robot's joint axes, so a solver cannot score well merely by
matching its own target points. Directions are compared frame by frame in world coordinates, robot segment vs human
(SMPL) segment, with no rest offsets subtracted (at rest SMPL's thighs splay ≈ 5° and its trunk leans back 4.8°):

===========  ===============================  ==================================================  ===============
segment      robot from                       robot to                                            human (SMPL)
===========  ===============================  ==================================================  ===============
thigh        ``<side>_hip_roll_link`` origin  ``<side>_knee_link`` origin                         hip → knee
shank        ``<side>_knee_link`` origin      ``<side>_ankle_pitch_link`` origin (pitch axis)     knee → ankle
upper_arm    ``<side>_shoulder_roll_link``    ``<side>_elbow_link``                               shoulder → elbow
forearm      ``<side>_elbow_link``            wrist point (0.184, ±0.0019, −0.01) m in the elbow  elbow → wrist
trunk        ``pelvis``                       (0.004, 0, 0.238) m in ``torso_link``: the midpoint  pelvis → neck
                                              of the two shoulder-pitch joint origins
===========  ===============================  ==================================================  ===============

The thigh starts at the hip-roll origin, not the hip-pitch origin (the project's point): the hip-pitch-to-roll
offset tilts the line hip_pitch → knee 9° sideways at q = 0. The human trunk ends at the SMPL neck (12), whose
rest lean back from the pelvis is the stated 4.8°.

Pelvis height: the target is ``0.053 m + s·(z_human_pelvis − g_ankle)`` with ``s = 0.852`` (the G1's pelvis-above-
ankle 0.739 m over SMPL's rest 0.868 m) and ``g_ankle`` the clip's 2nd percentile of the lower human ankle height;
the error is the mean |robot pelvis z − target|.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from retarget.metrics.human import HumanReference
from retarget.metrics.limbs import angle_between_deg
from retarget.metrics.replay import RobotReplay

SEGMENT_NAMES_INDEP: tuple[str, ...] = ("thigh", "shank", "upper_arm", "forearm", "trunk")
SIDES: tuple[str, ...] = ("left", "right")

# A robot point: (body, offset in the body frame [m]).
RobotPoint = tuple[str, tuple[float, float, float]]
_ORIGIN = (0.0, 0.0, 0.0)
TRUNK_TOP_IN_TORSO_M = (0.004, 0.0, 0.238)
"""Midpoint of the two shoulder-pitch joint origins in ``torso_link`` [m]."""
WRIST_IN_ELBOW_M = 0.184, 0.0019, -0.01
"""Wrist point in the left elbow frame [m]; the right one mirrors y."""


def _wrist(side: str) -> tuple[float, float, float]:
    x, y, z = WRIST_IN_ELBOW_M
    return (x, y if side == "left" else -y, z)


def _segments() -> dict[str, tuple[RobotPoint, RobotPoint, int, int]]:
    out: dict[str, tuple[RobotPoint, RobotPoint, int, int]] = {}
    for k, side in enumerate(SIDES):  # SMPL: left joints odd-first (1, 4, 7, 16, 18, 20), right the next index
        out[f"{side}_thigh"] = ((f"{side}_hip_roll_link", _ORIGIN), (f"{side}_knee_link", _ORIGIN), 1 + k, 4 + k)
        out[f"{side}_shank"] = ((f"{side}_knee_link", _ORIGIN), (f"{side}_ankle_pitch_link", _ORIGIN), 4 + k, 7 + k)
        out[f"{side}_upper_arm"] = (
            (f"{side}_shoulder_roll_link", _ORIGIN),
            (f"{side}_elbow_link", _ORIGIN),
            16 + k,
            18 + k,
        )
        out[f"{side}_forearm"] = ((f"{side}_elbow_link", _ORIGIN), (f"{side}_elbow_link", _wrist(side)), 18 + k, 20 + k)
    out["trunk"] = (("pelvis", _ORIGIN), ("torso_link", TRUNK_TOP_IN_TORSO_M), 0, 12)
    return out


LIMB_SEGMENTS_INDEP: dict[str, tuple[RobotPoint, RobotPoint, int, int]] = _segments()
"""name → (robot from, robot to, human joint from, human joint to) of the independent definition."""

PELVIS_HEIGHT_OFFSET_M = 0.053
"""Robot pelvis-height target at a human pelvis on the ankle floor [m] (the G1's ankle height, flat foot)."""
PELVIS_HEIGHT_SCALE = 0.852
"""G1 pelvis-above-ankle 0.739 m over SMPL rest pelvis-above-ankle 0.868 m."""
ANKLE_FLOOR_PERCENTILE = 2.0
"""Percentile of the lower human ankle height over the clip that stands for the human floor."""


def robot_point_w(replay: RobotReplay, point: RobotPoint) -> np.ndarray:
    """(T, 3) [m] world position of a point fixed in a robot body."""
    body, offset = point
    b = replay.model.body(body).id
    return replay.body_pos_w[:, b] + replay.body_rot_w[:, b] @ np.asarray(offset, dtype=np.float64)


def segment_vectors_indep_w(replay: RobotReplay, human: HumanReference) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per segment of :data:`LIMB_SEGMENTS_INDEP`, the (T, 3) robot and human segment vectors in the world."""
    out = {}
    for name, (r0, r1, h0, h1) in LIMB_SEGMENTS_INDEP.items():
        out[name] = (
            robot_point_w(replay, r1) - robot_point_w(replay, r0),
            human.joints_w[:, h1] - human.joints_w[:, h0],
        )
    return out


def limb_dir_err_indep_deg(replay: RobotReplay, human: HumanReference) -> dict[str, np.ndarray]:
    """Per segment (both sides separately), the (T,) angle [deg] between robot and human segment."""
    return {name: angle_between_deg(r, h) for name, (r, h) in segment_vectors_indep_w(replay, human).items()}


def pelvis_height_target_indep_m(human_joints_w: np.ndarray) -> np.ndarray:
    """(T,) [m] robot pelvis-height target from the human joints (T, 24, 3) in the source world."""
    lower_ankle_z = np.minimum(human_joints_w[:, 7, 2], human_joints_w[:, 8, 2])
    ankle_floor = float(np.percentile(lower_ankle_z, ANKLE_FLOOR_PERCENTILE))
    return PELVIS_HEIGHT_OFFSET_M + PELVIS_HEIGHT_SCALE * (human_joints_w[:, 0, 2] - ankle_floor)


def pelvis_height_err_indep_m(replay: RobotReplay, human: HumanReference) -> np.ndarray:
    """(T,) [m] |robot pelvis z − target| (see :func:`pelvis_height_target_indep_m`)."""
    return np.abs(replay.body("pelvis")[:, 2] - pelvis_height_target_indep_m(human.joints_w))


@dataclass(frozen=True)
class IndepLimbMetrics:
    """One clip scored by the independent definition."""

    name: str
    limb_dir_err_indep_deg: dict[str, float]
    """Mean over frames and both sides per segment type of :data:`SEGMENT_NAMES_INDEP` [deg]."""
    pelvis_height_err_indep_m: float
    """Mean |robot pelvis z − target| [m]."""
    pelvis_height_bias_indep_m: float = float("nan")
    """Mean robot pelvis z − target [m] (negative: the robot sits low)."""


def score_indep(name: str, replay: RobotReplay, human: HumanReference) -> IndepLimbMetrics:
    """Independent limb and pelvis-height figures of one replayed clip (robot and human frame-aligned)."""
    per_side = limb_dir_err_indep_deg(replay, human)
    by_type = {
        seg: float(
            np.mean([v.mean() for k, v in per_side.items() if k.removeprefix("left_").removeprefix("right_") == seg])
        )
        for seg in SEGMENT_NAMES_INDEP
    }
    return IndepLimbMetrics(
        name=name,
        limb_dir_err_indep_deg=by_type,
        pelvis_height_err_indep_m=float(pelvis_height_err_indep_m(replay, human).mean()),
        pelvis_height_bias_indep_m=float(
            (replay.body("pelvis")[:, 2] - pelvis_height_target_indep_m(human.joints_w)).mean()
        ),
    )
