"""``train_track_rsl_rl``: ASAP stage 1 trained by rsl-rl-lib 5.5's PPO instead of :mod:`trainers.ppo`.

RUN/ holds ``config.json`` (``train_track``'s keys plus ``"ppo_backend": "rsl-rl"`` and the ``"rsl_rl"``
train_cfg), rsl_rl's ``model_<it>.pt`` checkpoints (iteration index ``it`` from 0: after the first iteration,
every ``checkpoint_every`` and the last; with the curriculum state and sizes under ``"infos"``), its
TensorBoard events, ``rsl_rl_console.log`` (its console report) and ``learning_curve.csv``/``.png`` with
``train_track``'s columns (``kl``: NaN, rsl_rl does not report it). Training again into the folder resumes
from its newest ``model_<it>.pt``.
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from retarget.asap_pkl import atomic_write
from retarget.atomic_io import check_output_folder
from retarget.errors import AsapRetargetError
from robots.registry import load_robot_spec
from trainers.config import TrackingEnvConfig
from trainers.defaults import DEFAULT_CHECKPOINT_EVERY, DEFAULT_TRACK_ITERATIONS, DEFAULT_TRACK_NUM_ENVS
from trainers.env import TrackingEnv
from trainers.ppo.config import PPOConfig
from trainers.ppo.runner import append_learning_curve
from trainers.reference import load_references
from trainers.reproducible import save_torch
from trainers.rsl_rl_adapter import RSL_RL_VERSION, RslRlTrackingEnv, require_rsl_rl, rsl_rl_train_cfg
from trainers.sim_model import build_training_model
from trainers.train import TrainResult, plot_learning_curve, run_config


class _BudgetSpent(Exception):
    """Raised from the per-iteration hook to leave rsl_rl's ``learn`` loop once ``max_minutes`` is spent."""


def rsl_rl_checkpoints(run_dir: Path) -> list[Path]:
    """rsl_rl's ``model_<it>.pt`` files of a run folder, by iteration."""
    found = [
        (int(m.group(1)), p) for p in run_dir.glob("model_*.pt") if (m := re.fullmatch(r"model_(\d+)\.pt", p.name))
    ]
    return [p for _, p in sorted(found)]


def _make_runner(vec: RslRlTrackingEnv[TrackingEnv], train_cfg: dict, run_dir: Path, meta: dict, console_log):
    from rsl_rl.runners import OnPolicyRunner

    class TrackingRunner(OnPolicyRunner):
        def save(self, path: str, infos: dict | None = None) -> None:
            """rsl_rl's checkpoint dict, written atomically, with what a resume and an evaluation need."""
            env = vec.env
            payload = self.alg.save()
            payload["iter"] = self.current_learning_iteration
            payload["infos"] = {
                **(infos or {}),
                "num_obs": env.num_obs,
                "num_privileged_obs": env.num_privileged_obs,
                "num_actions": env.num_actions,
                "penalty_scale": float(env.penalty_scale),
                "termination_distance_m": float(env.termination_distance_m),
                "meta": meta,
            }
            save_torch(path, payload)
            self.logger.save_model(path, self.current_learning_iteration)

    with contextlib.redirect_stdout(console_log):
        runner = TrackingRunner(vec, copy.deepcopy(train_cfg), log_dir=str(run_dir), device="cpu")
    # rsl_rl stores a `git diff` of the repository holding rsl_rl; with the venv inside this checkout that
    # would run git on the user's working tree at every start. config.json already records the settings.
    runner.logger.git_status_repos.clear()
    return runner


def _resume(runner, vec: RslRlTrackingEnv[TrackingEnv], run_dir: Path) -> Path | None:
    found = rsl_rl_checkpoints(run_dir)
    if not found:
        return None
    payload = torch.load(found[-1], weights_only=True, map_location="cpu")  # not rsl_rl's unrestricted load
    runner.alg.load(payload, None, strict=True)
    # rsl_rl resumes at the saved index, which would redo (and overwrite) that iteration's checkpoint.
    runner.current_learning_iteration = int(payload["iter"]) + 1
    infos = payload.get("infos") or {}
    vec.env.penalty_scale = infos.get("penalty_scale", vec.env.penalty_scale)
    vec.env.termination_distance_m = infos.get("termination_distance_m", vec.env.termination_distance_m)
    return found[-1]


