"""Unitree G1 facts that are not in its URDF, kept in one place.

* Rotor inertia (reflected armature). The URDF carries link inertias only; without the
  motors' reflected inertia the hip yaw (link inertia 6.7e-3 kg·m²) makes an explicit PD
  loop at 200 Hz with ASAP's gains diverge within 0.6 s. Values are those used by the
  BeyondMimic / mjlab / IsaacLab G1 configurations, per actuator type.
* PD gains of ASAP's G1 tracking configuration (Kp [N·m/rad], Kd [N·m·s/rad]).
* The bodies retargeting matches to SMPL joints. These are ASAP/PHC's 14 matched points;
  the hands and head are points offset from a link ("extended" bodies in ASAP's config).
"""

from __future__ import annotations

from dataclasses import dataclass

# Reflected rotor inertia [kg·m²] by actuator type.
ARMATURE_7520_14 = 0.010178  # hip pitch, hip yaw, waist yaw
ARMATURE_7520_22 = 0.025102  # hip roll, knee
ARMATURE_5020_X2 = 0.007219  # ankles and waist roll/pitch (two 5020 motors in parallel)
ARMATURE_5020 = 0.003610  # shoulders and elbow
ARMATURE_4010 = 0.00425  # wrist pitch and yaw (29-dof robot only)

_ARMATURE_BY_SUFFIX: tuple[tuple[str, float], ...] = (
    ("hip_pitch_joint", ARMATURE_7520_14),
    ("hip_yaw_joint", ARMATURE_7520_14),
    ("waist_yaw_joint", ARMATURE_7520_14),
    ("hip_roll_joint", ARMATURE_7520_22),
    ("knee_joint", ARMATURE_7520_22),
    ("ankle_pitch_joint", ARMATURE_5020_X2),
    ("ankle_roll_joint", ARMATURE_5020_X2),
    ("waist_roll_joint", ARMATURE_5020_X2),
    ("waist_pitch_joint", ARMATURE_5020_X2),
    ("shoulder_pitch_joint", ARMATURE_5020),
    ("shoulder_roll_joint", ARMATURE_5020),
    ("shoulder_yaw_joint", ARMATURE_5020),
    ("elbow_joint", ARMATURE_5020),
    ("wrist_roll_joint", ARMATURE_5020),
    ("wrist_pitch_joint", ARMATURE_4010),
    ("wrist_yaw_joint", ARMATURE_4010),
)

# ASAP's G1 PD gains (Kp, Kd) by joint-name suffix.
_PD_GAINS_BY_SUFFIX: tuple[tuple[str, tuple[float, float]], ...] = (
    ("hip_pitch_joint", (100.0, 2.5)),
    ("hip_roll_joint", (100.0, 2.5)),
    ("hip_yaw_joint", (100.0, 2.5)),
    ("knee_joint", (200.0, 5.0)),
    ("ankle_pitch_joint", (20.0, 0.2)),
    ("ankle_roll_joint", (20.0, 0.1)),
    ("waist_yaw_joint", (400.0, 5.0)),
    ("waist_roll_joint", (400.0, 5.0)),
    ("waist_pitch_joint", (400.0, 5.0)),
    ("shoulder_pitch_joint", (90.0, 2.0)),
    ("shoulder_roll_joint", (60.0, 1.0)),
    ("shoulder_yaw_joint", (20.0, 0.4)),
    ("elbow_joint", (60.0, 1.0)),
    ("wrist_roll_joint", (20.0, 0.5)),
    ("wrist_pitch_joint", (20.0, 0.5)),
    ("wrist_yaw_joint", (20.0, 0.5)),
)


def _by_suffix(table, joint_name: str):
    for suffix, value in table:
        if joint_name.endswith(suffix):
            return value
    raise KeyError(f"no G1 constant for joint {joint_name!r}")


def armature_kgm2(joint_name: str) -> float:
    """Reflected rotor inertia [kg·m²] of a G1 joint."""
    return _by_suffix(_ARMATURE_BY_SUFFIX, joint_name)


