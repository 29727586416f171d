"""Evaluate a policy alone (no Δa) in a "real" profile, from phase 0, with the paper's metrics.

The deployment boundary: what runs here is the actor and the "real" model, nothing else. As in
:func:`trainers.evaluate.rollout_episodes`, but the environment is given the "real" model and a
delayed actuator's history is filled with the start pose (as collection does).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from trainers.config import TrackingEnvConfig
from trainers.delta.collect import _fill_batch_history
from trainers.env import TrackingEnv
from trainers.evaluate import ClipEvaluation, eval_env_config
from trainers.metrics import SUCCESS_DISTANCE_M, TrackingMetrics, tracking_metrics
from trainers.real.model import build_real_model
from trainers.reference import MotionReference

Policy = Callable[[torch.Tensor], torch.Tensor]


def evaluate_in_profile(policy: Policy, references: list[MotionReference], profile: str, env_cfg: TrackingEnvConfig,
                        episodes_per_clip: int = 1, seed: int = 0) -> tuple[TrackingMetrics, list[ClipEvaluation]]:  # fmt: skip
    """Overall (frame-weighted) and per-clip metrics of ``policy`` run in ``profile`` (deterministic starts)."""
    cfg = eval_env_config(env_cfg)
    model = build_real_model(profile, cfg.sim)
    clip_ids = np.repeat(np.arange(len(references)), episodes_per_clip)
    env = TrackingEnv(references, len(clip_ids), cfg, seed=seed, model=model)
    n = env.num_envs
    env.termination_distance_m = SUCCESS_DISTANCE_M
    env.reset_envs(np.arange(n), start_phase=np.zeros(n), clip_ids=clip_ids)
    _fill_batch_history(model, env.batch.bind("history"), np.arange(n), env.state.dof_pos)
    robot = [[p] for p in env.state.point_pos_w]
    ref = [[p] for p in env.state.ref_point_pos_w]
    active = np.ones(n, dtype=bool)
    obs, _ = env.get_observations()
    while active.any():
        with torch.no_grad():
            actions = policy(obs)
        obs, _, dones, _ = env.step(actions)
        points, ref_points = env.step_points_w
        for i in np.flatnonzero(active):
            robot[i].append(points[i])
            ref[i].append(ref_points[i])
        active &= ~dones.numpy()
    episodes = [(np.stack(r), np.stack(q)) for r, q in zip(robot, ref)]
    per_clip = []
    for c, r in enumerate(references):
        mine = [episodes[i] for i in np.flatnonzero(clip_ids == c)]
        frames = r.duration_s / env.policy_dt_s + 1
        fraction = float(np.mean([min(len(e[0]) / frames, 1.0) for e in mine]))
        per_clip.append(ClipEvaluation(r.name, tracking_metrics(mine), fraction))
    return tracking_metrics(episodes), per_clip
