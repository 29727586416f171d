"""On-policy runner: rollouts, updates, learning-curve log, checkpoints and resume."""

from __future__ import annotations

import csv
import io
import json
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from retarget.atomic_io import atomic_write
from trainers.checkpoints import trim_run_logs
from trainers.ppo.actor_critic import ActorCritic
from trainers.ppo.algorithm import PPO
from trainers.ppo.config import PPOConfig
from trainers.ppo.storage import RolloutStorage
from trainers.reproducible import save_torch
from trainers.vecenv import CurriculumState, VecEnv

CURVE_FIELDS = (
    "iteration",
    "env_steps",
    "wall_s",
    "env_steps_per_s",
    "mean_step_reward",
    "mean_episode_return",
    "mean_episode_length",
    "surrogate_loss",
    "value_loss",
    "kl",
    "learning_rate",
    "action_std",
    "termination_distance_m",
    "penalty_scale",
    "anchor_kl",
    "anchor_fraction",
)
"""Columns of ``learning_curve.csv``. ``anchor_kl`` and ``anchor_fraction`` are the trust region's
(:mod:`trainers.ppo.trust_region`: the mean KL from the anchor after the update, the share of the step kept); NaN in
a run without one."""


class OnPolicyRunner:
    def __init__(self, env: VecEnv, cfg: PPOConfig, run_dir: str | Path | None = None, meta: dict | None = None):
        self.env, self.cfg = env, cfg
        torch.set_num_threads(cfg.torch_threads)
        self.run_dir = None if run_dir is None else Path(run_dir)
        self.meta = meta or {}
        self.policy = ActorCritic(
            env.num_obs,
            env.num_privileged_obs,
            env.num_actions,
            cfg.actor_hidden,
            cfg.critic_hidden,
            cfg.init_noise_std,
            cfg.normalize_obs,
        )
        storage = RolloutStorage(
            cfg.num_steps_per_env, env.num_envs, env.num_obs, env.num_privileged_obs, env.num_actions
        )
        self.alg = PPO(self.policy, cfg, storage)
        self.iteration = 0
        self.env_steps = 0
        self.wall_s = 0.0
        self.returns: deque[float] = deque(maxlen=200)
        self.lengths: deque[float] = deque(maxlen=200)

    def learn(
        self,
        num_iterations: int,
        on_iteration: Callable[[dict], None] | None = None,
        checkpoint_every: int = 50,
        max_wall_s: float | None = None,
    ) -> list[dict]:
        """Up to ``num_iterations`` iterations; stops after the first one that ends past ``max_wall_s`` seconds."""
        env, cfg = self.env, self.cfg
        call_start = time.perf_counter()
        obs, extras = env.get_observations()
        critic_obs = extras["observations"]["critic"]
        ep_return = torch.zeros(env.num_envs)
        ep_length = torch.zeros(env.num_envs)
        rows = []
        for _ in range(num_iterations):
            start = time.perf_counter()
            reward_sum = 0.0
            episode_terms: dict[str, list[float]] = {}
            self.policy.train()
            for _ in range(cfg.num_steps_per_env):
                actions = self.alg.act(obs, critic_obs)
                obs, rewards, dones, extras = env.step(actions)
                critic_obs = extras["observations"]["critic"]
                self.alg.process_step(rewards, dones, extras["time_outs"])
                reward_sum += float(rewards.mean())
                ep_return += rewards
                ep_length += 1
                for key, value in extras.get("episode", {}).items():
                    episode_terms.setdefault(key, []).append(value)
                ended = dones.nonzero().flatten()
                self.returns.extend(ep_return[ended].tolist())
                self.lengths.extend(ep_length[ended].tolist())
                ep_return[ended] = 0.0
                ep_length[ended] = 0.0
            self.alg.finish_rollout(critic_obs)
            stats = self.alg.update()
            if hasattr(env, "update_curricula"):
                env.update_curricula()
            elapsed = time.perf_counter() - start
            self.iteration += 1
            self.env_steps += cfg.num_steps_per_env * env.num_envs
            self.wall_s += elapsed
            row = {
                "iteration": self.iteration,
                "env_steps": self.env_steps,
                "wall_s": round(self.wall_s, 2),
                "env_steps_per_s": round(cfg.num_steps_per_env * env.num_envs / elapsed, 1),
                "mean_step_reward": reward_sum / cfg.num_steps_per_env,
                "mean_episode_return": float(np.mean(self.returns)) if self.returns else float("nan"),
                "mean_episode_length": float(np.mean(self.lengths)) if self.lengths else float("nan"),
                "surrogate_loss": stats.surrogate_loss,
                "value_loss": stats.value_loss,
                "kl": stats.kl,
                "learning_rate": stats.learning_rate,
                "action_std": stats.action_std,
                "termination_distance_m": getattr(env, "termination_distance_m", float("nan")),
                "penalty_scale": getattr(env, "penalty_scale", float("nan")),
                "anchor_kl": stats.anchor_kl,
                "anchor_fraction": stats.anchor_fraction,
            }
            row["episode_terms"] = {k: float(np.mean(v)) for k, v in sorted(episode_terms.items())}
            rows.append(row)
            if self.run_dir is not None:
                append_learning_curve(self.run_dir / "learning_curve.csv", row)
                _append_terms(self.run_dir, row)
                if self.iteration % checkpoint_every == 0:
                    self.save(self.run_dir / f"model_{self.iteration}.pt")
                    # model_last.pt follows every checkpoint, so a run killed mid-way resumes from its newest.
                    self.save(self.run_dir / "model_last.pt")
            if on_iteration is not None:
                on_iteration(row)
            if max_wall_s is not None and time.perf_counter() - call_start >= max_wall_s:
                break
        if self.run_dir is not None:
            self.save(self.run_dir / "model_last.pt")
        return rows

    def save(self, path: str | Path) -> None:
        payload = {
            "model": self.policy.state_dict(),
            "optimizer": self.alg.optimizer.state_dict(),
            "iteration": self.iteration,
            "env_steps": self.env_steps,
            "wall_s": self.wall_s,
            "learning_rate": self.alg.learning_rate,
            "penalty_scale": float(getattr(self.env, "penalty_scale", 1.0)),
            "termination_distance_m": float(getattr(self.env, "termination_distance_m", 0.0)),
            "num_obs": self.env.num_obs,
            "num_privileged_obs": self.env.num_privileged_obs,
            "num_actions": self.env.num_actions,
            "meta": self.meta,
        }
        save_torch(path, payload)

    def resume(self, path: Path) -> dict:
        """:meth:`load` a checkpoint of this run and drop the log rows after it (they are recomputed)."""
        payload = self.load(path)
        if self.run_dir is not None:
            trim_run_logs(self.run_dir, self.iteration)
        return payload

    def load(self, path: str | Path) -> dict:
        """Resume: weights, optimizer, counters and curricula (weights-only unpickling)."""
        payload = torch.load(path, weights_only=True)
        self.policy.load_state_dict(payload["model"])
        self.alg.optimizer.load_state_dict(payload["optimizer"])
        self.iteration, self.env_steps, self.wall_s = payload["iteration"], payload["env_steps"], payload["wall_s"]
        self.alg.learning_rate = payload["learning_rate"]
        if isinstance(self.env, CurriculumState):
            self.env.penalty_scale = payload["penalty_scale"]
            self.env.termination_distance_m = payload["termination_distance_m"]
        return payload


