"""Rollout storage and generalized advantage estimation."""

from __future__ import annotations

from collections.abc import Iterator

import torch


def compute_gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    dones: torch.Tensor,
    last_values: torch.Tensor,
    gamma: float,
    lam: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Returns and advantages of a (T, N) rollout.

    δ_t = r_t + γ(1 − d_t)V_{t+1} − V_t,  A_t = δ_t + γλ(1 − d_t)A_{t+1},  R_t = A_t + V_t,
    with V_T = ``last_values``. Time-outs are not terminal: the caller adds γV(s_T) to their reward.
    """
    steps = rewards.shape[0]
    advantages = torch.zeros_like(rewards)
    next_adv = torch.zeros_like(last_values)
    for t in reversed(range(steps)):
        next_values = last_values if t == steps - 1 else values[t + 1]
        not_done = 1.0 - dones[t].float()
        delta = rewards[t] + gamma * not_done * next_values - values[t]
        next_adv = delta + gamma * lam * not_done * next_adv
        advantages[t] = next_adv
    return advantages + values, advantages


class RolloutStorage:
    """(T, N, ...) buffers filled step by step, then served as shuffled mini-batches."""

    def __init__(self, num_steps: int, num_envs: int, num_obs: int, num_critic_obs: int, num_actions: int):
        shape = (num_steps, num_envs)
        self.obs = torch.zeros(*shape, num_obs)
        self.critic_obs = torch.zeros(*shape, num_critic_obs)
        self.actions = torch.zeros(*shape, num_actions)
        self.mean = torch.zeros(*shape, num_actions)
        self.std = torch.zeros(*shape, num_actions)
        self.log_prob = torch.zeros(shape)
        self.rewards = torch.zeros(shape)
        self.dones = torch.zeros(shape)
        self.values = torch.zeros(shape)
        self.returns = torch.zeros(shape)
        self.advantages = torch.zeros(shape)
        self.step = 0
        self.num_steps = num_steps

    def add(self, obs, critic_obs, actions, mean, std, log_prob, rewards, dones, values) -> None:
        t = self.step
        self.obs[t], self.critic_obs[t], self.actions[t] = obs, critic_obs, actions
        self.mean[t], self.std[t], self.log_prob[t] = mean, std, log_prob
        self.rewards[t], self.dones[t], self.values[t] = rewards, dones.float(), values
        self.step += 1

    def finish(self, last_values: torch.Tensor, gamma: float, lam: float) -> None:
        self.returns, adv = compute_gae(self.rewards, self.values, self.dones, last_values, gamma, lam)
        self.advantages = (adv - adv.mean()) / (adv.std() + 1e-8)
        self.step = 0

    def mini_batches(self, num_mini_batches: int, num_epochs: int) -> Iterator[dict[str, torch.Tensor]]:
        total = self.rewards.numel()
        size = total // num_mini_batches
        flat = {
            "obs": self.obs.flatten(0, 1),
            "critic_obs": self.critic_obs.flatten(0, 1),
            "actions": self.actions.flatten(0, 1),
            "mean": self.mean.flatten(0, 1),
            "std": self.std.flatten(0, 1),
            "log_prob": self.log_prob.flatten(),
            "values": self.values.flatten(),
            "returns": self.returns.flatten(),
            "advantages": self.advantages.flatten(),
        }
        for _ in range(num_epochs):
            perm = torch.randperm(total)
            for i in range(num_mini_batches):
                idx = perm[i * size : (i + 1) * size]
                yield {k: v[idx] for k, v in flat.items()}
