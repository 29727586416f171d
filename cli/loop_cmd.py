"""`asap-retarget loop --motion LIB.pkl --clip NAME --real PROFILE -o RUN/`: ASAP's stages in one command."""

from __future__ import annotations

from pathlib import Path

import click

from cli.common import console
from cli.options import (
    engine_options,
    iterations_option,
    num_envs_option,
    real_option,
    seed_option,
    selection_options,
    threads_option,
    trust_region_option,
)
from trainers.delta.defaults import JOINT_SET_NAMES, MODEL_KINDS
from trainers.finetune.loop_config import LoopConfig

_DEFAULT = LoopConfig()


@click.command()
@click.option(
    "--motion",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    required=True,
    help="Motion library (.pkl).",
)
@click.option("--clip", required=True, help="Clip of the library to train, collect and evaluate on.")
@real_option(required=True)
@click.option("-o", "--output", type=click.Path(path_type=Path), required=True, help="Run folder (resumable).")
@iterations_option(
    _DEFAULT.pretrain_iterations, "PPO iterations of the pre-training (a smoke budget)", "--pretrain-iterations"
)
@iterations_option(
    _DEFAULT.finetune_iterations,
    "PPO iterations of the fine-tuning, counted from the pre-trained checkpoint",
    "--finetune-iterations",
)
@num_envs_option(_DEFAULT.num_envs, "Parallel simulated environments of both training stages")
@click.option(
    "--episodes",
    type=click.IntRange(min=1),
    default=_DEFAULT.collect_episodes,
    show_default=True,
    help="Rollouts in the real profile to fit Δa.",
)
@click.option(
    "--joints",
    type=click.Choice(JOINT_SET_NAMES),
    default=_DEFAULT.delta_joints,
    show_default=True,
    help="Joints Δa acts on.",
)
@click.option(
    "--model",
    "model_kind",
    type=click.Choice(MODEL_KINDS),
    default=_DEFAULT.delta_model,
    show_default=True,
    help="Δa model (see `delta fit --help`).",
)
@click.option(
    "--epochs", type=click.IntRange(min=1), default=_DEFAULT.delta_epochs, show_default=True, help="Δa MLP Adam steps."
)
@click.option(
    "--rounds",
    type=click.IntRange(min=1),
    default=_DEFAULT.rounds,
    show_default=True,
    help="ASAP rounds: each after the first rolls the last fine-tuned policy out in the real profile, refits Δa on "
    "every round's rollouts and fine-tunes that policy again (RUN/roundK/).",
)
@click.option("--eval-episodes", type=click.IntRange(min=1), default=_DEFAULT.eval_episodes, show_default=True)
@seed_option(_DEFAULT.seed)
@threads_option(_DEFAULT.num_threads)
@engine_options
@trust_region_option
@selection_options
def loop(
    motion: Path,
    clip: str,
    profile: str,
    output: Path,
    pretrain_iterations: int,
    finetune_iterations: int,
    num_envs: int,
    episodes: int,
    joints: str,
    model_kind: str,
    epochs: int,
    rounds: int,
    eval_episodes: int,
    seed: int,
    threads: int,
    engine: str,
    warp_device: str,
    trust_region_kl: float | None,
    select_every: int,
    select_episodes: int,
) -> None:
    """Pre-train → collect in the real profile → fit Δa → fine-tune with Δa → evaluate Vanilla vs ASAP."""
    from cli.train_cmd import check_engine
    from trainers.finetune.loop import format_evaluation, run_loop

    check_engine(engine, warp_device)

    cfg = LoopConfig(
        pretrain_iterations=pretrain_iterations,
        finetune_iterations=finetune_iterations,
        num_envs=num_envs,
        collect_episodes=episodes,
        delta_joints=joints,
        delta_model=model_kind,
        delta_epochs=epochs,
        rounds=rounds,
        eval_episodes=eval_episodes,
        seed=seed,
        num_threads=threads,
        engine=engine,
        warp_device=warp_device,
        trust_region_kl=trust_region_kl,
        select_every=select_every,
        select_episodes=select_episodes,
    )
    evaluation = run_loop(motion, clip, profile, output, cfg, echo=lambda line: console.print(line, highlight=False))
    console.print(format_evaluation(evaluation), highlight=False)
    console.print(f"wrote {output}/evaluation.json and {output}/provenance.json")
