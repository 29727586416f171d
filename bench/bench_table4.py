"""The paper's Table IV in our setting: stage-3 baselines and ASAP, each fine-tuned policy deployed alone in a
"real" profile.

    python bench/bench_table4.py --policy RUN --motion LIB.pkl --real combined,pybullet:combined --seeds 0,1,2 \\
        --iterations 50 --num-envs 64 --episodes 6 --eval-episodes 32 -o /tmp/table4

``--real`` takes a comma list of "real" robots (MuJoCo profiles, or ``pybullet:<profile>`` played by PyBullet);
each gets everything below on its own, in its own subfolder of the output (``combined/``,
``pybullet_combined/``). One set of "real" rollouts of the pre-trained policy (``--episodes``, the first from
phase 0, the rest from random phases) fits every correction: ASAP's learned Δa, SysID (Kp per joint group,
delay, torso mass), DeltaDynamics (a learned state residual); ActionNoise uses Gaussian noise of the
learned Δa's RMS. Each method then fine-tunes the pre-trained policy for the same budget per seed:

  Vanilla (no fine-tuning) · Continued (nominal simulator) · ActionNoise · SysID · DeltaDynamics ·
  ASAP (nominal + frozen Δa) · Oracle (the robot itself; without domain randomization in PyBullet)

and every resulting policy runs alone in the robot from phase 0 under ``--eval-episodes`` matched episodes, the
same for every policy and held out from the fitting rollouts: randomized physics in a MuJoCo robot, randomized
start joint angles in a PyBullet one (its model cannot be randomized). Printed: success, Eg-mpjpe, Empjpe, Eacc,
Evel and clip completion, mean ± std over seeds, and the share of the Vanilla→Oracle gap (success, Eg-mpjpe,
completion) each method closes with a 95 % bootstrap interval over seeds and evaluation episodes
(:mod:`table4_stats`), and the paired difference ASAP − SysID (and ASAP − Continued). With ``--heldout-clip``, the
corrections fitted on the trained clip are scored on another clip's rollouts: RMS of the one-step prediction error
of each corrected simulator (the reference: the nominal simulator). With ``--corrections-from DIR`` nothing is
fitted: the corrections of an earlier run on another clip (its ``delta.pt``, ``sysid.json``, ``dynamics.pt`` of the
same robot) fine-tune this clip's policy — Table IV "on a clip not used to fit Δa" — and are scored one step on
this policy's own real rollouts. With ``--pool-rollouts DIR[,DIR]`` the fits also see the "real" rollouts that
earlier runs on other clips collected in the same robot (their ``collect.pkl``), as the paper fits Δa on the
rollouts of several policies; this clip's own rollouts are always among them. Writes ``table4.json`` (per robot:
fits, per-seed and per-episode results, gap shares and intervals, fine-tuning wall and CPU seconds) and
``table4.png`` (one row per robot) to the output folder; ``bench/table4_report.py`` pools several of them (one per
clip).

With ``--asap-rounds N`` (N ≥ 2) the loop goes round again, per seed: round k rolls round k − 1's fine-tuned ASAP
policy out in the robot (``--episodes`` rollouts, the same start phases), refits Δa on every round's rollouts so
far, and fine-tunes round k − 1's policy for ``--iterations`` more in the nominal simulator with the new Δa (row
"ASAP rk"). SysID, if it ran, gets the same extra budget from its own fine-tuned policies ("SysID rk"). Each row
is evaluated on the same matched episodes and its budget (rollouts, iterations in all) is written with it. An
output folder that already holds round 1 with the same settings keeps it: only the later rounds are computed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from joblib import Parallel, delayed

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from table4_stats import (
    DEFAULT_REPLICATES,
    OPTIONAL_METHODS,
    ORDER,
    ROUND_METHODS,
    SHARE_METRICS,
    GapShare,
    compared_pairs,
    episode_samples,
    format_share,
    gap_share,
    method_order,
    parse_round,
    round_name,
    share_difference,
)

from retarget.asap_pkl import atomic_write
from robots.registry import load_robot_spec
from trainers.defaults import DEFAULT_ENGINE, DEFAULT_WARP_DEVICE, ENGINES
from trainers.delta.collect import collect_rollouts
from trainers.delta.collection import Trajectory, read_collection, write_collection
from trainers.delta.defaults import (
    DEFAULT_FINETUNE_ITERATIONS,
    DEFAULT_FITTING_ROLLOUTS,
    DEFAULT_JOINTS,
    DEFAULT_MODEL,
    JOINT_SET_NAMES,
)
from trainers.delta.dynamics import DeltaDynamics, fit_delta_dynamics
from trainers.delta.ensemble import DEFAULT_ENSEMBLE_MEMBERS, fit_delta_ensemble
from trainers.delta.learned import MODEL_KINDS, LearnedDelta, LearnedDeltaConfig, fit_on_labels, transition_labels
from trainers.delta.one_step import predict_next, previous_targets, recorded_next, transitions
from trainers.delta.sysid import identify
from trainers.evaluate import summarize_episodes
from trainers.finetune.finetune import finetune_policy
from trainers.finetune.loop_config import DEFAULT_ROUNDS
from trainers.finetune.real_eval import rollouts_in_profile
from trainers.finetune.selection_config import (
    DEFAULT_SELECT_EVERY,
    DEFAULT_SELECTION,
    MIN_START_NOISE_RAD,
    NO_SELECTION,
    SELECTION_FILE,
    SelectionConfig,
)
from trainers.metrics import tracking_metrics
from trainers.observations import rotate_to_base
from trainers.policy_io import load_policy, snapshot_run
from trainers.ppo.trust_region import DEFAULT_ANCHOR_MAX_KL, AnchorTrustRegion
from trainers.real.model import build_real_model
from trainers.real.profiles import UnknownProfileError, get_profile, save_profile
from trainers.reference import load_references

DEFAULT_METHODS = tuple(m for m in ORDER[1:] if m not in OPTIONAL_METHODS)
"""Methods the bench runs unless told (the trust-region and ensemble variants of ASAP are options)."""
METRICS = ("success_rate", "eg_mpjpe_mm", "empjpe_mm", "eacc_mm_per_frame2", "evel_mm_per_frame", "completion")
ENSEMBLE_FILE = "delta_ensemble.pt"
CORRECTION_FILES = ("delta.pt", "sysid.json", "dynamics.pt", ENSEMBLE_FILE)
FITTING_SEED = 1
"""Seed of the fitting rollouts' start phases (the evaluation episodes use 100, the held-out rollouts 2)."""
DEFAULT_EVAL_EPISODES = 32
"""Matched evaluation episodes per policy in each robot. On 8 a seed's success moves in steps of 12.5 points and its
binomial noise alone is ± 15-18 points at mid-range success, most of the spread over seeds measured on 8; the 8 drawn
first were also easier than the 32 (docs/table4.md, "How much of the spread is the 8 episodes")."""


