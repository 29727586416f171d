"""What makes ASAP's learned Δa help: a one-factor-at-a-time study around the default Δa setting.

    python bench/bench_delta_study.py --policy RUN --motion LIB.pkl --real pybullet:combined,combined \\
        --seeds 0,1,2 --num-envs 64 -o /tmp/delta_study

Per "real" robot (own subfolder, as in ``bench_table4.py``): the pre-trained policy's rollouts in the robot (the
most any variant needs; a variant of n rollouts fits on the first n, so the data sets are nested), Vanilla's
evaluation and the Oracle's fine-tunings — once, shared by every variant, since neither depends on Δa; the Oracle
fine-tunes for the default setting's iterations, so every variant's share is of the same gap. Then per variant:
fit Δa (supervised labels are cached per trajectory and joint subset, and each variant is charged the CPU time of
the labels it uses; ``ppo`` trains π^Δ with :func:`trainers.delta.ppo_fit.fit_ppo_delta` for ``--ppo-iterations``
× ``--ppo-num-envs`` × 50 nominal steps, 1 s episodes), fine-tune the policy with it frozen for every seed
(ASAP), evaluate each fine-tuned policy alone in the robot on the matched episodes of ``bench_table4.evaluate``,
and put 95 % bootstrap intervals (:mod:`table4_stats`) on its share of the Vanilla→Oracle gap and on the
difference of its share from the default's (paired on the episodes).

Resumable: a finished variant leaves ``variant.json`` in its folder and is not run again; a killed fine-tuning
resumes from its checkpoint. One line is printed per finished variant. ``study.json`` and ``study.md`` (the
table) are rewritten after every variant. ``--oracle-from DIR`` takes the Oracle fine-tunings of an earlier
``bench_table4.py`` run where they were made from the same checkpoint, robot, budget and seed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_table4 import (
    DEFAULT_EVAL_EPISODES,
    FITTING_SEED,
    evaluate,
    gap_shares_with_ci,
    plans,
    robot_folder,
    run_finetune,
)
from delta_study_table import markdown, progress_line
from delta_study_variants import DEFAULT_VARIANTS, Setting, VariantError, folder_name, parse_setting, variants
from table4_stats import SHARE_METRICS, episode_samples, share_difference

from retarget.asap_pkl import atomic_write
from retarget.batch.record import file_sha256
from robots.registry import load_robot_spec
from trainers.delta.collect import collect_rollouts
from trainers.delta.collection import Trajectory, read_collection, write_collection
from trainers.delta.learned import LearnedDelta, LearnedDeltaConfig, fit_on_labels, transition_labels
from trainers.delta.ppo_fit import DeltaPPOConfig, delta_ppo_config, fit_ppo_delta
from trainers.policy_io import load_policy, snapshot_run
from trainers.real.model import build_real_model
from trainers.real.profiles import UnknownProfileError, get_profile
from trainers.reference import load_references


def write_json(path: Path, payload: dict) -> None:
    atomic_write(path, lambda tmp: tmp.write_text(json.dumps(payload, indent=2, default=float)))


def fitting_rollouts(robot_dir: Path, vanilla, refs, real: str, count: int) -> list[Trajectory]:
    """The first ``count`` rollouts of the pre-trained policy in ``real`` (collected once, kept in collect.pkl)."""
    path = robot_dir / "collect.pkl"
    if path.is_file():
        trajs = list(read_collection(path).values())
        if len(trajs) >= count:
            return trajs[:count]
    collected = collect_rollouts(vanilla.policy.act_inference, refs, real, vanilla.env_cfg, count, seed=FITTING_SEED)
    write_collection(path, collected)
    return list(collected.values())


def labels(robot_dir: Path, trajs: list[Trajectory], joints: str) -> tuple[np.ndarray, np.ndarray, float]:
    """One-step labels of every transition of ``trajs`` for ``joints`` (features, δ, CPU seconds they cost), cached
    per trajectory: variants with nested data sets share them, and each is charged for the ones it uses."""
    cfg = LearnedDeltaConfig(joints=joints, previous_target=True)
    xs, ys, cpu = [], [], 0.0
    for k, traj in enumerate(trajs):
        path = robot_dir / "labels" / joints / f"{k:03d}.npz"
        if not path.is_file():
            t = time.process_time()
            x, y = transition_labels([traj], cfg)
            spent = time.process_time() - t
            path.parent.mkdir(parents=True, exist_ok=True)
            payload = _npz_bytes(x=x, y=y, cpu_s=spent)
            atomic_write(path, lambda tmp, payload=payload: tmp.write_bytes(payload))
        with np.load(path) as z:
            xs.append(z["x"]), ys.append(z["y"])
            cpu += float(z["cpu_s"])
    return np.concatenate(xs), np.concatenate(ys), cpu


def _npz_bytes(**arrays) -> bytes:
    import io

    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def fit_delta(robot_dir: Path, trajs: list[Trajectory], setting: Setting, ppo: DeltaPPOConfig, out: Path) -> dict:
    """Fit Δa for ``setting`` on the first ``setting.rollouts`` rollouts into ``out``; what the file holds and the
    fit's CPU seconds."""
    data = trajs[: setting.rollouts]
    if setting.model == "ppo":
        t = time.process_time()
        cfg = delta_ppo_config(setting.joints, ppo.iterations, ppo.num_envs, ppo.env.horizon_steps)
        delta, rows = fit_ppo_delta(data, cfg)
        stats = {"env_steps": rows[-1]["env_steps"], "final_step_reward": rows[-1]["mean_step_reward"]}
        cpu = time.process_time() - t
    else:
        x, y, cpu = labels(robot_dir, data, setting.joints)
        t = time.process_time()
        cfg = LearnedDeltaConfig(joints=setting.joints, model=setting.model, previous_target=True)
        delta, stats = fit_on_labels(x, y, cfg)
        cpu += time.process_time() - t
    delta.save(out / "delta.pt")
    saved = LearnedDelta.load(out / "delta.pt")  # what fine-tuning will read
    return {
        **stats,
        "cpu_s": cpu,
        "fitting_frames": sum(tr.num_frames for tr in data),
        "file": {"kind": saved.cfg.model, "joints": len(saved.joint_ids), "previous_target": saved.cfg.previous_target},
    }