def pd_gains(joint_name: str) -> tuple[float, float]:
    """ASAP's (Kp [N·m/rad], Kd [N·m·s/rad]) for a G1 joint."""
    return _by_suffix(_PD_GAINS_BY_SUFFIX, joint_name)


@dataclass(frozen=True)
class MatchedPoint:
    """A robot point that follows one SMPL joint during retargeting."""

    name: str
    """Name of the point (also the MuJoCo site name, prefixed ``match_``)."""
    body: str
    """Robot link the point is rigidly attached to."""
    offset_b: tuple[float, float, float]
    """Position of the point in that link's frame [m]."""
    smpl_joint: int
    """Index of the SMPL joint it follows (0 pelvis … 23 right hand)."""


# ASAP / PHC's 14 matched points for the G1 (hands and head are offsets, as in ASAP's
# extend_config: hands 0.25 m along the forearm from the elbow, head above the torso).
G1_MATCHED_POINTS: tuple[MatchedPoint, ...] = (
    MatchedPoint("pelvis", "pelvis", (0.0, 0.0, 0.0), 0),
    MatchedPoint("left_hip", "left_hip_pitch_link", (0.0, 0.0, 0.0), 1),
    MatchedPoint("left_knee", "left_knee_link", (0.0, 0.0, 0.0), 4),
    MatchedPoint("left_ankle", "left_ankle_roll_link", (0.0, 0.0, 0.0), 7),
    MatchedPoint("right_hip", "right_hip_pitch_link", (0.0, 0.0, 0.0), 2),
    MatchedPoint("right_knee", "right_knee_link", (0.0, 0.0, 0.0), 5),
    MatchedPoint("right_ankle", "right_ankle_roll_link", (0.0, 0.0, 0.0), 8),
    MatchedPoint("left_shoulder", "left_shoulder_roll_link", (0.0, 0.0, 0.0), 16),
    MatchedPoint("left_elbow", "left_elbow_link", (0.0, 0.0, 0.0), 18),
    MatchedPoint("left_hand", "left_elbow_link", (0.25, 0.0, 0.0), 22),
    MatchedPoint("right_shoulder", "right_shoulder_roll_link", (0.0, 0.0, 0.0), 17),
    MatchedPoint("right_elbow", "right_elbow_link", (0.0, 0.0, 0.0), 19),
    MatchedPoint("right_hand", "right_elbow_link", (0.25, 0.0, 0.0), 23),
    MatchedPoint("head", "torso_link", (0.0, 0.0, 0.42), 15),
)


@dataclass(frozen=True)
class MatchedFrame:
    """A robot link whose orientation follows an SMPL joint's orientation."""

    body: str
    smpl_joint: int


# Orientation targets: pelvis, torso (SMPL chest), and both feet (SMPL ankles).
G1_MATCHED_FRAMES: tuple[MatchedFrame, ...] = (
    MatchedFrame("pelvis", 0),
    MatchedFrame("torso_link", 9),
    MatchedFrame("left_ankle_roll_link", 7),
    MatchedFrame("right_ankle_roll_link", 8),
)

G1_FOOT_LINKS: tuple[str, str] = ("left_ankle_roll_link", "right_ankle_roll_link")


@dataclass(frozen=True)
class CollisionProxy:
    """A sphere approximating part of a link's collision mesh, for fast self-collision avoidance."""

    body: str
    center_b: tuple[float, float, float]
    """Centre in the link frame [m]."""
    radius_m: float
    group: str
    """'arm' spheres are kept apart from 'body' spheres."""


def _mirror(proxies: tuple[CollisionProxy, ...]) -> tuple[CollisionProxy, ...]:
    return tuple(
        CollisionProxy(
            p.body.replace("left_", "right_"), (p.center_b[0], -p.center_b[1], p.center_b[2]), p.radius_m, p.group
        )
        for p in proxies
    )