def fit_corrections(
    out: Path,
    trajs: list[Trajectory],
    joints: str,
    delta_model: str,
    fit: set[str],
    ensemble_members: int = DEFAULT_ENSEMBLE_MEMBERS,
) -> dict:
    """Fit Δa (always: ASAP, and the noise level matching its RMS), and of SysID ("sysid"), Δs ("dynamics"), the
    other Δa model kinds ("kinds") and the bootstrap Δa ensemble ("ensemble") those ``fit`` names, all on the same
    rollouts."""
    t = time.perf_counter()
    cfg = LearnedDeltaConfig(joints=joints, previous_target=True, model=delta_model)
    x, y = transition_labels(trajs, cfg)
    kinds = MODEL_KINDS if "kinds" in fit else (delta_model,)
    for kind in kinds:  # every kind on the same labels, for the held-out comparison; ASAP uses delta_model's
        fitted, stats = fit_on_labels(x, y, dataclasses.replace(cfg, model=kind))
        if "kinds" in fit:
            fitted.save(out / f"delta_{kind}.pt")
        if kind == delta_model:
            delta, dstats = fitted, stats
    delta.save(out / "delta.pt")
    ensemble = {}
    if "ensemble" in fit:
        fitted_ensemble, estats = fit_delta_ensemble(trajs, cfg, ensemble_members, labels=(x, y))
        fitted_ensemble.save(out / ENSEMBLE_FILE)
        ensemble = {"ensemble": estats}
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
    fits: dict = {
        "delta": dstats,
        "delta_rms_action": float(np.sqrt((da**2).mean())),
        "delta_s": round(time.perf_counter() - t, 1),
        **ensemble,
    }
    if "sysid" in fit:
        fits |= fit_sysid(out, trajs)
    if "dynamics" in fit:
        t = time.perf_counter()
        dyn, ystats = fit_delta_dynamics(trajs)
        dyn.save(out / "dynamics.pt")
        fits |= {"dynamics": ystats, "dynamics_s": round(time.perf_counter() - t, 1)}
    return fits


def fit_sysid(out: Path, trajs: list[Trajectory]) -> dict:
    """SysID's parameters identified on ``trajs``, saved as ``out/sysid.json``; its record in the fits."""
    t = time.perf_counter()
    sysid = identify(trajs)
    save_profile(sysid.profile, out / "sysid.json")
    return {
        "sysid": sysid.parameters,
        "sysid_rms": [sysid.rms_nominal, sysid.rms_identified],
        "sysid_s": round(time.perf_counter() - t, 1),
    }


def corrections_needed(methods: set[str], heldout: bool) -> set[str]:
    """What :func:`fit_corrections` must fit beyond Δa: what the methods fine-tune in, and everything for the
    held-out one-step comparison."""
    if heldout:
        return {"sysid", "dynamics", "kinds"}
    return (
        {"sysid"} & {m.lower() for m in methods}
        | ({"dynamics"} if "DeltaDynamics" in methods else set())
        | ({"ensemble"} if "ASAP-E" in methods else set())
    )


def reuse_corrections(source: Path, real: str, out: Path) -> dict:
    """The corrections another bench run fitted for robot ``real`` (its Δa, SysID profile, Δs and noise level),
    copied into ``out``. ``source`` is that run's output folder (one subfolder per robot) or, from a run of one
    robot before robots had subfolders, the folder holding the files themselves."""
    summary = json.loads((source / "table4.json").read_text())
    if "robots" in summary:
        if real not in summary["robots"]:
            raise SystemExit(
                f"{source / 'table4.json'}: no corrections for {real} (it has {', '.join(summary['robots'])})"
            )
        source, fits = source / robot_folder(real), summary["robots"][real]["fits"]
    else:
        fits = summary["fits"]
    optional = [f"delta_{k}.pt" for k in MODEL_KINDS]  # the held-out comparison of Δa models
    for name in (*CORRECTION_FILES, *optional):
        if name == "delta.pt" or (source / name).is_file():  # what that run fitted (Δa always)
            shutil.copyfile(source / name, out / name)
    return fits


def pooled_rollouts(sources: list[Path], real: str) -> dict[str, Trajectory]:
    """The fitting rollouts that earlier bench runs (on other clips) collected in robot ``real``, keyed
    ``<run folder>/<rollout>`` so rollouts of different runs never collide."""
    pooled: dict[str, Trajectory] = {}
    for source in sources:
        pooled |= {f"{source.name}/{key}": traj for key, traj in read_collection(rollouts_file(source, real)).items()}
    return pooled


