"""`asap-retarget train track --motion LIB.pkl -o RUN/` and `train finetune --policy RUN --delta DELTA`."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from cli.common import console
from cli.options import (
    engine_options,
    iterations_option,
    num_envs_option,
    policy_option,
    real_option,
    seed_option,
    selection_options,
    threads_option,
    trust_region_option,
)
from trainers.defaults import (
    DEFAULT_CHECKPOINT_EVERY,
    DEFAULT_TRACK_ITERATIONS,
    DEFAULT_TRACK_NUM_ENVS,
)
from trainers.delta.defaults import DEFAULT_FINETUNE_ITERATIONS


def check_engine(engine: str, warp_device: str) -> None:
    """A missing MuJoCo Warp or a device it cannot use, refused before any output."""
    if engine == "warp":
        from trainers.warp_batch import check_warp_device

        check_warp_device(warp_device)


@click.group()
def train() -> None:
    """Train G1 policies in MuJoCo on motion libraries (ASAP stages 1 and 3)."""


@train.command()
@click.option("--motion", type=click.Path(path_type=Path), required=True, help="Motion library (.pkl).")
@click.option("--clip", default=None, help="Train on this clip only (default: every clip of the library).")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    required=True,
    help="Run folder (resumes if it has a checkpoint).",
)
@iterations_option(DEFAULT_TRACK_ITERATIONS)
@num_envs_option(DEFAULT_TRACK_NUM_ENVS)
@seed_option()
@threads_option()
@engine_options
@click.option(
    "--action-offset",
    type=click.Choice(["reference_pose", "default_pose"]),
    default="reference_pose",
    show_default=True,
    help="PD target = 0.25·a + this (default_pose is ASAP's).",
)
@click.option("--no-domain-rand", is_flag=True, help="Disable domain randomization.")
@click.option(
    "--termination-init-m",
    type=click.FloatRange(min=0.05),
    default=None,
    help="Initial allowed mean body drift before an episode fails [m] (ASAP: 1.5; the curriculum tightens "
    "it to 0.3). Lower wastes fewer CPU steps on fallen robots.",
)
@click.option(
    "--max-minutes",
    type=click.FloatRange(min=0.0, min_open=True),
    default=None,
    help="Stop after this wall-clock budget (checkpoint written), even if iterations remain.",
)
@click.option("--checkpoint-every", type=click.IntRange(min=1), default=DEFAULT_CHECKPOINT_EVERY, show_default=True)
@click.option(
    "--ppo",
    type=click.Choice(["ours", "rsl-rl"]),
    default="ours",
    show_default=True,
    help="PPO: the project's (trainers.ppo) or rsl-rl-lib 5.5's (pip install -e '.[rsl]'), same settings.",
)
def track(
    motion: Path,
    clip: str | None,
    output: Path,
    iterations: int,
    num_envs: int,
    seed: int,
    threads: int,
    engine: str,
    warp_device: str,
    action_offset: str,
    no_domain_rand: bool,
    termination_init_m: float | None,
    max_minutes: float | None,
    checkpoint_every: int,
    ppo: str,
) -> None:
    """Phase-based motion tracking (ASAP stage 1): train a policy to track the clips of a library."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from retarget.atomic_io import check_output_folder
    from retarget.errors import ConfigError
    from retarget.folder_lock import FolderLock
    from trainers.checkpoints import TRAIN_LOCK
    from trainers.config import ActionOffset, TrackingEnvConfig
    from trainers.train import train_track

    if ppo == "rsl-rl":  # same signature and rows; checkpoints are rsl_rl's model_<it>.pt
        from trainers.rsl_rl_train import train_track_rsl_rl as train_track

    check_output_folder(output)  # also checked by the trainer; here so the refusal comes before the progress bar
    check_engine(engine, warp_device)
    if output.is_dir():
        with FolderLock(output, TRAIN_LOCK, "training", ConfigError):  # likewise: held again while training
            pass
    cfg = TrackingEnvConfig()
    cfg = dataclasses.replace(
        cfg,
        sim=dataclasses.replace(
            cfg.sim,
            num_threads=threads,
            action_offset=ActionOffset(action_offset),
            engine=engine,
            warp_device=warp_device,
        ),
        domain_rand=dataclasses.replace(cfg.domain_rand, enabled=not no_domain_rand),
    )
    if termination_init_m is not None:
        cfg = dataclasses.replace(
            cfg,
            curriculum=dataclasses.replace(
                cfg.curriculum,
                termination_distance_init_m=termination_init_m,
                termination_distance_min_m=min(cfg.curriculum.termination_distance_min_m, termination_init_m),
            ),
        )
    columns = (
        TextColumn("[bold]track[/]"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[info]}"),
    )
    with Progress(*columns, console=console) as progress:
        task = progress.add_task("train", total=iterations, info="")

        def show(row: dict) -> None:
            info = (
                f"return {row['mean_episode_return']:.1f}  len {row['mean_episode_length']:.0f}  "
                f"drift≤{row['termination_distance_m']:.2f} m  {row['env_steps_per_s']:.0f} steps/s"
            )
            progress.update(task, advance=1, info=info)

        result = train_track(
            motion,
            output,
            clip=clip,
            iterations=iterations,
            num_envs=num_envs,
            seed=seed,
            env_cfg=cfg,
            on_iteration=show,
            checkpoint_every=checkpoint_every,
            max_minutes=max_minutes,
        )
    if result.resumed_from is not None:
        console.print(f"resumed from {result.resumed_from}")
    if not result.rows:
        console.print(f"{output} already holds {iterations} iterations (--iterations counts the run's total)")
        return
    last = result.rows[-1]
    console.print(
        f"{last['iteration']} iterations, {last['env_steps']} env steps in {last['wall_s']:.0f} s; "
        f"mean episode return {last['mean_episode_return']:.1f}, length {last['mean_episode_length']:.0f} steps"
    )
    ckpt = "model_last.pt" if ppo == "ours" else "model_<it>.pt"
    console.print(f"wrote {result.run_dir}/{ckpt}, learning_curve.csv, learning_curve.png, config.json")


