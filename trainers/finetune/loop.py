"""``run_loop``: ASAP's four stages on one clip, then the evaluation in the "real" profile.

RUN/pretrain/      stage 1: tracking policy in the nominal simulator       (model_last.pt)
RUN/collect.pkl    stage 2a: rollouts of that policy in the "real" profile
RUN/delta.pt       stage 2b: the learned Δa fitted to them
RUN/finetune/      stage 3: the policy fine-tuned with the frozen Δa       (model_last.pt)
RUN/roundK/        with ``LoopConfig.rounds`` ≥ 2, round K ≥ 2 of stages 2-3: collect.pkl (rollouts of round K − 1's
                   fine-tuned policy), delta.pt (Δa refitted on every round's rollouts), finetune/ (round K − 1's
                   policy fine-tuned again against it)
RUN/evaluation.json  Vanilla vs fine-tuned, each alone in the "real" profile (paper metrics)
RUN/provenance.json  per stage: artefact, inputs and sha256 hashes (:mod:`trainers.finetune.provenance`)

The evaluation is of the last round's policy. Each stage is skipped when provenance says it is complete for the
same inputs; a training stage interrupted mid-way resumes from its folder's checkpoint up to the same iteration budget.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path

from retarget.asap_pkl import atomic_write
from retarget.atomic_io import check_output_folder
from robots.registry import load_robot_spec
from trainers.config import TrackingEnvConfig
from trainers.delta.defaults import DEFAULT_PREVIOUS_TARGET
from trainers.finetune.loop_config import LoopConfig
from trainers.finetune.provenance import Provenance, file_ref
from trainers.finetune.selection_config import DEPLOYED, SelectionConfig

ROUND_STAGES = ("collect", "fit_delta", "finetune")


def stage_names(rounds: int) -> list[str]:
    """The loop's stages in order: round 1's keep the names they had before rounds existed (a finished run of one
    round stays finished), round K ≥ 2's carry ``_rK``."""
    per_round = [name if k == 1 else f"{name}_r{k}" for k in range(1, rounds + 1) for name in ROUND_STAGES]
    return ["pretrain", *per_round, "evaluate"]


def round_folder(run: Path, k: int) -> Path:
    """Where round ``k``'s collection, Δa and fine-tuning live: the run folder itself for round 1."""
    return run if k == 1 else run / f"round{k}"


StageRunner = Callable[[str, Path, dict, Callable[[], "dict | None"]], None]


@dataclasses.dataclass(frozen=True)
class _LoopRun:
    """What every round's stages read: the run's inputs, settings and the stage runner (skip or run + record)."""

    motion: str | Path
    motion_ref: dict
    """:func:`file_ref` of ``motion`` (path and sha256), hashed once per run."""
    clip: str
    profile: str
    run: Path
    cfg: LoopConfig
    selection: SelectionConfig
    stage: StageRunner


def _policy_iteration(ckpt: Path) -> int:
    import torch  # here, so the CLI reads LoopConfig's defaults without loading torch

    return int(torch.load(ckpt, weights_only=True)["iteration"]) if ckpt.is_file() else 0


