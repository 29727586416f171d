"""The paper's Table IV in our setting: stage-3 baselines and ASAP, each fine-tuned policy deployed alone in a
"real" profile.

    python bench/bench_table4.py --policy RUN --motion LIB.pkl --real soft_ankles_delay --seeds 0,1,2 \\
        --iterations 30 --num-envs 64 --episodes 6 --eval-episodes 8 --heldout-clip NAME -o /tmp/table4

One set of "real" rollouts of the pre-trained policy (``--episodes``, the first from phase 0, the
rest from random phases) fits every correction: ASAP's learned Δa, SysID (Kp per joint group, delay,
torso mass), DeltaDynamics (a learned state residual); ActionNoise uses Gaussian noise of the
learned Δa's RMS. Each method then fine-tunes the pre-trained policy for the same budget per seed:

  Vanilla (no fine-tuning) · Continued (nominal simulator) · ActionNoise · SysID · DeltaDynamics ·
  ASAP (nominal + frozen Δa) · Oracle (the profile itself)

and every resulting policy runs alone in the profile from phase 0 under ``--eval-episodes``
randomized physics draws that are the same for every policy (matched starts, held out from the
fitting rollouts). Printed: success, Eg-mpjpe, Empjpe, Eacc, Evel and clip completion, mean ± std
over seeds, and the share of the Vanilla→Oracle gap (Eg-mpjpe, success, completion) each method
closes. With ``--heldout-clip``, the corrections fitted on the trained clip are scored on another
clip's rollouts: RMS of the one-step prediction error of each corrected simulator (the reference:
the nominal simulator). With ``--corrections-from DIR`` nothing is fitted: the corrections of an
earlier run on another clip (its ``delta.pt``, ``sysid.json``, ``dynamics.pt``) fine-tune this
clip's policy — Table IV "on a clip not used to fit Δa" — and are scored one step on this policy's
own real rollouts. Writes ``table4.json`` and ``table4.png`` to the output folder.
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
from joblib import Parallel, delayed

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robots.registry import load_robot_spec
from trainers.delta.collect import collect_rollouts
from trainers.delta.collection import Trajectory, write_collection
from trainers.delta.dynamics import DeltaDynamics, fit_delta_dynamics
from trainers.delta.learned import MODEL_KINDS, LearnedDelta, LearnedDeltaConfig, fit_on_labels, transition_labels
from trainers.delta.one_step import predict_next, previous_targets, recorded_next, transitions
from trainers.delta.sysid import identify
from trainers.finetune.finetune import finetune_policy
from trainers.finetune.real_eval import evaluate_in_profile
from trainers.observations import rotate_to_base
from trainers.policy_io import load_policy, snapshot_run
from trainers.real.model import build_real_model
from trainers.real.profiles import save_profile
from trainers.reference import load_references

METRICS = ("success_rate", "eg_mpjpe_mm", "empjpe_mm", "eacc_mm_per_frame2", "evel_mm_per_frame", "completion")
CORRECTION_FILES = ("delta.pt", "sysid.json", "dynamics.pt")
ORDER = ("Vanilla", "Continued", "ActionNoise", "SysID", "DeltaDynamics", "ASAP", "Oracle")


def fit_corrections(out: Path, trajs: list[Trajectory], joints: str, delta_model: str) -> dict:
    """Fit Δa, SysID and Δs on the same rollouts; the noise level matching Δa's RMS."""
    t = time.perf_counter()
    cfg = LearnedDeltaConfig(joints=joints, previous_target=True, model=delta_model)
    x, y = transition_labels(trajs, cfg)
    for kind in MODEL_KINDS:  # every kind on the same labels, for the held-out comparison; ASAP uses delta_model's
        fitted, stats = fit_on_labels(x, y, dataclasses.replace(cfg, model=kind))
        fitted.save(out / f"delta_{kind}.pt")
        if kind == delta_model:
            delta, dstats = fitted, stats
    delta.save(out / "delta.pt")
    # Δa in action units on the fitting transitions (every frame but each rollout's last).
    da = (
        np.concatenate(
            [
                (moved.pd_target - tr.pd_target)[:-1, delta.joint_ids]
                for tr, moved in zip(trajs, with_delta(trajs, out / "delta.pt"))
            ]
        )
        / trajs[0].action_scale
    )
    noise_std = float(np.sqrt((da**2).mean()))
    t_delta = time.perf_counter() - t
    t = time.perf_counter()
    sysid = identify(trajs)
    save_profile(sysid.profile, out / "sysid.json")
    t_sysid = time.perf_counter() - t
    t = time.perf_counter()
    dyn, ystats = fit_delta_dynamics(trajs)
    dyn.save(out / "dynamics.pt")
    t_dyn = time.perf_counter() - t
    return {
        "delta": dstats,
        "delta_rms_action": noise_std,
        "delta_s": round(t_delta, 1),
        "sysid": sysid.parameters,
        "sysid_rms": [sysid.rms_nominal, sysid.rms_identified],
        "sysid_s": round(t_sysid, 1),
        "dynamics": ystats,
        "dynamics_s": round(t_dyn, 1),
    }