def _append_terms(run_dir: Path, row: dict) -> None:
    """Per-term episode sums (mean over the episodes that ended), one JSON line per iteration."""
    with (run_dir / "episode_terms.jsonl").open("a") as f:
        f.write(json.dumps({"iteration": row["iteration"], **row["episode_terms"]}) + "\n")


def append_learning_curve(path: Path, row: dict) -> None:
    """Append one iteration's row (the :data:`CURVE_FIELDS` columns) to a learning-curve CSV, header first.

    A curve that lacks some of these columns (written by a version before them, now resumed) is first rewritten with
    them, NaN in its earlier rows; a column only the file has is kept, NaN from then on. Every row has every column."""
    new = not path.exists()
    fields = list(CURVE_FIELDS) if new else _curve_fields(path)
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, restval="nan")
        if new:
            writer.writeheader()
        writer.writerow({k: row[k] for k in CURVE_FIELDS})


def _curve_fields(path: Path) -> list[str]:
    """The columns of an existing curve, after adding the :data:`CURVE_FIELDS` it lacks."""
    with path.open(newline="") as f:
        header = next(csv.reader(f), [])
    if not set(CURVE_FIELDS) - set(header):
        return header
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    fields = [*CURVE_FIELDS, *(c for c in header if c not in CURVE_FIELDS)]
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=fields, restval="nan")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write(path, lambda tmp: tmp.write_text(text.getvalue(), newline=""))
    return fields
