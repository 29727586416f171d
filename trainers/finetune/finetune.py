"""``finetune_policy``: ASAP stage 3 — continue PPO from a pre-trained run in a chosen simulator.

Simulators (``sim``): ``delta`` the nominal G1 with the frozen Δa added to every action (ASAP; with
``noise:STD`` as the Δa, the *ActionNoise* ablation); ``nominal`` the unchanged simulator (the
*Continued* control: the same extra budget without a correction); ``real`` a "real" profile — the
profile itself (the *Oracle* upper bound) or one identified from rollouts, a ``sysid.json``
(*SysID*); ``dynamics`` the nominal G1 with a learned state residual Δs (*DeltaDynamics*). Same rewards,
observations and PPO settings as pre-training (read from the pre-trained run's config.json);
weights, optimizer, learning rate and curricula start from its checkpoint. A "real" robot played by another
physics engine (``pybullet:<profile>``) is fine-tuned without domain randomization: that randomization edits
MuJoCo's model, which the other engine does not read.

RUN2/ holds ``config.json`` (the pre-trained config plus a ``finetune`` record: base checkpoint,
its sha256, the Δa spec and its sha256, the simulator), checkpoints and the learning curve — and
no delta model: the fine-tuned policy deploys alone. Fine-tuning again into RUN2 resumes up to
base iteration + ``iterations`` (the base recorded on the first call).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from retarget.asap_pkl import atomic_write
from retarget.atomic_io import check_output_folder
from retarget.batch.record import file_sha256
from retarget.errors import ConfigError
from retarget.folder_lock import FolderLock
from robots.registry import load_robot_spec
from trainers.checkpoints import TRAIN_LOCK
from trainers.defaults import DEFAULT_CHECKPOINT_EVERY, DEFAULT_ENGINE, DEFAULT_WARP_DEVICE
from trainers.delta.defaults import DEFAULT_FINETUNE_ITERATIONS
from trainers.delta.dynamics import DeltaDynamics
from trainers.env import TrackingEnv
from trainers.finetune.delta_actions import DeltaAction, load_delta_action
from trainers.finetune.delta_env import DeltaActionEnv
from trainers.finetune.dynamics_env import DeltaDynamicsEnv
from trainers.finetune.selection import forget_selection, read_selection, select_checkpoint
from trainers.finetune.selection_config import DEFAULT_SELECTION, SelectionConfig
from trainers.policy_io import find_checkpoint, read_run_config
from trainers.ppo.runner import OnPolicyRunner
from trainers.ppo.trust_region import AnchorTrustRegion
from trainers.real.model import build_real_model
from trainers.real.profiles import get_profile
from trainers.reference import load_references
from trainers.train import plot_learning_curve

SIMULATORS = ("delta", "nominal", "real", "dynamics")


@dataclass(frozen=True)
class FinetuneResult:
    """What a fine-tuning call did."""

    run_dir: Path
    rows: list[dict]
    """Learning-curve rows of this call's iterations (empty if the budget was already spent)."""
    start_iteration: int
    """Iteration the pre-trained checkpoint (or the resumed one) was at."""
    resumed: bool
    """True if RUN2 already had a checkpoint."""
    selection: dict | None = None
    """The deployed checkpoint's selection record (:mod:`trainers.finetune.selection`); None without selection."""


def resume_identity(record: dict) -> dict:
    """What a fine-tuning folder's record must match (besides its pre-trained checkpoint) for a rerun to resume
    it: the simulator, the Δa (its file's sha256, or the spec for constant:/noise:/analytic:), the real profile,
    the trust region."""
    return {
        "simulator": record.get("sim"),
        "delta": record.get("delta_sha256") or record.get("delta_name"),
        "real profile": record.get("real_profile_sha256") or record.get("real_profile"),
        "trust region": record.get("trust_region"),
    }


def resume_mismatch(previous: dict, asked: dict) -> str | None:
    """Why a fine-tuning folder whose record is ``previous`` cannot be resumed as the fine-tuning ``asked``
    (None: it can). Resuming would otherwise continue a fine-tuning of another checkpoint, in another simulator,
    against another Δa or under another trust region."""
    if previous.get("base_sha256") != asked.get("base_sha256"):
        return "holds a fine-tuning of another checkpoint"
    here, wanted = resume_identity(previous), resume_identity(asked)
    changed = [key for key in here if here[key] != wanted[key]]
    if changed:
        return (
            "holds another fine-tuning (" + "; ".join(f"{k} {here[k]} here, {wanted[k]} asked" for k in changed) + ")"
        )
    return None