def reuse_corrections(source: Path, out: Path) -> dict:
    """The corrections another bench run fitted (its Δa, SysID profile, Δs and noise level), copied into ``out``."""
    optional = [f"delta_{k}.pt" for k in MODEL_KINDS if (source / f"delta_{k}.pt").is_file()]  # held-out comparison
    for name in (*CORRECTION_FILES, *optional):
        shutil.copyfile(source / name, out / name)
    return json.loads((source / "table4.json").read_text())["fits"]


def plans(out: Path, real: str, noise_std: float) -> dict[str, tuple[str, str | None, str | None]]:
    """method → (simulator, delta spec, real profile) for :func:`finetune_policy`."""
    return {
        "Continued": ("nominal", None, None),
        "ActionNoise": ("delta", f"noise:{noise_std:.4f}", None),
        "SysID": ("real", None, str(out / "sysid.json")),
        "DeltaDynamics": ("dynamics", str(out / "dynamics.pt"), None),
        "ASAP": ("delta", str(out / "delta.pt"), None),
        "Oracle": ("real", None, real),
    }


def run_finetune(
    pre: Path, motion: str, clip: str | None, folder: Path, plan, iterations: int, num_envs: int, seed: int
) -> float:
    sim, delta, profile = plan
    t = time.perf_counter()
    finetune_policy(
        pre,
        motion,
        folder,
        delta=delta,
        sim=sim,
        real_profile=profile,
        clip=clip,
        iterations=iterations,
        num_envs=num_envs,
        seed=seed,
        num_threads=1,
    )
    return time.perf_counter() - t


def evaluate(folder: Path, refs, real: str, episodes: int) -> dict[str, float]:
    loaded = load_policy(folder)
    m, per_clip = evaluate_in_profile(
        loaded.policy.act_inference,
        refs,
        real,
        loaded.env_cfg,
        episodes_per_clip=episodes,
        seed=100,
        domain_rand=episodes > 1,
    )
    row = {k: float(getattr(m, k)) for k in METRICS if k != "completion"}
    row["completion"] = float(per_clip[0].mean_episode_fraction)
    return row


def with_delta(trajs: list[Trajectory], path: Path) -> list[Trajectory]:
    """The trajectories with every recorded target shifted by the Δa file's δ (what the nominal simulator receives)."""
    delta = LearnedDelta.load(path)
    return [
        dataclasses.replace(
            tr,
            pd_target=tr.pd_target
            + delta.delta_targets(
                tr.pd_target,
                tr.dof_pos,
                tr.dof_vel,
                tr.root_quat_w,
                rotate_to_base(tr.root_quat_w, tr.root_ang_vel_w),
                previous_targets(tr),
            ),
        )
        for tr in trajs
    ]


