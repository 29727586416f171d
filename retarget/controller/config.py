"""Settings of the sampling-MPC tracker and of the verdict it gives, as frozen configs.

The speed/quality knob is (`num_samples`, `plan_step_factor`, `plan_tail_step_factor`,
`plan_fine_horizon_s`, `horizon_s`, `replan_steps`): planning physics steps per second of motion =
control_hz / replan_steps × num_samples × physics_hz × (fine / plan_step_factor + (horizon_s − fine) /
plan_tail_step_factor), fine = `plan_fine_horizon_s` (the whole horizon without a tail), fewer where
`skip_replan_error_m` skips replans; docs/controller.md,
"Speed", has the measured curve.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from retarget.errors import ConfigError


@dataclass(frozen=True)
class TrackerConfig:
    """The sampling MPC: predictive sampling / MPPI over PD-target residual knots around the reference."""

    physics_dt_s: float = 0.005
    """Physics step [s] (200 Hz, the trainers' rate)."""
    decimation: int = 4
    """Physics steps per control step (50 Hz control, the trainers' rate)."""
    num_samples: int = 24
    """Rollouts per plan, the nominal (zero-noise) plan included. 24 with the coarse planning step costs a
    third of issue 15's 32 at the fine step (docs/controller.md, "Speed", has the curve)."""
    horizon_s: float = 0.8
    """Planning horizon [s]. Balance needs it: with 32 samples the squat clip falls after 1.1 s at 0.3 s,
    the kick_level1 and jump_forward_level1 clips fall after 3 s at 0.6 s, and none falls at 0.8 s."""
    num_knots: int = 5
    """Residual knots over the horizon, linearly interpolated (the first at the plan's start)."""
    replan_steps: int = 2
    """Control steps executed from each plan before replanning (2: plans at 25 Hz)."""
    noise_torque_nm: float = 10.0
    """σ of the Gaussian knot noise, as a torque [N·m]: joint j's PD-target noise is this / Kp_j, so stiff
    knees get small and soft ankles large target offsets for the same push."""
    noise_min_rad: float = 0.03
    """Smallest per-joint σ of the PD-target noise [rad]."""
    noise_max_rad: float = 0.3
    """Largest per-joint σ of the PD-target noise [rad]."""
    temperature: float = 0.3
    """MPPI temperature as a fraction of the spread (median − best) of the sample costs."""
    max_residual_factor: float = 4.0
    """Residuals are clipped to ±this × the joint's noise σ around the reference joint angles."""
    body_weight: float = 1.0
    """Weight of the mean squared distance of the matched body points to the reference [1/m²]·σ² (σ = 0.1 m)."""
    body_sigma_m: float = 0.1
    """Scale of the body-position error [m]."""
    root_quat_weight: float = 1.0
    """Weight of the root orientation error (1 − ⟨q, q_ref⟩²)/0.05."""
    joint_weight: float = 0.3
    """Weight of the mean squared joint-angle error / (0.2 rad)²."""
    joint_vel_weight: float = 0.02
    """Weight of the mean squared joint-speed error / (2 rad/s)²."""
    root_vel_weight: float = 0.3
    """Weight of the root's squared linear [/(0.5 m/s)²] plus angular [/(2 rad/s)²] velocity error: a robot
    starting to tip over is penalized before its bodies move far."""
    effort_weight: float = 0.05
    """Weight of the mean squared residual / σ² (control effort around the reference)."""
    terminal_weight: float = 3.0
    """Multiplier of the cost at the horizon's last step."""
    feedforward: bool = True
    """Feed the joint torques the reference needs (inverse dynamics with contact forces) forward through
    the PD targets: q* = q_ref + τ_ff/Kp + residual."""
    velocity_feedforward: bool = True
    """Add Kd·q̇_ref/Kp to the PD targets, so the damping acts on the speed error, not the speed."""
    init_height_offset_m: float = 0.01
    """The root starts this much above the reference, so feet touching the floor do not start in it [m]."""
    plan_step_factor: int = 2
    """The planning rollouts step the physics this many times coarser (physics_dt_s × factor, decimation /
    factor steps per control step). The executed run always uses physics_dt_s: only the plans' foresight
    is approximate, never the motion the verdict judges. 2 (10 ms) halves a rollout's cost at the fine
    step's tracking on the tuning clips; 4 (20 ms, softer contacts) loses the dynamic clips: more falls."""
    plan_primitive_contacts: bool = True
    """In the planning rollouts, only the primitive collision geoms (the four sole spheres of each foot, the
    shoulder cylinders) touch the floor, not the link meshes, whose floor tests are ≈ 20 % of a step; the
    executed run keeps every contact. While the feet stand on their spheres the rollouts are the same."""
    plan_tail_step_factor: int = 4
    """When > `plan_step_factor`, the planning rollouts step this much coarser after the first
    `plan_fine_horizon_s` of the horizon (0: the whole horizon at `plan_step_factor`). The near part of a
    plan is what gets executed and needs the finer contacts; the tail mostly tells balance from falling.
    4 (20 ms after the first 0.4 s): a quarter fewer planning steps at the same decisions on the tuning
    clips; the whole horizon at 20 ms loses the dynamic clips (see `plan_step_factor`)."""
    plan_fine_horizon_s: float = 0.4
    """Part of the horizon [s] rolled out at `plan_step_factor` when `plan_tail_step_factor` is set."""
    min_samples: int = 0
    """Adaptive sampling: when > 0, a plan whose previous plan's best cost was below `adaptive_cost` rolls
    out only this many samples; `num_samples` are used where the cost rises (0: always `num_samples`)."""
    adaptive_cost: float = 1.0
    """Best-sample cost under which the next plan uses `min_samples` (the cost's units: 1 ≈ the matched
    bodies 0.1 m off on average)."""
    skip_replan_error_m: float = 0.0
    """Skipping replans whose prediction held: when > 0, each plan also predicts, in the planning model, the
    executed steps of its first `max_skipped_replans` + 1 replan intervals, and where the executed run's
    bodies ended an interval within this mean distance of the prediction [m] the plan is executed for one
    more interval instead of replanning (0: replan every `replan_steps`). Where the plans' foresight fits
    the executed run (stance) that saves their rollouts; where it does not (contacts changing, flight) the
    tracker replans as usual."""
    max_skipped_replans: int = 1
    """Most replans skipped in a row: a plan executes at most (this + 1) × `replan_steps` control steps."""
    skip_replan_max_cost: float = 0.0
    """When > 0, a replan is skipped only while the executing plan's best sample cost is under this too (the
    cost's units, as `adaptive_cost`): a held prediction of a plan that tracks badly is not executed longer,
    where every replan's MPPI step counts (0: no cost condition)."""
    num_threads: int = 1
    """Threads of `mujoco.rollout` (0: every core)."""
    seed: int = 0
    """Seed of the sampling noise (same seed, same performed motion)."""

    def __post_init__(self) -> None:
        if self.plan_step_factor < 1 or self.decimation % self.plan_step_factor:
            raise ConfigError(
                f"plan_step_factor {self.plan_step_factor} must divide decimation {self.decimation} "
                "(the planning rollouts take whole coarse steps per control step)"
            )

        tail = self.plan_tail_step_factor
        if tail and (tail < self.plan_step_factor or self.decimation % tail):
            raise ConfigError(
                f"plan_tail_step_factor {tail} must divide decimation {self.decimation} and be at least "
                f"plan_step_factor {self.plan_step_factor} (0: no coarser tail)"
            )

        if self.skip_replan_error_m < 0 or self.max_skipped_replans < 0 or self.skip_replan_max_cost < 0:
            raise ConfigError(
                f"skip_replan_error_m {self.skip_replan_error_m:g}, max_skipped_replans "
                f"{self.max_skipped_replans} and skip_replan_max_cost {self.skip_replan_max_cost:g} must not be "
                "negative (0: never skip a replan / no cost condition)"
            )

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class ControllerConfig:
    """The controller layer's verdict: which frames the simulated G1 performs well enough."""

    tracker: TrackerConfig = field(default_factory=TrackerConfig)
    """The tracker's settings."""
    fail_distance_m: float = 0.5
    """A fall: the mean distance of all bodies to the reference exceeds this [m] (ASAP's success rule).
    The tracker restarts from the reference there."""
    quality_distance_m: float = 0.1
    """Quality bound: frames whose root-anchored mean body distance (the simulated body moved horizontally
    so its root is over the reference's; heights, orientation and shape count) exceeds this are not
    performed closely enough [m]. 0.1 m is 4× the retarget's own matched-point error (27 mm) and well
    under the 0.25 m of a body held 25 cm too high (see docs/controller.md for the clips' figures)."""
    quality_window_s: float = 0.2
    """...when that lasts at least this long [s] (a stumble shorter than this is tolerated)."""
    fail_backoff_s: float = 0.5
    """Before a fall, this much of the motion is marked bad too: the fall started earlier [s]."""
    reset_delay_s: float = 0.0
    """After a fall the tracker restarts from the reference this long later [s]."""
    decides: bool = True
    """Whether the controller's failures trim/reject the clip (else reported only)."""
    overrides_dynamic: bool = True
    """When the controller runs and decides, the dynamic layer's checks are reported but do not trim:
    a controller that performs the motion in simulation is the stronger evidence."""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)
