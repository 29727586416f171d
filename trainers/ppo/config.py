"""PPO hyper-parameters (defaults: ASAP's / rsl_rl's G1 tracking settings)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trainers.config import lists_as_tuples


@dataclass(frozen=True)
class PPOConfig:
    """Algorithm, network and rollout settings."""

    actor_hidden: tuple[int, ...] = (512, 256, 128)
    """Actor MLP hidden sizes (ELU)."""
    critic_hidden: tuple[int, ...] = (512, 256, 128)
    """Critic MLP hidden sizes (ELU)."""
    init_noise_std: float = 0.4
    """Initial standard deviation of the Gaussian policy (action units). ASAP: 0.8 with default-pose
    offsets; the residual (reference-pose) action needs less, and ±0.2 rad of noise per joint makes the
    G1 fall and the action-rate penalty swamp the tracking terms early on."""
    normalize_obs: bool = True
    """Running mean/variance normalization of observations (part of the exported actor)."""
    num_steps_per_env: int = 24
    """Rollout length per environment and iteration."""
    num_learning_epochs: int = 5
    """Passes over each rollout."""
    num_mini_batches: int = 2
    """Mini-batches per pass (rsl_rl: 4 of 24k samples on a GPU; with a few thousand samples, fewer and
    larger mini-batches give less noisy steps and a faster update)."""
    clip_param: float = 0.2
    """PPO ratio clip ε."""
    gamma: float = 0.99
    """Discount per policy step."""
    lam: float = 0.95
    """GAE λ."""
    value_loss_coef: float = 1.0
    """Weight of the value loss."""
    entropy_coef: float = 0.005
    """Weight of the entropy bonus."""
    learning_rate: float = 1e-3
    """Initial learning rate (adapted by the KL schedule)."""
    desired_kl: float = 0.01
    """Target KL divergence of the adaptive schedule: lr ÷1.5 above 2×, ×1.5 below ½×."""
    max_grad_norm: float = 1.0
    """Gradient clipping norm."""
    use_clipped_value_loss: bool = True
    """Clip the value update as PPO2 does."""
    torch_threads: int = 1
    """Threads torch may use. 1: on a small shared CPU, more threads make the update several times slower."""


def ppo_config_from_jsonable(record: dict[str, Any]) -> PPOConfig:
    """The :class:`PPOConfig` a run's config.json records under ``"ppo"``."""
    return PPOConfig(**lists_as_tuples(record))