def rollouts_file(source: Path, real: str) -> Path:
    """The fitting rollouts an earlier bench run collected in robot ``real``."""
    path = source / robot_folder(real) / "collect.pkl"
    if not path.is_file():
        raise SystemExit(f"--pool-rollouts {source}: no rollouts collected in {real} ({path} missing)")
    return path


def robot_folder(real: str) -> str:
    """Subfolder of the output for one "real" robot ('pybullet:combined' → 'pybullet_combined')."""
    return real.replace(":", "_").replace("/", "_")


def plans(out: Path, real: str, noise_std: float) -> dict[str, tuple[str, str | None, str | None]]:
    """method → (simulator, delta spec, real profile) for :func:`finetune_policy`."""
    return {
        "Continued": ("nominal", None, None),
        "ActionNoise": ("delta", f"noise:{noise_std:.4f}", None),
        "SysID": ("real", None, str(out / "sysid.json")),
        "DeltaDynamics": ("dynamics", str(out / "dynamics.pt"), None),
        "ASAP": ("delta", str(out / "delta.pt"), None),
        "ASAP-TR": ("delta", str(out / "delta.pt"), None),
        "ASAP-E": ("delta", str(out / ENSEMBLE_FILE), None),
        "Oracle": ("real", None, real),
    }


def selection_of(args) -> SelectionConfig:
    """The deployment rule ``--select-every`` / ``--select-episodes`` ask for (every round, every method)."""
    return SelectionConfig(every=args.select_every, episodes=args.select_episodes)


def run_finetune(
    pre: Path,
    motion: str,
    clip: str | None,
    folder: Path,
    plan,
    iterations: int,
    num_envs: int,
    seed: int,
    trust_region: AnchorTrustRegion | None = None,
    engine: str = DEFAULT_ENGINE,
    warp_device: str = DEFAULT_WARP_DEVICE,
    selection: SelectionConfig = NO_SELECTION,
) -> tuple[float, float]:
    """Fine-tune one method for one seed; (wall, CPU) seconds it took (CPU: this process's, all threads)."""
    sim, delta, profile = plan
    t, cpu = time.perf_counter(), time.process_time()
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
        trust_region=trust_region,
        engine=engine,
        warp_device=warp_device,
        selection=selection,
    )
    return time.perf_counter() - t, time.process_time() - cpu


def evaluation_episodes(real: str, episodes: int, env_cfg) -> dict:
    """How the matched evaluation episodes differ: randomized physics around a MuJoCo-played robot; for a robot
    played by another engine (whose model MuJoCo cannot randomize) the training's start-pose joint noise."""
    if episodes <= 1:
        return {"domain_rand": False, "start_noise_rad": 0.0}
    if get_profile(real).engine == "mujoco":
        return {"domain_rand": True, "start_noise_rad": 0.0}
    return {"domain_rand": False, "start_noise_rad": max(env_cfg.init_dof_noise_rad, MIN_START_NOISE_RAD)}


def evaluate(folder: Path, refs, real: str, episodes: int) -> dict:
    """Table metrics of the policy in ``folder`` (a run folder: its deployed checkpoint; or a checkpoint file) alone
    in ``real`` over the matched episodes, and per episode (``episodes``: success, Eg-mpjpe, frames, completion) for
    the confidence intervals."""
    loaded = load_policy(folder)
    draws = evaluation_episodes(real, episodes, loaded.env_cfg)
    runs, clip_ids, dt_s = rollouts_in_profile(
        loaded.policy.act_inference, refs, real, loaded.env_cfg, episodes_per_clip=episodes, seed=100, **draws
    )
    m, per_clip = summarize_episodes(refs, clip_ids, runs, dt_s)
    row: dict = {k: float(getattr(m, k)) for k in METRICS if k != "completion"}
    row["completion"] = float(np.mean([c.mean_episode_fraction for c in per_clip]))
    singles = [tracking_metrics([e]) for e in runs]
    clip_frames = [refs[c].duration_s / dt_s + 1 for c in clip_ids]
    row["episodes"] = {
        "success_rate": [s.success_rate for s in singles],
        "eg_mpjpe_mm": [s.eg_mpjpe_mm for s in singles],
        "frames": [s.num_frames for s in singles],
        "completion": [min(len(e[0]) / f, 1.0) for e, f in zip(runs, clip_frames)],
    }
    return row


def gap_shares_with_ci(results: dict[str, list[dict]], replicates: int = DEFAULT_REPLICATES) -> dict:
    """metric → method → share of the Vanilla→Oracle gap and its 95 % bootstrap interval (seeds × episodes);
    metric → "A − B" → the paired difference of two methods' shares (:data:`COMPARED`, where both ran)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for key in SHARE_METRICS:
        samples = {name: episode_samples(rows, key) for name, rows in results.items()}
        out[key] = {}
        for name in samples:
            if name not in ("Vanilla", "Oracle"):
                out[key][name] = dataclasses.asdict(gap_share([samples], name, replicates=replicates))
        for a, b in compared_pairs(samples):
            d = share_difference([samples], a, b, replicates=replicates)
            out[key][f"{a} − {b}"] = dataclasses.asdict(d)
    return out


def gap_closed(shares: dict) -> dict[str, dict[str, float]]:
    """metric → method → share, from :func:`gap_shares_with_ci`'s output without the paired differences."""
    return {k: {n: g["share"] for n, g in v.items() if " − " not in n} for k, v in shares.items()}


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
    }
    if (out / "sysid.json").is_file():
        rows["SysID"] = rms(predict_next(build_real_model(str(out / "sysid.json")), pairs).vector())
    kinds = {f"ASAP Δa {k}": out / f"delta_{k}.pt" for k in MODEL_KINDS if (out / f"delta_{k}.pt").is_file()}
    for name, path in (kinds or {"ASAP": out / "delta.pt"}).items():
        rows[name] = rms(predict_next(nominal, transitions(with_delta(trajs, path))).vector())
    if not (out / "dynamics.pt").is_file():
        return rows
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


