"""rsl-rl-lib 5.x on the G1 tracking environment: the VecEnv adapter, our PPO settings as its config, its actor.

:class:`RslRlTrackingEnv` wraps a :class:`~trainers.env.TrackingEnv` (the rsl_rl 2.x-shaped interface of
:mod:`trainers.vecenv`) into the 5.x ``VecEnv`` contract (``rsl_rl/env/vec_env.py``): observations as a
``TensorDict`` of groups ``"policy"`` (actor, (N, O)) and ``"critic"`` (privileged, (N, C)); ``extras`` with
``"time_outs"`` and ``"log"`` (keys starting with "/"). rsl_rl is duck-typed against that contract (the runner
never checks the base class), so this module imports without rsl_rl; the extra is required only where it is used.
Training itself (runner, checkpoints, learning curve) is :mod:`trainers.rsl_rl_train`.
"""

from __future__ import annotations

import pickle
from importlib import metadata
from pathlib import Path
from typing import Generic, TypeVar

import torch
from torch import nn

from retarget.errors import AsapRetargetError
from trainers.policy_errors import PolicyFileError
from trainers.ppo.config import PPOConfig
from trainers.reproducible import reproducible_threads
from trainers.vecenv import Resettable, VecEnv

RSL_RL_VERSION = "5.5.0"
"""The rsl-rl-lib release whose config keys :func:`rsl_rl_train_cfg` writes (pinned by the ``rsl`` extra)."""
NORMALIZER_EPS = 1e-2
"""rsl_rl's ``EmpiricalNormalization`` default ε: obs ↦ (obs − μ) / (σ + ε)."""


class RslRlUnavailableError(AsapRetargetError):
    """rsl-rl-lib (the ``rsl`` extra) is missing, or is a release whose config keys differ."""


def require_rsl_rl() -> type:
    """Import rsl_rl 5.x; return tensordict's ``TensorDict`` class. Raises :class:`RslRlUnavailableError`."""
    try:
        version = metadata.version("rsl-rl-lib")
        import rsl_rl  # noqa: F401
        from tensordict import TensorDict
    except (ImportError, metadata.PackageNotFoundError) as exc:
        raise RslRlUnavailableError(
            f"--ppo rsl-rl needs rsl-rl-lib=={RSL_RL_VERSION}: pip install -e '.[rsl]' ({exc})"
        ) from exc
    if version.split(".")[0] != RSL_RL_VERSION.split(".")[0]:
        raise RslRlUnavailableError(
            f"rsl-rl-lib {version} is installed; this adapter writes {RSL_RL_VERSION}'s config: pip install -e '.[rsl]'"
        )
    return TensorDict


EnvT = TypeVar("EnvT", bound=VecEnv)


class RslRlTrackingEnv(Generic[EnvT]):
    """A :class:`TrackingEnv` (or any :class:`trainers.vecenv.VecEnv`) behind rsl_rl 5.x's ``VecEnv`` interface.

    Curricula: rsl_rl's runner knows nothing of ``update_curricula()``, which our runner calls once per
    iteration. Its rollout is exactly ``num_steps_per_env`` ``step()`` calls per iteration, so counting steps
    and calling it after every ``curriculum_every_steps``-th step is the same schedule: the curriculum sees the
    episodes of one rollout and its change applies from the next rollout's first step (the update in between
    does not read the env). ``None`` turns this off (evaluation).
    """

    def __init__(self, env: EnvT, curriculum_every_steps: int | None = 24):
        self._tensordict = require_rsl_rl()
        self.env = env
        self.num_envs, self.num_actions = env.num_envs, env.num_actions
        self.num_obs, self.num_privileged_obs = env.num_obs, env.num_privileged_obs
        self.max_episode_length = env.max_episode_length
        self.device = env.device
        self.cfg = getattr(env, "cfg", {})  # rsl_rl hands it to W&B/Neptune writers only
        self.curriculum_every_steps = curriculum_every_steps
        self.steps_since_curriculum = 0
        self.curriculum_updates = 0
        """How many times ``update_curricula()`` was called (once per rollout while training)."""
        self._reward_sum, self._reward_steps = 0.0, 0

    @property
    def episode_length_buf(self) -> torch.Tensor:
        return self.env.episode_length_buf

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        # rsl_rl's ``init_at_random_ep_len`` writes it; our episodes end by phase, so it only feeds logging.
        self.env.episode_length_buf = value

    def _groups(self, obs: torch.Tensor, extras: dict):
        groups = {"policy": obs, "critic": extras["observations"]["critic"]}
        return self._tensordict(groups, batch_size=[self.num_envs], device=self.device)

    def get_observations(self):
        """``TensorDict`` {"policy": (N, O), "critic": (N, C)} of the current state."""
        return self._groups(*self.env.get_observations())

    def reset(self):
        if not isinstance(self.env, Resettable):
            raise TypeError(f"{type(self.env).__name__} has no reset()")
        return self._groups(*self.env.reset())

    def step(self, actions: torch.Tensor):
        """``(obs TensorDict, rewards (N,), dones (N,) bool, extras)``; done environments are already reset."""
        obs, rewards, dones, extras = self.env.step(actions)
        # rsl_rl's logger averages every "log" key over the steps that carry it and writes keys with a "/"
        # as they are: per-term episode sums (only on steps where episodes ended) and the curriculum state.
        log = {f"/episode/{k}": v for k, v in extras.get("episode", {}).items() if k.startswith("rew_")}
        for name in ("penalty_scale", "termination_distance_m"):
            if hasattr(self.env, name):
                log[f"/curriculum/{name}"] = float(getattr(self.env, name))
        self._reward_sum += float(rewards.mean())
        self._reward_steps += 1
        self.steps_since_curriculum += 1
        every = self.curriculum_every_steps
        if every is not None and self.steps_since_curriculum >= every and hasattr(self.env, "update_curricula"):
            self.env.update_curricula()
            self.steps_since_curriculum = 0
            self.curriculum_updates += 1
        return self._groups(obs, extras), rewards, dones, {"time_outs": extras["time_outs"], "log": log}

    def take_mean_reward(self) -> float:
        """Mean step reward over the steps since the last call (one rollout when called once per iteration)."""
        mean = self._reward_sum / self._reward_steps if self._reward_steps else float("nan")
        self._reward_sum, self._reward_steps = 0.0, 0
        return mean


