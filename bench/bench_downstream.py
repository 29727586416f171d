"""Downstream benchmark: does better motion data train a better tracking policy at an equal env-step budget?

    python bench/bench_downstream.py [--clips video_squat_level1_filter_amass ...] [--sources asap ours gmr]
        [--env-steps 1000000] [--num-envs 256] [--seeds 0] [--checkpoint-every 20] [--episodes 8]
        [--stages 1] [--results downstream_results] [--out DIR]

For every clip (a SMPL clip of ``tests/fixtures/smpl_video``, see ``bench/bench_data.py``) and every source of
:mod:`downstream_sources` (official ASAP retarget, ours, GMR-style, ...), the same ``asap-retarget train
track`` command (same settings, same seeds, the same number of env steps) trains a policy on that
source's one-clip library. Every checkpoint is then evaluated as ``eval-policy --domain-rand`` does
(randomized physics, phase-0 starts, fixed episode seeds): success, clip completion, Eg-mpjpe and Empjpe
against the source's OWN reference. The same episodes, played on through falls, give the motion the robot
performed, which the project's ``eval`` metrics score against the HUMAN clip (limb directions, stance
feet): the same target for every source, so a source cannot win by being easy to track.

Runs, learning curves and per-checkpoint evaluations stay under ``--results`` (git-ignored; a rerun
resumes and skips what is done); ``--out`` receives ``summary.json`` (with each source file's sha256),
``table.md`` and ``curves.png``. The budget is counted in env steps, not wall clock: the machine is shared.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_data import SMPL_DIR
from downstream_report import plot_curves, table_markdown
from downstream_sources import SOURCES

from retarget.asap_pkl import atomic_write
from retarget.batch.record import file_sha256
from retarget.errors import AsapRetargetError, MotionFileError
from retarget.metrics import evaluate_library, evaluate_motion, load_human_reference, summarize
from retarget.metrics.human import HumanReference
from retarget.metrics.library import finite_or_none  # NaN -> null, as `eval --json` writes
from robots.registry import load_robot_spec
from trainers.evaluate import evaluate_policy, performed_motions
from trainers.policy_io import load_policy
from trainers.ppo.config import PPOConfig
from trainers.reference import load_references
from trainers.sim_model import build_training_model

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CLIPS = ("video_squat_level1_filter_amass",)
# Retargeting metrics of the performed motion against the human clip, as in `asap-retarget eval`.
HUMAN_METRICS = (
    "limb_direction_error_deg",
    "stance_sole_abs_height_mm",
    "stance_tilt_deg",
    "stance_slide_cm_s",
    "floating_fraction",
)


class BenchError(AsapRetargetError):
    """The benchmark cannot go on (a training run failed, an input is missing)."""


@dataclass(frozen=True)
class TrainSettings:
    """What every run shares: the `train track` options and the evaluation protocol."""

    env_steps: int
    """Env-step budget per run (rounded up to whole PPO iterations)."""
    num_envs: int
    """Parallel environments (`--num-envs`)."""
    checkpoint_every: int
    """Iterations between evaluated checkpoints (`--checkpoint-every`)."""
    threads: int
    """MuJoCo threads (`--threads`); torch keeps its one thread."""
    termination_init_m: float
    """Initial drift limit (`--termination-init-m`) [m]."""
    episodes: int
    """Randomized-physics evaluation episodes per checkpoint (`eval-policy --episodes N --domain-rand`)."""
    eval_seed: int
    """Episode seed of every evaluation (`eval-policy --seed`): the same physics draws for every source."""

    @property
    def steps_per_iteration(self) -> int:
        return self.num_envs * PPOConfig().num_steps_per_env

    @property
    def iterations(self) -> int:
        return math.ceil(self.env_steps / self.steps_per_iteration)


def resolve_clip(name: str) -> Path:
    path = Path(name) if name.endswith(".npz") else SMPL_DIR / f"{name}.npz"
    if not path.is_file():
        raise MotionFileError(path, f"no such SMPL clip (a stem of {SMPL_DIR} or an .npz path)")
    return path.resolve()


def _checkpoint_iteration(path: Path) -> int:
    return int(torch.load(path, weights_only=True)["iteration"])


def train_run(library: Path, run_dir: Path, seed: int, s: TrainSettings, target_iterations: int) -> None:
    """`asap-retarget train track` up to ``target_iterations``, resuming the run's last call."""
    last = run_dir / "model_last.pt"
    done = _checkpoint_iteration(last) if last.exists() else 0
    if not last.exists() and run_dir.exists():
        shutil.rmtree(run_dir)  # killed before its first model_last.pt: checkpoints and curve would not match
    if done >= target_iterations:
        return
    run_dir.mkdir(parents=True, exist_ok=True)
    args = [
        "train",
        "track",
        "--motion",
        str(library),
        "-o",
        str(run_dir),
        "--iterations",
        str(target_iterations),  # the run's total: the CLI resumes at `done`
        "--num-envs",
        str(s.num_envs),
        "--seed",
        str(seed),
        "--threads",
        str(s.threads),
        "--termination-init-m",
        str(s.termination_init_m),
        "--checkpoint-every",
        str(s.checkpoint_every),
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    with (run_dir / "train.log").open("a") as log:
        log.write(f"$ asap-retarget {shlex.join(args)}\n")
        log.flush()
        code = subprocess.call(
            [sys.executable, "-c", "from cli.main import main; main()", *args],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    if code != 0:
        raise BenchError(f"{run_dir / 'train.log'}: train track exited with {code}")


def checkpoints(run_dir: Path) -> list[Path]:
    """The run's ``model_<iteration>.pt`` in order, and ``model_last.pt`` when it is not one of them."""
    numbered = sorted(run_dir.glob("model_[0-9]*.pt"), key=lambda p: int(p.stem.split("_")[1]))
    last = run_dir / "model_last.pt"
    if last.exists() and _checkpoint_iteration(last) not in {int(p.stem.split("_")[1]) for p in numbered}:
        numbered.append(last)
    return numbered


def evaluate_checkpoint(ckpt: Path, library: Path, human: HumanReference, s: TrainSettings) -> dict:
    """Tracking metrics against the source's reference and retargeting metrics against the human clip."""
    loaded = load_policy(ckpt)
    cfg = loaded.env_cfg
    robot = load_robot_spec(cfg.sim.robot)
    refs = load_references(library, build_training_model(cfg.sim), robot)
    act = loaded.policy.act_inference
    overall, per_clip = evaluate_policy(act, refs, cfg, s.episodes, s.eval_seed, domain_rand=True)
    scored = []
    for motion in performed_motions(act, refs, cfg, s.episodes, s.eval_seed, domain_rand=True):
        count = min(motion.num_frames, human.num_frames)
        trimmed = dataclasses.replace(
            motion,
            root_pos_w=motion.root_pos_w[:count],
            root_quat_w=motion.root_quat_w[:count],
            dof_pos=motion.dof_pos[:count],
            human_joints_w=motion.human_joints_w[:count],
        )
        scored.append(evaluate_motion(trimmed, human.frames(count), robot))
    vs_human = summarize(scored).mean
    return {
        "checkpoint": ckpt.name,
        "iteration": loaded.iteration,
        "env_steps": loaded.iteration * s.steps_per_iteration,
        "success": overall.success_rate,
        "completion": float(np.mean([c.mean_episode_fraction for c in per_clip])),
        "eg_mpjpe_mm": overall.eg_mpjpe_mm,
        "empjpe_mm": overall.empjpe_mm,
        "evel_mm_per_frame": overall.evel_mm_per_frame,
        "eacc_mm_per_frame2": overall.eacc_mm_per_frame2,
        "episodes": overall.num_episodes,
        "eval_seed": s.eval_seed,
        "vs_human": {k: vs_human[k] for k in HUMAN_METRICS},
    }


def evaluate_run(run_dir: Path, library: Path, human: HumanReference, s: TrainSettings) -> list[dict]:
    """Every checkpoint's evaluation, cached in RUN/eval/ (a rerun evaluates only new checkpoints or protocols)."""
    rows = []
    for ckpt in checkpoints(run_dir):
        cache = run_dir / "eval" / f"{ckpt.stem}.json"
        row = json.loads(cache.read_text()) if cache.exists() else {}
        protocol = (_checkpoint_iteration(ckpt), s.episodes, s.eval_seed)
        if (row.get("iteration"), row.get("episodes"), row.get("eval_seed")) != protocol:
            row = evaluate_checkpoint(ckpt, library, human, s)
            cache.parent.mkdir(exist_ok=True)
            _write_json(cache, row)
        rows.append(row)
    return rows


def _write_json(path: Path, data: dict) -> None:
    text = json.dumps(finite_or_none(data), indent=1, allow_nan=False)  # NaN (no stance frames) as null
    atomic_write(path, lambda tmp: tmp.write_text(text))


def publish(summary: dict, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    _write_json(out_dir / "summary.json", summary)
    atomic_write(out_dir / "table.md", lambda tmp: tmp.write_text(table_markdown(summary)))
    plot_curves(summary, out_dir / "curves.png")


def milestones(s: TrainSettings, stages: int) -> list[int]:
    """Iteration counts at which every run pauses (multiples of the checkpoint period, the last = the budget)."""
    every = s.checkpoint_every
    marks = [min(s.iterations, math.ceil(s.iterations * (k + 1) / stages / every) * every) for k in range(stages)]
    return sorted(set(marks) | {s.iterations})


def run_benchmark(
    clips: list[str],
    sources: list[str],
    seeds: list[int],
    s: TrainSettings,
    results: Path,
    out_dir: Path,
    command: str,
    stages: int = 1,
) -> dict:
    """Train and evaluate every (clip, source, seed), republishing the summary after each run.

    With ``stages`` > 1 every run is trained up to the first milestone, then every run up to the next,
    and so on: stopped at any point, the runs of a clip differ by at most one stage of budget.
    """
    torch.set_num_threads(1)
    settings = {
        **s.__dict__,
        "iterations": s.iterations,
        "steps_per_iteration": s.steps_per_iteration,
        "seeds": seeds,
        "stages": stages,
    }
    summary: dict = {"command": command, "settings": settings, "runs": []}
    jobs: list[tuple[dict, Path, HumanReference, Path]] = []
    for clip_name in clips:
        clip_npz = resolve_clip(clip_name)
        human = load_human_reference(clip_npz, policy_rate_hz())  # the human clip at the policy's rate
        for source in sources:
            library = SOURCES[source].prepare(clip_npz, results / clip_npz.stem / "sources" / source)
            reference = evaluate_library(library, clip_npz)[0]
            for seed in seeds:
                run: dict = {
                    "clip": clip_npz.stem,
                    "source": source,
                    "description": SOURCES[source].description,
                    "seed": seed,
                    "source_file": str(library),
                    "source_sha256": file_sha256(library),
                    "reference_vs_human": {k: getattr(reference, k) for k in HUMAN_METRICS},
                }
                jobs.append((run, library, human, results / clip_npz.stem / source / f"seed{seed}"))
    for target in milestones(s, stages):
        for run, library, human, run_dir in jobs:
            train_run(library, run_dir, run["seed"], s, target)
            run["trained_on"] = json.loads((run_dir / "config.json").read_text())["motion"]
            run["checkpoints"] = evaluate_run(run_dir, library, human, s)
            if not any(r is run for r in summary["runs"]):
                summary["runs"].append(run)
            publish(summary, out_dir)
            last = run["checkpoints"][-1]
            print(
                f"{run['clip']} {run['source']} seed {run['seed']}: {last['env_steps']} env steps, success "
                f"{last['success']:.0%}, completion {last['completion']:.0%}, Eg-mpjpe {last['eg_mpjpe_mm']:.1f} mm, "
                f"limb err vs human {last['vs_human']['limb_direction_error_deg']:.2f} deg",
                flush=True,
            )
    return summary


def policy_rate_hz() -> float:
    """The policy rate [Hz] of the tracking environment's default config (`train track` changes no rate)."""
    from trainers.config import TrackingEnvConfig

    sim = TrackingEnvConfig().sim
    return 1.0 / (sim.physics_dt_s * sim.decimation)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clips", nargs="+", default=list(DEFAULT_CLIPS), help="SMPL clip stems or .npz paths")
    parser.add_argument("--sources", nargs="+", default=["asap", "ours", "gmr"], choices=sorted(SOURCES))
    parser.add_argument("--env-steps", type=int, default=1_000_000, help="env-step budget per run")
    parser.add_argument("--num-envs", type=int, default=256)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--checkpoint-every", type=int, default=20, help="iterations between evaluated checkpoints")
    parser.add_argument("--threads", type=int, default=1, help="MuJoCo threads per training run")
    parser.add_argument("--termination-init-m", type=float, default=0.5, help="initial drift limit [m]")
    parser.add_argument("--episodes", type=int, default=8, help="randomized evaluation episodes per checkpoint")
    parser.add_argument("--eval-seed", type=int, default=0)
    parser.add_argument(
        "--stages",
        type=int,
        default=1,
        help="train every run to 1/N of the budget, then every run to 2/N, ... (fair if stopped)",
    )
    parser.add_argument("--results", type=Path, default=REPO / "downstream_results", help="runs (git-ignored)")
    parser.add_argument(
        "--out", type=Path, default=None, help="summary.json, table.md, curves.png (default: --results)"
    )
    args = parser.parse_args(argv)
    for name in ("env_steps", "num_envs", "checkpoint_every", "episodes", "stages"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    settings = TrainSettings(
        args.env_steps,
        args.num_envs,
        args.checkpoint_every,
        args.threads,
        args.termination_init_m,
        args.episodes,
        args.eval_seed,
    )
    command = "python bench/bench_downstream.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    try:
        run_benchmark(
            args.clips,
            list(dict.fromkeys(args.sources)),
            args.seeds,
            settings,
            args.results,
            args.out or args.results,
            command,
            args.stages,
        )
    except AsapRetargetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
