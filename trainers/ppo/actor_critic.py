"""Gaussian actor and value critic ([512, 256, 128] ELU MLPs), with optional observation normalization."""

from __future__ import annotations

import torch
from torch import nn

from trainers.reproducible import reproducible_threads


def mlp(num_in: int, hidden: tuple[int, ...], num_out: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for width in hidden:
        layers += [nn.Linear(num_in, width), nn.ELU()]
        num_in = width
    layers.append(nn.Linear(num_in, num_out))
    return nn.Sequential(*layers)


class RunningNorm(nn.Module):
    """Observation normalization by running mean and variance (updated only while training)."""

    # Registered buffers (saved in the state dict); declared so type checkers see tensors, not modules.
    mean: torch.Tensor
    var: torch.Tensor
    count: torch.Tensor

    def __init__(self, size: int, eps: float = 1e-2):
        super().__init__()
        self.register_buffer("mean", torch.zeros(size))
        self.register_buffer("var", torch.ones(size))
        self.register_buffer("count", torch.tensor(0.0))
        self.eps = eps

    @torch.no_grad()
    def update(self, x: torch.Tensor) -> None:
        n = x.shape[0]
        batch_mean, batch_var = x.mean(0), x.var(0, unbiased=False)
        total = self.count + n
        delta = batch_mean - self.mean
        self.mean += delta * n / total
        self.var = (self.var * self.count + batch_var * n + delta**2 * self.count * n / total) / total
        self.count = total

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.mean) / torch.sqrt(self.var + self.eps)


class Actor(nn.Module):
    """What gets deployed: normalization + MLP; ``forward(obs) -> action mean``."""

    def __init__(self, num_obs: int, num_actions: int, hidden: tuple[int, ...], normalize: bool):
        super().__init__()
        self.num_obs = num_obs
        self.norm: RunningNorm | nn.Identity = RunningNorm(num_obs) if normalize else nn.Identity()
        self.net = mlp(num_obs, hidden, num_actions)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.net(self.norm(obs))


class ActorCritic(nn.Module):
    """π(a|o) = N(actor(o), diag(σ²)) with a state-independent learnable σ; V(o_critic)."""

    def __init__(
        self,
        num_obs: int,
        num_critic_obs: int,
        num_actions: int,
        actor_hidden=(512, 256, 128),
        critic_hidden=(512, 256, 128),
        init_noise_std: float = 0.8,
        normalize_obs: bool = True,
    ):
        super().__init__()
        self.actor = Actor(num_obs, num_actions, tuple(actor_hidden), normalize_obs)
        self.critic_norm: RunningNorm | nn.Identity = RunningNorm(num_critic_obs) if normalize_obs else nn.Identity()
        self.critic = mlp(num_critic_obs, tuple(critic_hidden), 1)
        self.log_std = nn.Parameter(torch.full((num_actions,), float(torch.log(torch.tensor(init_noise_std)))))

    def update_normalization(self, obs: torch.Tensor, critic_obs: torch.Tensor) -> None:
        # Both are RunningNorm or both Identity (one ``normalize_obs`` flag builds them).
        if isinstance(self.actor.norm, RunningNorm):
            self.actor.norm.update(obs)
        if isinstance(self.critic_norm, RunningNorm):
            self.critic_norm.update(critic_obs)

    def distribution(self, obs: torch.Tensor) -> torch.distributions.Normal:
        mean = self.actor(obs)
        return torch.distributions.Normal(mean, torch.exp(self.log_std).expand_as(mean))

    def act_inference(self, obs: torch.Tensor) -> torch.Tensor:
        with reproducible_threads():  # the same actions whatever the caller's torch thread count
            return self.actor(obs)

    def value(self, critic_obs: torch.Tensor) -> torch.Tensor:
        return self.critic(self.critic_norm(critic_obs)).squeeze(-1)
