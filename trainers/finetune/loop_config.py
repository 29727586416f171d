"""The budgets of ``run_loop`` / ``asap-retarget loop``, in a module light enough for the CLI to read defaults."""

from __future__ import annotations

from dataclasses import dataclass

from trainers.defaults import DEFAULT_ENGINE, DEFAULT_NUM_THREADS, DEFAULT_WARP_DEVICE
from trainers.delta.defaults import (
    DEFAULT_FINETUNE_ITERATIONS,
    DEFAULT_FITTING_ROLLOUTS,
    DEFAULT_JOINTS,
    DEFAULT_MLP_EPOCHS,
    DEFAULT_MODEL,
)
from trainers.finetune.selection_config import DEFAULT_SELECTION

DEFAULT_ROUNDS = 2
"""ASAP rounds of ``loop``: a second round stopped the fine-tuning seeds diverging where they did (docs/table4.md,
"The kick2 … two ASAP rounds": on 32 episodes, success spread over seeds ± 21 → ± 4 on the held-out kick2 in
`combined`, ± 31 → ± 3 on the squat in PyBullet; not separably worse on any clip, kick2 in PyBullet leaning worse),
at twice the robot rollouts and fine-tuning iterations."""


@dataclass(frozen=True)
class LoopConfig:
    """Budgets of the loop: the pre-training is a smoke budget (a few minutes on a 2-core CPU; pre-train a policy
    that tracks with ``train track``), Δa and the fine-tuning take the defaults of ``delta fit`` and
    ``train finetune`` (:mod:`trainers.delta.defaults`)."""

    pretrain_iterations: int = 20
    """PPO iterations of stage 1 in all (a policy that tracks needs thousands; see the README)."""
    finetune_iterations: int = DEFAULT_FINETUNE_ITERATIONS
    """PPO iterations of stage 3 in all, counted from the pre-trained checkpoint."""
    num_envs: int = 32
    """Parallel environments of both training stages."""
    collect_episodes: int = DEFAULT_FITTING_ROLLOUTS
    """Rollouts in the "real" profile to fit Δa (the first from phase 0, the rest from random phases)."""
    delta_joints: str = DEFAULT_JOINTS
    """Joints Δa acts on (ankles, legs, all)."""
    delta_model: str = DEFAULT_MODEL
    """Δa model: per_joint_physical (per-joint linear held to an actuator's range), per_joint_undamped (the same
    without the q̇ term), per_joint_linear (unbounded) or mlp (the paper's);
    :data:`trainers.delta.defaults.MODEL_KINDS`."""
    delta_epochs: int = DEFAULT_MLP_EPOCHS
    """Adam steps of the Δa MLP regression (mlp only)."""
    rounds: int = DEFAULT_ROUNDS
    """Rounds of stages 2-3: each after the first rolls the previous round's fine-tuned policy out in the "real"
    profile, refits Δa on every round's rollouts and fine-tunes that policy again for ``finetune_iterations``."""
    eval_episodes: int = 1
    """Evaluation episodes per clip (deterministic: phase-0 starts, no randomization)."""
    seed: int = 0
    """Seed of every stage."""
    num_threads: int = DEFAULT_NUM_THREADS
    """MuJoCo threads."""
    trust_region_kl: float | None = None
    """ASAP-TR: bound of the fine-tuned actor's mean KL from the pre-trained one [nats] (None: plain PPO)."""
    select_every: int = DEFAULT_SELECTION.every
    """Deploy the best of the pre-trained checkpoint and every N-th fine-tuning iteration, judged in the Δa
    simulator (:mod:`trainers.finetune.selection`); 0: the last checkpoint."""
    select_episodes: int = DEFAULT_SELECTION.episodes
    """Matched episodes each candidate runs in the Δa simulator."""
    engine: str = DEFAULT_ENGINE
    """What steps the physics of both training stages (``SimConfig.engine``); collection and evaluation run in
    the "real" profile on the C engine (or PyBullet) whatever this says. Like the threads, not part of a stage's
    inputs: a run resumed on another engine keeps its finished stages."""
    warp_device: str = DEFAULT_WARP_DEVICE
    """Warp device of ``engine="warp"``."""
