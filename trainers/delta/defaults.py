"""Defaults of the learned Δa, in one place: :class:`~trainers.delta.learned.LearnedDeltaConfig`, the loop's
config and the ``delta fit`` / ``loop`` options all read them. No torch here, so the CLI imports it cheaply.

The defaults are the model that transfers to clips it was not fitted on (README, Table IV): a per-joint linear
model on every joint, fed the previous PD target so it can represent an actuation delay, each coefficient held to
what an actuator can be, and no damping term (``per_joint_undamped``). The one-factor study of docs/delta_study.md
(squat policy, PyBullet robot) kept the per-joint linear form: an MLP or a PPO-trained π^Δ closed less of the gap
with intervals that exclude it, ankles or legs only were not separable from all joints. The bounds (docs/table4.md,
"The bounded Δa on three clips"): an unbounded fit's out-of-range coefficients punish PPO's exploration in the Δa
simulator with penalties the robot does not give. The damping term (docs/table4.md, "The Δa without its damping
term"): Δa reads q̇ once per 20 ms policy step, and on the kick that sampled feedback gave the exploring policy
joint-velocity-limit penalties the robot does not; without it ASAP closed 99 % / 126 % of the held-out kick's
Eg-mpjpe / completion gap in `combined` against 13 % / 34 % with it, and lost nothing outside the intervals on the
squat or in PyBullet.
"""

from __future__ import annotations

JOINT_SET_NAMES: tuple[str, ...] = ("ankles", "legs", "all")
"""Joint subsets Δa may act on (the paper's real-robot model: the ankles)."""
TERMS: tuple[str, ...] = ("stiffness", "damping", "delay")
"""The terms of a per-joint Δa, in column order: δ_j linear in q*_j − q_j, 0.05·q̇_j, q*_{t−1,j} − q*_{t,j}."""
PER_JOINT_TERMS: dict[str, tuple[str, ...]] = {
    "per_joint_linear": TERMS,
    "per_joint_physical": TERMS,
    "per_joint_undamped": ("stiffness", "delay"),
}
"""Per-joint kinds (stored as :class:`trainers.delta.per_joint.PerJointLinear`) and the terms each fits: unbounded,
each coefficient held to what an actuator can be (:data:`trainers.delta.per_joint.TERM_BOUNDS`), or the same
without the damping term, which Δa applies as a velocity feedback sampled once per policy step."""
PER_JOINT_KINDS: tuple[str, ...] = tuple(PER_JOINT_TERMS)
BOUNDED_KINDS: tuple[str, ...] = ("per_joint_physical", "per_joint_undamped")
"""The per-joint kinds fitted inside the bounds (the bounds are the fit's, not the model's)."""
MODEL_KINDS: tuple[str, ...] = (*PER_JOINT_KINDS, "mlp")
"""Δa regressors: the per-joint kinds, or the paper's MLP on every feature."""
DEFAULT_JOINTS = "all"
"""A delay reaches every joint, so the default Δa does too."""
DEFAULT_MODEL = "per_joint_undamped"
DEFAULT_PREVIOUS_TARGET = True
"""Feed q*_{t−1} − q*_t: without it no Δa can represent a delayed robot."""
DEFAULT_FITTING_ROLLOUTS = 6
"""Rollouts of the pre-trained policy in the "real" robot that Δa is fitted on: 2 closed less of the completion gap
than 6 (−25 % [−50, −1], docs/delta_study.md), 18 no more."""
DEFAULT_FINETUNE_ITERATIONS = 50
"""PPO iterations of the fine-tuning with the frozen Δa (× 64 environments × 24 steps): 25 closed less of the
completion gap than 50 (−33 % [−60, −4], docs/delta_study.md); 100 were not better outside the intervals (six seeds:
+10 % [−16, 34] of completion), at twice the cost."""
DEFAULT_MLP_EPOCHS = 1500
"""Full-batch Adam steps of the MLP regression."""

# How a delta file written before a field existed is read: those files were MLPs without the previous target.
LEGACY_FILE_MODEL = "mlp"
LEGACY_FILE_PREVIOUS_TARGET = False