def heldout_one_step(trajs: list[Trajectory], out: Path, real: str) -> dict[str, float]:
    """One-step prediction RMS of each corrected simulator on rollouts not used to fit it."""
    pairs = transitions(trajs)
    goal = recorded_next(pairs).vector()
    rms = lambda pred: float(np.sqrt(np.mean((pred - goal) ** 2)))
    nominal = build_real_model("nominal")
    plain = predict_next(nominal, pairs)
    rows = {
        "nominal": rms(plain.vector()),
        "Oracle": rms(predict_next(build_real_model(real), pairs).vector()),
        "SysID": rms(predict_next(build_real_model(str(out / "sysid.json")), pairs).vector()),
    }
    kinds = {f"ASAP Δa {k}": out / f"delta_{k}.pt" for k in MODEL_KINDS if (out / f"delta_{k}.pt").is_file()}
    for name, path in (kinds or {"ASAP": out / "delta.pt"}).items():
        rows[name] = rms(predict_next(nominal, transitions(with_delta(trajs, path))).vector())
    dyn = DeltaDynamics.load(out / "dynamics.pt")
    # Rows in the order of transitions(trajs): every frame of each rollout but its last.
    ds = np.concatenate(
        [
            dyn(
                tr.pd_target,
                tr.dof_pos,
                tr.dof_vel,
                tr.root_quat_w,
                rotate_to_base(tr.root_quat_w, tr.root_ang_vel_w),
                previous_targets(tr),
            )[:-1]
            for tr in trajs
        ]
    )
    d = dyn.num_dof
    corrected = dataclasses.replace(
        plain,
        dof_pos=plain.dof_pos + ds[:, :d],
        dof_vel=plain.dof_vel + ds[:, d : 2 * d],
        root_lin_vel_w=plain.root_lin_vel_w + ds[:, 2 * d : 2 * d + 3],
        root_ang_vel_w=plain.root_ang_vel_w + ds[:, 2 * d + 3 :],
    )
    rows["DeltaDynamics"] = rms(corrected.vector())
    return rows