def rsl_rl_train_cfg(ppo_cfg: PPOConfig, save_interval: int = 50, logger: str = "tensorboard") -> dict:
    """Our :class:`PPOConfig` as rsl-rl-lib 5.5's ``OnPolicyRunner`` ``train_cfg`` dict.

    Same name, same meaning: num_steps_per_env (top level); num_learning_epochs, num_mini_batches, clip_param,
    gamma, lam, value_loss_coef, entropy_coef, learning_rate, desired_kl, max_grad_norm and
    use_clipped_value_loss (``algorithm``). Renamed: actor_hidden / critic_hidden → ``actor`` / ``critic``
    ``hidden_dims`` (ELU, rsl_rl ``MLPModel``); init_noise_std → ``actor.distribution_cfg.init_std`` of a
    ``GaussianDistribution`` with ``std_type="log"`` (state-independent, learnable log σ as ours);
    normalize_obs → ``obs_normalization`` of both models. Fixed to ours: ``schedule="adaptive"`` (the same
    ÷1.5 / ×1.5 rule and [1e-5, 1e-2] bounds), ``optimizer="adam"``, advantages normalized over the whole
    rollout (``normalize_advantage_per_mini_batch=False``), time-outs bootstrapped with γV.

    Not mapped / differs: torch_threads (rsl_rl has none; :func:`trainers.rsl_rl_train.train_track_rsl_rl`
    sets ``torch.set_num_threads`` itself); max_grad_norm clips the actor's and the critic's gradients
    separately in rsl_rl (ours: one norm over all parameters); rsl_rl normalizes by (x − μ)/(σ + 0.01),
    ours by (x − μ)/√(σ² + 0.01) (same ε); the runner config has no seed (``train_track_rsl_rl`` seeds
    torch and NumPy as ``train_track`` does). rsl_rl-only keys: ``save_interval``, ``logger``, ``check_for_nan``,
    ``obs_groups`` ({"actor": ["policy"], "critic": ["critic"]}).
    """
    c = ppo_cfg
    return {
        "num_steps_per_env": c.num_steps_per_env,
        "save_interval": save_interval,
        "logger": logger,
        "check_for_nan": True,
        "obs_groups": {"actor": ["policy"], "critic": ["critic"]},
        "actor": {
            "class_name": "rsl_rl.models:MLPModel",
            "hidden_dims": list(c.actor_hidden),
            "activation": "elu",
            "obs_normalization": c.normalize_obs,
            "distribution_cfg": {
                "class_name": "rsl_rl.modules:GaussianDistribution",
                "init_std": c.init_noise_std,
                "std_type": "log",
            },
        },
        "critic": {
            "class_name": "rsl_rl.models:MLPModel",
            "hidden_dims": list(c.critic_hidden),
            "activation": "elu",
            "obs_normalization": c.normalize_obs,
        },
        "algorithm": {
            "class_name": "rsl_rl.algorithms:PPO",
            "num_learning_epochs": c.num_learning_epochs,
            "num_mini_batches": c.num_mini_batches,
            "clip_param": c.clip_param,
            "gamma": c.gamma,
            "lam": c.lam,
            "value_loss_coef": c.value_loss_coef,
            "entropy_coef": c.entropy_coef,
            "learning_rate": c.learning_rate,
            "max_grad_norm": c.max_grad_norm,
            "optimizer": "adam",
            "use_clipped_value_loss": c.use_clipped_value_loss,
            "schedule": "adaptive",
            "desired_kl": c.desired_kl,
            "normalize_advantage_per_mini_batch": False,
            "rnd_cfg": None,
            "symmetry_cfg": None,
        },
    }


