"""The stand-alone sim-to-sim runner: exported ONNX policy, its sidecar, a plain MuJoCo loop with its own PD."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from conftest import asap_reference
from test_play import CLIP, write_tiny_run


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    from trainers.export import export_actor
    from trainers.policy_io import load_policy

    folder = tmp_path_factory.mktemp("sim2sim")
    loaded = load_policy(write_tiny_run(folder / "run", seed=1))
    return loaded, export_actor(loaded, folder / "policy.onnx")


@pytest.fixture(scope="module")
def reference():
    from robots.registry import load_robot_spec
    from trainers.reference import load_references
    from trainers.sim_model import build_training_model

    return load_references(asap_reference(CLIP), build_training_model(), load_robot_spec("g1_23dof"))[0]


def test_first_observation_and_action_match_the_training_env(exported, reference):
    from trainers.env import TrackingEnv
    from trainers.evaluate import eval_env_config
    from trainers.sim2sim import Sim2SimConfig, Sim2SimRunner, load_onnx_policy, load_sidecar

    loaded, onnx_path = exported
    env = TrackingEnv([reference], 1, eval_env_config(loaded.env_cfg))
    env.reset_envs(np.zeros(1, dtype=int), start_phase=np.zeros(1), clip_ids=np.zeros(1, dtype=int))
    env_obs, _ = env.get_observations()
    with torch.no_grad():
        env_actions = loaded.policy.act_inference(env_obs).numpy()

    runner = Sim2SimRunner(load_sidecar(onnx_path), reference, Sim2SimConfig(profile="nominal"))
    obs = runner.observation()
    assert obs.shape == tuple(env_obs.shape) == (1, 5 * 76)
    np.testing.assert_allclose(obs, env_obs.numpy(), atol=1e-6)
    actions = load_onnx_policy(onnx_path)(obs)
    np.testing.assert_allclose(actions, env_actions, rtol=1e-5, atol=1e-5)
    assert np.abs(actions).max() > 1e-3  # a non-trivial comparison

    # After one step both put the new frame first and shift the old ones back (same history order).
    env.step(torch.as_tensor(env_actions))
    runner.step(actions[0].astype(np.float64))
    env_next, new = env.get_observations()[0].numpy()[0], runner.observation()[0]
    np.testing.assert_allclose(new[76:152], obs[0, :76], atol=1e-6)
    np.testing.assert_allclose(new[76 * 4 - 1], env_next[76 * 4 - 1], atol=1e-9)  # phase of the oldest frame
    assert new[75] == pytest.approx(env_next[75]) == pytest.approx(0.02 / reference.duration_s)
    # Different PD rates (1 kHz explicit vs 200 Hz in-actuator), one 20 ms step: joints agree to a few mrad.
    assert np.abs(new[6:29] - env_next[6:29]).max() < 0.02


def test_short_run_gives_finite_metrics_and_a_profile_changes_it(exported, reference):
    from trainers.sim2sim import Sim2SimConfig, Sim2SimError, Sim2SimRunner, load_onnx_policy, load_sidecar

    _, onnx_path = exported
    info, policy = load_sidecar(onnx_path), load_onnx_policy(onnx_path)
    nominal = Sim2SimRunner(info, reference, Sim2SimConfig(profile="nominal")).run(policy, max_steps=100)
    m = nominal.metrics
    assert nominal.steps >= 1 and m.num_frames == nominal.steps + 1
    assert all(np.isfinite([m.eg_mpjpe_mm, m.empjpe_mm, m.evel_mm_per_frame, m.eacc_mm_per_frame2]))
    delayed = Sim2SimRunner(info, reference, Sim2SimConfig(profile="delay")).run(policy, max_steps=10)
    assert delayed.steps == min(10, nominal.steps) or delayed.metrics.success_rate == 0.0
    np.testing.assert_allclose(delayed.first_actions, nominal.first_actions, atol=1e-6)  # same start
    assert delayed.metrics.eg_mpjpe_mm != pytest.approx(m.eg_mpjpe_mm, abs=1e-6)
    # No step, no first action to report: refused instead of a result holding None.
    with pytest.raises(Sim2SimError, match="max_steps=0: at least one policy step"):
        Sim2SimRunner(info, reference, Sim2SimConfig(profile="nominal")).run(policy, max_steps=0)


def test_cli_reports_metrics_and_rejects_bad_rates(exported, tmp_path):
    from cli.main import main

    _, onnx_path = exported
    args = ["sim2sim", "--onnx", str(onnx_path), "--motion", str(asap_reference(CLIP)), "--max-steps", "5"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "Eg-mpjpe" in result.output and "PD 1000 Hz, policy 50 Hz" in result.output
    result = CliRunner().invoke(main, args + ["--pd-hz", "333"])
    assert result.exit_code == 1 and "not a multiple" in result.output
    missing = tmp_path / "other.onnx"
    missing.write_bytes(onnx_path.read_bytes())
    result = CliRunner().invoke(main, ["sim2sim", "--onnx", str(missing), "--motion", str(asap_reference(CLIP))])
    assert result.exit_code == 1 and "other.onnx.json: missing" in result.output
