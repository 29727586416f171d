"""Defaults of the learned Δa, in one place: :class:`~trainers.delta.learned.LearnedDeltaConfig`, the loop's
config and the ``delta fit`` / ``loop`` options all read them. No torch here, so the CLI imports it cheaply.

The defaults are the model that transfers to clips it was not fitted on (README, Table IV): a per-joint linear
model on every joint, fed the previous PD target so it can represent an actuation delay.
"""

from __future__ import annotations

JOINT_SET_NAMES: tuple[str, ...] = ("ankles", "legs", "all")
"""Joint subsets Δa may act on (the paper's real-robot model: the ankles)."""
MODEL_KINDS: tuple[str, ...] = ("per_joint_linear", "mlp")
"""Δa regressors: each joint's δ linear in its own features, or the paper's MLP on every feature."""
DEFAULT_JOINTS = "all"
"""A delay reaches every joint, so the default Δa does too."""
DEFAULT_MODEL = "per_joint_linear"
DEFAULT_PREVIOUS_TARGET = True
"""Feed q*_{t−1} − q*_t: without it no Δa can represent a delayed robot."""
DEFAULT_MLP_EPOCHS = 1500
"""Full-batch Adam steps of the MLP regression."""

# How a delta file written before a field existed is read: those files were MLPs without the previous target.
LEGACY_FILE_MODEL = "mlp"
LEGACY_FILE_PREVIOUS_TARGET = False
