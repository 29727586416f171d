"""Typed, frozen configuration of the tracking environment (ASAP stage 1).

Reward terms hold their function object (never a name to look up). Defaults follow ASAP's
G1 motion-tracking configuration (weights: body positions 1.0, VR 3-point 1.6, feet 2.1,
joint positions 0.75, rotations / velocities 0.5; penalties action rate −0.5, feet
orientation −2, slippage −1, limits −10/−5/−5, termination −200), with σ widened where a
CPU budget needs a denser signal early on (documented per field).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

import numpy as np

from trainers import rewards
from trainers.defaults import DEFAULT_ENGINE, DEFAULT_NUM_THREADS, DEFAULT_WARP_DEVICE, ENGINES
from trainers.state import TrackingState

ErrorFn = Callable[[TrackingState], np.ndarray]

# ASAP's G1 default joint angles [rad] (knees slightly bent); every other joint 0.
DEFAULT_JOINT_POS_RAD: dict[str, float] = {
    "left_hip_pitch_joint": -0.1,
    "left_knee_joint": 0.3,
    "left_ankle_pitch_joint": -0.2,
    "right_hip_pitch_joint": -0.1,
    "right_knee_joint": 0.3,
    "right_ankle_pitch_joint": -0.2,
}


class ActionOffset(enum.Enum):
    """What the scaled action is added to, to make the PD target."""

    DEFAULT_POSE = "default_pose"
    """ASAP: q* = scale·a + q_default."""
    REFERENCE_POSE = "reference_pose"
    """Residual: q* = scale·a + q_ref(φ) (the reference joint angles at the current phase)."""


@dataclass(frozen=True)
class SimConfig:
    """Physics and control rates."""

    robot: str = "g1_23dof"
    """Bundled robot description (the same files as retargeting)."""
    physics_dt_s: float = 0.005
    """Physics step [s] (200 Hz, as ASAP)."""
    decimation: int = 4
    """Physics steps per policy step (policy at 50 Hz)."""
    action_scale: float = 0.25
    """q* = action_scale · a + offset [rad per action unit]."""
    action_clip: float = 100.0
    """Actions are clipped to ±this before scaling (ASAP's clip_actions)."""
    action_offset: ActionOffset = ActionOffset.REFERENCE_POSE
    """Default pose (ASAP) or reference pose (residual; learns faster on a CPU budget)."""
    self_collision: bool = False
    """Robot–robot contacts. Off: only robot–floor contacts (cheaper; ASAP's IsaacGym runs keep them)."""
    init_height_offset_m: float = 0.01
    """Raise the root this much at reset, so reference feet that touch the floor do not start inside it [m]."""
    num_threads: int = DEFAULT_NUM_THREADS
    """Threads of the MuJoCo batch (0: all CPUs)."""
    engine: str = DEFAULT_ENGINE
    """What steps the physics: ``mujoco`` (MuJoCo's C batch on ``num_threads`` threads) or ``warp`` (MuJoCo Warp,
    every environment in one set of kernels on ``warp_device``; the ``warp`` extra). Same model, same PD law."""
    warp_device: str = DEFAULT_WARP_DEVICE
    """Warp device of the ``warp`` engine: ``cuda`` / ``cuda:N`` (a GPU) or ``cpu`` (Warp's CPU backend, for checks)."""

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            from retarget.errors import ConfigError

            raise ConfigError(f"unknown physics engine {self.engine!r}: one of {', '.join(ENGINES)}")


@dataclass(frozen=True)
class ObsConfig:
    """Observation layout and scales (ASAP's actor/critic with a 5-step history)."""

    history_len: int = 5
    """Frames in the actor observation: the current one and history_len − 1 earlier ones, newest first."""
    ang_vel_scale: float = 0.25
    """Base angular velocity multiplier."""
    dof_vel_scale: float = 0.05
    """Joint velocity multiplier."""
    lin_vel_scale: float = 2.0
    """Base linear velocity multiplier (critic only)."""
    clip: float = 100.0
    """Observations are clipped to ±this."""


@dataclass(frozen=True)
class TrackingTerm:
    """A reward exp(−error/σ)·weight."""

    fn: ErrorFn
    """Named error function from :mod:`trainers.rewards` (or yours), returning (N,) ≥ 0."""
    weight: float
    """Multiplier of the term (positive)."""
    sigma: float
    """σ, in the units of the error (a mean of squares)."""


@dataclass(frozen=True)
class PenaltyTerm:
    """A reward p·weight·scale, with scale the penalty curriculum's current value."""

    fn: ErrorFn
    """Named penalty function returning (N,) ≥ 0."""
    weight: float
    """Multiplier (negative)."""
    curriculum: bool = True
    """Whether the penalty curriculum scales this term."""


def _default_tracking() -> tuple[TrackingTerm, ...]:
    return (
        TrackingTerm(rewards.body_pos_upper_error, 1.0, 0.03),
        TrackingTerm(rewards.body_pos_lower_error, 1.0, 0.03),
        TrackingTerm(rewards.vr_3point_error, 1.6, 0.03),
        TrackingTerm(rewards.feet_pos_error, 2.1, 0.03),
        TrackingTerm(rewards.body_rot_error, 0.5, 0.1),
        TrackingTerm(rewards.body_lin_vel_error, 0.5, 10.0),
        TrackingTerm(rewards.body_ang_vel_error, 0.5, 10.0),
        TrackingTerm(rewards.joint_pos_error, 0.75, 0.3),
        TrackingTerm(rewards.joint_vel_error, 0.5, 30.0),
    )


def _default_penalties() -> tuple[PenaltyTerm, ...]:
    return (
        PenaltyTerm(rewards.action_rate, -0.5),
        PenaltyTerm(rewards.feet_orientation, -2.0),
        PenaltyTerm(rewards.feet_slippage, -1.0),
        PenaltyTerm(rewards.dof_pos_limits, -10.0),
        PenaltyTerm(rewards.dof_vel_limits, -5.0),
        PenaltyTerm(rewards.torque_limits, -5.0),
        PenaltyTerm(rewards.termination, -200.0, curriculum=False),
    )


@dataclass(frozen=True)
class RewardConfig:
    """The reward: a sum of tracking terms and penalties, multiplied by the policy step."""

    tracking: tuple[TrackingTerm, ...] = field(default_factory=_default_tracking)
    """exp(−error/σ) tracking terms."""
    penalties: tuple[PenaltyTerm, ...] = field(default_factory=_default_penalties)
    """Penalty terms (negative weights)."""
    scale_by_dt: bool = True
    """Multiply every term by the policy step [s] (legged_gym / HumanoidVerse convention). Keeps returns
    O(1–10): PPO's clipped value loss moves values by at most ±0.2 per update, so with unscaled rewards
    (a −200 termination, returns in the hundreds) the critic barely learns."""


@dataclass(frozen=True)
class CurriculumConfig:
    """Penalty and termination curricula, updated once per training iteration from mean episode length."""

    penalty_scale_init: float = 0.1
    """Initial multiplier of the curriculum penalties (ASAP: 0.1)."""
    penalty_scale_max: float = 1.0
    """Largest multiplier."""
    penalty_rate: float = 1.05
    """Multiply (divide) the penalty scale by this when episodes are long (short)."""
    long_episode_fraction: float = 0.8
    """"Long": mean episode length above this fraction of the longest possible one."""
    short_episode_fraction: float = 0.5
    """"Short": below this fraction."""
    termination_distance_init_m: float = 1.5
    """Initial allowed mean body distance from the reference before an episode fails [m]."""
    termination_distance_min_m: float = 0.3
    """Tightest allowed distance [m]."""
    termination_rate: float = 0.97
    """Multiply the allowed distance by this when episodes are long (and divide when short)."""


@dataclass(frozen=True)
class DomainRandConfig:
    """Per-environment physics randomization (sampled when the environments are created)."""

    enabled: bool = True
    """Master switch."""
    friction_range: tuple[float, float] = (0.5, 1.25)
    """Multiplier of the sliding friction of every geom."""
    link_mass_range: tuple[float, float] = (0.95, 1.05)
    """Multiplier of each link mass."""
    base_com_offset_m: float = 0.02
    """Uniform ± offset of the pelvis centre of mass on each axis [m]."""
    pd_gain_range: tuple[float, float] = (0.9, 1.1)
    """Multiplier of Kp and Kd, per environment and joint."""
    push_interval_s: float = 5.0
    """Mean time between random base pushes [s] (0: never)."""
    push_vel_m_s: float = 0.3
    """Largest horizontal base velocity change of a push [m/s]."""


@dataclass(frozen=True)
class TrackingEnvConfig:
    """Everything that defines a tracking environment."""

    sim: SimConfig = SimConfig()
    """Physics, rates and action mapping."""
    obs: ObsConfig = ObsConfig()
    """Observation layout."""
    reward: RewardConfig = RewardConfig()
    """Reward terms."""
    curriculum: CurriculumConfig = CurriculumConfig()
    """Curricula."""
    domain_rand: DomainRandConfig = DomainRandConfig()
    """Randomization."""
    random_start: bool = True
    """Reference state initialization: start each episode at a random phase (else at φ = 0)."""
    random_start_max_phase: float = 0.9
    """Random starts are uniform in [0, this), so an episode has some motion left to track."""
    init_dof_noise_rad: float = 0.02
    """Uniform ± noise on the joint angles at reset [rad]."""
    foot_contact_height_m: float = 0.06
    """Foot link origin height under which a foot counts as touching the floor [m]."""


def to_jsonable(obj: Any) -> Any:
    """A config as plain JSON values (functions as ``module.name``, enums by value)."""
    if is_dataclass(obj):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, enum.Enum):
        return obj.value
    if callable(obj):
        return f"{obj.__module__}.{obj.__qualname__}"
    if isinstance(obj, (tuple, list)):
        return [to_jsonable(v) for v in obj]
    return obj