def train_track_rsl_rl(
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
    """``train_track`` with rsl_rl's ``OnPolicyRunner`` and PPO (settings: :func:`rsl_rl_train_cfg` of ``ppo_cfg``).

    ``on_iteration`` gets ``train_track``'s learning-curve row after every iteration; ``max_minutes`` ends the
    call after the first iteration past that budget (a checkpoint is written).
    """
    require_rsl_rl()
    env_cfg = TrackingEnvConfig() if env_cfg is None else env_cfg
    ppo_cfg = PPOConfig() if ppo_cfg is None else ppo_cfg
    run_dir = Path(run_dir)
    check_output_folder(run_dir)
    if (run_dir / "model_last.pt").exists():  # checked before anything in the folder is rewritten
        raise AsapRetargetError(f"{run_dir}: holds checkpoints of the project's PPO; use --ppo ours or a new folder")
    run_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    np.random.seed(seed)
    torch.set_num_threads(ppo_cfg.torch_threads)  # rsl_rl has no such setting (see rsl_rl_train_cfg)
    model = build_training_model(env_cfg.sim)
    refs = load_references(library, model, load_robot_spec(env_cfg.sim.robot), clip)
    env = TrackingEnv(refs, num_envs, env_cfg, seed=seed, model=model)
    vec = RslRlTrackingEnv(env, curriculum_every_steps=ppo_cfg.num_steps_per_env)
    train_cfg = rsl_rl_train_cfg(ppo_cfg, save_interval=checkpoint_every)
    config = {
        **run_config(library, clip, [r.name for r in refs], num_envs, seed, env_cfg, ppo_cfg),
        "ppo_backend": "rsl-rl",
        "rsl_rl_version": RSL_RL_VERSION,
        "rsl_rl": train_cfg,
    }
    atomic_write(run_dir / "config.json", lambda tmp: tmp.write_text(json.dumps(config, indent=2)))
    rows: list[dict] = []
    with (run_dir / "rsl_rl_console.log").open("a") as console_log:
        runner = _make_runner(vec, train_cfg, run_dir, {"clips": config["clips"]}, console_log)
        resumed = _resume(runner, vec, run_dir)
        call_start = time.perf_counter()
        rsl_log = runner.logger.log
        steps_per_iteration = ppo_cfg.num_steps_per_env * num_envs

        def log_and_record(**kw) -> None:
            """rsl_rl's per-iteration report (to the console log), then our learning-curve row."""
            with contextlib.redirect_stdout(console_log):
                rsl_log(**kw)
            row = _curve_row(runner, vec, kw, steps_per_iteration)
            rows.append(row)
            append_learning_curve(run_dir / "learning_curve.csv", row)
            if on_iteration is not None:
                on_iteration(row)
            if max_minutes is not None and time.perf_counter() - call_start >= 60.0 * max_minutes:
                raise _BudgetSpent

        runner.logger.log = log_and_record  # rsl_rl has no per-iteration callback; its logger is the one hook
        try:
            # The run's total, as train_track counts: resumed at current_learning_iteration completed iterations.
            remaining = max(0, iterations - runner.current_learning_iteration)
            if remaining:
                runner.learn(remaining)  # its console report goes through logger.log, into the console log
        except _BudgetSpent:
            runner.save(str(run_dir / f"model_{runner.current_learning_iteration}.pt"))
        finally:
            if runner.logger.writer is not None and hasattr(runner.logger.writer, "close"):
                runner.logger.writer.close()  # rsl_rl never closes a TensorBoard writer
            with contextlib.suppress(OSError):
                (run_dir / "git").rmdir()  # the (empty) folder rsl_rl makes for the git diffs skipped above
    plot_learning_curve(run_dir / "learning_curve.csv", run_dir / "learning_curve.png")
    return TrainResult(run_dir, rows, resumed)


def _curve_row(runner, vec: RslRlTrackingEnv[TrackingEnv], kw: dict, steps_per_iteration: int) -> dict:
    logger, losses = runner.logger, kw["loss_dict"]
    iteration_s = kw["collect_time"] + kw["learn_time"]
    return {
        "iteration": kw["it"] + 1,
        "env_steps": (kw["it"] + 1) * steps_per_iteration,
        "wall_s": round(logger.tot_time, 2),
        "env_steps_per_s": round(steps_per_iteration / iteration_s, 1),
        "mean_step_reward": vec.take_mean_reward(),
        "mean_episode_return": statistics.mean(logger.rewbuffer) if logger.rewbuffer else float("nan"),
        "mean_episode_length": statistics.mean(logger.lenbuffer) if logger.lenbuffer else float("nan"),
        "surrogate_loss": losses["surrogate"],
        "value_loss": losses["value"],
        "kl": float("nan"),
        "learning_rate": kw["learning_rate"],
        "action_std": float(kw["action_std"].detach().mean()),
        "termination_distance_m": vec.env.termination_distance_m,
        "penalty_scale": vec.env.penalty_scale,
        "anchor_kl": float("nan"),  # no trust region in rsl_rl's PPO
        "anchor_fraction": float("nan"),
    }