def same_policy(a: Path, b: Path) -> bool:
    """Whether two checkpoints hold the same network at the same iteration (a copy may re-serialize the file)."""
    pa, pb = (torch.load(p, weights_only=True) for p in (a, b))
    same = pa["iteration"] == pb["iteration"] and pa["model"].keys() == pb["model"].keys()
    return same and all(torch.equal(pa["model"][k], pb["model"][k]) for k in pa["model"])


def reusable_oracle(source: Path, real: str, seed: int, pre: Path, iterations: int, num_envs: int) -> Path | None:
    """An Oracle fine-tuning of an earlier bench_table4 run that is the one this study would make (same
    pre-trained network, robot, budget, environments and seed), else None."""
    folder = source / robot_folder(real) / f"Oracle_s{seed}"
    if not (folder / "model_last.pt").is_file() or not (source / "pre" / "model_last.pt").is_file():
        return None
    config = json.loads((folder / "config.json").read_text())
    record = config.get("finetune", {})
    same = (
        record.get("base_sha256") == file_sha256(source / "pre" / "model_last.pt")
        and record.get("real_profile") == real
        and record.get("iterations") == iterations
        and config.get("num_envs") == num_envs
        and config.get("seed") == seed
    )
    return folder if same and same_policy(source / "pre" / "model_last.pt", pre / "model_last.pt") else None


def _by_seed(record: dict, rows_key: str, cost_key: str) -> dict[str, dict]:
    """seed key ('s0') → evaluation row, from a record's per-seed rows (or, as the first files had them, a list in
    the order of its cost keys)."""
    if f"{rows_key}_by_seed" in record:
        return record[f"{rows_key}_by_seed"]
    return dict(zip(record.get(cost_key, {}), record.get(rows_key, [])))


def _missing(by_seed: dict, seeds: list[int]) -> list[int]:
    return [s for s in seeds if f"s{s}" not in by_seed]


