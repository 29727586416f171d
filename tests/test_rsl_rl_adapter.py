"""rsl-rl-lib 5.5 on the G1 tracking env: the VecEnv adapter, the translated config, training, checkpoints, actor."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from conftest import asap_reference
from test_trainers_ppo import MatchTargetEnv

pytest.importorskip("rsl_rl", reason="rsl-rl-lib (the rsl / test extra) is not installed")

from rsl_rl.models import MLPModel
from rsl_rl.runners import OnPolicyRunner

from cli.main import main
from robots.registry import load_robot_spec
from trainers.config import TrackingEnvConfig
from trainers.env import TrackingEnv
from trainers.ppo.config import PPOConfig
from trainers.ppo.runner import OnPolicyRunner as OurRunner
from trainers.reference import load_references
from trainers.rsl_rl_adapter import RslRlTrackingEnv, load_rsl_rl_actor, rsl_rl_policy, rsl_rl_train_cfg
from trainers.rsl_rl_train import train_track_rsl_rl
from trainers.sim_model import build_training_model

CLIP = "kick_level2_filter"  # 101 frames at 30 Hz, official ASAP retarget
NUM_ENVS = 4
# Small networks and short rollouts keep the rsl_rl runs fast; every value differs from rsl_rl's own
# defaults (num_mini_batches 4, entropy 0.01, ...) so that the config check cannot pass by coincidence.
SMALL = PPOConfig(
    actor_hidden=(64, 32),
    critic_hidden=(48, 24),
    init_noise_std=0.3,
    num_steps_per_env=8,
    num_learning_epochs=3,
    num_mini_batches=2,
    clip_param=0.25,
    gamma=0.98,
    lam=0.9,
    value_loss_coef=0.7,
    entropy_coef=0.003,
    learning_rate=5e-4,
    desired_kl=0.02,
    max_grad_norm=0.8,
)


@pytest.fixture(scope="module")
def env_cfg():
    cfg = TrackingEnvConfig()
    return dataclasses.replace(cfg, sim=dataclasses.replace(cfg.sim, num_threads=1))


@pytest.fixture(scope="module")
def model_and_refs(env_cfg):
    model = build_training_model(env_cfg.sim)
    return model, load_references(asap_reference(CLIP), model, load_robot_spec(env_cfg.sim.robot))


def make_env(model_and_refs, env_cfg, seed=0, cls=TrackingEnv):
    model, refs = model_and_refs
    return cls(refs, NUM_ENVS, env_cfg, seed=seed, model=model)


def quiet_runner(vec, ppo_cfg):
    with contextlib.redirect_stdout(io.StringIO()):  # rsl_rl prints the models and observation sets
        return OnPolicyRunner(vec, rsl_rl_train_cfg(ppo_cfg), log_dir=None, device="cpu")


def test_observation_groups_rewards_dones_and_time_outs_pass_through(model_and_refs, env_cfg):
    # Twin environments with the same seed and actions: the adapted one must return exactly the raw one's tensors.
    raw, vec = make_env(model_and_refs, env_cfg), RslRlTrackingEnv(make_env(model_and_refs, env_cfg), None)
    obs = vec.get_observations()
    raw_obs, raw_extras = raw.get_observations()
    assert set(obs.keys()) == {"policy", "critic"} and tuple(obs.batch_size) == (NUM_ENVS,)
    assert obs["policy"].shape == (NUM_ENVS, raw.num_obs) and obs["critic"].shape == (NUM_ENVS, raw.num_privileged_obs)
    assert torch.equal(obs["policy"], raw_obs) and torch.equal(obs["critic"], raw_extras["observations"]["critic"])
    # Start every episode 1% before the clip's end: they time out within a few policy steps.
    for e in (raw, vec.env):
        e.reset_envs(np.arange(NUM_ENVS), start_phase=np.full(NUM_ENVS, 0.99))
    gen = torch.Generator().manual_seed(0)
    seen_time_out = False
    for _ in range(4):
        actions = 0.05 * torch.randn(NUM_ENVS, raw.num_actions, generator=gen)
        obs, rew, done, extras = vec.step(actions)
        raw_obs, raw_rew, raw_done, raw_extras = raw.step(actions)
        assert torch.equal(obs["policy"], raw_obs) and torch.equal(obs["critic"], raw_extras["observations"]["critic"])
        assert torch.equal(rew, raw_rew) and torch.equal(done, raw_done)
        assert torch.equal(extras["time_outs"], raw_extras["time_outs"])
        assert all(k.startswith("/") for k in extras["log"])
        expected = {f"/episode/{k}": v for k, v in raw_extras["episode"].items() if k.startswith("rew_")}
        assert {k: v for k, v in extras["log"].items() if k.startswith("/episode/")} == expected
        assert extras["log"]["/curriculum/termination_distance_m"] == raw.termination_distance_m
        seen_time_out |= bool(extras["time_outs"].any())
    assert seen_time_out


def test_translated_config_reaches_rsl_rl_and_curricula_run_once_per_rollout(model_and_refs, env_cfg):
    calls = []

    class CountingEnv(TrackingEnv):
        def update_curricula(self) -> None:
            calls.append(1)
            super().update_curricula()

    torch.manual_seed(0)
    vec = RslRlTrackingEnv(make_env(model_and_refs, env_cfg, cls=CountingEnv), SMALL.num_steps_per_env)
    runner = quiet_runner(vec, SMALL)
    alg = runner.alg
    for name in (
        "num_learning_epochs",
        "num_mini_batches",
        "clip_param",
        "gamma",
        "lam",
        "value_loss_coef",
        "entropy_coef",
        "learning_rate",
        "desired_kl",
        "max_grad_norm",
        "use_clipped_value_loss",
    ):
        assert getattr(alg, name) == getattr(SMALL, name), name
    assert alg.schedule == "adaptive" and not alg.normalize_advantage_per_mini_batch
    assert alg.storage.num_transitions_per_env == SMALL.num_steps_per_env
    widths = [m.out_features for m in alg.actor.mlp if isinstance(m, torch.nn.Linear)]
    assert widths == [64, 32, vec.num_actions] and isinstance(alg.actor.mlp[1], torch.nn.ELU)
    assert [m.out_features for m in alg.critic.mlp if isinstance(m, torch.nn.Linear)] == [48, 24, 1]
    assert alg.actor.obs_dim == vec.num_obs and alg.critic.obs_dim == vec.num_privileged_obs
    assert alg.actor.obs_normalization and alg.critic.obs_normalization
    torch.testing.assert_close(alg.actor.distribution.log_std_param.exp(), torch.full((vec.num_actions,), 0.3))

    before = {k: v.clone() for k, v in alg.actor.state_dict().items()}
    runner.learn(3)
    assert len(calls) == 3 and vec.curriculum_updates == 3 and vec.steps_since_curriculum == 0
    # Behaviour on the real env (a return gain is not measurable in a few seconds): the updates moved the
    # actor's weights and its normalizer, and left everything finite.
    after = alg.actor.state_dict()
    assert not torch.equal(after["mlp.0.weight"], before["mlp.0.weight"])
    assert not torch.equal(after["obs_normalizer._mean"], before["obs_normalizer._mean"])
    assert all(torch.isfinite(v).all() for v in after.values())


def test_cli_training_writes_loadable_checkpoints_and_resumes(tmp_path, model_and_refs, env_cfg):
    run = tmp_path / "run"
    args = [
        "train",
        "track",
        "--motion",
        str(asap_reference(CLIP)),
        "-o",
        str(run),
        "--iterations",
        "2",
        "--num-envs",
        str(NUM_ENVS),
        "--threads",
        "1",
        "--ppo",
        "rsl-rl",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    config = json.loads((run / "config.json").read_text())
    assert config["ppo_backend"] == "rsl-rl" and config["rsl_rl"]["algorithm"]["entropy_coef"] == 0.005
    assert (run / "model_0.pt").exists() and (run / "model_1.pt").exists() and (run / "learning_curve.csv").exists()
    curve = np.genfromtxt(run / "learning_curve.csv", delimiter=",", names=True)
    assert list(curve["iteration"]) == [1, 2] and list(curve["env_steps"]) == [96, 192]

    actor = load_rsl_rl_actor(run / "model_1.pt")
    env = make_env(model_and_refs, env_cfg)
    obs, _ = env.get_observations()
    with torch.no_grad():
        actions = actor(obs)
    assert actions.shape == (NUM_ENVS, env.num_actions) and torch.isfinite(actions).all()
    # The plain-torch actor is rsl_rl's own actor (normalizer + MLP, deterministic output).
    td = RslRlTrackingEnv(env, None).get_observations()
    ref = MLPModel(
        td,
        {"actor": ["policy"]},
        "actor",
        env.num_actions,
        hidden_dims=[512, 256, 128],
        obs_normalization=True,
        distribution_cfg={"class_name": "GaussianDistribution", "std_type": "log"},
    )
    ref.load_state_dict(torch.load(run / "model_1.pt", weights_only=True)["actor_state_dict"])
    with torch.no_grad():
        torch.testing.assert_close(actions, ref.eval()(td))

    # What policy_io would return for this run exports like ours: the ONNX actor reproduces it.
    import onnxruntime

    from trainers.export import export_actor
    from trainers.policy_io import LoadedPolicy, PolicyFileError

    policy = rsl_rl_policy(torch.load(run / "model_1.pt", weights_only=True))
    onnx_path = export_actor(LoadedPolicy(policy, env_cfg, run / "model_1.pt", 2), tmp_path / "policy.onnx")
    session = onnxruntime.InferenceSession(str(onnx_path))
    (onnx_actions,) = session.run(None, {"obs": obs.numpy()})
    np.testing.assert_allclose(onnx_actions, actions.numpy(), atol=1e-5)
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    for bad in (tmp_path / "junk.pt", run / "missing.pt"):
        with pytest.raises(PolicyFileError, match=bad.name):
            load_rsl_rl_actor(bad)

    # eval-policy reads the run like one of ours (newest model_<it>.pt by iteration number).
    result = CliRunner().invoke(main, ["eval-policy", str(run), "--motion", str(asap_reference(CLIP))])
    assert result.exit_code == 0 and "model_1.pt (iteration 2)" in result.output, result.output

    args_ours = args[:-2]  # the same run folder with our PPO: refused, untouched
    before = (run / "config.json").read_bytes()
    result = CliRunner().invoke(main, args_ours)
    assert result.exit_code == 1 and "rsl-rl" in result.output
    assert (run / "config.json").read_bytes() == before

    # The run's total, as train_track counts: 2 done, so 2 trains nothing and 3 trains one more.
    res = train_track_rsl_rl(asap_reference(CLIP), run, iterations=2, num_envs=NUM_ENVS, env_cfg=env_cfg)
    assert res.resumed_from == run / "model_1.pt" and res.rows == []
    res = train_track_rsl_rl(asap_reference(CLIP), run, iterations=3, num_envs=NUM_ENVS, env_cfg=env_cfg)
    assert res.resumed_from == run / "model_1.pt" and res.rows[0]["iteration"] == 3
    assert (run / "model_2.pt").exists()
    resumed = torch.load(run / "model_2.pt", weights_only=True)
    assert resumed["iter"] == 2 and resumed["infos"]["num_obs"] == env.num_obs


def test_rsl_rl_ppo_learns_a_trivial_task_like_ours_with_the_same_settings():
    cfg = PPOConfig(
        actor_hidden=(32, 32),
        critic_hidden=(32, 32),
        num_steps_per_env=8,
        init_noise_std=0.5,
        learning_rate=3e-3,
        entropy_coef=0.0,
    )
    torch.manual_seed(0)
    vec = RslRlTrackingEnv(MatchTargetEnv(), cfg.num_steps_per_env)
    runner = quiet_runner(vec, cfg)
    rewards = []
    for _ in range(40):
        runner.learn(1)
        rewards.append(vec.take_mean_reward())
    torch.manual_seed(0)
    ours = [r["mean_step_reward"] for r in OurRunner(MatchTargetEnv(), cfg).learn(40)]
    # Untrained: E‖W o‖² + 2σ² ≈ −3.7. Both PPOs must at least triple the mean reward towards 0 in 40 iterations.
    for curve in (rewards, ours):
        assert curve[0] < -2.5 and np.mean(curve[-5:]) > curve[0] / 3.0


def test_missing_extra_is_a_clear_error_and_cli_exit_1(monkeypatch, tmp_path):
    import sys

    from trainers.rsl_rl_adapter import RslRlUnavailableError

    monkeypatch.setitem(sys.modules, "rsl_rl", None)  # what `import rsl_rl` sees without the extra
    with pytest.raises(RslRlUnavailableError, match=r"pip install -e '\.\[rsl\]'"):
        RslRlTrackingEnv(MatchTargetEnv())
    args = ["train", "track", "--motion", str(asap_reference(CLIP)), "-o", str(tmp_path / "run"), "--ppo", "rsl-rl"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1 and "rsl-rl-lib==5.5.0" in result.output
    assert not (tmp_path / "run").exists()  # nothing written before the check


def test_a_run_folder_of_our_ppo_is_refused_untouched(tmp_path):
    from retarget.errors import AsapRetargetError

    (tmp_path / "model_last.pt").write_bytes(b"ours")
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(AsapRetargetError, match="--ppo ours"):
        train_track_rsl_rl(asap_reference(CLIP), tmp_path, iterations=1, num_envs=NUM_ENVS)
    assert (tmp_path / "config.json").read_text() == "{}" and sorted(p.name for p in tmp_path.iterdir()) == [
        "config.json",
        "model_last.pt",
    ]
