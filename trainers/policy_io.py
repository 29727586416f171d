"""Load a trained policy (checkpoint + the resolved config written next to it)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import torch

from retarget.errors import AsapRetargetError
from trainers.config import TrackingEnvConfig, env_config_from_jsonable
from trainers.ppo.actor_critic import ActorCritic
from trainers.ppo.config import PPOConfig


class PolicyFileError(AsapRetargetError):
    """A run folder or checkpoint that cannot be used."""


@dataclass(frozen=True)
class LoadedPolicy:
    """A trained actor-critic and the environment config it was trained with."""

    policy: ActorCritic
    env_cfg: TrackingEnvConfig
    checkpoint: Path
    iteration: int


def find_checkpoint(run: str | Path) -> Path:
    """``run`` itself if it is a file, else ``RUN/model_last.pt``, else the newest ``model_*.pt``."""
    run = Path(run)
    if run.is_file():
        return run
    if not run.is_dir():
        raise PolicyFileError(f"{run}: no such run folder or checkpoint")
    if (run / "model_last.pt").exists():
        return run / "model_last.pt"
    found = sorted(run.glob("model_*.pt"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise PolicyFileError(f"{run}: no checkpoint (model_*.pt) in this folder")
    return found[-1]


def load_policy(run: str | Path) -> LoadedPolicy:
    ckpt = find_checkpoint(run)
    config_path = ckpt.parent / "config.json"
    if not config_path.exists():
        raise PolicyFileError(f"{config_path}: missing; a run folder holds config.json next to its checkpoints")
    try:
        config = json.loads(config_path.read_text())
        payload = torch.load(ckpt, weights_only=True)
    except (OSError, ValueError, RuntimeError) as exc:
        raise PolicyFileError(f"{ckpt}: cannot read the checkpoint or its config: {exc}") from exc
    ppo = config["ppo"]
    cfg = PPOConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in ppo.items()})
    policy = ActorCritic(payload["num_obs"], payload["num_privileged_obs"], payload["num_actions"],
                         cfg.actor_hidden, cfg.critic_hidden, cfg.init_noise_std, cfg.normalize_obs)  # fmt: skip
    policy.load_state_dict(payload["model"])
    policy.eval()
    return LoadedPolicy(policy, env_config_from_jsonable(config["env"]), ckpt, int(payload["iteration"]))
