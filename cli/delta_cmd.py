"""`asap-retarget delta fit-linear LOG.npz` (and the learned Δa: `delta fit`, `delta eval`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from cli.common import console
from cli.options import num_envs_option
from trainers.delta.defaults import (
    DEFAULT_JOINTS,
    DEFAULT_MLP_EPOCHS,
    DEFAULT_MODEL,
    DEFAULT_PREVIOUS_TARGET,
    JOINT_SET_NAMES,
    MODEL_KINDS,
)


def read_rollouts(collections: tuple[Path, ...]) -> list:
    """Every rollout of every collection file, in order: Δa, SysID and Δs can be fitted on the rollouts of several
    policies and clips at once, as the paper fits Δa on the rollouts of several policies."""
    from trainers.delta.collection import read_collection

    return [traj for path in collections for traj in read_collection(path).values()]


def collections_argument():
    """One or more collection files written by `collect` (or by `bench/bench_table4.py`)."""
    return click.argument(
        "collections", metavar="COLLECTION.pkl...", nargs=-1, required=True, type=click.Path(path_type=Path)
    )


@click.group()
def delta() -> None:
    """Delta action model (ASAP stage 2): fit the action the simulator misses to repeat the real robot."""


@delta.command("fit-linear")
@click.argument("log_path", metavar="LOG.npz", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the coefficients and errors as JSON here.",
)
@click.option(
    "--max-iterations", type=click.IntRange(min=1), default=60, show_default=True, help="Least-squares iterations."
)
def fit_linear(log_path: Path, output: Path | None, max_iterations: int) -> None:
    """Fit δ = a·(target − q) + b·dq per bench joint in the nominal simulator; exit 0 only if the error drops."""
    from retarget.asap_pkl import atomic_write
    from trainers.delta.linear_fit import LinearFitConfig, fit_linear_delta
    from trainers.real.bench import read_bench_log

    log = read_bench_log(log_path)
    result = fit_linear_delta(log, LinearFitConfig(max_nfev=max_iterations))
    d = result.delta
    console.print(f"{'joint':<24} {'a':>8} {'b (s)':>9}")
    for name, a, b in zip(d.joints, d.a, d.b):
        console.print(f"{name:<24} {a:>8.4f} {b:>9.5f}")
    console.print(
        f"sim × real tracking error: before {result.rms_before_deg:.2f}° → after {result.rms_after_deg:.2f}° "
        f"(RMS of joint positions; {result.replays} replays, {result.wall_s:.1f} s)"
    )
    if output is not None:
        payload = {
            "log": str(log_path),
            "source": log.source,
            "joints": list(d.joints),
            "a": d.a.tolist(),
            "b_s": d.b.tolist(),
            "rms_before_deg": result.rms_before_deg,
            "rms_after_deg": result.rms_after_deg,
        }
        atomic_write(output, lambda tmp: tmp.write_text(json.dumps(payload, indent=2)))
    if not result.rms_after_deg < result.rms_before_deg:
        console.print("the fit did not reduce the error")
        sys.exit(1)


@delta.command("fit")
@collections_argument()
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="Delta model file (.pt).")
@click.option(
    "--joints",
    type=click.Choice(JOINT_SET_NAMES),
    default=DEFAULT_JOINTS,
    show_default=True,
    help="Joints Δa acts on (the paper's real-robot model: the ankles; a delay reaches every joint).",
)
@click.option(
    "--model",
    "model_kind",
    type=click.Choice(MODEL_KINDS),
    default=DEFAULT_MODEL,
    show_default=True,
    help="per_joint_linear: each joint's δ linear in its own q*−q, q̇, q*_{t-1}−q*_t "
    "(transfers to other clips); per_joint_physical: the same with each coefficient held to what an actuator can "
    "be (stiffness ratio 0-2, added damping only, a delay of 0-1 policy step); per_joint_undamped: the bounded one "
    "without the q̇ term, which Δa applies as a velocity feedback sampled once per policy step (the default); "
    "mlp: the paper's MLP on every feature (supervised method).",
)
@click.option(
    "--epochs", type=click.IntRange(min=1), default=DEFAULT_MLP_EPOCHS, show_default=True, help="MLP Adam steps."
)
@click.option(
    "--method",
    type=click.Choice(["supervised", "ppo"]),
    default="supervised",
    show_default=True,
    help="supervised: Gauss–Newton labels + MLP; ppo: the paper's PPO in the nominal sim (trainers/delta/ppo_fit.py).",
)
@click.option("--iterations", type=click.IntRange(min=1), default=100, show_default=True, help="PPO iterations.")
@num_envs_option(32, "Parallel simulated environments (--method ppo)")
@click.option(
    "--horizon-s", type=click.FloatRange(min=0.02), default=1.0, show_default=True, help="PPO episode length."
)
@click.option(
    "--previous-target/--no-previous-target",
    default=DEFAULT_PREVIOUS_TARGET,
    show_default=True,
    help="Feed q*_{t-1} - q*_t too (needed to represent an actuation delay; supervised method).",
)
def fit(
    collections: tuple[Path, ...],
    output: Path,
    joints: str,
    model_kind: str,
    epochs: int,
    method: str,
    iterations: int,
    num_envs: int,
    horizon_s: float,
    previous_target: bool,
) -> None:
    """Learn π^Δ(s, a) from the transitions of one or more collections: per-transition Levenberg–Marquardt labels,
    then a per-joint linear model or an MLP (or the MLP by PPO)."""
    from trainers.delta.learned import LearnedDeltaConfig, fit_learned_delta

    trajs = read_rollouts(collections)
    if method == "ppo":
        from trainers.delta.ppo_cli import fit_ppo_command

        fit_ppo_command(trajs, output, joints, iterations, num_envs, horizon_s, console.print)
        return
    model, stats = fit_learned_delta(
        trajs, LearnedDeltaConfig(joints=joints, epochs=epochs, model=model_kind, previous_target=previous_target)
    )
    model.save(output)
    console.print(
        f"wrote {output}: {stats['transitions']} transitions, label RMS {stats['label_rms_rad']:.4f} rad, "
        f"{model_kind} fit RMS {stats['fit_rms_rad']:.4f} rad"
    )


@delta.command("sysid")
@collections_argument()
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="Identified profile (.json).")
@click.option("--max-transitions", type=click.IntRange(min=1), default=400, show_default=True)
def sysid(collections: tuple[Path, ...], output: Path, max_transitions: int) -> None:
    """SysID baseline: identify Kp ratios per joint group, delay and torso mass from the rollouts of one or more
    collections."""
    from trainers.delta.sysid import SysIdConfig, identify
    from trainers.real.profiles import save_profile

    trajs = read_rollouts(collections)
    result = identify(trajs, SysIdConfig(max_transitions=max_transitions))
    save_profile(result.profile, output)
    text = ", ".join(f"{k} {v:g}" for k, v in result.parameters.items())
    console.print(f"identified: {text}", highlight=False)
    console.print(
        f"one-step residual RMS {result.rms_nominal:.5f} (nominal) → {result.rms_identified:.5f} "
        f"({result.evaluations} models); wrote {output} (train finetune --sim real --real {output})"
    )


@delta.command("fit-dynamics")
@collections_argument()
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="Δs model file (.pt).")
@click.option("--epochs", type=click.IntRange(min=1), default=DEFAULT_MLP_EPOCHS, show_default=True)
def fit_dynamics(collections: tuple[Path, ...], output: Path, epochs: int) -> None:
    """DeltaDynamics baseline: learn the state residual s' − f_sim(s, a) from the transitions of one or more
    collections."""
    from trainers.delta.dynamics import DeltaDynamicsConfig, fit_delta_dynamics

    trajs = read_rollouts(collections)
    model, stats = fit_delta_dynamics(trajs, DeltaDynamicsConfig(epochs=epochs))
    model.save(output)
    console.print(
        f"wrote {output}: {stats['transitions']} transitions, Δq label RMS "
        f"{stats['label_rms_dof_pos_rad']:.5f} rad, fit residual {stats['fit_residual_rms_dof_pos_rad']:.5f} rad, "
        f"explained variance {stats['explained_variance']:.2f} (train finetune --sim dynamics --delta {output})"
    )


@delta.command("eval")
@click.argument("collection", metavar="HELDOUT.pkl", type=click.Path(path_type=Path))
@click.option("--delta", "delta_path", type=click.Path(path_type=Path), default=None, help="Learned Δa (.pt).")
@click.option(
    "--analytic",
    "profile",
    default=None,
    help="Also replay with the analytic soft-joint Δa of this profile (e.g. soft_ankles).",
)
@click.option("--stride", type=click.IntRange(min=1), default=10, show_default=True, help="Frames between starts.")
def eval_(collection: Path, delta_path: Path | None, profile: str | None, stride: int) -> None:
    """Open-loop table: joint and body position errors at 0.25/0.5/1.0 s in the nominal sim, with and without Δa."""
    from robots.registry import load_robot_spec
    from trainers.delta.analytic import analytic_correction
    from trainers.delta.collection import read_collection
    from trainers.delta.learned import LearnedDelta
    from trainers.delta.open_loop import format_table, open_loop_row
    from trainers.real.profiles import get_profile

    trajs = list(read_collection(collection).values())
    rows = [open_loop_row("no Δa", trajs, None, stride)]
    if delta_path is not None:
        learned = LearnedDelta.load(delta_path)
        rows.append(open_loop_row("learned Δa", trajs, learned.correction, stride))
    if profile is not None:
        prof, robot = get_profile(profile), load_robot_spec()
        rows.append(
            open_loop_row("analytic Δa (policy rate)", trajs, lambda r: analytic_correction(prof, robot), stride)
        )
    console.print(format_table(rows), highlight=False)
    if delta_path is not None and profile is not None:
        from trainers.delta.analytic import stiffness_ratios
        from trainers.delta.open_loop import analytic_gap

        gap = analytic_gap(learned, stiffness_ratios(prof, robot), trajs, trajs[0].action_scale)
        console.print(
            f"learned vs analytic Δa on its joints (action units): RMS gap {gap['gap_rms']:.3f} "
            f"= {100 * gap['gap_rms'] / max(gap['analytic_rms'], 1e-12):.0f}% of the analytic RMS "
            f"{gap['analytic_rms']:.3f}; correlation {gap['corr']:.2f}"
        )
