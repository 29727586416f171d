"""`asap-retarget play`: a policy rollout recorded as a RobotMotion and rendered (tiny untrained policy)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from conftest import asap_reference

CLIP = "kick_level2_filter"


def write_tiny_run(run_dir, num_dof: int = 23, seed: int = 0):
    """A run folder (config.json + model_last.pt) holding an untrained small actor-critic."""
    from trainers.config import TrackingEnvConfig, to_jsonable
    from trainers.observations import frame_size
    from trainers.ppo.actor_critic import ActorCritic
    from trainers.ppo.config import PPOConfig

    torch.manual_seed(seed)
    cfg = TrackingEnvConfig()
    ppo = PPOConfig(actor_hidden=(32, 32), critic_hidden=(32, 32))
    num_obs = frame_size(num_dof) * cfg.obs.history_len
    num_priv = num_obs + 3 + 6 * 27
    policy = ActorCritic(
        num_obs, num_priv, num_dof, ppo.actor_hidden, ppo.critic_hidden, ppo.init_noise_std, ppo.normalize_obs
    )
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(json.dumps({"env": to_jsonable(cfg), "ppo": to_jsonable(ppo)}))
    payload = {
        "model": policy.state_dict(),
        "num_obs": num_obs,
        "num_privileged_obs": num_priv,
        "num_actions": num_dof,
        "iteration": 0,
    }
    torch.save(payload, run_dir / "model_last.pt")
    return run_dir


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    return write_tiny_run(tmp_path_factory.mktemp("run"))


@pytest.fixture(scope="module")
def reference():
    from robots.registry import load_robot_spec
    from trainers.config import SimConfig
    from trainers.reference import load_references
    from trainers.sim_model import build_training_model

    return load_references(asap_reference(CLIP), build_training_model(), load_robot_spec(SimConfig().robot))[0]


def test_rollout_motion_starts_at_the_reference_and_runs_at_the_policy_rate(tiny_run, reference):
    from trainers.play import play_policy
    from trainers.policy_io import load_policy

    loaded = load_policy(tiny_run)
    result = play_policy(loaded.policy.act_inference, reference, loaded.env_cfg, max_steps=6)
    m = result.motion
    assert m.fps == pytest.approx(50.0)
    assert m.root_pos_w.shape == (7, 3) and m.root_quat_w.shape == (7, 4) and m.dof_pos.shape == (7, 23)
    first = reference.sample(np.zeros(1))
    np.testing.assert_allclose(m.dof_pos[0], first.dof_pos[0], atol=1e-12)
    offset = loaded.env_cfg.sim.init_height_offset_m
    np.testing.assert_allclose(m.root_pos_w[0], first.root_pos_w[0] + [0, 0, offset], atol=1e-9)
    np.testing.assert_allclose(np.abs(m.root_quat_w[0] @ first.root_quat_w[0]), 1.0, atol=1e-9)
    assert np.isfinite(m.dof_pos).all() and np.abs(np.diff(m.dof_pos, axis=0)).max() > 1e-4  # it moved
    assert result.metrics.num_frames == 7 and np.isfinite(result.metrics.eg_mpjpe_mm)
    # Deterministic: the same rollout twice.
    again = play_policy(loaded.policy.act_inference, reference, loaded.env_cfg, max_steps=6)
    np.testing.assert_array_equal(again.motion.dof_pos, m.dof_pos)


def test_a_checkpoint_without_curriculum_state_loads_with_nan(tiny_run):
    from trainers.policy_io import load_policy

    loaded = load_policy(tiny_run)
    assert np.isnan(loaded.penalty_scale) and np.isnan(loaded.termination_distance_m)


def test_full_rollout_records_the_final_frame_before_the_reset(tiny_run, reference):
    from trainers.play import play_policy
    from trainers.policy_io import load_policy

    loaded = load_policy(tiny_run)
    result = play_policy(loaded.policy.act_inference, reference, loaded.env_cfg, profile="delay")
    steps = int(np.ceil(reference.duration_s * 50 - 1e-9))
    assert result.motion.num_frames == steps + 1
    # The last frame is where the episode ended, not the reset pose of the next one.
    assert np.abs(result.motion.dof_pos[-1] - result.motion.dof_pos[0]).max() > 1e-3


def test_play_cli_renders_a_non_blank_video_and_still(tiny_run, tmp_path):
    from PIL import Image

    from cli.main import main
    from retarget.viz.video import read_video_frames

    lib = asap_reference(CLIP)
    out = tmp_path / "play.mp4"
    args = [
        "play",
        "--policy",
        str(tiny_run),
        "--motion",
        str(lib),
        "-o",
        str(out),
        "--width",
        "160",
        "--height",
        "64",
        "--max-steps",
        "3",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "4 frames at 50 Hz" in result.output and "Eg-mpjpe" in result.output
    frames, _ = read_video_frames(out)
    assert frames.shape[0] == 4 and frames.shape[1:3] == (64, 160)
    assert frames[0].std() > 5.0  # not a blank image
    png = tmp_path / "play.png"
    result = CliRunner().invoke(
        main, args[:5] + ["-o", str(png), "--width", "160", "--height", "64", "--max-steps", "2", "--no-reference"]
    )
    assert result.exit_code == 0, result.output
    assert np.asarray(Image.open(png)).std() > 5.0


def test_play_rejects_an_unknown_profile(tiny_run, tmp_path):
    from cli.main import main

    args = [
        "play",
        "--policy",
        str(tiny_run),
        "--motion",
        str(asap_reference(CLIP)),
        "--real",
        "nope",
        "-o",
        str(tmp_path / "x.mp4"),
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1 and "nope" in result.output
    assert not (tmp_path / "x.mp4").exists()
