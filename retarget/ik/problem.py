"""Assemble the whole-sequence IK problem from scaled human targets and human stance.

Tracked, in order: the robot's matched points (position), its matched frames (orientation),
and the sole points of both feet (floor constraint). In stance frames the ankle point and the
foot frame switch to the contact targets of :mod:`retarget.contact_targets` (fixed, flat, on
the floor) with the heavier contact weights. Before any of it, each leg of the scaled human is moved part of the way
onto the robot's own leg (:func:`leg_chain_from_hip_roll_w`), so that knee, ankle and foot targets agree with the
human thigh and shank directions where the robot's leg actually hangs from its hip.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from retarget.contact_targets import (
    foot_targets,
    heel_raise_pitch_rad,
    sagittal_lean_rad,
    stance_phases,
    tilt_within_ankle_range,
)
from retarget.ik.sequence import PointLayout, SequenceIkConfig, SequenceTargets
from retarget.tree_kinematics import TreeKinematics
from robots.registry import RobotSpec


@dataclass(frozen=True)
class SequenceProblem:
    kinematics: TreeKinematics
    layout: PointLayout
    targets: SequenceTargets
    initial_state: tuple[np.ndarray, np.ndarray, np.ndarray]
    vertical_shift_m: np.ndarray
    """(T,) [m] per-frame vertical correction applied to the human targets."""
    stance: np.ndarray
    """(T, 2) human stance (left, right)."""


# Limb segments between matched points whose direction the IK follows as vectors.
LIMB_SEGMENTS: tuple[tuple[str, str], ...] = tuple(
    (f"{side}_{a}", f"{side}_{b}")
    for side in ("left", "right")
    for a, b in (("shoulder", "elbow"), ("elbow", "hand"), ("hip", "knee"), ("knee", "ankle"))
)


def _segment_weights(config: SequenceIkConfig) -> np.ndarray:
    """(G,) residual scale of each limb segment of :data:`LIMB_SEGMENTS`."""
    legs = {"hip", "knee"}
    return np.array(
        [config.leg_segment_weight if a.split("_", 1)[1] in legs else config.segment_weight for a, _ in LIMB_SEGMENTS]
    )


def stance_posture_share(
    pelvis_over_ankle_m: np.ndarray, standing_m: float, off_ratio: float, full_ratio: float
) -> np.ndarray:
    """How upright each leg stands, in [0, 1]: the pelvis height over that leg's ankle target as a fraction of
    the height it has standing straight, 0 at or below `off_ratio`, 1 at or above `full_ratio`, a smoothstep
    between (no kink in the weight it scales).

    Args:
        pelvis_over_ankle_m: (T, 2) [m] pelvis target height above each ankle target (left, right).
        standing_m: the same height at the robot's rest pose [m].
    """
    x = np.clip((pelvis_over_ankle_m / standing_m - off_ratio) / (full_ratio - off_ratio), 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def _segment_weights_per_frame(
    config: SequenceIkConfig,
    stance: np.ndarray,
    segment_vec_w: np.ndarray | None = None,
    upright_share: np.ndarray | None = None,
) -> np.ndarray:
    """(T, G) residual scale of each limb segment per frame: :func:`_segment_weights`, with each shank at
    ``swing_shank_segment_weight`` in the frames its foot is not in stance, and moved towards
    ``stance_shank_segment_weight`` where its foot is planted and its human shank stands within 45° of vertical,
    by `upright_share` (T, 2) of that leg (:func:`stance_posture_share`; None: all the way)."""
    weights = np.tile(_segment_weights(config), (stance.shape[0], 1))
    if config.swing_shank_segment_weight is not None:
        for foot, side in enumerate(("left", "right")):
            shank = LIMB_SEGMENTS.index((f"{side}_knee", f"{side}_ankle"))
            weights[~stance[:, foot], shank] = config.swing_shank_segment_weight
    if config.stance_shank_segment_weight is not None:
        for foot, side in enumerate(("left", "right")):
            shank = LIMB_SEGMENTS.index((f"{side}_knee", f"{side}_ankle"))
            upright = stance[:, foot]
            if segment_vec_w is not None:
                vec = segment_vec_w[:, shank]
                upright = upright & (-vec[:, 2] >= np.cos(np.radians(45.0)) * np.linalg.norm(vec, axis=-1))
            share = upright.astype(float)
            if upright_share is not None:
                share = share * upright_share[:, foot]
            weights[:, shank] += share * (config.stance_shank_segment_weight - weights[:, shank])
    return weights


_THIGH_CACHE: dict[str, tuple[np.ndarray, np.ndarray]] = {}


def thigh_roll_geometry(robot: RobotSpec) -> tuple[np.ndarray, np.ndarray]:
    """Per side (left, right): the hip-pitch-to-hip-roll origin offset in the pelvis frame at q = 0 (2, 3) [m],
    and the hip-roll-to-knee origin distance (2,) [m]; computed once per robot and process."""
    if robot.name not in _THIGH_CACHE:
        bodies = [f"{side}_{b}_link" for side in ("left", "right") for b in ("hip_pitch", "hip_roll", "knee")]
        kin = TreeKinematics(robot, [(b, (0.0, 0.0, 0.0)) for b in bodies])
        pos, _ = kin.forward(np.zeros((1, 3)), np.eye(3)[None], np.zeros((1, kin.num_dof)))
        pos = pos[0].reshape(2, 3, 3)
        _THIGH_CACHE[robot.name] = (pos[:, 1] - pos[:, 0], np.linalg.norm(pos[:, 2] - pos[:, 1], axis=1))
    return _THIGH_CACHE[robot.name]


def thigh_segment_targets_w(
    human_thigh_w: np.ndarray, pelvis_rot_w: np.ndarray, offset_b: np.ndarray, roll_to_knee_m: np.ndarray
) -> np.ndarray:
    """Targets (T, 2, 3) [m] of the robot's hip-pitch → knee vector that put its hip-roll → knee line along the
    human thigh: the hip-pitch-to-roll offset, turned by the pelvis target and by the hip pitch the human thigh
    implies, plus the human thigh direction at the robot's hip-roll-to-knee length.

    Args:
        human_thigh_w: (T, 2, 3) human hip → knee (left, right), any length.
        pelvis_rot_w: (T, 3, 3) pelvis orientation target.
        offset_b: (2, 3) [m] hip-pitch-to-roll offset in the pelvis frame at q = 0.
        roll_to_knee_m: (2,) [m] hip-roll-to-knee distance.
    """
    unit_w = human_thigh_w / np.maximum(np.linalg.norm(human_thigh_w, axis=-1, keepdims=True), 1e-9)
    unit_p = np.einsum("tji,tsj->tsi", pelvis_rot_w, unit_w)
    # Hip pitch θ about the pelvis y axis takes (0, 0, -1) to (-sin θ, 0, -cos θ); the offset turns with it.
    pitch = np.arctan2(-unit_p[..., 0], -unit_p[..., 2])
    c, s = np.cos(pitch), np.sin(pitch)
    x, y, z = offset_b[:, 0], offset_b[:, 1], offset_b[:, 2]
    offset_p = np.stack([c * x + s * z, np.broadcast_to(y, pitch.shape), -s * x + c * z], axis=-1)
    return np.einsum("tij,tsj->tsi", pelvis_rot_w, offset_p) + roll_to_knee_m[:, None] * unit_w


# SMPL (hip, knee, ankle, toe) joints of the left and right leg.
_SMPL_LEGS: tuple[tuple[int, int, int, int], ...] = ((1, 4, 7, 10), (2, 5, 8, 11))


def leg_chain_from_hip_roll_w(
    human_w: np.ndarray,
    pelvis_rot_w: np.ndarray,
    offset_b: np.ndarray,
    roll_to_knee_m: np.ndarray,
    shank_m: float,
    blend: float = 1.0,
) -> np.ndarray:
    """Scaled human joints (T, 24, 3) [m] with each leg below the hip rebuilt on the robot's own leg: the knee
    where the robot's hip-roll → knee line along the human thigh puts it (:func:`thigh_segment_targets_w`, from
    the human hip, the robot's hip-pitch point), the ankle `shank_m` along the human shank from there, and the
    toe carried with the ankle. The bone-scaled human leg starts at the hip-pitch point, 5.2 cm medial of where
    the robot's leg hangs from (the hip-roll origin); its knee, ankle and stance-foot targets then sit medial of
    the robot leg's reach, and the heavy stance targets win over the thigh direction: the robot thigh stands
    about 6° more adducted than the human's in stance. Rebuilt, every leg target agrees with the human thigh and
    shank directions on the robot's geometry.

    Args:
        human_w: (T, 24, 3) [m] bone-scaled human joints.
        pelvis_rot_w: (T, 3, 3) pelvis orientation target.
        offset_b, roll_to_knee_m: :func:`thigh_roll_geometry`.
        shank_m: robot knee → matched ankle point distance at q = 0 [m].
        blend: 1 the knee as above, 0 the scaled human's knee, between: the hip → knee vectors mixed linearly;
            the ankle follows the human shank from that knee either way.
    """
    out = human_w.copy()
    legs = np.array(_SMPL_LEGS)
    hip, knee, ankle, toe = (human_w[:, legs[:, k]] for k in range(4))
    thigh_w = thigh_segment_targets_w(knee - hip, pelvis_rot_w, offset_b, roll_to_knee_m)
    knee_w = hip + blend * thigh_w + (1.0 - blend) * (knee - hip)
    shank = ankle - knee
    ankle_w = knee_w + shank_m * shank / np.maximum(np.linalg.norm(shank, axis=-1, keepdims=True), 1e-9)
    out[:, legs[:, 1]] = knee_w
    out[:, legs[:, 2]] = ankle_w
    out[:, legs[:, 3]] = toe + (ankle_w - ankle)
    return out


def _kinematics_for(robot: RobotSpec) -> tuple[TreeKinematics, PointLayout]:
    names = [p.name for p in robot.matched_points]
    points = [(p.body, p.offset_b) for p in robot.matched_points]
    soles = [(link, tuple(point)) for link in robot.foot_links for point in robot.sole_points_b(link)]
    proxies = robot.collision_proxies
    kin = TreeKinematics(
        robot, points + soles + [(s.body, s.center_b) for s in proxies], [f.body for f in robot.matched_frames]
    )
    pair_a, pair_b = collision_pairs(proxies)
    radii = np.array([s.radius_m for s in proxies])
    layout = PointLayout(
        num_points=len(points),
        num_soles=len(soles),
        pair_a=pair_a,
        pair_b=pair_b,
        pair_clearance_m=radii[pair_a] + radii[pair_b],
        proxy_radius_m=radii,
        segment_a=np.array([names.index(a) for a, _ in LIMB_SEGMENTS]),
        segment_b=np.array([names.index(b) for _, b in LIMB_SEGMENTS]),
    )
    return kin, layout


def _rest_shank_lean_rad(robot: RobotSpec, knee: int, ankle: int) -> float:
    """Sagittal lean of the robot shank (knee minus matched ankle point) at q = 0, robot facing +x."""
    pos = rest_points_w(robot)
    return float(sagittal_lean_rad(pos[knee] - pos[ankle], np.zeros(())))


def collision_pairs(proxies) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs of proxy spheres kept apart: every arm sphere against every body sphere, and the
    left arm against the right arm."""
    pairs: list[tuple[int, int]] = []
    for i, a in enumerate(proxies):
        for j, b in enumerate(proxies):
            if a.group != "arm" or j == i:
                continue
            if b.group == "body" or (b.group == "arm" and a.body.startswith("left_") and b.body.startswith("right_")):
                pairs.append((i, j))
    index = np.array(pairs, dtype=int).reshape(-1, 2)
    return index[:, 0], index[:, 1]


