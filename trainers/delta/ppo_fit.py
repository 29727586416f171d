"""π^Δ trained with PPO (the paper's way), saved as a :class:`~trainers.delta.learned.LearnedDelta` file.

The environment is :class:`trainers.delta.ppo_env.DeltaReplayEnv`; the algorithm is this package's
PPO (:mod:`trainers.ppo`) unchanged. The actor's observation is exactly the supervised model's
feature vector, and its network is the same ELU MLP, so the trained actor *is* a ``LearnedDelta``:
its running normalization becomes (mean, std = √(var + eps)), its layers the ``DeltaMLP``'s, and the
last layer is multiplied by ``action_scale`` because the actor outputs Δa in action units while the
file stores δ in PD-target units [rad]. ``delta eval`` and ``train finetune --delta`` load it unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

from retarget.atomic_io import check_output_folder
from retarget.rotations import quat_to_matrix
from trainers.delta.collection import Trajectory
from trainers.delta.learned import DeltaMLP, LearnedDelta, LearnedDeltaConfig
from trainers.delta.ppo_env import DeltaEnvConfig, DeltaReplayEnv
from trainers.ppo.config import PPOConfig
from trainers.ppo.runner import OnPolicyRunner


@dataclass(frozen=True)
class DeltaPPOConfig:
    """How π^Δ is trained with PPO."""

    env: DeltaEnvConfig = field(default_factory=DeltaEnvConfig)
    """The replay environment (joint subset, horizon, reward)."""
    ppo: PPOConfig = field(
        default_factory=lambda: PPOConfig(
            actor_hidden=(128, 128),
            critic_hidden=(128, 128),
            init_noise_std=0.15,
            num_steps_per_env=50,
            num_learning_epochs=5,
            num_mini_batches=4,
            entropy_coef=0.0,
            learning_rate=1e-3,
            gamma=0.95,
        )
    )
    """PPO settings. Actor hidden sizes are the saved DeltaMLP's. γ = 0.95: a Δa's effect on the match
    shows within tens of steps; no entropy bonus (the action-norm penalty already prices noise)."""
    num_envs: int = 32
    """Parallel nominal simulators."""
    iterations: int = 100
    """PPO iterations (each num_envs × num_steps_per_env transitions)."""
    initial_output_scale: float = 0.01
    """The actor's last layer is scaled by this at start, so training starts from Δa ≈ 0 (no correction)."""
    seed: int = 0
    """Torch seed (network init and action sampling); the env's start sampler uses ``env.seed``."""


def delta_ppo_config(joints: str, iterations: int, num_envs: int, horizon_steps: int) -> DeltaPPOConfig:
    """The default PPO settings with a joint subset and a budget: ``iterations`` × ``num_envs`` × the rollout
    length (``ppo.num_steps_per_env``) nominal-simulator steps, episodes of ``horizon_steps`` policy steps."""
    base = DeltaPPOConfig()
    env = replace(base.env, joints=joints, horizon_steps=horizon_steps)
    return replace(base, iterations=iterations, num_envs=num_envs, env=env)


def actor_to_learned(runner: OnPolicyRunner, env: DeltaReplayEnv, joints: str) -> LearnedDelta:
    """The trained actor's mean as a LearnedDelta (δ = action_scale · Δa on the env's joints)."""
    actor = runner.policy.actor
    hidden = tuple(m.out_features for m in actor.net if isinstance(m, torch.nn.Linear))[:-1]
    model = DeltaMLP(env.num_obs, env.num_actions, hidden)
    state = {f"net.{k}": v.detach().clone() for k, v in actor.net.state_dict().items()}
    last = len(actor.net) - 1
    state[f"net.{last}.weight"] *= env.action_scale
    state[f"net.{last}.bias"] *= env.action_scale
    model.load_state_dict(state)
    norm = actor.norm
    if isinstance(norm, torch.nn.Identity):
        mean, std = np.zeros(env.num_obs), np.ones(env.num_obs)
    else:
        mean = norm.mean.double().numpy().copy()
        std = torch.sqrt(norm.var + norm.eps).double().numpy().copy()
    return LearnedDelta(
        model.eval(),
        env.ids.copy(),
        mean,
        std,
        LearnedDeltaConfig(joints=joints, hidden=hidden, model="mlp", previous_target=False),
    )


def fit_ppo_delta(
    trajs: list[Trajectory], cfg: DeltaPPOConfig | None = None, run_dir: str | Path | None = None, on_iteration=None
) -> tuple[LearnedDelta, list[dict]]:
    """Train π^Δ with PPO on a collection; the model and the per-iteration rows of the runner."""
    cfg = DeltaPPOConfig() if cfg is None else cfg
    if run_dir is not None:
        check_output_folder(run_dir)
    torch.manual_seed(cfg.seed)
    env = DeltaReplayEnv(trajs, cfg.num_envs, cfg.env)
    if run_dir is not None:
        Path(run_dir).mkdir(parents=True, exist_ok=True)
    runner = OnPolicyRunner(env, cfg.ppo, run_dir, meta={"kind": "delta_ppo", "joints": cfg.env.joints})
    output_layer = runner.policy.actor.net[-1]
    assert isinstance(output_layer, torch.nn.Linear)  # mlp() ends in a Linear
    with torch.no_grad():
        output_layer.weight.mul_(cfg.initial_output_scale)
        output_layer.bias.zero_()
    rows = runner.learn(cfg.iterations, on_iteration=on_iteration, checkpoint_every=max(cfg.iterations, 1))
    return actor_to_learned(runner, env, cfg.env.joints), rows


def mean_replay_reward(
    trajs: list[Trajectory], delta: LearnedDelta | None, cfg: DeltaEnvConfig | None = None, stride: int = 10
) -> float:
    """Mean per-step reward of a deterministic Δa (None: Δa = 0) over one episode from every ``stride``-th frame.

    The evaluation twin of PPO's noisy ``mean_step_reward``: fixed starts, the actor's mean, each episode
    counted until its first end.
    """
    cfg = DeltaEnvConfig() if cfg is None else cfg
    starts = [(k, t) for k, tr in enumerate(trajs) for t in range(0, tr.num_frames - 1, stride)]
    env = DeltaReplayEnv(trajs, len(starts), cfg)
    for i, (k, t) in enumerate(starts):
        env.reset_env(i, k, t)
    live = np.ones(len(starts), dtype=bool)
    total, count = 0.0, 0
    while live.any():
        act = np.zeros((env.num_envs, env.num_actions))
        if delta is not None:
            for i, r in enumerate(env.robots):
                target = env.trajs[env.traj_index[i]].pd_target[env.frame[i]]
                rot = quat_to_matrix(r.root_quat_w)
                act[i] = (
                    delta.delta_target(target, r.dof_pos, r.dof_vel, r.root_quat_w, rot @ r.root_ang_vel_b)[env.ids]
                    / env.action_scale
                )
        _, rew, done, _ = env.step(torch.as_tensor(act))
        total += float(rew.numpy()[live].sum())
        count += int(live.sum())
        live &= ~done.numpy()
    return total / count
