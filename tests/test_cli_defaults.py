"""One source of defaults: the CLI's option defaults are the library configs' field defaults."""

from __future__ import annotations

import dataclasses

import click

from cli.delta_cmd import fit
from cli.loop_cmd import loop
from trainers.delta.learned import LearnedDeltaConfig
from trainers.finetune.loop_config import LoopConfig


def _defaults(command: click.Command) -> dict[str, object]:
    return {p.name: p.default for p in command.params if p.name is not None}


def test_delta_fit_defaults_are_the_library_defaults():
    lib, cli = LearnedDeltaConfig(), _defaults(fit)
    assert (cli["joints"], cli["model_kind"], cli["previous_target"], cli["epochs"]) == (
        lib.joints,
        lib.model,
        lib.previous_target,
        lib.epochs,
    )
    assert (lib.joints, lib.model, lib.previous_target) == ("all", "per_joint_linear", True)


def test_loop_defaults_are_the_library_defaults():
    lib, cli = LoopConfig(), _defaults(loop)
    names = {
        "pretrain_iterations": "pretrain_iterations",
        "finetune_iterations": "finetune_iterations",
        "num_envs": "num_envs",
        "episodes": "collect_episodes",
        "joints": "delta_joints",
        "model_kind": "delta_model",
        "epochs": "delta_epochs",
        "eval_episodes": "eval_episodes",
        "seed": "seed",
        "threads": "num_threads",
    }
    assert {k: cli[k] for k in names} == {k: getattr(lib, v) for k, v in names.items()}
    assert lib.delta_joints == LearnedDeltaConfig().joints and lib.delta_model == LearnedDeltaConfig().model
    assert {f.name for f in dataclasses.fields(LoopConfig)} == set(names.values())
