"""``train_track``: ASAP stage 1 on a motion library, writing a self-describing run folder.

RUN/ holds ``config.json`` (the resolved configs, the library path and clip), ``learning_curve.csv``
(one row per iteration) and ``learning_curve.png``, ``model_<iteration>.pt`` checkpoints and
``model_last.pt`` (rewritten with every checkpoint). Training again into a folder with a checkpoint resumes from
the newest one for ``iterations`` more, dropping the log rows after it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from retarget.asap_pkl import atomic_write
from retarget.atomic_io import check_output_folder
from retarget.errors import ConfigError
from retarget.folder_lock import FolderLock
from robots.registry import load_robot_spec
from trainers.checkpoints import TRAIN_LOCK, newest_checkpoint
from trainers.config import TrackingEnvConfig, to_jsonable
from trainers.defaults import DEFAULT_CHECKPOINT_EVERY, DEFAULT_TRACK_ITERATIONS, DEFAULT_TRACK_NUM_ENVS
from trainers.env import TrackingEnv
from trainers.ppo.config import PPOConfig
from trainers.ppo.runner import OnPolicyRunner
from trainers.reference import load_references
from trainers.sim_model import build_training_model


@dataclass(frozen=True)
class TrainResult:
    """What a training call did."""

    run_dir: Path
    rows: list[dict]
    """Learning-curve rows of this call's iterations."""
    resumed_from: Path | None
    """Checkpoint resumed from, if any."""


def train_track(
    library: str | Path,
    run_dir: str | Path,
    clip: str | None = None,
    iterations: int = DEFAULT_TRACK_ITERATIONS,
    num_envs: int = DEFAULT_TRACK_NUM_ENVS,
    seed: int = 0,
    env_cfg: TrackingEnvConfig | None = None,
    ppo_cfg: PPOConfig | None = None,
    on_iteration: Callable[[dict], None] | None = None,
    checkpoint_every: int = DEFAULT_CHECKPOINT_EVERY,
    max_minutes: float | None = None,
) -> TrainResult:
    """Train a tracking policy on ``library`` (or one ``clip`` of it) up to ``iterations`` PPO iterations in all.

    ``iterations`` counts the run's total (:data:`trainers.defaults.ITERATIONS_CONVENTION`): a folder that holds a
    checkpoint resumes and trains only the iterations it lacks, so rerunning the same call after an interruption
    finishes the run and rerunning a finished one trains nothing. ``max_minutes`` ends the call earlier, after the
    first iteration past that wall-clock budget.
    """
    env_cfg = TrackingEnvConfig() if env_cfg is None else env_cfg
    ppo_cfg = PPOConfig() if ppo_cfg is None else ppo_cfg
    run_dir = Path(run_dir)
    check_output_folder(run_dir)
    previous = run_dir / "config.json"
    if previous.exists() and json.loads(previous.read_text()).get("ppo_backend") == "rsl-rl":
        raise ConfigError(f"{run_dir}: holds a run trained with --ppo rsl-rl; resume it with that, or use a new folder")
    torch.manual_seed(seed)
    np.random.seed(seed)
    model = build_training_model(env_cfg.sim)
    refs = load_references(library, model, load_robot_spec(env_cfg.sim.robot), clip)
    run_dir.mkdir(parents=True, exist_ok=True)  # only once the motion is known to be usable
    with FolderLock(run_dir, TRAIN_LOCK, "training", ConfigError):  # two runs interleaving one folder
        env = TrackingEnv(refs, num_envs, env_cfg, seed=seed, model=model)
        config = run_config(library, clip, [r.name for r in refs], num_envs, seed, env_cfg, ppo_cfg)
        atomic_write(run_dir / "config.json", lambda tmp: tmp.write_text(json.dumps(config, indent=2)))
        runner = OnPolicyRunner(env, ppo_cfg, run_dir, meta={"clips": config["clips"]})
        resumed = newest_checkpoint(run_dir)
        if resumed is not None:
            runner.resume(resumed)
        max_wall_s = None if max_minutes is None else 60.0 * max_minutes
        remaining = max(0, iterations - runner.iteration)
        rows = runner.learn(
            remaining, on_iteration=on_iteration, checkpoint_every=checkpoint_every, max_wall_s=max_wall_s
        )
        plot_learning_curve(run_dir / "learning_curve.csv", run_dir / "learning_curve.png")
    return TrainResult(run_dir, rows, resumed)


def run_config(
    library: str | Path,
    clip: str | None,
    clips: list[str],
    num_envs: int,
    seed: int,
    env_cfg: TrackingEnvConfig,
    ppo_cfg: PPOConfig,
) -> dict:
    """The keys of a training run's config.json that every PPO backend writes."""
    return {
        "motion": str(Path(library).resolve()),
        "clip": clip,
        "clips": clips,
        "num_envs": num_envs,
        "seed": seed,
        "env": to_jsonable(env_cfg),
        "ppo": to_jsonable(ppo_cfg),
    }


def plot_learning_curve(csv_path: Path, png_path: Path) -> Path | None:
    """Episode return, length and step reward against env steps (skipped without matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    data = np.genfromtxt(csv_path, delimiter=",", names=True)
    data = np.atleast_1d(data)
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.5))
    for ax, key in zip(axes, ("mean_episode_return", "mean_episode_length", "mean_step_reward")):
        ax.plot(data["env_steps"], data[key])
        ax.set_xlabel("env steps")
        ax.set_title(key)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    atomic_write(png_path, lambda tmp: fig.savefig(tmp, format="png", dpi=90))
    plt.close(fig)
    return png_path