_KIN_CACHE: dict[str, tuple[TreeKinematics, PointLayout]] = {}
_REST_CACHE: dict[str, np.ndarray] = {}


def sequence_kinematics(robot: RobotSpec) -> tuple[TreeKinematics, PointLayout]:
    """The solver's kinematics of `robot` (matched points first, in spec order) and its point layout;
    built once per robot and process."""
    if robot.name not in _KIN_CACHE:
        _KIN_CACHE[robot.name] = _kinematics_for(robot)
    return _KIN_CACHE[robot.name]


def rest_points_w(robot: RobotSpec) -> np.ndarray:
    """(N, 3) [m] world positions of the solver's tracked points at q = 0 (root at the origin), read-only;
    computed once per robot and process (every clip scales its human to them)."""
    if robot.name not in _REST_CACHE:
        kin, _ = sequence_kinematics(robot)
        pos, _ = kin.forward(np.zeros((1, 3)), np.eye(3)[None], np.zeros((1, kin.num_dof)))
        pos[0].setflags(write=False)
        _REST_CACHE[robot.name] = pos[0]
    return _REST_CACHE[robot.name]


def rest_matched_points(robot: RobotSpec) -> dict[int, np.ndarray]:
    """World positions [m] of the matched points at q = 0 (root at the origin), keyed by SMPL joint index."""
    pos = rest_points_w(robot)
    return {p.smpl_joint: pos[i].copy() for i, p in enumerate(robot.matched_points)}