def baselines(args, real: str, robot_dir: Path, pre: Path, refs, default: Setting) -> dict:
    """Vanilla's evaluation and the Oracle's fine-tunings and evaluations for the study's seeds (baselines.json:
    a rerun with more seeds adds only the missing ones)."""
    path = robot_dir / "baselines.json"
    done = json.loads(path.read_text()) if path.is_file() else {}
    by_seed, cost = _by_seed(done, "Oracle", "oracle_cost"), dict(done.get("oracle_cost", {}))
    oracle_plan = plans(robot_dir, real, 0.0)["Oracle"]
    for seed in _missing(by_seed, args.seed_list):
        folder = robot_dir / f"Oracle_s{seed}"
        reused = None
        if args.oracle_from:
            reused = reusable_oracle(Path(args.oracle_from), real, seed, pre, default.iterations, args.num_envs)
        if reused and not folder.exists():
            shutil.copytree(reused, folder)
        if reused:
            cost[f"s{seed}"] = {"reused_from": str(reused)}
        else:
            wall, cpu = run_finetune(
                pre, args.motion, args.clip, folder, oracle_plan, default.iterations, args.num_envs, seed
            )
            cost[f"s{seed}"] = {"wall_s": wall, "cpu_s": cpu}
        by_seed[f"s{seed}"] = evaluate(folder, refs, real, args.eval_episodes)
    vanilla = done.get("Vanilla") or [evaluate(pre, refs, real, args.eval_episodes)]
    if not done or _missing(_by_seed(done, "Oracle", "oracle_cost"), args.seed_list):
        write_json(path, {"Vanilla": vanilla, "Oracle_by_seed": by_seed, "oracle_cost": cost})
    keys = [f"s{s}" for s in args.seed_list]
    return {"Vanilla": vanilla, "Oracle": [by_seed[k] for k in keys], "oracle_cost": {k: cost[k] for k in keys}}


def run_variant(args, real: str, robot_dir: Path, pre: Path, refs, trajs, name: str, setting: Setting) -> dict:
    """Fit, fine-tune every seed, evaluate one variant (variant.json in its folder: a rerun with more seeds adds
    only the missing ones, with the same Δa)."""
    out = robot_dir / "variants" / folder_name(name)
    done = json.loads((out / "variant.json").read_text()) if (out / "variant.json").is_file() else {}
    by_seed, cost = _by_seed(done, "results", "finetune_cost"), dict(done.get("finetune_cost", {}))
    missing = _missing(by_seed, args.seed_list)
    out.mkdir(parents=True, exist_ok=True)
    if (out / "fit.json").is_file():  # a fine-tuning may already have started from this delta.pt
        fit = json.loads((out / "fit.json").read_text())
    else:
        fit = fit_delta(robot_dir, trajs, setting, args.ppo, out)
        write_json(out / "fit.json", fit)
    plan = ("delta", str(out / "delta.pt"), None)
    for seed in missing:
        wall, cpu = run_finetune(
            pre, args.motion, args.clip, out / f"ASAP_s{seed}", plan, setting.iterations, args.num_envs, seed
        )
        cost[f"s{seed}"] = {"wall_s": wall, "cpu_s": cpu}
        by_seed[f"s{seed}"] = evaluate(out / f"ASAP_s{seed}", refs, real, args.eval_episodes)
    record = {"setting": dataclasses.asdict(setting), "fit": fit, "finetune_cost": cost, "results_by_seed": by_seed}
    if missing or not done:
        write_json(out / "variant.json", record)
    keys = [f"s{s}" for s in args.seed_list]
    selected = {"finetune_cost": {k: cost[k] for k in keys}, "results": [by_seed[k] for k in keys]}
    return {"setting": record["setting"], "fit": fit, **selected}