def run_loop(
    motion: str | Path,
    clip: str,
    profile: str,
    run_dir: str | Path,
    cfg: LoopConfig | None = None,
    echo: Callable[[str], None] = print,
) -> dict:
    """Run (or resume) the loop; returns the evaluation (also in RUN/evaluation.json)."""
    from trainers.real.profiles import get_profile

    cfg = LoopConfig() if cfg is None else cfg
    get_profile(profile)  # fail before any work on an unknown profile
    run = Path(run_dir)
    check_output_folder(run)
    run.mkdir(parents=True, exist_ok=True)
    prov = Provenance(run / "provenance.json")
    motion_ref = file_ref(motion)
    env_cfg = TrackingEnvConfig()
    sim = dataclasses.replace(env_cfg.sim, num_threads=cfg.num_threads, engine=cfg.engine, warp_device=cfg.warp_device)
    env_cfg = dataclasses.replace(env_cfg, sim=sim)

    stages = stage_names(cfg.rounds)

    def stage(name: str, artefact: Path, inputs: dict, work: Callable[[], dict | None]) -> None:
        head = f"[{stages.index(name) + 1}/{len(stages)}] {name:<9}"
        if prov.is_complete(name, inputs):
            echo(
                f"{head} skipped: {artefact.relative_to(run)} is complete "
                f"(sha256 {prov.stages[name]['artefact']['sha256'][:12]})"
            )
            return
        echo(f"{head} running …")
        start = time.perf_counter()
        extra = work() or {}
        seconds = time.perf_counter() - start
        prov.record(name, artefact, inputs, seconds, **extra)
        echo(
            f"{head} done in {seconds:.1f} s → {artefact.relative_to(run)} "
            f"(sha256 {prov.stages[name]['artefact']['sha256'][:12]})"
        )

    # 1. pre-train in the nominal simulator.
    pre_dir, pre_ckpt = run / "pretrain", run / "pretrain" / "model_last.pt"
    pre_inputs = {
        "motion": motion_ref,
        "clip": clip,
        "simulator": "nominal",
        "iterations": cfg.pretrain_iterations,
        "num_envs": cfg.num_envs,
        "seed": cfg.seed,
    }

    def pretrain() -> dict:
        from trainers.train import train_track

        if _policy_iteration(pre_ckpt) < cfg.pretrain_iterations:
            train_track(
                motion,
                pre_dir,
                clip=clip,
                iterations=cfg.pretrain_iterations,
                num_envs=cfg.num_envs,
                seed=cfg.seed,
                env_cfg=env_cfg,
            )
        return {"policy_iteration": _policy_iteration(pre_ckpt)}

    stage("pretrain", pre_ckpt, pre_inputs, pretrain)

    selection = SelectionConfig(every=cfg.select_every, episodes=cfg.select_episodes)
    loop_run = _LoopRun(motion, motion_ref, clip, profile, run, cfg, selection, stage)
    policy_dir, policy_ckpt = pre_dir, pre_ckpt
    for k in range(1, cfg.rounds + 1):
        policy_dir, policy_ckpt = _asap_round(loop_run, k, policy_dir, policy_ckpt)

    # Evaluation: each policy alone (no Δa) in the "real" profile.
    ev = run / "evaluation.json"
    ev_inputs = {
        "vanilla": file_ref(pre_ckpt),
        "finetuned": file_ref(policy_ckpt),
        "motion": motion_ref,
        "motion_ids": [clip],
        "simulator": f"real:{profile}",
        "episodes": cfg.eval_episodes,
        "seed": cfg.seed,
    }

    def evaluate() -> None:
        from trainers.finetune.real_eval import evaluate_in_profile
        from trainers.policy_io import load_policy
        from trainers.real.model import build_real_model
        from trainers.reference import load_references

        table = {}
        for label, folder in (("Vanilla", pre_dir), ("ASAP", policy_dir)):
            loaded = load_policy(folder)
            refs = load_references(motion, build_real_model("nominal", loaded.env_cfg.sim), load_robot_spec(), clip)
            overall, _ = evaluate_in_profile(
                loaded.policy.act_inference, refs, profile, loaded.env_cfg, cfg.eval_episodes, cfg.seed
            )
            table[label] = dataclasses.asdict(overall)
        payload = {"profile": profile, "clip": clip, "metrics": table}
        atomic_write(ev, lambda tmp: tmp.write_text(json.dumps(payload, indent=2)))

    stage("evaluate", ev, ev_inputs, evaluate)
    return json.loads(ev.read_text())