def ankle_point_in_foot_b(robot: RobotSpec) -> np.ndarray:
    """(2, 3) [m] the matched ankle points (left, right) in their foot link frames. The stance targets fix this
    point and the foot's orientation, so it must ride on the foot link itself."""
    points = {p.name: p for p in robot.matched_points}
    out = []
    for side, link in zip(("left", "right"), robot.foot_links):
        point = points[f"{side}_ankle"]
        if point.body != link:
            raise ValueError(f"matched point {point.name!r} is on {point.body!r}, not on the foot link {link!r}")
        out.append(point.offset_b)
    return np.array(out, dtype=float)


def soles_about_ankle_b(robot: RobotSpec) -> list[np.ndarray]:
    """Per foot (left, right): the sole points (k, 3) [m] relative to the matched ankle point, in the foot frame."""
    ankle_b = ankle_point_in_foot_b(robot)
    return [robot.sole_points_b(link) - ankle_b[k] for k, link in enumerate(robot.foot_links)]


def ankle_height_flat_m(robot: RobotSpec) -> float:
    """Height [m] of the matched ankle point above the floor when its foot lies flat with the lowest sole point on
    z = 0 (G1: the foot link origin, 0.035 m)."""
    return -float(min(soles[:, 2].min() for soles in soles_about_ankle_b(robot)))


