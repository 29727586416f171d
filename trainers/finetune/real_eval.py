"""Evaluate a policy alone (no Δa) in a "real" profile, from phase 0, with the paper's metrics.

The deployment boundary: what runs here is the actor and the "real" model, nothing else. As in
:func:`trainers.evaluate.rollout_episodes`, but the environment is given the "real" model (its resets
fill a delayed actuator's history with the start pose, as collection does).

Episodes differ by randomized physics (``domain_rand``: friction, masses, gains around the profile, which
needs a MuJoCo-played robot) and/or by a uniform noise on the start joint angles (``start_noise_rad``, which
any engine takes). Both are drawn from ``seed`` at construction and reset, before any action, so the same seed
gives every policy the same episodes (matched starts).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import torch

from trainers.config import TrackingEnvConfig
from trainers.env import TrackingEnv
from trainers.evaluate import ClipEvaluation, eval_env_config, rollout_episodes, summarize_episodes
from trainers.metrics import TrackingMetrics
from trainers.real.model import build_real_model
from trainers.reference import MotionReference

Policy = Callable[[torch.Tensor], torch.Tensor]
Episode = tuple[np.ndarray, np.ndarray]
"""(robot points, reference points), each (T, P, 3) [m]."""


def rollouts_in_profile(
    policy: Policy,
    references: list[MotionReference],
    profile: str,
    env_cfg: TrackingEnvConfig,
    episodes_per_clip: int = 1,
    seed: int = 0,
    domain_rand: bool = False,
    start_noise_rad: float = 0.0,
) -> tuple[list[Episode], np.ndarray, float]:
    """The episodes of ``policy`` in ``profile`` from phase 0, their clip ids and the policy step [s]."""
    cfg = dataclasses.replace(eval_env_config(env_cfg, domain_rand), init_dof_noise_rad=float(start_noise_rad))
    model = build_real_model(profile, cfg.sim)
    clip_ids = np.repeat(np.arange(len(references)), episodes_per_clip)
    env = TrackingEnv(references, len(clip_ids), cfg, seed=seed, model=model)
    return rollout_episodes(policy, env, clip_ids), clip_ids, env.policy_dt_s  # resets fill a delayed history


def evaluate_in_profile(
    policy: Policy,
    references: list[MotionReference],
    profile: str,
    env_cfg: TrackingEnvConfig,
    episodes_per_clip: int = 1,
    seed: int = 0,
    domain_rand: bool = False,
    start_noise_rad: float = 0.0,
) -> tuple[TrackingMetrics, list[ClipEvaluation]]:
    """Overall (frame-weighted) and per-clip metrics of ``policy`` run in ``profile`` from phase 0
    (episodes as in :func:`rollouts_in_profile`)."""
    episodes, clip_ids, dt_s = rollouts_in_profile(
        policy, references, profile, env_cfg, episodes_per_clip, seed, domain_rand, start_noise_rad
    )
    return summarize_episodes(references, clip_ids, episodes, dt_s)