def shares(base: dict, record: dict, default: dict | None) -> tuple[dict, dict | None]:
    """The variant's gap shares with intervals; and the paired difference from the default's share."""
    results = {"Vanilla": base["Vanilla"], "ASAP": record["results"], "Oracle": base["Oracle"]}
    ci = {k: v["ASAP"] for k, v in gap_shares_with_ci(results).items()}
    if default is None:
        return ci, None
    diff = {}
    for key in SHARE_METRICS:
        clip = {n: episode_samples(r, key) for n, r in {**results, "default": default["results"]}.items()}
        diff[key] = dataclasses.asdict(share_difference([clip], "ASAP", "default"))
    return ci, diff


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", required=True)
    ap.add_argument("--motion", required=True)
    ap.add_argument("--clip", default=None)
    ap.add_argument("--real", default="pybullet:combined", help="comma list of real robots, one study each")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--num-envs", type=int, default=64, help="environments of every fine-tuning")
    ap.add_argument(
        "--eval-episodes", type=int, default=DEFAULT_EVAL_EPISODES, help="matched evaluation episodes per policy"
    )
    ap.add_argument(
        "--default",
        default="",
        help=f"changes to the default setting ({Setting()}), e.g. rollouts=2,iterations=1",
    )
    ap.add_argument("--variants", default=",".join(DEFAULT_VARIANTS), help="one-factor changes, in the order run")
    ppo = DeltaPPOConfig()
    ap.add_argument("--ppo-iterations", type=int, default=ppo.iterations, help="PPO iterations of a ppo Δa")
    ap.add_argument("--ppo-num-envs", type=int, default=ppo.num_envs, help="environments of a ppo Δa")
    ap.add_argument("--oracle-from", default=None, help="bench_table4 output folder whose Oracle runs to reuse")
    ap.add_argument("-o", "--out", required=True)
    args = ap.parse_args(argv)
    args.seed_list = [int(s) for s in args.seeds.split(",")]
    args.ppo = dataclasses.replace(ppo, iterations=args.ppo_iterations, num_envs=args.ppo_num_envs)
    return args


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    robots = [r.strip() for r in args.real.split(",") if r.strip()]
    try:
        for real in robots:
            get_profile(real)
        default = parse_setting(args.default, Setting())
        settings = variants(default, [s.strip() for s in args.variants.split(",") if s.strip()])
    except (UnknownProfileError, VariantError) as exc:
        raise SystemExit(f"bench_delta_study: {exc}") from None
    torch.set_num_threads(1)  # the fits' torch work; each fine-tuning sets its own threads
    out = Path(args.out)
    pre = snapshot_run(args.policy, out / "pre") if not (out / "pre").is_dir() else out / "pre"
    vanilla = load_policy(pre)
    refs = load_references(args.motion, build_real_model("nominal", vanilla.env_cfg.sim), load_robot_spec(), args.clip)
    ppo_budget = {
        "iterations": args.ppo.iterations,
        "num_envs": args.ppo.num_envs,
        "steps_per_env": args.ppo.ppo.num_steps_per_env,
        "horizon_steps": args.ppo.env.horizon_steps,
    }
    summary: dict = {
        "args": {k: v for k, v in vars(args).items() if k not in ("ppo", "seed_list")},
        "policy_iteration": vanilla.iteration,
        "default": dataclasses.asdict(default),
        "ppo_budget": ppo_budget,
        "robots": {},
    }
    for real in robots:
        robot_dir = out / robot_folder(real)
        robot_dir.mkdir(parents=True, exist_ok=True)
        trajs = fitting_rollouts(robot_dir, vanilla, refs, real, max(s.rollouts for s in settings.values()))
        base = baselines(args, real, robot_dir, pre, refs, default)
        robot: dict = {**base, "variants": {}}
        summary["robots"][real] = robot
        for name, setting in settings.items():
            t = time.perf_counter()
            record = run_variant(args, real, robot_dir, pre, refs, trajs, name, setting)
            default_record = None if name == "default" else robot["variants"]["default"]
            record["gap_share_ci"], record["vs_default"] = shares(base, record, default_record)
            robot["variants"][name] = record
            print(progress_line(real, name, record, time.perf_counter() - t), flush=True)
            write_json(out / "study.json", summary)
            atomic_write(out / "study.md", lambda tmp: tmp.write_text(markdown(summary)))
    print(f"wrote {out / 'study.json'}, {out / 'study.md'}")
    return summary


if __name__ == "__main__":
    main()
