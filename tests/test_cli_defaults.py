"""One source of defaults: the CLI's option defaults are the library configs' field defaults."""

from __future__ import annotations

import dataclasses
import inspect

import click

from cli.delta_cmd import fit
from cli.loop_cmd import loop
from cli.train_cmd import finetune, track
from trainers.config import SimConfig
from trainers.defaults import ITERATIONS_CONVENTION
from trainers.delta.defaults import DEFAULT_FINETUNE_ITERATIONS, DEFAULT_FITTING_ROLLOUTS, DEFAULT_MLP_EPOCHS
from trainers.delta.learned import LearnedDeltaConfig
from trainers.finetune.finetune import finetune_policy
from trainers.finetune.loop_config import LoopConfig
from trainers.rsl_rl_train import train_track_rsl_rl
from trainers.train import train_track


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
    assert (lib.joints, lib.model, lib.previous_target) == ("all", "per_joint_undamped", True)


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
        "rounds": "rounds",
        "eval_episodes": "eval_episodes",
        "seed": "seed",
        "threads": "num_threads",
        "engine": "engine",
        "warp_device": "warp_device",
        "trust_region_kl": "trust_region_kl",
        "select_every": "select_every",
        "select_episodes": "select_episodes",
    }
    assert {k: cli[k] for k in names} == {k: getattr(lib, v) for k, v in names.items()}
    assert lib.delta_joints == LearnedDeltaConfig().joints and lib.delta_model == LearnedDeltaConfig().model
    assert {f.name for f in dataclasses.fields(LoopConfig)} == set(names.values())


def _api_defaults(fn) -> dict[str, object]:
    return {
        k: p.default for k, p in inspect.signature(fn).parameters.items() if p.default is not inspect.Parameter.empty
    }


def test_loop_takes_the_delta_defaults_of_delta_fit_and_train_finetune():
    lib = LoopConfig()
    assert (lib.collect_episodes, lib.finetune_iterations, lib.delta_epochs) == (
        DEFAULT_FITTING_ROLLOUTS,
        DEFAULT_FINETUNE_ITERATIONS,
        DEFAULT_MLP_EPOCHS,
    )
    assert _defaults(finetune)["iterations"] == lib.finetune_iterations == _api_defaults(finetune_policy)["iterations"]
    assert _defaults(fit)["epochs"] == lib.delta_epochs == LearnedDeltaConfig().epochs


def test_train_options_and_the_python_api_share_one_default_per_name():
    """Each option of `train track` / `train finetune` that a Python function also takes: same name, same default."""
    for command, functions in ((track, (train_track, train_track_rsl_rl)), (finetune, (finetune_policy,))):
        cli = _defaults(command)
        for fn in functions:
            api = _api_defaults(fn)
            shared = sorted(set(cli) & set(api))
            assert {"iterations", "seed"} <= set(shared), (fn.__name__, shared)
            assert {k: cli[k] for k in shared} == {k: api[k] for k in shared}, fn.__name__
    # `--threads` sets SimConfig.num_threads (train_track takes it inside env_cfg); fine-tuning keeps the run's.
    assert _defaults(track)["threads"] == SimConfig().num_threads
    assert _defaults(finetune)["threads"] is None is _api_defaults(finetune_policy)["num_threads"]


def test_every_iterations_option_says_how_it_counts():
    for command, name in ((track, "iterations"), (finetune, "iterations"), (loop, "pretrain_iterations")):
        (param,) = [p for p in command.params if p.name == name]
        assert isinstance(param, click.Option) and ITERATIONS_CONVENTION in (param.help or "")
    (param,) = [p for p in loop.params if p.name == "finetune_iterations"]
    assert isinstance(param, click.Option) and ITERATIONS_CONVENTION in (param.help or "")
