"""A trust region around an anchor policy: after every PPO update the actor is pulled back toward the anchor (the
pre-trained policy a fine-tuning starts from) until its action distribution is within a KL bound of the anchor's.

Why: fine-tuning against a learned Δa can drift to actions where the Δa was never fitted (the fitting rollouts are
the pre-trained policy's) and learn to survive the corrected simulator in ways the real robot does not share. The
bound keeps the fine-tuned policy where the fitting data are. PPO's own clip and adaptive learning rate bound each
update against the previous policy, not the accumulated drift over a whole fine-tuning, which this bound caps.

The pull is a line search on the segment between the anchor's actor and the updated one (weights, log-std and the
actor's observation normalizer, all interpolated by the same fraction t): at t = 0 the KL is zero, so bisection
always finds a t whose KL is within the bound; the critic is left as the update made it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from trainers.ppo.actor_critic import ActorCritic, RunningNorm


@dataclass(frozen=True)
class AnchorTrustRegion:
    """Bound on the fine-tuned policy's distance from its anchor (the policy it started from)."""

    max_kl: float
    """Largest mean KL(anchor ‖ policy) [nats per action vector, summed over joints] on each update's rollout
    observations."""
    bisection_steps: int = 12
    """Halvings of the interpolation fraction when an update exceeds the bound (2⁻¹² of the step: finer than the
    bound needs)."""

    def __post_init__(self) -> None:
        if not self.max_kl > 0.0:  # NaN fails too
            raise ValueError(f"anchor trust region: max_kl must be > 0 (got {self.max_kl})")
        if self.bisection_steps < 1:
            raise ValueError(f"anchor trust region: bisection_steps must be ≥ 1 (got {self.bisection_steps})")


def _actor_tensors(policy: ActorCritic) -> list[torch.Tensor]:
    """The tensors that make the action distribution: actor weights, normalizer mean and variance, log-std."""
    tensors: list[torch.Tensor] = [*policy.actor.net.parameters(), policy.log_std]
    norm = policy.actor.norm
    if isinstance(norm, RunningNorm):
        tensors += [norm.mean, norm.var]
    return tensors


@torch.no_grad()
def mean_kl(anchor: ActorCritic, policy: ActorCritic, obs: torch.Tensor) -> float:
    """Mean over ``obs`` of KL(anchor(·|o) ‖ policy(·|o)), diagonal Gaussians, summed over action dimensions."""
    p, q = anchor.distribution(obs), policy.distribution(obs)
    kl = torch.log(q.stddev / p.stddev) + (p.stddev**2 + (p.mean - q.mean) ** 2) / (2.0 * q.stddev**2) - 0.5
    return float(kl.sum(-1).mean())


@torch.no_grad()
def pull_toward_anchor(policy: ActorCritic, anchor: ActorCritic, obs: torch.Tensor, region: AnchorTrustRegion):
    """Move ``policy``'s actor toward ``anchor``'s until mean KL(anchor ‖ policy) on ``obs`` ≤ ``region.max_kl``.
    Returns (fraction t of the way from the anchor kept, KL after): t = 1 when the update was already inside."""
    kl = mean_kl(anchor, policy, obs)
    if kl <= region.max_kl:
        return 1.0, kl
    ours, theirs = _actor_tensors(policy), _actor_tensors(anchor)
    updated = [t.detach().clone() for t in ours]

    def place(t: float) -> float:
        for mine, start, end in zip(ours, theirs, updated):
            mine.copy_(start + t * (end - start))
        return mean_kl(anchor, policy, obs)

    inside, outside = 0.0, 1.0  # invariant: KL(inside) ≤ bound < KL(outside)
    for _ in range(region.bisection_steps):
        mid = 0.5 * (inside + outside)
        mid_kl = place(mid)
        if mid_kl <= region.max_kl:
            inside = mid
        else:
            outside = mid
    return inside, place(inside)


DEFAULT_ANCHOR_MAX_KL = 0.5
"""Default bound [nats] of ``bench_table4.py --trust-region-kl``."""