def build_sequence_problem(
    robot: RobotSpec,
    human_targets_w: np.ndarray,
    frame_targets_rot_w: np.ndarray,
    stance: np.ndarray,
    config: SequenceIkConfig,
) -> SequenceProblem:
    """Args: scaled human joints (T, 24, 3), matched-frame target rotations (T, F, 3, 3), stance (T, 2)."""
    kin, layout = sequence_kinematics(robot)
    names = [p.name for p in robot.matched_points]
    ankle_idx = [names.index("left_ankle"), names.index("right_ankle")]
    frame_bodies = [f.body for f in robot.matched_frames]
    pelvis_frame = frame_bodies.index(robot.urdf.root_link)
    if config.leg_from_hip_roll > 0.0:
        rest = rest_points_w(robot)
        offset_b, roll_to_knee = thigh_roll_geometry(robot)
        human_targets_w = leg_chain_from_hip_roll_w(
            human_targets_w,
            frame_targets_rot_w[:, pelvis_frame],
            offset_b,
            roll_to_knee,
            float(np.linalg.norm(rest[names.index("left_ankle")] - rest[names.index("left_knee")])),
            config.leg_from_hip_roll,
        )
    foot_frame_idx = [frame_bodies.index(link) for link in robot.foot_links]
    ankle_height_flat = ankle_height_flat_m(robot)
    ankle_joints = [robot.matched_points[i].smpl_joint for i in ankle_idx]
    feet = foot_targets(
        human_targets_w[:, ankle_joints],
        frame_targets_rot_w[:, foot_frame_idx],
        stance,
        ankle_height_flat,
        toe_w=human_targets_w[:, [10, 11]] if config.floor_from_toe else None,
        floor_percentile=config.floor_phase_percentile,
        floor_per_phase=config.floor_per_phase,
    )
    if config.ankle_pitch_margin_rad is not None:
        knee_idx = [names.index("left_knee"), names.index("right_knee")]
        knee_joints = [robot.matched_points[i].smpl_joint for i in knee_idx]
        pitch = [robot.joint_names.index(f"{side}_ankle_pitch_joint") for side in ("left", "right")]
        margin = config.ankle_pitch_margin_rad
        soles = soles_about_ankle_b(robot)[0]
        heel = None
        if config.heel_raise_threshold_m is not None:
            heel = heel_raise_pitch_rad(
                human_targets_w[:, ankle_joints],
                human_targets_w[:, [10, 11]],
                stance,
                float(soles[:, 0].max()),
                config.heel_raise_threshold_m,
            )
        feet = tilt_within_ankle_range(
            feet,
            human_targets_w[:, knee_joints] - human_targets_w[:, ankle_joints],
            _rest_shank_lean_rad(robot, knee_idx[0], ankle_idx[0]),
            (float(robot.lower_rad[pitch[0]]) + margin, float(robot.upper_rad[pitch[0]]) - margin),
            soles,
            heel,
        )
    shifted = (
        human_targets_w
        + np.stack(
            [np.zeros_like(feet.vertical_shift_m), np.zeros_like(feet.vertical_shift_m), feet.vertical_shift_m], 1
        )[:, None, :]
    )
    num_frames = shifted.shape[0]
    shifted_points = shifted[:, [p.smpl_joint for p in robot.matched_points]]
    point_pos = shifted_points.copy()
    point_weight = np.full(point_pos.shape[:2], config.position_weight)
    frame_rot = frame_targets_rot_w.copy()
    frame_weight = np.full(frame_rot.shape[:2], config.orientation_weight)
    frame_yaw_weight = frame_weight.copy()
    heading_phase = np.full(frame_rot.shape[:2], -1)
    num_phases = 0
    for foot in range(2):
        for start, end in stance_phases(feet.stance[:, foot]):
            heading_phase[start:end, foot_frame_idx[foot]] = num_phases
            num_phases += 1
        # A swing foot may not aim below the height at which its flat sole touches the floor.
        swing = ~feet.stance[:, foot]
        point_pos[swing, ankle_idx[foot], 2] = np.maximum(point_pos[swing, ankle_idx[foot], 2], ankle_height_flat)
        on = feet.stance[:, foot]
        point_pos[on, ankle_idx[foot]] = feet.ankle_pos_w[on, foot]
        point_weight[on, ankle_idx[foot]] = config.contact_position_weight
        frame_rot[on, foot_frame_idx[foot]] = feet.foot_rot_w[on, foot]
        frame_weight[on, foot_frame_idx[foot]] = config.contact_orientation_weight
        frame_yaw_weight[on, foot_frame_idx[foot]] = config.contact_heading_weight
    sole_counts = [len(robot.sole_points_b(link)) for link in robot.foot_links]
    sole_check = np.concatenate(
        [np.repeat(~feet.stance[:, foot : foot + 1], count, axis=1) for foot, count in enumerate(sole_counts)], axis=1
    )
    pelvis_idx = names.index("pelvis")
    segment_vec = shifted_points[:, layout.segment_b] - shifted_points[:, layout.segment_a]
    upright_share = None
    if config.stance_shank_upright_ratios is not None:
        rest = rest_points_w(robot)
        upright_share = stance_posture_share(
            shifted_points[:, pelvis_idx, 2, None] - shifted_points[:, ankle_idx, 2],
            float(rest[pelvis_idx, 2] - rest[ankle_idx[0], 2]),
            *config.stance_shank_upright_ratios,
        )
    init = (
        point_pos[:, pelvis_idx].copy(),
        frame_rot[:, pelvis_frame].copy(),
        np.zeros((num_frames, robot.num_dof)),
    )
    return SequenceProblem(
        kinematics=kin,
        layout=layout,
        targets=SequenceTargets(
            point_pos,
            point_weight,
            frame_rot,
            frame_weight,
            frame_yaw_weight=frame_yaw_weight,
            segment_vec_w=segment_vec,
            segment_weight=_segment_weights_per_frame(config, feet.stance, segment_vec, upright_share),
            sole_floor_check=sole_check,
            heading_phase=heading_phase,
        ),
        initial_state=init,
        vertical_shift_m=feet.vertical_shift_m,
        stance=feet.stance,
    )
