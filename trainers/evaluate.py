"""Roll a policy out from the start of each clip and compute the paper's tracking metrics."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from retarget.asap_pkl import RobotMotion
from trainers.config import TrackingEnvConfig
from trainers.env import TrackingEnv
from trainers.metrics import SUCCESS_DISTANCE_M, TrackingMetrics, tracking_metrics
from trainers.reference import MotionReference

Policy = Callable[[torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class ClipEvaluation:
    """Metrics of the episodes run on one clip."""

    clip: str
    metrics: TrackingMetrics
    mean_episode_fraction: float
    """Mean fraction of the clip completed before the 0.5 m failure (1: every episode ran to the end)."""


def eval_env_config(cfg: TrackingEnvConfig, domain_rand: bool = False) -> TrackingEnvConfig:
    """The training config made deterministic for evaluation: phase-0 starts, no joint noise, no pushes."""
    dr = dataclasses.replace(cfg.domain_rand, enabled=domain_rand, push_interval_s=0.0)
    return dataclasses.replace(cfg, random_start=False, init_dof_noise_rad=0.0, domain_rand=dr)


def rollout_episodes(policy: Policy, env: TrackingEnv, clip_ids: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """One episode per environment on clip ``clip_ids[i]``, from phase 0 until it ends or fails (0.5 m rule)."""
    env.termination_distance_m = SUCCESS_DISTANCE_M
    n = env.num_envs
    env.reset_envs(np.arange(n), start_phase=np.zeros(n), clip_ids=clip_ids)
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
    return [(np.stack(r), np.stack(q)) for r, q in zip(robot, ref)]


def evaluate_policy(
    policy: Policy,
    references: list[MotionReference],
    cfg: TrackingEnvConfig,
    episodes_per_clip: int = 1,
    seed: int = 0,
    domain_rand: bool = False,
) -> tuple[TrackingMetrics, list[ClipEvaluation]]:
    """Overall metrics (frame-weighted over all episodes) and per-clip metrics."""
    cfg = eval_env_config(cfg, domain_rand)
    clip_ids = np.repeat(np.arange(len(references)), episodes_per_clip)
    env = TrackingEnv(references, len(clip_ids), cfg, seed=seed)
    return summarize_episodes(references, clip_ids, rollout_episodes(policy, env, clip_ids), env.policy_dt_s)


def summarize_episodes(
    references: list[MotionReference], clip_ids: np.ndarray, episodes, policy_dt_s: float
) -> tuple[TrackingMetrics, list[ClipEvaluation]]:
    """Overall (frame-weighted) and per-clip metrics of rolled-out episodes."""
    per_clip = []
    for c, ref in enumerate(references):
        mine = [episodes[i] for i in np.flatnonzero(clip_ids == c)]
        frames = ref.duration_s / policy_dt_s + 1
        fraction = float(np.mean([min(len(e[0]) / frames, 1.0) for e in mine]))
        per_clip.append(ClipEvaluation(ref.name, tracking_metrics(mine), fraction))
    return tracking_metrics(episodes), per_clip


def _root_pose_and_dofs(state, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # The pelvis is the free joint's body and sits at its origin: its xpos/xquat are the root pose.
    return state.point_pos_w[i, 0].copy(), state.body_quat_w[i, 0].copy(), state.dof_pos[i].copy()


def performed_motions(
    policy: Policy,
    references: list[MotionReference],
    cfg: TrackingEnvConfig,
    episodes_per_clip: int = 1,
    seed: int = 0,
    domain_rand: bool = False,
) -> list[RobotMotion]:
    """What the robot did: root pose and joint angles per policy step, from phase 0 to the clip's end.

    The episodes are :func:`evaluate_policy`'s (same ``seed``: same randomized physics per episode) but
    played on through a fall, so the motion covers the whole clip and can be scored against the human
    clip like any retarget. The clip's last frame is left out: the environment resets on it.
    """
    cfg = eval_env_config(cfg, domain_rand)
    clip_ids = np.repeat(np.arange(len(references)), episodes_per_clip)
    env = TrackingEnv(references, len(clip_ids), cfg, seed=seed)
    env.termination_distance_m = np.inf
    n = env.num_envs
    env.reset_envs(np.arange(n), start_phase=np.zeros(n), clip_ids=clip_ids)
    frames = [[_root_pose_and_dofs(env.state, i)] for i in range(n)]
    active = np.ones(n, dtype=bool)
    obs, _ = env.get_observations()
    while active.any():
        with torch.no_grad():
            obs, _, dones, _ = env.step(policy(obs))
        active &= ~dones.numpy()
        for i in np.flatnonzero(active).tolist():
            frames[i].append(_root_pose_and_dofs(env.state, i))
    motions = []
    for episode, recorded in enumerate(frames):
        root, quat, dofs = (np.stack(x) for x in zip(*recorded))
        motions.append(
            RobotMotion(
                name=f"{references[clip_ids[episode]].name}_episode{episode}",
                fps=1.0 / env.policy_dt_s,
                root_pos_w=root,
                root_quat_w=quat,
                dof_pos=dofs,
                human_joints_w=np.zeros((len(root), 24, 3)),
            )
        )
    return motions
