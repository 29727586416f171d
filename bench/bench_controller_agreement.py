"""Does the controller's verdict agree with what a learned tracking policy can do? Train and compare.

    nice -n 10 python bench/bench_controller_agreement.py --out /tmp/agreement \\
        [--clips jump_forward_level1_filter,...] [--seeds 0,1] [--iterations 500] [--num-envs 64] \\
        [--budget-min 600] [--max-minutes-per-run 60]

For each clip (default :data:`CLIPS`: jumps, single-foot balances and clips where the controller and the static
layers disagree or trim) it

1. retargets the clip, writes it as a one-clip library, and gives the controller verdict (`perform_result`, the
   default tracker) and the static one (kinematic + dynamic): ``<out>/<clip>/verdict.json``;
2. trains a `train track` policy per seed with the same budget (``asap-retarget train track --iterations N
   --num-envs E --seed S``, its own process): ``<out>/<clip>/seed<S>/``;
3. rolls the policy out from phase 0 (deterministic, the training simulator, ASAP's 0.5 m rule): success,
   completion and where it falls: ``<out>/<clip>/seed<S>.json``.

Every step's JSON is reused when present and a training run resumes from its checkpoint, so rerunning the same
command continues an interrupted benchmark; `--budget-min` stops starting work after that much wall time (a run
in progress gets at most the time left, and is finished by the next invocation).

The table, per clip and frame range: controller decision and the frames it keeps, the static decision, each
seed's outcome. Agreement: a clip is "trimmed" when the controller does not keep all of it, "not tracked at this
budget" when no seed's policy succeeds; precision and recall of the first against the second, over clips and over
frames (a frame is not tracked when it lies after the fall of the seed that got furthest).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from clip_split import TEST_CLIPS, motion_type

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "smpl_video"

CLIPS: tuple[str, ...] = (
    "jump_forward_level1_filter",  # static keep, controller trim (lands short)
    "jump_forward_level2_filter",  # static keep, controller trim
    "single_foot_jump_level2_filter",  # static keep, controller trim
    "jump_degree_level1_filter",  # both trim (the turn in the air)
    "single_foot_balance_level2_filter",  # a fall
    "single_foot_balance_level4_filter",  # falls
    "side_jump_level2_filter",  # static trim, controller keep
    "step_forward_back_level3_filter",  # static trim, controller keep
    "kick_level1_filter",  # both keep: the control
)
"""Jumps, single-foot balances and where the layers disagree, both halves of bench/clip_split.py."""


@dataclass(frozen=True)
class Budget:
    iterations: int
    num_envs: int
    max_minutes_per_run: float
    threads: int


def _write(path: Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    tmp.replace(path)


def verdict_step(clip: str, out: Path) -> dict:
    """The controller and static verdicts of the clip and its one-clip library (reused when present)."""
    path = out / clip / "verdict.json"
    if path.exists():
        return json.loads(path.read_text())
    from retarget.asap_pkl import motion_to_asap_dict, write_motion_library
    from retarget.controller import perform_result
    from retarget.filter import FilterConfig, filter_result
    from retarget.pipeline import retarget_sequence
    from retarget.readers.amass import read_amass_npz
    from robots.registry import load_robot_spec

    seq = read_amass_npz(DATA / f"video_{clip}_amass.npz")
    result = retarget_sequence(seq)
    library = out / clip / "library.pkl"
    library.parent.mkdir(parents=True, exist_ok=True)
    write_motion_library(library, {clip: motion_to_asap_dict(result.motion, load_robot_spec("g1_23dof"))})
    static = filter_result(result, seq, FilterConfig(layers=("kinematic", "dynamic")))
    cpu0 = time.process_time()
    performed = perform_result(result, seq)
    cpu_s = time.process_time() - cpu0
    v = performed.verdict
    check = v.check("controller.tracking")
    doc = {
        "clip": clip,
        "type": motion_type(f"video_{clip}_amass"),
        "split": "test" if f"video_{clip}_amass" in TEST_CLIPS else "tuning",
        "num_frames": v.num_frames,
        "fps": v.fps,
        "controller": v.decision,
        "controller_first_failure": v.first_failure,
        "controller_kept_ranges": [list(r) for r in v.kept_ranges],
        "controller_bad_ranges": [list(r) for r in check.bad_ranges],
        "controller_falls": check.figures["falls"],
        "controller_fall_frames": check.figures["fall_frames"],
        "controller_tracked_fraction": check.figures["tracked_fraction"],
        "controller_cpu_s": cpu_s,
        "static": static.decision,
        "static_first_failure": static.first_failure,
        "static_kept_ranges": [list(r) for r in static.kept_ranges],
        "library": str(library),
    }
    _write(path, doc)
    return doc


def train_step(clip: str, seed: int, out: Path, budget: Budget, minutes_left: float) -> bool:
    """Train (or resume) the clip's policy for this seed; True when it has all its iterations."""
    run = out / clip / f"seed{seed}"
    if _iteration(run) >= budget.iterations:
        return True
    cmd = [
        sys.executable,
        "-m",
        "cli.main",
        "train",
        "track",
        "--motion",
        str(out / clip / "library.pkl"),
        "--clip",
        clip,
        "-o",
        str(run),
        "--iterations",
        str(budget.iterations),
        "--num-envs",
        str(budget.num_envs),
        "--seed",
        str(seed),
        "--threads",
        str(budget.threads),
        "--max-minutes",
        f"{max(min(budget.max_minutes_per_run, minutes_left), 0.1):.2f}",
    ]
    log = run.with_suffix(".train.log")
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as f:
        subprocess.run(cmd, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT, check=False)
    return _iteration(run) >= budget.iterations