def _asap_round(loop: _LoopRun, k: int, policy_dir: Path, policy_ckpt: Path) -> tuple[Path, Path]:
    """Round ``k`` of stages 2-3: roll ``policy_dir``'s policy (checkpoint ``policy_ckpt``) out in the "real"
    profile, fit Δa on the rollouts of rounds 1 … k, fine-tune that policy against it. Returns the fine-tuned
    policy's folder and the checkpoint it deploys (the next round's, or the evaluation's, policy)."""
    cfg, run, selection = loop.cfg, loop.run, loop.selection
    here = round_folder(run, k)
    motion_ref = loop.motion_ref
    suffix = "" if k == 1 else f"_r{k}"

    # 2a. roll the policy out in the "real" profile.
    col = here / "collect.pkl"
    col_inputs = {
        "policy": file_ref(policy_ckpt),
        "motion": motion_ref,
        "motion_ids": [loop.clip],
        "simulator": f"real:{loop.profile}",
        "episodes": cfg.collect_episodes,
        "seed": cfg.seed,
    }

    def collect() -> dict:
        from trainers.delta.collect import collect_rollouts
        from trainers.delta.collection import write_collection
        from trainers.policy_io import load_policy
        from trainers.real.model import build_real_model
        from trainers.reference import load_references

        loaded = load_policy(policy_dir)
        refs = load_references(
            loop.motion, build_real_model("nominal", loaded.env_cfg.sim), load_robot_spec(), loop.clip
        )
        trajs = collect_rollouts(
            loaded.policy.act_inference, refs, loop.profile, loaded.env_cfg, cfg.collect_episodes, cfg.seed
        )
        here.mkdir(parents=True, exist_ok=True)
        write_collection(col, trajs, load_robot_spec())
        return {"trajectories": len(trajs), "frames": sum(t.num_frames for t in trajs.values())}

    loop.stage(f"collect{suffix}", col, col_inputs, collect)

    # 2b. fit the learned Δa on every round's rollouts so far.
    delta = here / "delta.pt"
    collections = [round_folder(run, j) / "collect.pkl" for j in range(1, k + 1)]
    delta_inputs = {
        # Round 1 keeps the key it had before rounds existed.
        **({"collection": file_ref(col)} if k == 1 else {"collections": [file_ref(c) for c in collections]}),
        "joints": cfg.delta_joints,
        "model": cfg.delta_model,
        "epochs": cfg.delta_epochs,
        "features": "previous_target",
        "seed": cfg.seed,
    }

    def fit() -> dict:
        from trainers.delta.collection import read_collection
        from trainers.delta.learned import LearnedDeltaConfig, fit_learned_delta

        trajs = [traj for c in collections for traj in read_collection(c).values()]
        model, stats = fit_learned_delta(
            trajs,
            LearnedDeltaConfig(
                joints=cfg.delta_joints,
                epochs=cfg.delta_epochs,
                model=cfg.delta_model,
                seed=cfg.seed,
                previous_target=DEFAULT_PREVIOUS_TARGET,
            ),
        )
        model.save(delta)
        return {"fit": stats, "trajectories": len(trajs)}

    loop.stage(f"fit_delta{suffix}", delta, delta_inputs, fit)

    # 3. fine-tune the policy in the nominal simulator + the frozen Δa.
    ft_dir, ft_ckpt = here / "finetune", here / "finetune" / "model_last.pt"
    policy_ref, delta_ref = file_ref(policy_ckpt), file_ref(delta)
    ft_inputs = {
        "policy": policy_ref,
        "delta": delta_ref,
        "motion": motion_ref,
        "clip": loop.clip,
        "simulator": "nominal+delta",
        "iterations": cfg.finetune_iterations,
        # Only when set: a plain loop keeps the inputs (and the finished stages) it had before the option.
        **({} if cfg.trust_region_kl is None else {"trust_region_kl": cfg.trust_region_kl}),
        **({} if not selection.enabled else {"selection": dataclasses.asdict(selection)}),
        "num_envs": cfg.num_envs,
        "seed": cfg.seed,
    }

    def finetune() -> dict:
        import shutil

        from trainers.finetune.finetune import finetune_policy, resume_mismatch
        from trainers.ppo.trust_region import AnchorTrustRegion

        trust_region = None if cfg.trust_region_kl is None else AnchorTrustRegion(cfg.trust_region_kl)
        old = ft_dir / "config.json"
        if old.exists():
            # Resumed only if it is this fine-tuning interrupted: one of an older policy, against an older Δa or
            # with another trust region starts again.
            asked = {
                "base_sha256": policy_ref["sha256"],
                "sim": "delta",
                "delta_sha256": delta_ref["sha256"],
                "trust_region": None if trust_region is None else dataclasses.asdict(trust_region),
            }
            if resume_mismatch(json.loads(old.read_text()).get("finetune", {}), asked) is not None:
                shutil.rmtree(ft_dir)
        res = finetune_policy(
            policy_dir,
            loop.motion,
            ft_dir,
            delta=delta,
            sim="delta",
            clip=loop.clip,
            iterations=cfg.finetune_iterations,
            num_envs=cfg.num_envs,
            seed=cfg.seed,
            num_threads=cfg.num_threads,
            engine=cfg.engine,
            warp_device=cfg.warp_device,
            trust_region=trust_region,
            selection=selection,
        )
        return {"policy_iteration": _policy_iteration(ft_ckpt), "base_iteration": res.start_iteration}

    loop.stage(f"finetune{suffix}", ft_ckpt, ft_inputs, finetune)
    return ft_dir, (ft_dir / DEPLOYED if selection.enabled else ft_ckpt)


def format_evaluation(evaluation: dict) -> str:
    """The evaluation as a small table (paper metrics)."""
    lines = [
        f"{evaluation['clip']} in real:{evaluation['profile']} (policy alone, no Δa)",
        (
            f"{'policy':<8} {'success':>7} {'Eg-mpjpe':>9} {'Empjpe':>8} {'Evel':>7} {'Eacc':>7}"
            "  [mm, mm/frame, mm/frame²]"
        ),
    ]
    for label, m in evaluation["metrics"].items():
        lines.append(
            f"{label:<8} {m['success_rate']:>7.2f} {m['eg_mpjpe_mm']:>9.1f} {m['empjpe_mm']:>8.1f} "
            f"{m['evel_mm_per_frame']:>7.2f} {m['eacc_mm_per_frame2']:>7.2f}"
        )
    return "\n".join(lines)