class RslRlActor(nn.Module):
    """The deterministic actor of an rsl_rl 5.x ``MLPModel`` checkpoint in plain torch: ``forward(obs) -> action``.

    (obs − μ)/(σ + ε) when the checkpoint has a normalizer, then the MLP (Linear layers, ``activation`` between);
    the Gaussian's mean is the MLP output. Needs no rsl_rl, so evaluation and export can use it.
    """

    # Registered buffers; declared so type checkers see tensors, not modules.
    obs_mean: torch.Tensor
    obs_std: torch.Tensor

    def __init__(self, actor_state: dict[str, torch.Tensor], activation: type[nn.Module] = nn.ELU):
        super().__init__()
        linear = sorted({int(k.split(".")[1]) for k in actor_state if k.startswith("mlp.") and k.endswith(".weight")})
        layers: list[nn.Module] = []
        for i, index in enumerate(linear):
            out_f, in_f = actor_state[f"mlp.{index}.weight"].shape
            layer = nn.Linear(in_f, out_f)
            layer.load_state_dict(
                {"weight": actor_state[f"mlp.{index}.weight"], "bias": actor_state[f"mlp.{index}.bias"]}
            )
            layers += [layer] if i == len(linear) - 1 else [layer, activation()]
        self.net = nn.Sequential(*layers)
        # (out, in) weight shapes of the first and last Linear layers.
        self.num_obs = int(actor_state[f"mlp.{linear[0]}.weight"].shape[1])
        self.num_actions = int(actor_state[f"mlp.{linear[-1]}.weight"].shape[0])
        self.normalize = "obs_normalizer._mean" in actor_state
        n = self.num_obs
        mean = actor_state["obs_normalizer._mean"] if self.normalize else torch.zeros(n)
        std = actor_state["obs_normalizer._std"] if self.normalize else torch.ones(n)
        self.register_buffer("obs_mean", mean.reshape(n).clone())
        self.register_buffer("obs_std", std.reshape(n).clone())

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        if self.normalize:
            obs = (obs - self.obs_mean) / (self.obs_std + NORMALIZER_EPS)
        return self.net(obs)


class RslRlPolicy(nn.Module):
    """An rsl_rl checkpoint's actor behind what users of ``policy_io.LoadedPolicy.policy`` call:
    ``act_inference(obs)`` (evaluation, play, fine-tuning) and ``.actor`` with ``.net[0]`` (export)."""

    def __init__(self, actor: RslRlActor):
        super().__init__()
        self.actor = actor

    def act_inference(self, obs: torch.Tensor) -> torch.Tensor:
        with reproducible_threads():  # the same actions whatever the caller's torch thread count
            return self.actor(obs)


def rsl_rl_policy(payload: dict, source: str | Path = "checkpoint") -> RslRlPolicy:
    """The policy of a loaded rsl_rl checkpoint dict (``torch.load(..., weights_only=True)``), in eval mode."""
    state = payload.get("actor_state_dict") if isinstance(payload, dict) else None
    if not isinstance(state, dict) or "mlp.0.weight" not in state:
        raise PolicyFileError(f"{source}: not an rsl_rl checkpoint with an MLPModel actor_state_dict")
    return RslRlPolicy(RslRlActor(state)).eval()


def load_rsl_rl_actor(checkpoint: str | Path) -> RslRlActor:
    """The deterministic actor of an rsl_rl ``model_<it>.pt`` (weights-only unpickling), in eval mode."""
    try:
        payload = torch.load(Path(checkpoint), weights_only=True, map_location="cpu")
    except (OSError, RuntimeError, ValueError, EOFError, pickle.UnpicklingError) as exc:
        raise PolicyFileError(f"{checkpoint}: cannot read the checkpoint: {exc}") from exc
    return rsl_rl_policy(payload, checkpoint).actor