@train.command()
@policy_option("policy_run", help_text="Pre-trained run folder (or checkpoint) to start from.")
@click.option(
    "--delta",
    default=None,
    help="--sim delta: frozen Δa (DELTA.pt, analytic:PROFILE, noise:STD, constant:VALUE); "
    "--sim dynamics: the Δs model (delta fit-dynamics).",
)
@click.option("--motion", type=click.Path(path_type=Path), required=True, help="Motion library (.pkl).")
@click.option("--clip", default=None, help="Fine-tune on this clip only.")
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="New run folder (resumes).")
@click.option(
    "--sim",
    type=click.Choice(["delta", "nominal", "real", "dynamics"]),
    default="delta",
    show_default=True,
    help="delta: nominal + Δa (ASAP; noise:STD = ActionNoise); nominal: Continued; real: a profile (Oracle) "
    "or an identified sysid.json (SysID), needs --real; dynamics: nominal + Δs (DeltaDynamics).",
)
@real_option("real_profile", default=None, help_text='--sim real: the "real" profile name or an identified sysid.json.')
@iterations_option(
    DEFAULT_FINETUNE_ITERATIONS, "PPO iterations of the fine-tuning, counted from the pre-trained checkpoint"
)
@num_envs_option(None, "Parallel simulated environments (default: the pre-trained run's)")
@seed_option()
@threads_option(None, "the pre-trained run's")
@engine_options
@trust_region_option
@selection_options
def finetune(
    policy_run: Path,
    delta: str | None,
    motion: Path,
    clip: str | None,
    output: Path,
    sim: str,
    real_profile: str | None,
    iterations: int,
    num_envs: int | None,
    seed: int,
    threads: int | None,
    engine: str,
    warp_device: str,
    trust_region_kl: float | None,
    select_every: int,
    select_episodes: int,
) -> None:
    """ASAP stage 3: continue training a policy in the simulator with a frozen Δa added to its actions."""
    from trainers.finetune.finetune import finetune_policy
    from trainers.finetune.selection_config import SelectionConfig
    from trainers.ppo.trust_region import AnchorTrustRegion

    check_engine(engine, warp_device)
    res = finetune_policy(
        policy_run,
        motion,
        output,
        delta=delta,
        sim=sim,
        real_profile=real_profile,
        clip=clip,
        iterations=iterations,
        num_envs=num_envs,
        seed=seed,
        num_threads=threads,
        engine=engine,
        warp_device=warp_device,
        trust_region=None if trust_region_kl is None else AnchorTrustRegion(trust_region_kl),
        selection=SelectionConfig(every=select_every, episodes=select_episodes),
        on_iteration=lambda r: console.print(
            f"iteration {r['iteration']}: return {r['mean_episode_return']:.2f}", highlight=False
        ),
    )
    done = res.rows[-1]["iteration"] if res.rows else res.start_iteration
    console.print(f"fine-tuned ({sim}) from iteration {res.start_iteration} to {done}; wrote {output}/model_last.pt")
    if res.selection is not None:
        best = next(r for r in res.selection["candidates"] if r["iteration"] == res.selection["chosen_iteration"])
        console.print(
            f"deployed iteration {best['iteration']} ({output}/model_deployed.pt): clip completion "
            f"{best['completion']:.0%}, Eg-mpjpe {best['eg_mpjpe_mm']:.1f} mm over {select_episodes} episodes in the "
            f"fine-tuning simulator; every candidate in {output}/selection.json",
            highlight=False,
        )
