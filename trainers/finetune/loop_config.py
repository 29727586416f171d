"""The budgets of ``run_loop`` / ``asap-retarget loop``, in a module light enough for the CLI to read defaults."""

from __future__ import annotations

from dataclasses import dataclass

from trainers.defaults import DEFAULT_NUM_THREADS
from trainers.delta.defaults import DEFAULT_JOINTS, DEFAULT_MODEL


@dataclass(frozen=True)
class LoopConfig:
    """Budgets of the loop (defaults: a smoke run of a few minutes on a 2-core CPU)."""

    pretrain_iterations: int = 20
    """PPO iterations of stage 1 (a policy that tracks needs thousands; see the README)."""
    finetune_iterations: int = 10
    """PPO iterations of stage 3."""
    num_envs: int = 32
    """Parallel environments of both training stages."""
    collect_episodes: int = 4
    """Rollouts in the "real" profile to fit Δa (the first from phase 0, the rest from random phases)."""
    delta_joints: str = DEFAULT_JOINTS
    """Joints Δa acts on (ankles, legs, all)."""
    delta_model: str = DEFAULT_MODEL
    """Δa model: per_joint_linear (transfers across clips, README) or mlp (the paper's)."""
    delta_epochs: int = 500
    """Adam steps of the Δa MLP regression (mlp only)."""
    eval_episodes: int = 1
    """Evaluation episodes per clip (deterministic: phase-0 starts, no randomization)."""
    seed: int = 0
    """Seed of every stage."""
    num_threads: int = DEFAULT_NUM_THREADS
    """MuJoCo threads."""
