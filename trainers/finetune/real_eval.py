"""Evaluate a policy alone (no Δa) in a "real" profile, from phase 0, with the paper's metrics.

The deployment boundary: what runs here is the actor and the "real" model, nothing else. As in
:func:`trainers.evaluate.rollout_episodes`, but the environment is given the "real" model (its resets
fill a delayed actuator's history with the start pose, as collection does).
"""

from __future__ import annotations

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


def evaluate_in_profile(
    policy: Policy,
    references: list[MotionReference],
    profile: str,
    env_cfg: TrackingEnvConfig,
    episodes_per_clip: int = 1,
    seed: int = 0,
    domain_rand: bool = False,
) -> tuple[TrackingMetrics, list[ClipEvaluation]]:
    """Overall (frame-weighted) and per-clip metrics of ``policy`` run in ``profile`` from phase 0.

    With ``domain_rand`` each episode's physics is randomized around the profile (friction, masses,
    gains), drawn from ``seed``: the same seed gives every policy the same episodes (matched starts).
    """
    cfg = eval_env_config(env_cfg, domain_rand)
    model = build_real_model(profile, cfg.sim)
    clip_ids = np.repeat(np.arange(len(references)), episodes_per_clip)
    env = TrackingEnv(references, len(clip_ids), cfg, seed=seed, model=model)
    episodes = rollout_episodes(policy, env, clip_ids)  # resets fill a delayed actuator's history
    return summarize_episodes(references, clip_ids, episodes, env.policy_dt_s)
