"""Thresholds of the physics filter, in physical units, in one frozen config.

Every default is a statement about bodies and motors, not a fit to one dataset; the
comment beside each says where the number comes from. Figures quoted as "real clips"
are from the 39 video clips in ``../shared/data/smpl_video`` (see bench/bench_filter.py).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from retarget.controller.config import ControllerConfig


@dataclass(frozen=True)
class KinematicConfig:
    """Layer 1: per-frame kinematic checks on the human source and the robot result."""

    human_toe_contact_height_m: float = 0.044
    """Height of SMPL's toe joint above the floor when the foot is flat on it [m] (neutral
    body; the 39 real clips put it at 0.043-0.050 m)."""
    human_ankle_contact_height_m: float = 0.095
    """Height of SMPL's ankle joint above the floor with the heel down [m] (real clips: 0.093-0.103 m)."""
    reground_tolerance_m: float = 0.02
    """A clip-wide floor offset larger than this is repaired (re-grounded) and reported [m]."""
    floor_window_m: float = 0.03
    """Width of the height window used to find the floor as the densest foot height [m]."""
    penetration_m: float = 0.03
    """Deepest allowed point below the floor [m] (shoe and soft-contact compression is < 1 cm)."""
    float_height_m: float = 0.05
    """Lowest point higher than this above the floor counts as off the ground [m]."""
    ballistic_tolerance_m: float = 0.05
    """Largest deviation of the pelvis from its best free-fall arc while off the ground [m]
    (real jumps: < 0.04 m)."""
    max_flight_s: float = 1.0
    """Longest possible flight [s]; 1 s of free fall means a 1.23 m rise of the centre of mass."""
    contact_height_m: float = 0.03
    """A foot point within this height of the floor is on the ground (sliding check) [m]."""
    slide_speed_m_s: float = 0.8
    """Fastest allowed horizontal speed of the slowest foot point on the ground [m/s]: a
    planted foot pivots on heel or toe, one of which stays put."""
    slide_duration_s: float = 0.2
    """A slide counts when it lasts at least this long [s] (0.2 s at 0.8 m/s is 16 cm)."""
    max_root_speed_m_s: float = 6.0
    """Pelvis speed above this is a teleport [m/s] (beyond anything the G1 can do; real clips < 3.5 m/s)."""
    max_root_accel_m_s2: float = 60.0
    """Pelvis acceleration above this is a spike [m/s²] (6 g, a hard landing; real clips < 50 m/s²
    but one end-of-clip glitch)."""
    max_root_angular_speed_rad_s: float = 25.0
    """Pelvis angular speed above this is a spike [rad/s] (a 360° jump turn is about 13 rad/s)."""
    jitter_m: float = 0.01
    """Largest frame-to-frame noise of the body points [m] (the σ of white noise that would
    explain their fourth differences; real clips: < 5 mm)."""
    jitter_window_frames: int = 5
    """Frames the noise estimate is averaged over."""
    joint_speed_factor: float = 1.0
    """Joint speed may reach this fraction of the URDF velocity limit."""
    self_collision_m: float = 0.03
    """Deepest allowed interpenetration of two robot collision geoms [m] (MuJoCo collides the
    convex hulls of the meshes, which overstate the parts by up to 1-2 cm)."""
    frozen_s: float = 0.5
    """A pose held exactly (within `frozen_tolerance`) this long is a frozen segment [s]."""
    frozen_tolerance: float = 1e-6
    """Largest frame-to-frame change [rad, m] that still counts as frozen."""


@dataclass(frozen=True)
class DynamicConfig:
    """Layer 2: inverse dynamics and the contact wrench (pinocchio)."""

    friction_coefficient: float = 0.8
    """Coulomb friction of sole on floor (rubber on concrete 0.6-0.9)."""
    contact_height_m: float = 0.05
    """A foot whose lowest sole point is within this height of the floor may push on it [m]."""
    contact_speed_m_s: float = 1.0
    """...and whose slowest sole point moves slower than this [m/s]."""
    residual_force_fraction: float = 0.25
    """Residual force (no contact can supply it) allowed, as a fraction of the robot's weight m·g."""
    residual_torque_nm: float = 30.0
    """Residual moment about the centre of mass allowed [N·m] (m·g × 9 cm)."""
    effort_factor: float = 1.0
    """Joint torque may reach this fraction of the URDF effort limit."""
    ballistic_accel_m_s2: float = 4.0
    """While no foot touches the floor, the centre of mass acceleration may differ from g by this [m/s²]."""
    min_violation_s: float = 0.1
    """A dynamic violation counts when it lasts at least this long [s] (landing impacts are shorter)."""


@dataclass(frozen=True)
class ReplayConfig:
    """Layer 3: PD + inverse-dynamics feed-forward replay in MuJoCo."""

    physics_hz: float = 200.0
    """Simulation rate [Hz]; the reference is interpolated to it."""
    fail_distance_m: float = 0.5
    """Fail when the mean body distance to the reference exceeds this [m] (ASAP's success rule)."""
    drift_distance_m: float = 0.25
    """Reported (not failing) when the mean body distance first exceeds this [m]."""
    feedforward: bool = True
    """Add inverse-dynamics joint torques (with contact forces) to the PD torques."""
    feedforward_decimation: int = 4
    """The feed-forward is recomputed every this many physics steps (held in between)."""
    base_kp_1_s2: float = 100.0
    """Stiffness of the feed-forward's pull of the floating base toward its reference [1/s²]."""
    base_kd_1_s: float = 20.0
    """Damping of that pull [1/s] (critically damped at 10 rad/s)."""
    backoff_s: float = 0.5
    """On a failure, the kept range ends this long before the failure time [s]."""
    decides: bool = False
    """Whether a replay failure trims/rejects the clip. Off by default: the bundled controller
    (ASAP's PD gains + balancing inverse-dynamics feed-forward, no policy) loses most real clips
    after 1-3 s even where layers 1-2 find the motion feasible, so today it would judge the
    controller, not the motion. Its figures are always reported."""


@dataclass(frozen=True)
class FilterConfig:
    """Everything the physics filter decides with."""

    kinematic: KinematicConfig = field(default_factory=KinematicConfig)
    """Layer 1 thresholds."""
    dynamic: DynamicConfig = field(default_factory=DynamicConfig)
    """Layer 2 thresholds."""
    replay: ReplayConfig = field(default_factory=ReplayConfig)
    """Layer 3 settings."""
    controller: ControllerConfig = field(default_factory=ControllerConfig)
    """Layer 4 settings: the sampling-MPC tracker and its verdict (:mod:`retarget.controller`)."""
    layers: tuple[str, ...] = ("kinematic", "dynamic", "replay")
    """Layers to run (any subset, in this order; "controller" is opt-in: seconds per second of motion)."""
    min_keep_s: float = 1.0
    """Shortest good frame range worth keeping when trimming [s]."""
    trim_margin_s: float = 0.1
    """Frames this close to a bad frame are dropped too [s]."""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)
