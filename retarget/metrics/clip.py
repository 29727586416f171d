"""Per-clip retargeting metrics of a robot motion against its source human clip."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from retarget.asap_pkl import RobotMotion
from retarget.errors import MotionFileError
from retarget.metrics import feet, joints
from retarget.metrics.config import MetricsConfig
from retarget.metrics.human import HumanReference
from retarget.metrics.limbs import limb_direction_errors_deg
from retarget.metrics.replay import replay_motion
from robots.registry import RobotSpec

# Robot and human may differ by a frame or two (resampling rounding); more means a wrong source.
_MAX_FRAME_MISMATCH = 2


def _median(x: np.ndarray) -> float:
    return float(np.median(x)) if x.size else float("nan")


@dataclass(frozen=True)
class ClipMetrics:
    """Retargeting quality of one clip. Stance figures are medians over (frame, foot) samples in which
    the human's foot is planted; NaN when the human never stands."""

    name: str
    num_frames: int
    fps: float
    """Frame rate [Hz]."""
    limb_direction_error_deg: float
    """Mean over frames and the 9 segments of the robot-vs-human segment angle [deg]."""
    limb_direction_error_by_segment_deg: dict[str, float]
    """Mean per segment [deg] (see :data:`retarget.metrics.limbs.LIMB_SEGMENTS`)."""
    stance_samples: int
    """Number of (frame, foot) samples in human stance."""
    stance_sole_height_mm: float
    """Median signed height of the stance foot's lowest sole point above the floor [mm]."""
    stance_sole_abs_height_mm: float
    """Median |sole height| of the stance foot [mm]."""
    stance_tilt_deg: float
    """Median stance foot tilt from horizontal [deg]."""
    stance_tilt_flat_deg: float
    """The same, over the stance samples in which the human foot is flat (its ankle within
    :attr:`MetricsConfig.heel_raise_tolerance_m` of its flat-foot height): a retarget that lifts the robot heel
    where the human's is raised is not counted against here [deg]."""
    stance_slide_cm_s: float
    """Median horizontal sole-centre speed between consecutive stance frames [cm/s]."""
    stance_slide_mean_cm_s: float
    """Mean of the same sliding speeds [cm/s]."""
    penetration_mm: float
    """Deepest sole point below the floor over all frames [mm] (0 when never below)."""
    penetration_all_geoms_mm: float
    """Deepest penetration of any collision geom into the floor [mm]."""
    floating_frames: int
    """Frames where the human has a foot down but the robot's lowest sole is above the threshold."""
    floating_fraction: float
    """floating_frames / frames with a human foot down (NaN when there are none)."""
    joint_limit_violation_frames: int
    joint_limit_max_excess_rad: float
    """Largest excess over a URDF position limit [rad]."""
    velocity_limit_violation_frames: int
    """Frame-to-frame steps in which a joint moves faster than its URDF velocity limit."""
    velocity_limit_max_excess_rad_s: float
    """Largest excess over a URDF velocity limit [rad/s]."""
    max_speed_ratio: float
    """Largest |q̇| / velocity limit (1 = at the limit)."""
    self_collision_frames: int
    """Frames with a self-penetration deeper than the threshold (1 cm)."""
    self_collision_fraction: float
    self_touch_fraction: float
    """Fraction of frames with any self-penetration (depth > 0)."""
    self_collision_max_depth_mm: float
    """Deepest self-penetration [mm]."""
    mean_abs_acc_rad_s2: float
    """Mean |q̈| over frames and joints [rad/s²]."""
    mean_abs_jerk_rad_s3: float
    """Mean |d³q/dt³| over frames and joints [rad/s³]."""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def numeric_fields() -> tuple[str, ...]:
    """Names of the scalar numeric fields (those that are aggregated over clips)."""
    skip = {"name", "limb_direction_error_by_segment_deg"}
    return tuple(f.name for f in dataclasses.fields(ClipMetrics) if f.name not in skip)


