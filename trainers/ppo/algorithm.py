"""PPO with a clipped surrogate, clipped value loss and a KL-adaptive learning rate."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from trainers.ppo.actor_critic import ActorCritic
from trainers.ppo.config import PPOConfig
from trainers.ppo.storage import RolloutStorage
from trainers.ppo.trust_region import AnchorTrustRegion, pull_toward_anchor


@dataclass
class UpdateStats:
    """Means over one update's mini-batches."""

    surrogate_loss: float
    value_loss: float
    entropy: float
    kl: float
    learning_rate: float
    action_std: float
    anchor_kl: float = float("nan")
    """Mean KL(anchor ‖ policy) on this update's rollout observations after the trust region (NaN: no anchor)."""
    anchor_fraction: float = float("nan")
    """Fraction of the update's step from the anchor that the trust region kept (1: inside the bound)."""


class PPO:
    def __init__(self, policy: ActorCritic, cfg: PPOConfig, storage: RolloutStorage):
        self.policy, self.cfg, self.storage = policy, cfg, storage
        self.learning_rate = cfg.learning_rate
        self.optimizer = torch.optim.Adam(policy.parameters(), lr=self.learning_rate)
        self._pending: dict[str, torch.Tensor] = {}
        self.anchor: ActorCritic | None = None
        self.trust_region: AnchorTrustRegion | None = None

    def set_anchor(self, anchor: ActorCritic, region: AnchorTrustRegion) -> None:
        """Bound every later update to ``region`` around ``anchor`` (frozen; e.g. the pre-trained policy)."""
        self.anchor = anchor.eval().requires_grad_(False)
        self.trust_region = region

    @torch.no_grad()
    def act(self, obs: torch.Tensor, critic_obs: torch.Tensor) -> torch.Tensor:
        dist = self.policy.distribution(obs)
        actions = dist.sample()
        self._pending = {
            "obs": obs,
            "critic_obs": critic_obs,
            "actions": actions,
            "mean": dist.mean,
            "std": dist.stddev,
            "log_prob": dist.log_prob(actions).sum(-1),
            "values": self.policy.value(critic_obs),
        }
        return actions

    @torch.no_grad()
    def process_step(self, rewards: torch.Tensor, dones: torch.Tensor, time_outs: torch.Tensor) -> None:
        # A time-out is not a failure: bootstrap with the value of the state the episode was cut at.
        rewards = rewards + self.cfg.gamma * self._pending["values"] * time_outs.float()
        self.storage.add(rewards=rewards, dones=dones, **self._pending)

    @torch.no_grad()
    def finish_rollout(self, last_critic_obs: torch.Tensor) -> None:
        self.storage.finish(self.policy.value(last_critic_obs), self.cfg.gamma, self.cfg.lam)

    def update(self) -> UpdateStats:
        cfg = self.cfg
        sums = {"surrogate": 0.0, "value": 0.0, "entropy": 0.0, "kl": 0.0}
        count = 0
        for mb in self.storage.mini_batches(cfg.num_mini_batches, cfg.num_learning_epochs):
            dist = self.policy.distribution(mb["obs"])
            log_prob = dist.log_prob(mb["actions"]).sum(-1)
            entropy = dist.entropy().sum(-1).mean()
            with torch.no_grad():
                # KL(old || new) of diagonal Gaussians, for the adaptive learning rate.
                kl = torch.sum(
                    torch.log(dist.stddev / mb["std"])
                    + (mb["std"] ** 2 + (mb["mean"] - dist.mean) ** 2) / (2.0 * dist.stddev**2)
                    - 0.5,
                    dim=-1,
                ).mean()
                if kl > 2.0 * cfg.desired_kl:
                    self.learning_rate = max(1e-5, self.learning_rate / 1.5)
                elif 0.0 < kl < 0.5 * cfg.desired_kl:
                    self.learning_rate = min(1e-2, self.learning_rate * 1.5)
                for group in self.optimizer.param_groups:
                    group["lr"] = self.learning_rate
            ratio = torch.exp(log_prob - mb["log_prob"])
            adv = mb["advantages"]
            surrogate = -torch.min(ratio * adv, torch.clamp(ratio, 1 - cfg.clip_param, 1 + cfg.clip_param) * adv).mean()
            value = self.policy.value(mb["critic_obs"])
            if cfg.use_clipped_value_loss:
                clipped = mb["values"] + (value - mb["values"]).clamp(-cfg.clip_param, cfg.clip_param)
                value_loss = torch.max((value - mb["returns"]) ** 2, (clipped - mb["returns"]) ** 2).mean()
            else:
                value_loss = ((value - mb["returns"]) ** 2).mean()
            loss = surrogate + cfg.value_loss_coef * value_loss - cfg.entropy_coef * entropy
            self.optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.policy.parameters(), cfg.max_grad_norm)
            self.optimizer.step()
            sums["surrogate"] += surrogate.item()
            sums["value"] += value_loss.item()
            sums["entropy"] += entropy.item()
            sums["kl"] += kl.item()
            count += 1
        # Observation statistics change only between updates, so that the log-probabilities stored
        # during a rollout and those recomputed in the update see the same normalization.
        self.policy.update_normalization(self.storage.obs.flatten(0, 1), self.storage.critic_obs.flatten(0, 1))
        anchor_fraction = anchor_kl = float("nan")
        if self.anchor is not None and self.trust_region is not None:
            # After the normalizer moved, so the bound covers the whole change of the deployed actor.
            anchor_fraction, anchor_kl = pull_toward_anchor(
                self.policy, self.anchor, self.storage.obs.flatten(0, 1), self.trust_region
            )
        return UpdateStats(
            surrogate_loss=sums["surrogate"] / count,
            value_loss=sums["value"] / count,
            entropy=sums["entropy"] / count,
            kl=sums["kl"] / count,
            learning_rate=self.learning_rate,
            action_std=float(torch.exp(self.policy.log_std.detach()).mean()),
            anchor_kl=anchor_kl,
            anchor_fraction=anchor_fraction,
        )
