"""Closed-loop fidelity of each Table IV correction: what the simulator a method fine-tunes in predicts for a policy,
against what that policy does in the "real" robot, on the same matched evaluation episodes.

    python bench/table4_fidelity.py OUT/combined        # OUT: a bench_table4.py output folder
    python bench/table4_fidelity.py OUT/combined --json fidelity.json

Every policy of the run is played from phase 0, alone, in the simulators that matter for it, under the episodes the
bench evaluated it on in the robot (randomized physics drawn from seed 100 around a MuJoCo robot; start-pose noise
for a robot played by another engine), and its success, clip completion and Eg-mpjpe there are printed beside the
robot's (read from ``table4.json``, not recomputed):

* the pre-trained policy (Vanilla) in every simulator: the nominal G1, nominal + Δa (ASAP's), SysID's G1. A
  correction that describes the robot closed loop makes Vanilla fail there as it fails in the robot;
* each fine-tuned policy in the simulator it was fine-tuned in (ASAP and ASAP-TR: nominal + Δa; SysID: its G1;
  Continued: nominal). The difference "robot − own simulator" is what the fine-tuning learned that does not carry
  over: large for a policy that learned to exploit its simulator where it is wrong;
* the Oracle in the robot itself: a check that the episodes here are the bench's (its row must equal the table's).

These separate two causes of a method that closes no gap: a correction that does not reproduce the robot's failure
of Vanilla (nothing to learn from), against a fine-tuning that succeeds in its simulator and not in the robot
(learned the simulator's error). A third shows in what each fine-tuning was rewarded for: the reward terms per
episode over its first iterations (``episode_terms.jsonl``, mean over seeds), printed per method beside the
Oracle's. A simulator whose penalties (joint limits, torques) differ from the robot's under the fine-tuning's
exploration noise gives the fine-tuning another objective than the robot would, although the deterministic
policy's episodes (the table above) match.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_table4 import evaluation_episodes, robot_folder, run_folder
from table4_stats import method_order, parse_round

from retarget.asap_pkl import atomic_write
from robots.registry import load_robot_spec
from trainers.env import TrackingEnv
from trainers.evaluate import eval_env_config, rollout_episodes, summarize_episodes
from trainers.finetune.delta_actions import load_delta_action
from trainers.finetune.delta_env import DeltaActionEnv
from trainers.metrics import tracking_metrics
from trainers.policy_io import load_policy
from trainers.real.model import build_real_model
from trainers.reference import load_references

FIRST_ITERATIONS = 10
"""Fine-tuning iterations whose reward terms are compared (the start, before the policies part ways)."""

EVALUATION_SEED = 100
"""The seed of the bench's matched evaluation episodes (``bench_table4.evaluate``)."""

OWN_SIMULATOR = {"Continued": "nominal", "SysID": "sysid", "ASAP": "delta", "ASAP-TR": "delta", "Oracle": "robot"}
"""Table row → the simulator its fine-tuning ran in (round-k rows refit their corrections: not covered here)."""

SIMULATOR_LABEL = {"nominal": "nominal G1", "delta": "nominal + Δa", "sysid": "SysID's G1", "robot": "the robot"}


def play(policy, refs, env_cfg, simulator: str, folder: Path, real: str, draws: dict) -> dict:
    """Success, completion and Eg-mpjpe of ``policy`` alone in ``simulator`` on the bench's matched episodes."""
    cfg = dataclasses.replace(
        eval_env_config(env_cfg, draws["domain_rand"]), init_dof_noise_rad=float(draws["start_noise_rad"])
    )
    n = len(refs) * draws["episodes"]
    clip_ids = np.repeat(np.arange(len(refs)), draws["episodes"])
    if simulator == "delta":
        nominal = build_real_model("nominal", cfg.sim)
        delta = load_delta_action(folder / "delta.pt")
        env: TrackingEnv = DeltaActionEnv(refs, n, cfg, seed=EVALUATION_SEED, model=nominal, delta=delta)
    else:
        profile = {"nominal": "nominal", "sysid": str(folder / "sysid.json"), "robot": real}[simulator]
        env = TrackingEnv(refs, n, cfg, seed=EVALUATION_SEED, model=build_real_model(profile, cfg.sim))
    runs = rollout_episodes(policy, env, clip_ids)
    metrics, per_clip = summarize_episodes(refs, clip_ids, runs, env.policy_dt_s)
    return {
        "success_rate": float(metrics.success_rate),
        "completion": float(np.mean([c.mean_episode_fraction for c in per_clip])),
        "eg_mpjpe_mm": float(metrics.eg_mpjpe_mm),
        "episode_success": [tracking_metrics([e]).success_rate for e in runs],
    }


def robot_row(row: dict) -> dict:
    return {k: float(row[k]) for k in ("success_rate", "completion", "eg_mpjpe_mm")}