def plot(tables: dict[str, dict], path: Path, title: str) -> None:
    """One row of bars per robot: Eg-mpjpe and completion, mean ± std over seeds, every seed a dot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(tables), 2, figsize=(11, 3.8 * len(tables)), squeeze=False)
    for row_axes, (real, summary) in zip(axes, tables.items()):
        results = summary["results"]
        names = method_order(results)
        for ax, key, label in zip(
            row_axes,
            ("eg_mpjpe_mm", "completion"),
            ("Eg-mpjpe [mm] (lower is better)", "clip completed (higher is better)"),
        ):
            vals = [[r[key] for r in results[n]] for n in names]
            ax.bar(
                names,
                [np.mean(v) for v in vals],
                yerr=[np.std(v) for v in vals],
                capsize=4,
                color=[
                    "#888" if n in ("Vanilla", "Continued") else "#c44" if n.startswith("ASAP") else "#48a"
                    for n in names
                ],
            )
            for i, v in enumerate(vals):
                ax.scatter([i] * len(v), v, color="k", s=8, zorder=3)
            ax.set_title(f"{real}: {label}")
            ax.tick_params(axis="x", rotation=30)
            ax.grid(axis="y", alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def print_table(real: str, results: dict[str, list[dict]], shares: dict, args) -> None:
    print(
        f"\n{real}, each policy alone, {args.eval_episodes} matched episodes from phase 0; mean ± std over "
        f"seeds {args.seeds} (Vanilla: one policy)"
    )
    print("| method | success | Eg-mpjpe [mm] | Empjpe [mm] | Eacc [mm/frame²] | Evel [mm/frame] | clip completed |")
    print("|---|---|---|---|---|---|---|")
    for name in method_order(results):
        rows = results[name]
        cells = []
        for key in METRICS:
            v = np.array([r[key] for r in rows])
            fmt = "{:.0%}" if key in ("success_rate", "completion") else "{:.2f}" if "per_frame" in key else "{:.1f}"
            cells.append(fmt.format(v.mean()) + (f" ± {fmt.format(v.std())}" if len(v) > 1 else ""))
        print(f"| {name} | " + " | ".join(cells) + " |")
    if shares:
        print("\nshare of the Vanilla→Oracle gap closed, [95 % bootstrap interval over seeds and episodes]:")
        for key, by_method in shares.items():
            gap = next(iter(by_method.values()))["gap"] if by_method else float("nan")
            print(
                f"  {key} (gap {gap:+.3g}): "
                + ", ".join(f"{n} {format_share(GapShare(**g))}" for n, g in by_method.items())
            )


def run_robot(args, real: str, out: Path, pre: Path, vanilla, refs, nominal, earlier: dict | None = None) -> dict:
    """Round 1 in ``real`` (unless ``earlier``, that robot's summary of an earlier run in this folder, holds it),
    then the later rounds of ``--asap-rounds``: the robot's summary."""
    if earlier is None:
        summary = first_round(args, real, out, pre, vanilla, refs, nominal)
    else:
        summary = earlier
        print(
            f"[{real}] round 1 ({', '.join(summary['results'])}) read from the earlier run in {out.parent}", flush=True
        )
    if args.asap_rounds > 1:
        for k in range(2, args.asap_rounds + 1):
            later_round(args, real, out, vanilla, refs, summary, k)
        finish_rounds(args, real, summary)
    return summary


def first_round(args, real: str, out: Path, pre: Path, vanilla, refs, nominal) -> dict:
    """Fit (or reuse) the corrections in ``real``, fine-tune every method for every seed, evaluate: its summary."""
    out.mkdir(parents=True, exist_ok=True)
    if args.corrections_from:
        fits = reuse_corrections(Path(args.corrections_from), real, out)
        print(
            f"[{real}] corrections (Δa, SysID, Δs, noise level) taken from {args.corrections_from}: none was fitted "
            "on this run's rollouts",
            flush=True,
        )
    else:
        t0 = time.perf_counter()
        trajs = collect_rollouts(
            vanilla.policy.act_inference, refs, real, vanilla.env_cfg, args.episodes, seed=FITTING_SEED
        )
        write_collection(out / "collect.pkl", trajs)
        frames = sum(t.num_frames for t in trajs.values())
        print(
            f"[{real}] collected {len(trajs)} rollouts ({frames} frames) in {time.perf_counter() - t0:.0f} s",
            flush=True,
        )
        fit = corrections_needed(set(args.methods.split(",")), bool(args.heldout_clip))
        pooled = pooled_rollouts([Path(p) for p in args.pool_rollouts], real)
        fits = fit_corrections(
            out,
            [*trajs.values(), *pooled.values()],
            args.delta_joints,
            args.delta_model,
            fit,
            args.ensemble_members,
        )
        fits["fitting_frames"] = frames
        if pooled:
            fits["pooled_from"] = list(args.pool_rollouts)
            fits["pooled_frames"] = sum(t.num_frames for t in pooled.values())
            print(
                f"[{real}] pooled {len(pooled)} rollouts ({fits['pooled_frames']} frames) of "
                f"{', '.join(args.pool_rollouts)} into the fits",
                flush=True,
            )
        print(
            f"[{real}] fits: Δa ({args.delta_model}, {args.delta_joints}) {fits['delta_s']} s, RMS "
            f"{fits['delta_rms_action']:.3f} action units"
            + (f"; SysID {fits['sysid_s']} s → {fits['sysid']}" if "sysid" in fits else "")
            + (
                f"; ensemble of {fits['ensemble']['members']}, members' disagreement "
                f"{fits['ensemble']['disagreement_rms_rad']:.4f} rad RMS "
                f"(labels {fits['ensemble']['label_rms_rad']:.4f})"
                if "ensemble" in fits
                else ""
            )
            + (
                f"; Δs {fits['dynamics_s']} s, explained variance {fits['dynamics']['explained_variance']:.2f}"
                if "dynamics" in fits
                else ""
            ),
            flush=True,
        )
    seeds = [int(s) for s in args.seeds.split(",")]
    wanted = set(args.methods.split(","))
    todo = [
        (name, plan, seed)
        for seed in seeds
        for name, plan in plans(out, real, fits["delta_rms_action"]).items()
        if name in wanted
    ]
    t0 = time.perf_counter()
    bounded = AnchorTrustRegion(args.trust_region_kl)
    selection = selection_of(args)
    costs = Parallel(n_jobs=args.jobs, verbose=0)(
        delayed(run_finetune)(
            pre,
            args.motion,
            args.clip,
            out / f"{name}_s{seed}",
            plan,
            args.iterations,
            args.num_envs,
            seed,
            bounded if name == "ASAP-TR" else None,
            engine=args.engine,
            warp_device=args.device,
            selection=selection,
        )
        for name, plan, seed in todo
    )
    print(
        f"[{real}] {len(todo)} fine-tunings × {args.iterations} iterations × {args.num_envs} envs in "
        f"{time.perf_counter() - t0:.0f} s (median {np.median([w for w, _ in costs]):.0f} s each, {args.jobs} jobs)",
        flush=True,
    )
    finetune_cost = {f"{name}_s{seed}": {"wall_s": w, "cpu_s": c} for (name, _, seed), (w, c) in zip(todo, costs)}
    results: dict[str, list[dict]] = {"Vanilla": [evaluate(pre, refs, real, args.eval_episodes)]}
    for name, _, seed in todo:
        results.setdefault(name, []).append(evaluate(out / f"{name}_s{seed}", refs, real, args.eval_episodes))
    shares = gap_shares_with_ci(results) if "Oracle" in results else {}
    print_table(real, results, shares, args)
    summary = {
        "fits": fits,
        "evaluation": evaluation_episodes(real, args.eval_episodes, vanilla.env_cfg),
        "results": results,
        "gap_closed": gap_closed(shares),
        "gap_share_ci": shares,
        "finetune_cost": finetune_cost,
    }
    if selection.enabled:
        summary["selection"] = dataclasses.asdict(selection)
        summary["chosen_iterations"] = chosen_iterations(out, todo)
        summary["last_checkpoint"] = last_checkpoint_rows(out, todo, results["Vanilla"], refs, real, args)
    held = None
    if args.corrections_from:  # this clip's own real rollouts were never fitted: score the corrections on them
        held = collect_rollouts(vanilla.policy.act_inference, refs, real, vanilla.env_cfg, args.episodes, seed=2)
        source = f"{args.clip or 'this library'} (Vanilla's rollouts"
    elif args.heldout_clip:
        held_refs = load_references(args.motion, nominal, load_robot_spec(), args.heldout_clip)
        held = collect_rollouts(None, held_refs, real, vanilla.env_cfg, args.episodes, seed=2)
        source = f"{args.heldout_clip} (zero-policy rollouts"
    if held is not None:
        one_step = heldout_one_step(list(held.values()), out, real)
        summary["heldout_one_step_rms"] = one_step
        print(
            f"\n[{real}] held-out clip {source}, {sum(t.num_frames for t in held.values())} frames): one-step "
            "prediction RMS (ratio to the nominal simulator)"
        )
        for name, v in one_step.items():
            print(f"  {name:<26} {v:.5f}  ({v / one_step['nominal']:.2f}×)")
    return summary


def chosen_iterations(out: Path, todo) -> dict[str, list[int]]:
    """method → the fine-tuning iteration each seed deployed (0: the pre-trained checkpoint)."""
    chosen: dict[str, list[int]] = {}
    for name, _, seed in todo:
        record = json.loads((out / run_folder(name, seed) / SELECTION_FILE).read_text())
        chosen.setdefault(name, []).append(int(record["chosen_iteration"]) - int(record["base_iteration"]))
    return chosen


def last_checkpoint_rows(out: Path, todo, vanilla_rows: list[dict], refs, real: str, args) -> dict:
    """The control of the selection, from the same fine-tunings: every method's last checkpoint deployed instead,
    on the same matched episodes (results, gap shares)."""
    results: dict[str, list[dict]] = {"Vanilla": vanilla_rows}
    for name, _, seed in todo:
        last = out / run_folder(name, seed) / "model_last.pt"
        results.setdefault(name, []).append(evaluate(last, refs, real, args.eval_episodes))
    shares = gap_shares_with_ci(results) if "Oracle" in results else {}
    print(f"\n[{real}] control: the last checkpoint of the same fine-tunings deployed (no selection)")
    print_table(real, results, shares, args)
    return {"results": results, "gap_closed": gap_closed(shares), "gap_share_ci": shares}


def run_folder(name: str, seed: int) -> str:
    """Fine-tuning folder of a table row and seed ('ASAP' → 'ASAP_s0', 'ASAP r2' → 'ASAP_r2_s0')."""
    return f"{name.replace(' ', '_')}_s{seed}"


def rollout_phases(trajs) -> list[list[float]]:
    """[phase at the first frame, phase at the last] of each rollout: how far into the clip it got before falling."""
    return [[float(t.phase[0]), float(t.phase[-1])] for t in trajs]


def first_round_rollouts(args, real: str, out: Path) -> list[Trajectory]:
    """The rollouts round 1 fitted on: the pre-trained policy's in this robot and the pooled runs'."""
    pooled = pooled_rollouts([Path(p) for p in args.pool_rollouts], real)
    return [*read_collection(out / "collect.pkl").values(), *pooled.values()]


def refit(args, real: str, out: Path, vanilla, refs, method: str, k: int, seed: int, first: list[Trajectory]):
    """Round ``k`` of ``method`` for one seed: roll round k − 1's fine-tuned policy out in the robot (the fitting
    rollouts' budget and start phases), refit the correction on every round's rollouts (round 1's, and this
    method's and seed's later ones). Returns the folder of the new correction and its record."""
    base = out / run_folder(round_name(method, k - 1), seed)
    rounds = out / "rounds"
    folder = rounds / run_folder(round_name(method, k), seed)
    folder.mkdir(parents=True, exist_ok=True)
    policy = load_policy(base).policy
    trajs = collect_rollouts(policy.act_inference, refs, real, vanilla.env_cfg, args.episodes, seed=FITTING_SEED)
    write_collection(folder / "collect.pkl", trajs)
    later = [
        traj
        for j in range(2, k + 1)
        for traj in read_collection(rounds / run_folder(round_name(method, j), seed) / "collect.pkl").values()
    ]
    union = [*first, *later]
    if method == "ASAP":
        fits = fit_corrections(folder, union, args.delta_joints, args.delta_model, set())
    else:
        fits = fit_sysid(folder, union)
    record = {
        "base_policy": str(base),
        "rollouts": len(trajs),
        "frames": sum(t.num_frames for t in trajs.values()),
        "rollout_phases": rollout_phases(trajs.values()),
        "fitted_on_rollouts": len(union),
        **fits,
    }
    reached = record["rollout_phases"][0][1]
    print(
        f"[{real}] {round_name(method, k)} s{seed}: {len(trajs)} rollouts of {base.name} ({record['frames']} frames; "
        f"the one from phase 0 reached phase {reached:.2f}); refitted on {len(union)} rollouts"
        + (f", Δa RMS {fits['delta_rms_action']:.3f} action units" if method == "ASAP" else f" → {fits['sysid']}"),
        flush=True,
    )
    return folder, record


def later_round(args, real: str, out: Path, vanilla, refs, summary: dict, k: int) -> None:
    """Round ``k`` ≥ 2 of ASAP (and SysID, if it ran) for every seed, added to ``summary``: collect with round
    k − 1's policy, refit on every round's rollouts, fine-tune round k − 1's policy for the same iterations in the
    refitted simulator, evaluate on the same matched episodes. Rows already in ``summary`` are kept."""
    seeds = [int(s) for s in args.seeds.split(",")]
    wanted = [round_name(m, k) for m in ROUND_METHODS if m in args.methods.split(",")]
    todo = [name for name in wanted if len(summary["results"].get(name, [])) != len(seeds)]
    if not todo:
        return
    first = first_round_rollouts(args, real, out)
    records = summary.setdefault("rounds", {})
    records.setdefault("Vanilla", {"rollout_phases": rollout_phases(read_collection(out / "collect.pkl").values())})
    jobs = []
    for name in todo:
        method = parse_round(name)[0]
        records[name] = {}
        for seed in seeds:
            folder, record = refit(args, real, out, vanilla, refs, method, k, seed, first)
            records[name][f"s{seed}"] = record
            plan = plans(folder, real, record.get("delta_rms_action", 0.0))[method]
            jobs.append((name, seed, out / run_folder(round_name(method, k - 1), seed), plan))
    t0 = time.perf_counter()
    costs = Parallel(n_jobs=args.jobs, verbose=0)(
        delayed(run_finetune)(
            base,
            args.motion,
            args.clip,
            out / run_folder(name, seed),
            plan,
            args.iterations,
            args.num_envs,
            seed,
            engine=args.engine,
            warp_device=args.device,
            selection=selection_of(args),
        )
        for name, seed, base, plan in jobs
    )
    print(
        f"[{real}] round {k}: {len(jobs)} fine-tunings × {args.iterations} iterations in "
        f"{time.perf_counter() - t0:.0f} s",
        flush=True,
    )
    for (name, seed, _, _), (w, c) in zip(jobs, costs):
        summary["finetune_cost"][run_folder(name, seed)] = {"wall_s": w, "cpu_s": c}
    for name in todo:
        summary["results"][name] = [evaluate(out / run_folder(name, s), refs, real, args.eval_episodes) for s in seeds]


def round_budgets(args, real: str, names) -> dict[str, dict[str, int]]:
    """Per seed, what each fitted method used in all: fitting rollouts (round 1's, pooled ones included, and
    ``--episodes`` more per later round) and fine-tuning iterations."""
    first = args.episodes + len(pooled_rollouts([Path(p) for p in args.pool_rollouts], real))
    budgets = {}
    for name in method_order(names):
        method, k = parse_round(name)
        if method in ROUND_METHODS:
            budgets[name] = {
                "fitting_rollouts": first + (k - 1) * args.episodes,
                "finetune_iterations": k * args.iterations,
            }
    return budgets


def finish_rounds(args, real: str, summary: dict) -> None:
    """The gap shares of the later rounds' rows (round 1's stay as round 1 computed them, on its own rows), the
    budgets, and the table of every round."""
    results = summary["results"]
    summary["budget"] = round_budgets(args, real, results)
    if "Oracle" in results:
        every = gap_shares_with_ci(results)
        shares = {}
        for key, earlier in summary["gap_share_ci"].items():
            merged = {**every[key], **earlier}
            singles = [n for n in method_order(n for n in merged if " − " not in n)]
            pairs = [f"{a} − {b}" for a, b in compared_pairs(results)]
            shares[key] = {n: merged[n] for n in [*singles, *pairs]}
        summary["gap_share_ci"] = shares
        summary["gap_closed"] = gap_closed(shares)
    print_table(real, results, summary.get("gap_share_ci", {}), args)
    print(
        "\nbudget per seed (fitting rollouts in the robot, fine-tuning iterations), and how far fitting rollouts got:"
    )
    phases = summary.get("rounds", {})
    for name, budget in summary["budget"].items():
        line = f"  {name}: {budget['fitting_rollouts']} rollouts, {budget['finetune_iterations']} iterations"
        if name in phases:
            starts = [r["rollout_phases"][0][1] for r in phases[name].values()]
            line += f"; its new rollouts from phase 0 reached phase {', '.join(f'{p:.2f}' for p in starts)} (per seed)"
        print(line)
    if "Vanilla" in phases:
        print(
            f"  round 1's rollouts (Vanilla) from phase 0 reached phase {phases['Vanilla']['rollout_phases'][0][1]:.2f}"
        )


ROUND_ONE_SETTINGS = (
    "policy",
    "motion",
    "clip",
    "heldout_clip",
    "seeds",
    "iterations",
    "num_envs",
    "episodes",
    "eval_episodes",
    "delta_joints",
    "delta_model",
    "corrections_from",
    "select_every",
    "select_episodes",
    "pool_rollouts",
    "methods",
    "trust_region_kl",
)
"""Settings a later round must share with the run whose round 1 it continues (the robots may differ)."""


def earlier_run(out: Path, args) -> dict | None:
    """The table4.json already in ``out`` (None if there is none), after checking that it was made with this run's
    settings and from the policy snapshot still in ``out/pre``."""
    path = out / "table4.json"
    if not path.is_file():
        return None
    try:
        earlier = json.loads(path.read_text())
        made_with = earlier["args"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(
            f"{path}: cannot read it as the table of an earlier run ({type(exc).__name__}: {exc})"
        ) from None
    # Keys older runs did not write: today's defaults.
    defaults = vars(parse_args(["--policy", "", "--motion", "", "-o", ""]))
    for key in ROUND_ONE_SETTINGS:
        then, now = made_with.get(key, defaults[key]), vars(args)[key]
        if then != now:
            flag = "--" + key.replace("_", "-")
            raise SystemExit(f"{path}: made with {flag} {then!r}, this run has {now!r}; a later round needs round 1's")
    snapshot = out / "pre" / "model_last.pt"
    if not snapshot.is_file():
        raise SystemExit(f"{path}: the pre-trained policy of that run ({snapshot}) is missing")
    return earlier


def first_round_of(earlier: dict | None, real: str, args) -> dict | None:
    """Robot ``real``'s summary in the earlier run if it holds round 1 of every method for every seed, else None."""
    summary = (earlier or {}).get("robots", {}).get(real)
    if summary is None:
        return None
    seeds = args.seeds.split(",")
    complete = all(len(summary["results"].get(m, [])) == len(seeds) for m in args.methods.split(","))
    return summary if complete else None


def write_last_checkpoint_table(out: Path, summary: dict) -> None:
    """``table4_last.json``: the run's table with each robot's selection control (last checkpoints) as its results,
    readable by ``table4_report.py`` and ``table4_compare.py`` beside ``table4.json``."""
    robots = {real: s["last_checkpoint"] for real, s in summary["robots"].items() if "last_checkpoint" in s}
    if robots:
        control = {**summary, "robots": {real: {**summary["robots"][real], **rows} for real, rows in robots.items()}}
        for r in control["robots"].values():
            r.pop("last_checkpoint", None)
            r.pop("selection", None)
        text = json.dumps(control, indent=2, default=float)
        atomic_write(out / "table4_last.json", lambda tmp: tmp.write_text(text))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", required=True)
    ap.add_argument("--motion", required=True)
    ap.add_argument("--clip", default=None)
    ap.add_argument("--heldout-clip", default=None, help="clip of the same library whose rollouts no fit sees")
    ap.add_argument(
        "--real",
        default="soft_ankles_delay",
        help="comma list of real robots, each with its own fits, fine-tunings, table (combined,pybullet:combined)",
    )
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--iterations", type=int, default=DEFAULT_FINETUNE_ITERATIONS, help="fine-tuning PPO iterations")
    ap.add_argument("--num-envs", type=int, default=64)
    ap.add_argument("--episodes", type=int, default=DEFAULT_FITTING_ROLLOUTS, help="fitting rollouts")
    ap.add_argument(
        "--eval-episodes", type=int, default=DEFAULT_EVAL_EPISODES, help="matched randomized evaluation episodes"
    )
    ap.add_argument("--delta-joints", default=DEFAULT_JOINTS, choices=JOINT_SET_NAMES)
    ap.add_argument("--delta-model", default=DEFAULT_MODEL, choices=MODEL_KINDS)
    ap.add_argument(
        "--corrections-from",
        default=None,
        help="bench output folder whose fitted corrections to use (e.g. fitted on another clip's rollouts)",
    )
    ap.add_argument(
        "--pool-rollouts",
        type=lambda v: [p for p in v.split(",") if p],
        default=[],
        help="comma list of earlier bench output folders (other clips) whose rollouts in each robot join the fits",
    )
    ap.add_argument(
        "--asap-rounds",
        type=int,
        default=DEFAULT_ROUNDS,
        help="rounds of ASAP (and SysID), loop's default: each later one collects with the previous round's "
        "fine-tuned policy, refits on every round's rollouts and fine-tunes that policy again; a folder holding "
        "round 1 is reused; 1: the paper's single pass",
    )
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument(
        "--engine",
        choices=ENGINES,
        default=DEFAULT_ENGINE,
        help="what steps the fine-tunings (warp: MuJoCo Warp on --device, e.g. one GPU with --jobs 1); collection "
        "and evaluation in the real robots stay on their own engines",
    )
    ap.add_argument("--device", default=DEFAULT_WARP_DEVICE, help="Warp device of --engine warp")
    ap.add_argument(
        "--methods",
        default=",".join(DEFAULT_METHODS),
        help=f"fine-tuned methods to run (Vanilla always); valid: {', '.join(ORDER[1:])}",
    )
    ap.add_argument(
        "--trust-region-kl",
        type=float,
        default=DEFAULT_ANCHOR_MAX_KL,
        help="ASAP-TR: largest mean KL(pre-trained ‖ fine-tuned) of the actor on each update's observations [nats]",
    )
    ap.add_argument(
        "--ensemble-members",
        type=int,
        default=DEFAULT_ENSEMBLE_MEMBERS,
        help="ASAP-E: Δa fits, each on a bootstrap resample of the fitting rollouts; environment i of a fine-tuning "
        "steps with fit i mod K",
    )
    ap.add_argument(
        "--select-every",
        type=int,
        default=DEFAULT_SELECTION.every,
        help="deploy the best of the pre-trained checkpoint and every N-th fine-tuning iteration, judged in each "
        f"method's own fine-tuning simulator (e.g. {DEFAULT_SELECT_EVERY}; default: the library's, the last "
        "checkpoint); the last checkpoints are then evaluated as the control and written to table4_last.json",
    )
    ap.add_argument(
        "--select-episodes", type=int, default=DEFAULT_SELECTION.episodes, help="matched episodes per candidate"
    )
    ap.add_argument("-o", "--out", required=True)
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    robots = [r.strip() for r in args.real.split(",") if r.strip()]
    for real in robots:
        try:
            get_profile(real)
        except UnknownProfileError as exc:
            raise SystemExit(f"--real {real}: {exc}") from None
    unknown = set(args.methods.split(",")) - set(ORDER[1:])
    if unknown:
        raise SystemExit(f"--methods: unknown {', '.join(sorted(unknown))}; valid: {', '.join(ORDER[1:])}")
    if args.pool_rollouts and args.corrections_from:
        raise SystemExit("--pool-rollouts fits on more rollouts, --corrections-from fits nothing: give one of them")
    if not args.trust_region_kl > 0.0:
        raise SystemExit(f"--trust-region-kl {args.trust_region_kl}: give a bound > 0 [nats]")
    if args.ensemble_members < 1:
        raise SystemExit(f"--ensemble-members {args.ensemble_members}: an ensemble needs at least one member")
    if args.asap_rounds < 1:
        raise SystemExit(f"--asap-rounds {args.asap_rounds}: give 1 (ASAP once) or more")
    if args.asap_rounds > 1 and "ASAP" not in args.methods.split(","):
        raise SystemExit("--asap-rounds: later rounds fine-tune ASAP's policy again; add ASAP to --methods")
    if args.asap_rounds > 1 and args.corrections_from:
        raise SystemExit(
            "--asap-rounds refits on this clip's rollouts, --corrections-from fits nothing: give one of them"
        )
    for real in robots:  # before any work: a missing collection would otherwise stop the run at its second robot
        for source in args.pool_rollouts:
            rollouts_file(Path(source), real)
    out = Path(args.out)
    earlier = earlier_run(out, args) if args.asap_rounds > 1 else None
    # The source run may still be training: round 1 of an earlier run keeps the snapshot it was made from.
    pre = out / "pre" if earlier is not None else snapshot_run(args.policy, out / "pre")
    vanilla = load_policy(pre)
    nominal = build_real_model("nominal", vanilla.env_cfg.sim)
    refs = load_references(args.motion, nominal, load_robot_spec(), args.clip)
    summary: dict[str, Any] = {
        "args": vars(args),
        "clip": args.clip or (refs[0].name if len(refs) == 1 else Path(args.motion).stem),
        "policy_iteration": vanilla.iteration,
        "policy_penalty_scale": vanilla.penalty_scale,
        "policy_termination_distance_m": vanilla.termination_distance_m,
        "robots": {} if earlier is None else dict(earlier["robots"]),  # robots not run now keep their tables
    }
    print(
        f"policy {vanilla.checkpoint} (iteration {vanilla.iteration}): penalty curriculum scale "
        f"{vanilla.penalty_scale:.3g} of {vanilla.env_cfg.curriculum.penalty_scale_max:.3g}, termination distance "
        f"{vanilla.termination_distance_m:.2f} m"
    )
    title = f"{summary['clip']}: fine-tuned policies deployed alone ({len(args.seeds.split(','))} seeds)"
    for real in robots:  # the files are rewritten after each robot: a long run leaves the finished robots' tables
        done = first_round_of(earlier, real, args)
        summary["robots"][real] = run_robot(args, real, out / robot_folder(real), pre, vanilla, refs, nominal, done)
        atomic_write(out / "table4.json", lambda tmp: tmp.write_text(json.dumps(summary, indent=2, default=float)))
        plot(summary["robots"], out / "table4.png", title)
        write_last_checkpoint_table(out, summary)
    print(f"\nwrote {out / 'table4.json'}, {out / 'table4.png'}")
    return summary


if __name__ == "__main__":
    main()
