"""The vectorized-environment interface the PPO runner needs (rsl_rl's ``VecEnv`` shape).

Shapes (N environments, O actor obs, C critic obs, A actions), all CPU torch tensors:

* ``num_envs: int``, ``num_obs: int``, ``num_privileged_obs: int``, ``num_actions: int``,
  ``max_episode_length: int`` (policy steps), ``episode_length_buf: (N,) long``, ``device: str``.
* ``get_observations() -> (obs (N, O) float32, extras)`` with ``extras["observations"]["critic"]: (N, C)``.
* ``step(actions (N, A)) -> (obs (N, O), rewards (N,), dones (N,) bool, extras)``; ``extras``
  holds ``"time_outs": (N,) bool`` (episode cut by the end of the motion, not a failure),
  ``"observations": {"critic": (N, C)}`` and ``"episode": {name: float}`` (means over the
  episodes that ended this step). Environments that are done are already reset: the returned
  observation is the first of their next episode.
* optional ``update_curricula() -> None``, called once per training iteration; optional curriculum state
  (:class:`CurriculumState`), saved in checkpoints and restored on resume.

This is rsl_rl 2.x's contract; rsl-rl-lib ≥ 3 wraps observations in a ``TensorDict`` with
groups ``{"policy": obs, "critic": critic_obs}`` — a ten-line adapter over this interface.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import torch


@runtime_checkable
class VecEnv(Protocol):
    num_envs: int
    num_obs: int
    num_privileged_obs: int
    num_actions: int
    max_episode_length: int
    episode_length_buf: torch.Tensor
    device: str

    def get_observations(self) -> tuple[torch.Tensor, dict]: ...

    def step(self, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, dict]: ...


@runtime_checkable
class CurriculumState(Protocol):
    """The curriculum state an environment may carry (``TrackingEnv`` does): what checkpoints save and resumes
    restore. ``isinstance`` checks only that both attributes exist."""

    penalty_scale: float
    """Current multiplier of the curriculum-scaled penalty terms."""
    termination_distance_m: float
    """Current mean point distance beyond which an episode ends [m]."""


@runtime_checkable
class Resettable(Protocol):
    """An environment that can reset all its environments at once (``TrackingEnv`` can; the runner never does)."""

    def reset(self) -> tuple[torch.Tensor, dict]: ...