def fidelity(folder: Path) -> dict:
    """Per policy of the bench run in ``folder`` (a robot subfolder): its figures in each simulator and the robot."""
    table = json.loads((folder.parent / "table4.json").read_text())
    args = table["args"]
    real = next(r for r in table["robots"] if folder.name == robot_folder(r))
    summary = table["robots"][real]
    vanilla = load_policy(folder.parent / "pre")
    draws = {**evaluation_episodes(real, args["eval_episodes"], vanilla.env_cfg), "episodes": args["eval_episodes"]}
    nominal = build_real_model("nominal", vanilla.env_cfg.sim)
    refs = load_references(args["motion"], nominal, load_robot_spec(), args.get("clip"))
    sims = ["nominal"] + [s for s, f in (("delta", "delta.pt"), ("sysid", "sysid.json")) if (folder / f).is_file()]
    rows: dict[str, list[dict]] = {
        "Vanilla": [
            {
                "policy": "pre",
                "robot": robot_row(summary["results"]["Vanilla"][0]),
                "simulators": {
                    s: play(vanilla.policy.act_inference, refs, vanilla.env_cfg, s, folder, real, draws) for s in sims
                },
            }
        ]
    }
    seeds = [int(s) for s in str(args["seeds"]).split(",")]
    for name in method_order(summary["results"]):
        method, k = parse_round(name)
        own = OWN_SIMULATOR.get(method)
        if name == "Vanilla" or own is None or k > 1:
            continue
        rows[name] = []
        for seed, robot in zip(seeds, summary["results"][name]):
            loaded = load_policy(folder / run_folder(name, seed))
            result = play(loaded.policy.act_inference, refs, loaded.env_cfg, own, folder, real, draws)
            rows[name].append(
                {"policy": run_folder(name, seed), "robot": robot_row(robot), "simulators": {own: result}}
            )
    terms = reward_terms(folder, [n for n in rows if n != "Vanilla"], seeds)
    return {"robot": real, "clip": table["clip"], "episodes": draws, "rows": rows, "reward_terms": terms}


def reward_terms(folder: Path, names, seeds: list[int]) -> dict[str, dict[str, float]]:
    """Method → reward term → its mean per episode over the first :data:`FIRST_ITERATIONS` fine-tuning iterations
    of every seed (the terms as ``episode_terms.jsonl`` logs them, penalty scale applied)."""
    out = {}
    for name in names:
        values: dict[str, list[float]] = {}
        for seed in seeds:
            path = folder / run_folder(name, seed) / "episode_terms.jsonl"
            if not path.is_file():
                continue
            for line in path.read_text().splitlines()[:FIRST_ITERATIONS]:
                for key, value in json.loads(line).items():
                    if key.startswith("rew_"):
                        values.setdefault(key.removeprefix("rew_"), []).append(float(value))
        if values:
            out[name] = {k: float(np.mean(v)) for k, v in values.items()}
    return out


def print_report(report: dict) -> None:
    print(f"# {report['clip']} in {report['robot']}: each policy in a simulator vs in the robot (matched episodes)")
    print(
        f"{'policy':<14} {'simulator':<14} {'success sim/robot':>18} {'completion sim/robot':>21} "
        f"{'Eg-mpjpe sim/robot [mm]':>24}"
    )
    for name, rows in report["rows"].items():
        for row in rows:
            for sim, got in row["simulators"].items():
                robot = row["robot"]
                print(
                    f"{row['policy']:<14} {SIMULATOR_LABEL[sim]:<14} "
                    f"{got['success_rate']:>8.0%} / {robot['success_rate']:<7.0%} "
                    f"{got['completion']:>10.0%} / {robot['completion']:<8.0%} "
                    f"{got['eg_mpjpe_mm']:>12.1f} / {robot['eg_mpjpe_mm']:<9.1f}"
                )
        if name != "Vanilla" and rows:
            sim_c = [next(iter(r["simulators"].values()))["completion"] for r in rows]
            rob_c = [r["robot"]["completion"] for r in rows]
            sim_s = [next(iter(r["simulators"].values()))["success_rate"] for r in rows]
            rob_s = [r["robot"]["success_rate"] for r in rows]
            print(
                f"  {name}: mean over seeds, own simulator → robot: success {np.mean(sim_s):.0%} → "
                f"{np.mean(rob_s):.0%}, completion {np.mean(sim_c):.0%} → {np.mean(rob_c):.0%}"
            )


def print_terms(terms: dict[str, dict[str, float]]) -> None:
    if not terms:
        return
    names = list(terms)
    print(f"\nreward terms per episode, first {FIRST_ITERATIONS} fine-tuning iterations, mean over seeds:")
    print(f"{'term':<24}" + "".join(f"{n:>11}" for n in names))
    for key in sorted(set().union(*terms.values())):
        print(f"{key:<24}" + "".join(f"{terms[n].get(key, float('nan')):>11.3f}" for n in names))


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("robot_folder", help="a robot subfolder of a bench_table4.py output (holds METHOD_sSEED/)")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args(argv)
    folder = Path(args.robot_folder)
    if not (folder.parent / "table4.json").is_file() or not (folder.parent / "pre").is_dir():
        sys.exit(f"{folder}: not a robot folder of a bench_table4.py output (no ../table4.json or ../pre/)")
    report = fidelity(folder)
    print_report(report)
    print_terms(report["reward_terms"])
    if args.json:
        atomic_write(Path(args.json), lambda tmp: tmp.write_text(json.dumps(report, indent=2)))
    return report


if __name__ == "__main__":
    main()