def align(motion: RobotMotion, human: HumanReference) -> tuple[RobotMotion, HumanReference]:
    """Trim both to the common length; refuse sources that clearly belong to another clip."""
    if abs(motion.fps - human.fps) > 1e-6:
        raise MotionFileError(None, f"clip {motion.name!r}: robot motion at {motion.fps} Hz, human at {human.fps} Hz")
    count = min(motion.num_frames, human.num_frames)
    if abs(motion.num_frames - human.num_frames) > _MAX_FRAME_MISMATCH:
        raise MotionFileError(
            None,
            f"clip {motion.name!r}: robot motion has {motion.num_frames} frames but its source has "
            f"{human.num_frames} at {human.fps:g} Hz; is it the right source clip?",
        )
    trimmed = dataclasses.replace(
        motion,
        root_pos_w=motion.root_pos_w[:count],
        root_quat_w=motion.root_quat_w[:count],
        dof_pos=motion.dof_pos[:count],
        human_joints_w=motion.human_joints_w[:count],
    )
    return trimmed, human.frames(count)


def evaluate_motion(
    motion: RobotMotion, human: HumanReference, robot: RobotSpec, config: MetricsConfig = MetricsConfig()
) -> ClipMetrics:
    """All retargeting metrics of `motion` against the human it was retargeted from."""
    motion, human = align(motion, human)
    fps = motion.fps
    replay = replay_motion(robot, motion)
    limbs = limb_direction_errors_deg(replay, human)
    flat = feet.human_foot_flat(human.joints_w, human.stance, config.heel_raise_tolerance_m)
    stance = feet.stance_samples(replay, robot.foot_links, human.stance, fps, flat)
    floating, human_down = feet.floating_frames(replay, human.stance, config.floating_threshold_m)
    pos = joints.position_limits(motion.dof_pos, robot.lower_rad, robot.upper_rad, config.joint_limit_tolerance_rad)
    vel = joints.velocity_limits(motion.dof_pos, fps, robot.velocity_limit_rad_s, config.velocity_limit_tolerance_rad_s)
    collide = replay.self_contact_depth_m > config.self_collision_depth_m
    return ClipMetrics(
        name=motion.name,
        num_frames=motion.num_frames,
        fps=fps,
        limb_direction_error_deg=float(np.mean([v.mean() for v in limbs.values()])),
        limb_direction_error_by_segment_deg={k: float(v.mean()) for k, v in limbs.items()},
        stance_samples=int(stance.sole_height_m.size),
        stance_sole_height_mm=_median(stance.sole_height_m) * 1e3,
        stance_sole_abs_height_mm=_median(np.abs(stance.sole_height_m)) * 1e3,
        stance_tilt_deg=float(np.degrees(_median(stance.tilt_rad))),
        stance_tilt_flat_deg=float(np.degrees(_median(stance.tilt_flat_rad))),
        stance_slide_cm_s=_median(stance.slide_speed_m_s) * 1e2,
        stance_slide_mean_cm_s=float(stance.slide_speed_m_s.mean()) * 1e2 if stance.slide_speed_m_s.size else np.nan,
        penetration_mm=max(0.0, -float(feet.lowest_sole_height_m(replay).min())) * 1e3,
        penetration_all_geoms_mm=float(replay.floor_penetration_m.max()) * 1e3,
        floating_frames=floating,
        floating_fraction=floating / human_down if human_down else float("nan"),
        joint_limit_violation_frames=pos.frames,
        joint_limit_max_excess_rad=pos.max_excess,
        velocity_limit_violation_frames=vel.frames,
        velocity_limit_max_excess_rad_s=vel.max_excess,
        max_speed_ratio=joints.max_speed_ratio(motion.dof_pos, fps, robot.velocity_limit_rad_s),
        self_collision_frames=int(collide.sum()),
        self_collision_fraction=float(collide.mean()),
        self_touch_fraction=float((replay.self_contact_depth_m > 0.0).mean()),
        self_collision_max_depth_mm=float(replay.self_contact_depth_m.max()) * 1e3,
        mean_abs_acc_rad_s2=joints.mean_abs_derivative(motion.dof_pos, fps, 2),
        mean_abs_jerk_rad_s3=joints.mean_abs_derivative(motion.dof_pos, fps, 3),
    )