def plot(results: dict, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n in ORDER if n in results]
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for ax, key, label in zip(
        axes, ("eg_mpjpe_mm", "completion"), ("Eg-mpjpe [mm] (lower is better)", "clip completed (higher is better)")
    ):
        vals = [[r[key] for r in results[n]] for n in names]
        ax.bar(
            names,
            [np.mean(v) for v in vals],
            yerr=[np.std(v) for v in vals],
            capsize=4,
            color=["#888" if n in ("Vanilla", "Continued") else "#c44" if n == "ASAP" else "#48a" for n in names],
        )
        for i, v in enumerate(vals):
            ax.scatter([i] * len(v), v, color="k", s=8, zorder=3)
        ax.set_title(label)
        ax.tick_params(axis="x", rotation=30)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", required=True)
    ap.add_argument("--motion", required=True)
    ap.add_argument("--clip", default=None)
    ap.add_argument("--heldout-clip", default=None, help="clip of the same library whose rollouts no fit sees")
    ap.add_argument("--real", default="soft_ankles_delay")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--num-envs", type=int, default=64)
    ap.add_argument("--episodes", type=int, default=6, help="fitting rollouts")
    ap.add_argument("--eval-episodes", type=int, default=8, help="matched randomized evaluation episodes")
    ap.add_argument("--delta-joints", default="all", choices=("ankles", "legs", "all"))
    ap.add_argument("--delta-model", default="per_joint_linear", choices=MODEL_KINDS)
    ap.add_argument(
        "--corrections-from",
        default=None,
        help="bench output folder whose fitted corrections to use (fitted on another clip's rollouts)",
    )
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--methods", default=",".join(ORDER[1:]), help="fine-tuned methods to run (Vanilla always)")
    ap.add_argument("-o", "--out", required=True)
    args = ap.parse_args()
    out = Path(args.out)
    pre = snapshot_run(args.policy, out / "pre")  # the source run may still be training
    vanilla = load_policy(pre)
    nominal = build_real_model("nominal", vanilla.env_cfg.sim)
    refs = load_references(args.motion, nominal, load_robot_spec(), args.clip)
    if args.corrections_from:
        fits = reuse_corrections(Path(args.corrections_from), out)
        print(
            f"corrections (Δa, SysID, Δs, noise level) fitted in {args.corrections_from}, on rollouts of another "
            "clip: none of them has seen this clip",
            flush=True,
        )
    else:
        t0 = time.perf_counter()
        trajs = collect_rollouts(vanilla.policy.act_inference, refs, args.real, vanilla.env_cfg, args.episodes, seed=1)
        write_collection(out / "collect.pkl", trajs)
        frames = sum(t.num_frames for t in trajs.values())
        print(
            f"collected {len(trajs)} rollouts ({frames} frames) in {args.real} in {time.perf_counter() - t0:.0f} s",
            flush=True,
        )
        fits = fit_corrections(out, list(trajs.values()), args.delta_joints, args.delta_model)
        print(
            f"fits: Δa ({args.delta_model}, {args.delta_joints}) {fits['delta_s']} s, RMS "
            f"{fits['delta_rms_action']:.3f} action units; SysID {fits['sysid_s']} s → {fits['sysid']}; Δs "
            f"{fits['dynamics_s']} s, explained variance {fits['dynamics']['explained_variance']:.2f}",
            flush=True,
        )
    seeds = [int(s) for s in args.seeds.split(",")]
    wanted = set(args.methods.split(","))
    todo = [
        (name, plan, seed)
        for seed in seeds
        for name, plan in plans(out, args.real, fits["delta_rms_action"]).items()
        if name in wanted
    ]
    t0 = time.perf_counter()
    walls = Parallel(n_jobs=args.jobs, verbose=0)(
        delayed(run_finetune)(
            pre, args.motion, args.clip, out / f"{name}_s{seed}", plan, args.iterations, args.num_envs, seed
        )
        for name, plan, seed in todo
    )
    print(
        f"{len(todo)} fine-tunings × {args.iterations} iterations × {args.num_envs} envs in "
        f"{time.perf_counter() - t0:.0f} s (median {np.median(walls):.0f} s each, {args.jobs} jobs)",
        flush=True,
    )
    results: dict[str, list[dict]] = {"Vanilla": [evaluate(pre, refs, args.real, args.eval_episodes)]}
    for name, _, seed in todo:
        results.setdefault(name, []).append(evaluate(out / f"{name}_s{seed}", refs, args.real, args.eval_episodes))
    print(
        f"\n{args.real}, each policy alone, {args.eval_episodes} matched episodes from phase 0; mean ± std over "
        f"seeds {args.seeds} (Vanilla: one policy)"
    )
    print("| method | success | Eg-mpjpe [mm] | Empjpe [mm] | Eacc [mm/frame²] | Evel [mm/frame] | clip completed |")
    print("|---|---|---|---|---|---|---|")
    names = [n for n in ORDER if n in results]
    for name in names:
        rows = results[name]
        cells = []
        for key in METRICS:
            v = np.array([r[key] for r in rows])
            fmt = "{:.0%}" if key in ("success_rate", "completion") else "{:.2f}" if "per_frame" in key else "{:.1f}"
            cells.append(fmt.format(v.mean()) + (f" ± {fmt.format(v.std())}" if len(v) > 1 else ""))
        print(f"| {name} | " + " | ".join(cells) + " |")
    closed: dict[str, dict[str, float]] = {}
    if "Oracle" in results:
        print("\nshare of the Vanilla→Oracle gap closed (mean over seeds):")
        for key in ("eg_mpjpe_mm", "success_rate", "completion"):
            mean = {n: float(np.mean([r[key] for r in results[n]])) for n in names}
            gap = mean["Oracle"] - mean["Vanilla"]
            closed[key] = {n: (mean[n] - mean["Vanilla"]) / gap if abs(gap) > 1e-9 else float("nan") for n in names}
            print(f"  {key} (gap {gap:+.3g}): " + ", ".join(f"{n} {closed[key][n]:.0%}" for n in names[1:-1]))
    summary = {"args": vars(args), "fits": fits, "results": results, "gap_closed": closed}
    held = None
    if args.corrections_from:  # this clip's own real rollouts were never fitted: score the corrections on them
        held = collect_rollouts(vanilla.policy.act_inference, refs, args.real, vanilla.env_cfg, args.episodes, seed=2)
        source = f"{args.clip or 'this library'} (Vanilla's rollouts"
    elif args.heldout_clip:
        held_refs = load_references(args.motion, nominal, load_robot_spec(), args.heldout_clip)
        held = collect_rollouts(None, held_refs, args.real, vanilla.env_cfg, args.episodes, seed=2)
        source = f"{args.heldout_clip} (zero-policy rollouts"
    if held is not None:
        one_step = heldout_one_step(list(held.values()), out, args.real)
        summary["heldout_one_step_rms"] = one_step
        print(
            f"\nheld-out clip {source}, {sum(t.num_frames for t in held.values())} frames): one-step prediction "
            "RMS (ratio to the nominal simulator)"
        )
        for name, v in one_step.items():
            print(f"  {name:<26} {v:.5f}  ({v / one_step['nominal']:.2f}×)")
    (out / "table4.json").write_text(json.dumps(summary, indent=2, default=float))
    plot(results, out / "table4.png", f"{args.real}: fine-tuned policies deployed alone ({len(seeds)} seeds)")
    print(f"\nwrote {out / 'table4.json'}, {out / 'table4.png'}")


if __name__ == "__main__":
    main()
