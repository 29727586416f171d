"""Which checkpoint of a fine-tuning to deploy, judged in the simulator it was fine-tuned in.

A few dozen PPO iterations from a pre-trained policy are chaotic: the same correction and budget give one seed a
policy that tracks the clip and the next one a policy that falls. A user cannot try every checkpoint on the
robot, but can try each in the simulator the fine-tuning ran in (ASAP's: the nominal G1 with the frozen Δa, which
was fitted on that robot's rollouts of a deployed, deterministic policy). The selection rolls out the
pre-trained checkpoint and every ``every``-th checkpoint of the fine-tuning (and its last) from phase 0 in that
simulator on the same ``episodes`` matched episodes, and deploys the best: the highest mean clip completion, then
the lowest Eg-mpjpe. The pre-trained checkpoint is a candidate, so a fine-tuning that its own simulator says made
tracking worse is not deployed.

The deployed checkpoint is copied to ``model_deployed.pt`` in the run folder, which
:func:`trainers.policy_io.find_checkpoint` prefers to the newest; ``selection.json`` records every candidate's
figures. Nothing here sees the robot the policy is deployed to (except for the *Oracle*, which fine-tunes in it).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np

from retarget.asap_pkl import atomic_write
from trainers.checkpoints import NUMBERED, checkpoint_iteration
from trainers.config import TrackingEnvConfig
from trainers.env import TrackingEnv
from trainers.evaluate import eval_env_config, rollout_episodes, summarize_episodes
from trainers.finetune.selection_config import DEPLOYED, MIN_START_NOISE_RAD, SELECTION_FILE, SelectionConfig
from trainers.reference import MotionReference


def matched_episode_config(cfg: TrackingEnvConfig, episodes: int) -> TrackingEnvConfig:
    """``cfg`` made an evaluation config whose ``episodes`` episodes differ: by its randomized physics where the
    training randomizes, else by start-pose joint noise (a simulator of another engine cannot be randomized)."""
    randomized = cfg.domain_rand.enabled and episodes > 1
    out = eval_env_config(cfg, randomized)
    noise = 0.0 if randomized or episodes <= 1 else max(cfg.init_dof_noise_rad, MIN_START_NOISE_RAD)
    return dataclasses.replace(out, init_dof_noise_rad=noise)


def candidates(run_dir: Path, base_checkpoint: Path, base_iteration: int) -> list[tuple[int, Path]]:
    """(iteration, checkpoint) of the pre-trained checkpoint and the fine-tuning's numbered checkpoints past it,
    and ``model_last.pt`` where its iteration has no numbered file."""
    found = {base_iteration: base_checkpoint}
    for p in run_dir.glob("model_*.pt"):
        m = NUMBERED.fullmatch(p.name)
        if m and int(m.group(1)) > base_iteration:
            found[int(m.group(1))] = p
    last = run_dir / "model_last.pt"
    if last.is_file():
        found.setdefault(checkpoint_iteration(last), last)
    return sorted(found.items())


def score_key(row: dict) -> tuple[float, float]:
    """Order of candidates, best last: clip completion, then Eg-mpjpe (lower better)."""
    return (row["completion"], -row["eg_mpjpe_mm"])


def select_checkpoint(
    run_dir: Path,
    base_checkpoint: Path,
    base_iteration: int,
    references: list[MotionReference],
    make_env: Callable[[list[MotionReference], int, TrackingEnvConfig, int], TrackingEnv],
    env_cfg: TrackingEnvConfig,
    cfg: SelectionConfig,
) -> dict:
    """Roll every candidate out in the environments ``make_env(refs, n, cfg, seed)`` builds (the fine-tuning's
    simulator), copy the best to ``run_dir/DEPLOYED`` and record all in ``run_dir/SELECTION_FILE``: that record."""
    from trainers.policy_io import load_policy

    eval_cfg = matched_episode_config(env_cfg, cfg.episodes)
    clip_ids = np.repeat(np.arange(len(references)), cfg.episodes)
    rows: list[dict] = []
    listed = candidates(run_dir, base_checkpoint, base_iteration)
    for iteration, path in listed:
        policy = load_policy(path).policy
        env = make_env(references, len(clip_ids), eval_cfg, cfg.seed)  # a fresh env: the same episodes for each
        episodes = rollout_episodes(policy.act_inference, env, clip_ids)
        overall, per_clip = summarize_episodes(references, clip_ids, episodes, env.policy_dt_s)
        rows.append(
            {
                "iteration": iteration,
                "checkpoint": path.name if path.parent == run_dir else str(path.resolve()),
                "completion": float(np.mean([c.mean_episode_fraction for c in per_clip])),
                "success_rate": float(overall.success_rate),
                "eg_mpjpe_mm": float(overall.eg_mpjpe_mm),
            }
        )
    best = max(rows, key=score_key)
    chosen = dict(listed)[int(best["iteration"])]
    atomic_write(run_dir / DEPLOYED, lambda tmp: shutil.copyfile(chosen, tmp))
    record = {
        "config": dataclasses.asdict(cfg),
        "criterion": "highest mean clip completion, then lowest Eg-mpjpe, in the fine-tuning simulator",
        "base_iteration": base_iteration,
        "chosen_iteration": best["iteration"],
        "candidates": rows,
    }
    atomic_write(run_dir / SELECTION_FILE, lambda tmp: tmp.write_text(json.dumps(record, indent=2)))
    return record


def read_selection(run_dir: Path) -> dict | None:
    """The selection record of a run folder whose deployed checkpoint is in place (None otherwise)."""
    path = run_dir / SELECTION_FILE
    if not path.is_file() or not (run_dir / DEPLOYED).is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def forget_selection(run_dir: Path) -> None:
    """Remove a selection made for an earlier budget (a resumed fine-tuning chooses again at its end)."""
    for name in (DEPLOYED, SELECTION_FILE):
        (run_dir / name).unlink(missing_ok=True)