def lists_as_tuples(record: dict[str, Any]) -> dict[str, Any]:
    """A JSON record's arrays back as the tuples frozen configs hold (one level; other values as they are)."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in record.items()}


def _known_reward_fns(extra: tuple[ErrorFn, ...]) -> dict[str, ErrorFn]:
    """The functions a saved reward may name: those of :mod:`trainers.rewards` and ``extra``, by ``module.name``."""
    fns = [v for v in vars(rewards).values() if callable(v) and getattr(v, "__module__", None) == rewards.__name__]
    return {to_jsonable(fn): fn for fn in (*fns, *extra)}


def reward_config_from_jsonable(
    data: dict[str, Any], source: str = "config", *, reward_fns: tuple[ErrorFn, ...] = ()
) -> RewardConfig:
    """Rebuild a saved :class:`RewardConfig`: each term's function is the known function of that name.

    Names resolve only against :mod:`trainers.rewards` plus ``reward_fns`` (never an import by string); an unknown
    name raises :class:`ConfigError` naming ``source``, so a run never continues with rewards it was not trained on.
    """
    from retarget.errors import ConfigError

    known = _known_reward_fns(reward_fns)

    def fn(name: str) -> ErrorFn:
        if name not in known:
            raise ConfigError(f"{source}: reward function {name!r} is not in trainers.rewards; pass it in reward_fns")
        return known[name]

    try:
        tracking = tuple(TrackingTerm(fn(t["fn"]), float(t["weight"]), float(t["sigma"])) for t in data["tracking"])
        penalties = tuple(
            PenaltyTerm(fn(t["fn"]), float(t["weight"]), bool(t.get("curriculum", True))) for t in data["penalties"]
        )
        return RewardConfig(tracking, penalties, bool(data.get("scale_by_dt", True)))
    except (KeyError, TypeError) as exc:
        raise ConfigError(f"{source}: the saved reward is not a tracking/penalties record ({exc!r})") from exc


def sim_config_from_jsonable(data: dict[str, Any]) -> SimConfig:
    """Rebuild a saved :class:`SimConfig` (``to_jsonable`` of one).

    The engine that stepped a run is recorded in its config but not replayed: which engine steps a policy is not
    part of the policy, and a run trained on a GPU must evaluate and fine-tune on a machine without one. Every
    command that simulates chooses its engine (``--engine``; default :data:`DEFAULT_ENGINE`)."""
    sim = {k: v for k, v in data.items() if k not in ("engine", "warp_device")}
    sim["action_offset"] = ActionOffset(sim["action_offset"])
    return SimConfig(**sim)


def env_config_from_jsonable(
    data: dict[str, Any], source: str = "config", *, rewards_required: bool = True, reward_fns: tuple[ErrorFn, ...] = ()
) -> TrackingEnvConfig:
    """Rebuild a saved :class:`TrackingEnvConfig`, its reward terms included.

    ``rewards_required=False`` (evaluation, which reports tracking errors and never a reward) keeps the default
    reward when the saved one names a function this process does not know; otherwise that raises
    :class:`ConfigError` (fine-tuning must continue with the pre-trained rewards or not at all).
    """
    from retarget.errors import ConfigError

    dr = lists_as_tuples(data["domain_rand"])
    if "reward" not in data:
        if rewards_required:
            raise ConfigError(f"{source}: holds no reward record; cannot continue with the pre-trained rewards")
        reward = RewardConfig()
    else:
        try:
            reward = reward_config_from_jsonable(data["reward"], source, reward_fns=reward_fns)
        except ConfigError:
            if rewards_required:
                raise
            reward = RewardConfig()
    return TrackingEnvConfig(
        sim=sim_config_from_jsonable(data["sim"]),
        obs=ObsConfig(**data["obs"]),
        reward=reward,
        curriculum=CurriculumConfig(**data["curriculum"]),
        domain_rand=DomainRandConfig(**dr),
        random_start=data["random_start"],
        random_start_max_phase=data.get("random_start_max_phase", TrackingEnvConfig.random_start_max_phase),
        init_dof_noise_rad=data["init_dof_noise_rad"],
        foot_contact_height_m=data["foot_contact_height_m"],
    )