def finetune_policy(
    policy_run: str | Path,
    library: str | Path,
    run_dir: str | Path,
    delta: str | Path | None = None,
    sim: str = "delta",
    real_profile: str | None = None,
    clip: str | None = None,
    iterations: int = DEFAULT_FINETUNE_ITERATIONS,
    num_envs: int | None = None,
    seed: int = 0,
    num_threads: int | None = None,
    on_iteration: Callable[[dict], None] | None = None,
    checkpoint_every: int = DEFAULT_CHECKPOINT_EVERY,
    trust_region: AnchorTrustRegion | None = None,
    engine: str = DEFAULT_ENGINE,
    warp_device: str = DEFAULT_WARP_DEVICE,
    selection: SelectionConfig = DEFAULT_SELECTION,
) -> FinetuneResult:
    """Fine-tune ``policy_run``'s checkpoint in simulator ``sim`` up to ``iterations`` PPO iterations in all, counted
    from that checkpoint (:data:`trainers.defaults.ITERATIONS_CONVENTION`: rerunning into ``run_dir`` resumes).
    ``trust_region``: keep the fine-tuned actor within that KL bound of the pre-trained checkpoint's after every
    update (:mod:`trainers.ppo.trust_region`; None, the default: plain PPO). ``engine`` / ``warp_device``: what
    steps the fine-tuning's physics (:attr:`trainers.config.SimConfig.engine`; a PyBullet "real" robot stays
    PyBullet's). ``selection``: which checkpoint is deployed (``model_deployed.pt``): the best of the pre-trained
    one and every ``selection.every``-th in this simulator (:mod:`trainers.finetune.selection`), or with
    ``every=0`` the last."""
    import copy
    import dataclasses

    from trainers.config import to_jsonable

    if sim not in SIMULATORS:
        raise ConfigError(f"--sim {sim!r}: valid choices are {', '.join(SIMULATORS)}")
    check_output_folder(run_dir)
    # What the chosen simulator needs, checked and loaded before anything is written.
    delta_action: DeltaAction | None = None
    dynamics: DeltaDynamics | None = None
    real_name: str | None = None  # the "real" profile run as the simulator (sim == "real" only)
    if sim == "delta":
        if delta is None:
            raise ConfigError("fine-tuning in the delta simulator needs --delta DELTA.pt (or analytic:PROFILE)")
        delta_action = load_delta_action(delta, seed)
    elif sim == "dynamics":
        if delta is None:
            raise ConfigError("fine-tuning in the delta-dynamics simulator needs --delta DYNAMICS.pt")
        dynamics = DeltaDynamics.load(delta)
    elif sim == "real":
        if real_profile is None:
            raise ConfigError("fine-tuning in the real simulator (Oracle) needs --real PROFILE")
        get_profile(real_profile)  # an unknown profile fails here
        real_name = real_profile
    other_engine = real_name is not None and get_profile(real_name).engine != "mujoco"
    ckpt = find_checkpoint(policy_run)
    base, env_cfg, ppo_cfg = read_run_config(ckpt.parent / "config.json")
    if num_threads is not None:
        env_cfg = dataclasses.replace(env_cfg, sim=dataclasses.replace(env_cfg.sim, num_threads=num_threads))
    env_cfg = dataclasses.replace(env_cfg, sim=dataclasses.replace(env_cfg.sim, engine=engine, warp_device=warp_device))
    if other_engine and env_cfg.domain_rand.enabled:
        # Domain randomization edits MuJoCo's model, which another engine does not read (and its state ignores
        # MuJoCo-side pushes): that robot is fine-tuned as it is, without randomization.
        env_cfg = dataclasses.replace(env_cfg, domain_rand=dataclasses.replace(env_cfg.domain_rand, enabled=False))
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    with FolderLock(run_dir, TRAIN_LOCK, "training", ConfigError):  # two runs interleaving one folder
        torch.manual_seed(seed)
        nominal = build_real_model("nominal", env_cfg.sim)
        refs = load_references(library, nominal, load_robot_spec(env_cfg.sim.robot), clip)
        n = int(base.get("num_envs", 64) if num_envs is None else num_envs)
        model = nominal if real_name is None else build_real_model(real_name, env_cfg.sim)

        def make_env(refs, n: int, cfg, env_seed: int) -> TrackingEnv:
            """The fine-tuning's simulator (a fresh Δa per env, so each selection candidate sees the same draws)."""
            if delta_action is not None and delta is not None:
                return DeltaActionEnv(refs, n, cfg, seed=env_seed, model=nominal, delta=load_delta_action(delta, seed))
            if dynamics is not None:
                return DeltaDynamicsEnv(refs, n, cfg, seed=env_seed, model=nominal, dynamics=dynamics)
            return TrackingEnv(refs, n, cfg, seed=env_seed, model=model)

        env = make_env(refs, n, env_cfg, seed)
        delta_path = Path(str(delta)) if delta is not None and Path(str(delta)).is_file() else None
        record = {
            "base_checkpoint": str(ckpt.resolve()),
            "base_sha256": file_sha256(ckpt),
            "sim": sim,
            "delta": str(delta) if sim in ("delta", "dynamics") else None,
            "delta_name": getattr(delta_action, "name", None),
            "delta_sha256": file_sha256(delta_path)
            if delta_path is not None and sim in ("delta", "dynamics")
            else None,
            "real_profile": real_name,
            "iterations": iterations,
            "trust_region": None if trust_region is None else dataclasses.asdict(trust_region),
            "domain_rand": env_cfg.domain_rand.enabled,
            "real_profile_sha256": file_sha256(Path(real_name))
            if real_name is not None and real_name.endswith(".json")
            else None,
        }
        # The config actually run (its rewards rebuilt from the pre-trained run's), so the record cannot drift from it.
        config = {
            **base,
            "env": to_jsonable(env_cfg),
            "motion": str(Path(library).resolve()),
            "clip": clip,
            "clips": [r.name for r in refs],
            "num_envs": n,
            "seed": seed,
            "finetune": record,
        }
        runner = OnPolicyRunner(env, ppo_cfg, run_dir, meta={"clips": config["clips"], "finetune": sim})
        resumed = (run_dir / "model_last.pt").exists()
        if resumed:
            previous = json.loads((run_dir / "config.json").read_text()).get("finetune", {})
            why = resume_mismatch(previous, record)
            if why is not None:
                raise ConfigError(f"{run_dir}: {why}; use a new folder")
            base_iteration = int(previous["base_iteration"])
            runner.resume(run_dir / "model_last.pt")
        else:
            runner.load(ckpt)
            base_iteration = runner.iteration
        if trust_region is not None:
            # The anchor is the pre-trained checkpoint itself, also when resuming a fine-tuning that moved away.
            anchor = copy.deepcopy(runner.policy)
            anchor.load_state_dict(torch.load(ckpt, weights_only=True)["model"])
            runner.alg.set_anchor(anchor, trust_region)
        target_iteration = base_iteration + iterations
        record["base_iteration"], record["target_iteration"] = base_iteration, target_iteration
        atomic_write(run_dir / "config.json", lambda tmp: tmp.write_text(json.dumps(config, indent=2)))
        start = runner.iteration
        remaining = max(0, target_iteration - start)
        every = selection.every if selection.enabled else checkpoint_every
        if remaining:
            forget_selection(run_dir)  # made for a smaller budget
        rows = runner.learn(remaining, on_iteration=on_iteration, checkpoint_every=every) if remaining else []
        if rows:
            plot_learning_curve(run_dir / "learning_curve.csv", run_dir / "learning_curve.png")
        chosen = None
        if selection.enabled:
            chosen = read_selection(run_dir)
            if chosen is None or chosen.get("config") != dataclasses.asdict(selection):
                chosen = select_checkpoint(run_dir, ckpt, base_iteration, refs, make_env, env_cfg, selection)
        else:
            forget_selection(run_dir)
    return FinetuneResult(run_dir, rows, start, resumed, chosen)