def _iteration(run: Path) -> int:
    if not run.exists() or not any(run.glob("*.pt")):
        return 0
    from trainers.policy_io import PolicyFileError, load_policy

    try:
        return load_policy(run).iteration
    except PolicyFileError:  # damaged or half-written: train resumes or restarts it
        return 0


def evaluate_step(clip: str, seed: int, out: Path, doc: dict) -> dict:
    """Roll the trained policy out from phase 0: success, completion, where it falls (reused when present)."""
    path = out / clip / f"seed{seed}.json"
    if path.exists():
        return json.loads(path.read_text())
    from robots.registry import load_robot_spec
    from trainers.evaluate import evaluate_policy
    from trainers.policy_io import load_policy
    from trainers.reference import load_references
    from trainers.sim_model import build_training_model

    loaded = load_policy(out / clip / f"seed{seed}")
    cfg = loaded.env_cfg
    refs = load_references(doc["library"], build_training_model(cfg.sim), load_robot_spec(cfg.sim.robot), clip)
    overall, (per_clip,) = evaluate_policy(loaded.policy.act_inference, refs, cfg, 1, seed)
    duration_s = (doc["num_frames"] - 1) / doc["fps"]
    completion = float(per_clip.mean_episode_fraction)
    success = bool(overall.success_rate >= 1.0)
    result = {
        "clip": clip,
        "seed": seed,
        "iteration": loaded.iteration,
        "success": success,
        "completion": completion,
        "fall_s": None if success else round(completion * duration_s, 2),
        "eg_mpjpe_mm": float(overall.eg_mpjpe_mm),
        "empjpe_mm": float(overall.empjpe_mm),
    }
    _write(path, result)
    return result


def _mask(ranges, n: int) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    for a, b in ranges:
        m[a:b] = True
    return m


def _precision_recall(predicted: np.ndarray, actual: np.ndarray) -> tuple[float, float, float]:
    tp = float(np.sum(predicted & actual))
    precision = tp / max(float(predicted.sum()), 1.0) if predicted.any() else float("nan")
    recall = tp / max(float(actual.sum()), 1.0) if actual.any() else float("nan")
    return precision, recall, float(np.mean(predicted == actual))


