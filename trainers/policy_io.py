"""Load a trained policy (checkpoint + the resolved config written next to it)."""

from __future__ import annotations

import json
import pickle
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch

from trainers.checkpoints import newest_checkpoint
from trainers.config import TrackingEnvConfig, env_config_from_jsonable
from trainers.finetune.selection_config import DEPLOYED
from trainers.policy_errors import PolicyFileError
from trainers.ppo.actor_critic import ActorCritic
from trainers.ppo.config import PPOConfig, ppo_config_from_jsonable
from trainers.rsl_rl_adapter import RslRlPolicy, rsl_rl_policy

__all__ = ["LoadedPolicy", "PolicyFileError", "find_checkpoint", "load_policy", "read_run_config", "snapshot_run"]


@dataclass(frozen=True)
class LoadedPolicy:
    """A trained actor-critic and the environment config it was trained with."""

    policy: ActorCritic | RslRlPolicy
    """Our PPO's actor-critic, or an rsl_rl checkpoint's actor (``--ppo rsl-rl``); both give
    ``act_inference(obs)`` and ``.actor`` (with ``num_obs``)."""
    env_cfg: TrackingEnvConfig
    checkpoint: Path
    iteration: int
    penalty_scale: float = float("nan")
    """The penalty curriculum's scale when the checkpoint was written (NaN where the checkpoint does not
    record it): a policy saved before the curriculum ramps was trained, and is fine-tuned, with its
    penalty terms near zero."""
    termination_distance_m: float = float("nan")
    """The termination curriculum's distance at that checkpoint (NaN where not recorded)."""


def find_checkpoint(run: str | Path) -> Path:
    """``run`` itself if it is a file, else the run folder's deployed checkpoint (a fine-tuning's selection), else
    its newest checkpoint by iteration."""
    run = Path(run)
    if run.is_file():
        return run
    if not run.is_dir():
        raise PolicyFileError(f"{run}: no such run folder or checkpoint")
    if (run / DEPLOYED).is_file():
        return run / DEPLOYED
    try:
        found = newest_checkpoint(run)
    except Exception as exc:  # an unreadable model_last.pt: reported by name like any bad checkpoint
        raise PolicyFileError(f"{run / 'model_last.pt'}: cannot read the checkpoint: {exc}") from exc
    if found is None:
        raise PolicyFileError(f"{run}: no checkpoint (model_*.pt) in this folder")
    return found


def read_run_config(config_path: Path) -> tuple[dict, TrackingEnvConfig, PPOConfig]:
    """A run's config.json: the record itself, its environment config (rewards required) and its PPO config.
    Whatever is missing or malformed in it is reported naming that file, not the motion the run is used with."""
    try:
        config = json.loads(config_path.read_text())
    except FileNotFoundError as exc:
        raise PolicyFileError(
            f"{config_path}: missing; a run folder holds config.json next to its checkpoints"
        ) from exc
    except (OSError, ValueError) as exc:
        raise PolicyFileError(f"{config_path}: cannot read the run's config ({type(exc).__name__}: {exc})") from exc
    if not isinstance(config, dict):
        raise PolicyFileError(f"{config_path}: must hold a JSON object, found {type(config).__name__}")
    try:
        return (
            config,
            env_config_from_jsonable(config["env"], str(config_path)),
            ppo_config_from_jsonable(config["ppo"]),
        )
    except KeyError as exc:
        raise PolicyFileError(
            f"{config_path}: the run's config lacks the key {exc}; is this a run of this package?"
        ) from exc
    except (TypeError, ValueError, AttributeError) as exc:
        raise PolicyFileError(
            f"{config_path}: not the config of a run of this package ({type(exc).__name__}: {exc})"
        ) from exc


def snapshot_run(run: str | Path, dest: str | Path) -> Path:
    """Copy ``run``'s newest checkpoint (as ``model_last.pt``) and its config.json into ``dest``: a fixed policy
    to work from while the source run may still be training. Returns ``dest``."""
    ckpt = find_checkpoint(run)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(ckpt, dest / "model_last.pt")
    shutil.copy(ckpt.parent / "config.json", dest / "config.json")
    return dest


def load_policy(run: str | Path) -> LoadedPolicy:
    ckpt = find_checkpoint(run)
    config_path = ckpt.parent / "config.json"
    if not config_path.exists():
        raise PolicyFileError(f"{config_path}: missing; a run folder holds config.json next to its checkpoints")
    try:
        config = json.loads(config_path.read_text())
        payload = torch.load(ckpt, weights_only=True)
    except (OSError, ValueError, RuntimeError, EOFError, pickle.UnpicklingError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0].split(". ")[0]
        raise PolicyFileError(f"{ckpt}: cannot read the checkpoint or its config: {first}") from exc
    if not isinstance(config, dict) or not isinstance(payload, dict):
        raise PolicyFileError(
            f"{ckpt}: the checkpoint and its config.json must both hold dicts, found "
            f"{type(payload).__name__} and {type(config).__name__}; is this a run of this package?"
        )
    try:
        env_cfg = env_config_from_jsonable(config["env"], str(config_path), rewards_required=False)
        if "actor_state_dict" in payload:  # trained with --ppo rsl-rl
            return LoadedPolicy(rsl_rl_policy(payload, ckpt), env_cfg, ckpt, int(payload.get("iter", 0)) + 1)
        cfg = ppo_config_from_jsonable(config["ppo"])
        policy = ActorCritic(
            payload["num_obs"],
            payload["num_privileged_obs"],
            payload["num_actions"],
            cfg.actor_hidden,
            cfg.critic_hidden,
            cfg.init_noise_std,
            cfg.normalize_obs,
        )
        policy.load_state_dict(payload["model"])
        iteration = int(payload["iteration"])
    except (KeyError, TypeError, ValueError, AttributeError, RuntimeError) as exc:
        raise PolicyFileError(
            f"{ckpt}: not a checkpoint and config.json of this package ({type(exc).__name__}: {exc})"
        ) from exc
    policy.eval()
    return LoadedPolicy(
        policy,
        env_cfg,
        ckpt,
        iteration,
        float(payload.get("penalty_scale", float("nan"))),
        float(payload.get("termination_distance_m", float("nan"))),
    )