# Spheres fitted to the G1 collision meshes of the 23-dof URDF (`robots/g1_23dof`, vertices measured in the
# link frames): the upper arm (`shoulder_yaw_link`), forearm (`elbow_link`) and rubber hand (a fixed child of the
# elbow in the 23-dof robot; its three spheres cover the mesh to 3.4 mm) as 'arm'; as 'body' the pelvis
# (`pelvis_contour_link`), hips (`hip_pitch_link`, `hip_roll_link`), thighs (`hip_yaw_link`), shanks
# (`knee_link`) and the torso (`torso_link`), which the arms hit in video clips: hands at the hips, upper arms
# against the chest, elbows between the knees in a squat. Arm spheres are kept apart from body spheres and from
# the other arm. The torso spheres stay inside the torso mesh's sides (|y| <= 0.098 m at the upper arm's height)
# so that the hanging arm at rest keeps 7 mm clear of them. Spheres over the front of the thigh were tried and
# dropped: they push hands resting on the thighs off the human's pose (forearm error +0.3 deg over the clips).
# One small sphere does sit inside the thigh's top front corner (`hip_yaw_link`, x up to 0.052 m, which the
# thigh's first sphere covers only to 0.035 m): without it a hand swinging past the hip (step_forward_back_level3)
# kept its spheres clear yet sank 10-12 mm into that corner's mesh, a depth straddling the 1 cm collision
# threshold, so the frames counted flipped with any small change of the pose (5 -> 13 % of the clip). It stays
# within 1.2 mm of the thigh mesh's convex hull (forearm error unchanged, bench/bench_limbs.py).
_LEFT_PROXIES: tuple[CollisionProxy, ...] = (
    CollisionProxy("left_shoulder_yaw_link", (0.007, 0.0, -0.04), 0.04, "arm"),
    CollisionProxy("left_shoulder_yaw_link", (0.007, 0.0, -0.09), 0.04, "arm"),
    *(CollisionProxy("left_elbow_link", (x, 0.0, -0.01), 0.035, "arm") for x in (0.05, 0.10, 0.15, 0.20)),
    CollisionProxy("left_elbow_link", (0.25, -0.005, 0.0), 0.05, "arm"),
    CollisionProxy("left_elbow_link", (0.30, -0.012, 0.0), 0.055, "arm"),
    CollisionProxy("left_elbow_link", (0.34, -0.02, -0.005), 0.05, "arm"),
    CollisionProxy("left_hip_pitch_link", (0.0, 0.05, -0.02), 0.055, "body"),
    *(CollisionProxy("left_hip_roll_link", (0.027, 0.0, z), 0.055, "body") for z in (0.0, -0.06)),
    CollisionProxy("left_hip_roll_link", (0.027, 0.0, -0.11), 0.045, "body"),
    CollisionProxy("left_hip_yaw_link", (-0.02, 0.0, -0.04), 0.055, "body"),
    CollisionProxy("left_hip_yaw_link", (-0.07, 0.0, -0.12), 0.06, "body"),
    CollisionProxy("left_hip_yaw_link", (-0.09, 0.0, -0.20), 0.045, "body"),
    CollisionProxy("left_hip_yaw_link", (0.02, 0.0, -0.03), 0.0275, "body"),
    CollisionProxy("left_knee_link", (0.02, 0.0, 0.0), 0.045, "body"),
    *(CollisionProxy("left_knee_link", (0.01, 0.0, z), 0.042, "body") for z in (-0.08, -0.16, -0.25)),
    *(CollisionProxy("torso_link", (0.01, 0.045, z), 0.055, "body") for z in (0.05, 0.13, 0.21)),
)
_CENTRE_PROXIES: tuple[CollisionProxy, ...] = tuple(
    CollisionProxy("pelvis_contour_link", (x, y, -0.09), 0.06, "body") for x in (-0.01, 0.02) for y in (-0.03, 0.03)
)
G1_COLLISION_PROXIES: tuple[CollisionProxy, ...] = _LEFT_PROXIES + _mirror(_LEFT_PROXIES) + _CENTRE_PROXIES