def tabulate(docs: list[dict], outcomes: dict[str, list[dict]], seeds: list[int]) -> dict:
    """Print the per-clip table and the precision / recall of 'trim' against 'no policy tracks it'."""
    print(
        "\n| clip | type | split | controller | kept frames | falls | static | "
        + " | ".join(f"seed {s}" for s in seeds)
        + " | policy tracks |"
    )
    print("|---" * (8 + len(seeds)) + "|")
    trimmed, untracked, frame_pred, frame_true = [], [], [], []
    for doc in docs:
        runs = outcomes.get(doc["clip"], [])
        if len(runs) < len(seeds):
            continue
        n = doc["num_frames"]
        kept = _mask(doc["controller_kept_ranges"], n)
        tracks = any(r["success"] for r in runs)
        best = max(r["completion"] for r in runs)
        tracked_frames = np.arange(n) < (n if tracks else int(best * n))
        trimmed.append(doc["controller"] != "keep")
        untracked.append(not tracks)
        frame_pred.append(~kept)
        frame_true.append(~tracked_frames)
        cells = ["success" if r["success"] else f"falls at {r['fall_s']:.1f} s ({r['completion']:.0%})" for r in runs]
        print(
            f"| {doc['clip']} | {doc['type']} | {doc['split']} | {doc['controller']} | "
            f"{' '.join(f'{a}-{b}' for a, b in doc['controller_kept_ranges'])} of {n} | {doc['controller_falls']} | "
            f"{doc['static']} | " + " | ".join(cells) + f" | {'yes' if tracks else 'no'} |"
        )
    if not trimmed:
        return {}
    clip_p, clip_r, clip_a = _precision_recall(np.array(trimmed), np.array(untracked))
    frame_p, frame_r, frame_a = _precision_recall(np.concatenate(frame_pred), np.concatenate(frame_true))
    print(
        f"\nclips: {len(trimmed)}; 'trim' vs 'no policy tracks it': precision {clip_p:.2f}, recall {clip_r:.2f}, "
        f"agreement {clip_a:.0%}\nframes: 'not kept' vs 'after the furthest policy's fall': precision "
        f"{frame_p:.2f}, recall {frame_r:.2f}, agreement {frame_a:.0%}"
    )
    return {
        "clips": len(trimmed),
        "clip_precision": clip_p,
        "clip_recall": clip_r,
        "clip_agreement": clip_a,
        "frame_precision": frame_p,
        "frame_recall": frame_r,
        "frame_agreement": frame_a,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True, help="results folder (reused: the run resumes)")
    parser.add_argument("--clips", default=",".join(CLIPS), help="comma-separated, without 'video_'/'_amass'")
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--iterations", type=int, default=500, help="PPO iterations per policy (same for all)")
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1, help="MuJoCo threads per training run")
    parser.add_argument("--budget-min", type=float, default=0.0, help="stop starting work after this [min] (0: none)")
    parser.add_argument("--max-minutes-per-run", type=float, default=120.0)
    args = parser.parse_args()
    clips = [c for c in args.clips.split(",") if c]
    seeds = [int(s) for s in args.seeds.split(",")]
    budget = Budget(args.iterations, args.num_envs, args.max_minutes_per_run, args.threads)
    start = time.perf_counter()

    def minutes_left() -> float:
        return float("inf") if not args.budget_min else args.budget_min - (time.perf_counter() - start) / 60.0

    docs, outcomes = [], {}
    for clip in clips:
        if minutes_left() <= 0:
            print("budget spent; rerun the same command to continue")
            break
        doc = verdict_step(clip, args.out)
        docs.append(doc)
        print(f"{clip}: controller {doc['controller']} (kept {doc['controller_kept_ranges']}), static {doc['static']}")
        for seed in seeds:
            if minutes_left() <= 0:
                break
            if not train_step(clip, seed, args.out, budget, minutes_left()):
                print(f"  seed {seed}: training not finished (budget); rerun to resume")
                continue
            outcome = evaluate_step(clip, seed, args.out, doc)
            outcomes.setdefault(clip, []).append(outcome)
            print(f"  seed {seed}: {outcome}", flush=True)
    summary = tabulate(docs, outcomes, seeds)
    _write(args.out / "table.json", {"budget": vars(budget), "verdicts": docs, "outcomes": outcomes, **summary})


if __name__ == "__main__":
    main()
