"""The MuJoCo Warp engine (``--engine warp``) on Warp's CPU device: the same trajectories as MuJoCo's C engine,
training, fine-tuning, evaluation and export end to end, and its refusals in one line.

Warp compiles its kernels once per machine (about 20-60 s, cached under ~/.cache/warp); the module's tests share
that cost."""

from __future__ import annotations

import dataclasses
import functools
import json

import mujoco.batch
import numpy as np
import pytest
import torch
from click.testing import CliRunner
from conftest import asap_reference

from cli.main import main
from robots.registry import load_robot_spec
from trainers import warp_batch
from trainers.config import SimConfig, TrackingEnvConfig
from trainers.env import TrackingEnv
from trainers.real.model import build_real_model
from trainers.reference import load_references
from trainers.sim_model import build_training_model
from trainers.warp_batch import WarpBatch, WarpConfig  # the `warp` extra, part of the test extra

CLIP = "kick_level2_filter"
CPU = ["--engine", "warp", "--device", "cpu"]


def _env(engine: str, robot: str, num_envs: int = 6, seed: int = 3) -> TrackingEnv:
    cfg = TrackingEnvConfig()
    cfg = dataclasses.replace(cfg, sim=dataclasses.replace(cfg.sim, engine=engine, warp_device="cpu", num_threads=1))
    model = build_training_model(cfg.sim) if robot == "training" else build_real_model(robot, cfg.sim)
    refs = load_references(asap_reference(CLIP), model, load_robot_spec(cfg.sim.robot))
    return TrackingEnv(refs, num_envs, cfg, seed=seed, model=model)


@pytest.mark.parametrize(("robot", "host_mirrors"), [("training", False), ("combined", False), ("training", True)])
def test_the_same_actions_give_the_same_trajectories_as_the_c_engine_over_one_second(robot, host_mirrors, monkeypatch):
    # Domain randomization on (per-world friction, masses, CoM, gains and the constants derived from them), random
    # starts and noisy actions: 50 policy steps = 200 physics steps = 1 s of a real clip. `combined` is the "real"
    # MuJoCo G1 with delayed actuators (MuJoCo's target history) and other gains. host_mirrors: the copies a GPU
    # needs between host and device memory, run on the CPU device.
    monkeypatch.setattr(warp_batch, "WarpConfig", functools.partial(WarpConfig, host_mirrors=host_mirrors))
    envs = {engine: _env(engine, robot) for engine in ("mujoco", "warp")}
    assert np.shares_memory(envs["warp"].batch.bind("qpos"), envs["warp"].batch._d.qpos.numpy()) != host_mirrors
    actions = np.random.default_rng(0).normal(0.0, 0.3, (50, 6, envs["mujoco"].num_actions))
    runs = {}
    for engine, env in envs.items():
        rows = []
        for a in actions:
            obs, reward, done, _ = env.step(torch.as_tensor(a, dtype=torch.float32))
            s = env.state
            rows.append((s.dof_pos.copy(), s.point_pos_w.copy(), obs.numpy().copy(), reward.numpy().copy(), done))
        runs[engine] = rows
    c_run, warp_run = runs["mujoco"], runs["warp"]
    assert all(bool((c[4] == w[4]).all()) for c, w in zip(c_run, warp_run))  # the same terminations and resets
    joint_rad = max(float(np.abs(c[0] - w[0]).max()) for c, w in zip(c_run, warp_run))
    point_m = max(float(np.abs(c[1] - w[1]).max()) for c, w in zip(c_run, warp_run))
    reward = max(float(np.abs(c[3] - w[3]).max()) for c, w in zip(c_run, warp_run))
    assert joint_rad < 1e-4 and point_m < 1e-4 and reward < 1e-4, (joint_rad, point_m, reward)
    # ... and the motion is not trivially still: the joints moved by far more than the tolerance.
    assert float(np.abs(c_run[-1][0] - c_run[0][0]).max()) > 0.1


def test_dropped_contacts_are_reported_as_failed_worlds_not_simulated_wrong():
    # The contact pool is shared (capacity × worlds): which world lost contacts is not known, so all are failed.
    model = build_training_model(SimConfig())
    batch = WarpBatch(model, 3, WarpConfig(device="cpu", contacts_per_world=1))
    batch.reset(np.arange(3))
    batch.bind("qpos")[:, 2] = [0.78, 0.78, 3.0]  # two stand on the floor (several contacts each), one flies
    batch.forward()
    with pytest.raises(mujoco.batch.SimulationError, match="contact capacity") as failed:
        batch.step(4)
    assert list(failed.value.ids) == [0, 1, 2]
    batch.reset(np.arange(3))  # a reset clears the overflow; in the air nothing overflows
    batch.bind("qpos")[:, 2] = 3.0
    batch.forward()
    batch.step(4)
    assert np.isfinite(batch.bind("qpos")).all() and (batch.bind("qpos")[:, 2] < 3.0).all()


def test_train_track_on_warp_then_finetune_eval_and_export(tmp_path):
    run, tuned, lib = tmp_path / "run", tmp_path / "tuned", asap_reference(CLIP)
    cli = CliRunner()
    track = ["train", "track", "--motion", str(lib), "-o", str(run), "--iterations", "1", "--num-envs", "4", *CPU]
    result = cli.invoke(main, track)
    assert result.exit_code == 0, result.output
    config = json.loads((run / "config.json").read_text())
    assert config["env"]["sim"]["engine"] == "warp" and config["env"]["sim"]["warp_device"] == "cpu"
    # Fine-tuning with a frozen Δa added before the PD targets, stepped by Warp too.
    finetune = ["train", "finetune", "--policy", str(run), "--motion", str(lib), "-o", str(tuned)]
    result = cli.invoke(main, [*finetune, "--delta", "constant:0.05", "--iterations", "1", *CPU])
    assert result.exit_code == 0, result.output
    assert json.loads((tuned / "config.json").read_text())["env"]["sim"]["engine"] == "warp"
    # The checkpoints are the C engine's: evaluation (on the C engine) and ONNX export read them unchanged.
    result = cli.invoke(main, ["eval-policy", str(tuned), "--motion", str(lib)])
    assert result.exit_code == 0 and "Eg-mpjpe" in result.output, result.output
    result = cli.invoke(main, ["export-policy", str(run), "-o", str(tmp_path / "policy.onnx")])
    assert result.exit_code == 0 and (tmp_path / "policy.onnx").stat().st_size > 100_000, result.output


def test_a_device_warp_cannot_use_is_refused_in_one_line(tmp_path):
    args = ["train", "track", "--motion", str(asap_reference(CLIP)), "-o", str(tmp_path / "run"), "--iterations"]
    result = CliRunner().invoke(main, [*args, "1", "--engine", "warp", "--device", "tpu0"])
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "--device tpu0" in lines[0] and "Traceback" not in result.output, result.output
    assert not (tmp_path / "run" / "model_last.pt").exists()


def test_a_saved_run_is_read_back_on_the_default_engine():
    from trainers.config import sim_config_from_jsonable, to_jsonable

    saved = to_jsonable(SimConfig(engine="warp", warp_device="cuda:1"))
    assert saved["engine"] == "warp"  # recorded ...
    assert sim_config_from_jsonable(saved) == SimConfig()  # ... not replayed: each command chooses its engine


def test_the_whole_loop_trains_on_warp_and_collects_and_evaluates_in_the_real_robot(tmp_path):
    key = f"0-motions_raw_tairantestbed_smpl_video_{CLIP}_amass"
    run = tmp_path / "run"
    args = ["loop", "--motion", str(asap_reference(CLIP)), "--clip", key, "--real", "soft_ankles_delay", "-o", str(run)]
    budget = ["--pretrain-iterations", "1", "--finetune-iterations", "1", "--num-envs", "4", "--episodes", "1"]
    budget += ["--rounds", "1"]
    result = CliRunner().invoke(main, [*args, *budget, *CPU])
    assert result.exit_code == 0, result.output
    assert result.output.count("done in") == 5 and "ASAP" in result.output
    for stage in ("pretrain", "finetune"):  # both training stages stepped by Warp ...
        assert json.loads((run / stage / "config.json").read_text())["env"]["sim"]["engine"] == "warp"
    # ... and a rerun on the C engine keeps every finished stage: the engine is not one of a stage's inputs.
    result = CliRunner().invoke(main, [*args, *budget])
    assert result.exit_code == 0 and result.output.count("done in") == 0, result.output


def test_table4_bench_fine_tunes_on_warp_and_evaluates_on_the_c_engine(tiny_kick_policy, tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import bench_table4

    out = tmp_path / "t4"
    args = ["--policy", str(tiny_kick_policy), "--motion", str(asap_reference(CLIP)), "--real", "combined"]
    args += ["--seeds", "0", "--iterations", "2", "--num-envs", "4", "--episodes", "2", "--eval-episodes", "2"]
    args += ["--asap-rounds", "1"]
    summary = bench_table4.main([*args, "--methods", "ASAP", "--jobs", "1", *CPU, "-o", str(out)])
    config = json.loads((out / "combined" / "ASAP_s0" / "config.json").read_text())
    assert config["env"]["sim"]["engine"] == "warp"
    assert len(summary["robots"]["combined"]["results"]["ASAP"]) == 1
