"""The frozen Δa inside the simulator: the simulator receives a + π^Δ(s, a), the policy sees a,
no gradient reaches π^Δ."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from conftest import asap_reference

from robots.registry import load_robot_spec
from trainers.config import TrackingEnvConfig
from trainers.delta.learned import DeltaMLP, LearnedDelta, LearnedDeltaConfig, features, joint_ids
from trainers.env import TrackingEnv
from trainers.evaluate import eval_env_config
from trainers.finetune.delta_actions import (
    AnalyticDeltaAction,
    ConstantDeltaAction,
    LearnedDeltaAction,
    load_delta_action,
)
from trainers.finetune.delta_env import DeltaActionEnv
from trainers.ppo.config import PPOConfig
from trainers.ppo.runner import OnPolicyRunner
from trainers.real.model import build_real_model
from trainers.reference import load_references

CLIP = "kick_level2_filter"
D = 23


@pytest.fixture(scope="module")
def refs():
    return load_references(asap_reference(CLIP), build_real_model("nominal"), load_robot_spec())


def _cfg(deterministic: bool = True) -> TrackingEnvConfig:
    cfg = TrackingEnvConfig()
    cfg = dataclasses.replace(cfg, sim=dataclasses.replace(cfg.sim, num_threads=1))
    return eval_env_config(cfg) if deterministic else cfg


def _random_learned(seed: int = 0) -> LearnedDelta:
    torch.manual_seed(seed)
    ids = joint_ids("ankles", load_robot_spec().joint_names)
    num_in = 2 * D + 6
    rng = np.random.default_rng(seed)
    cfg = LearnedDeltaConfig(joints="ankles", hidden=(16, 16), model="mlp", previous_target=False)
    return LearnedDelta(
        DeltaMLP(num_in, ids.size, (16, 16)).eval(), ids, rng.normal(0, 0.1, num_in), rng.uniform(0.5, 2.0, num_in), cfg
    )


def test_simulator_receives_action_plus_constant_delta_and_policy_sees_only_its_action(refs):
    rng = np.random.default_rng(1)
    c = rng.uniform(-0.3, 0.3, D)
    plain = TrackingEnv(refs, 3, _cfg(), seed=5)
    wrapped = DeltaActionEnv(refs, 3, _cfg(), seed=5, delta=ConstantDeltaAction(c))
    for _ in range(4):
        a = rng.uniform(-0.5, 0.5, (3, D))
        obs_w, *_ = wrapped.step(torch.as_tensor(a))
        obs_p, *_ = plain.step(torch.as_tensor(a + c))
        # The physics is exactly that of the nominal simulator given a + Δa.
        np.testing.assert_array_equal(wrapped._ctrl, plain._ctrl)
        np.testing.assert_array_equal(wrapped._qpos, plain._qpos)
        np.testing.assert_array_equal(wrapped.last_delta_action, np.broadcast_to(c, (3, D)))
        # The policy's observation holds its own action a (newest frame's last-action slot), not a + Δa.
        last_action = obs_w.numpy()[:, 6 + 2 * D : 6 + 3 * D]
        np.testing.assert_allclose(last_action, a, atol=1e-6)
        np.testing.assert_allclose(obs_p.numpy()[:, 6 + 2 * D : 6 + 3 * D], a + c, atol=1e-6)
        np.testing.assert_array_equal(wrapped.action, a)


def test_analytic_delta_is_added_from_the_state_before_the_step(refs):
    env = DeltaActionEnv(refs, 2, _cfg(), seed=0, delta=AnalyticDeltaAction("soft_ankles"))
    ratio = AnalyticDeltaAction("soft_ankles").ratio
    a = np.random.default_rng(2).uniform(-0.4, 0.4, (2, D))
    for _ in range(3):
        q = env._qpos[:, env.qpos_adr].copy()
        nominal = TrackingEnv.pd_targets(env, a, env.reference(env.time_s + env.policy_dt_s))
        env.step(torch.as_tensor(a))
        expected = nominal + (ratio - 1.0) * (nominal - q)  # = pd_targets(a + Δa) with Δa = (r−1)(q*−q)/s
        np.testing.assert_allclose(env._ctrl, expected, atol=1e-12)
        ankles = ratio < 1.0
        assert ankles.sum() == 4 and np.all(env.last_delta_action[:, ~ankles] == 0.0)
        np.testing.assert_allclose(env.last_delta_action, (ratio - 1.0) * (nominal - q) / 0.25, atol=1e-12)


def test_batched_learned_delta_matches_the_per_state_model(refs):
    learned = _random_learned()
    env = DeltaActionEnv(refs, 3, _cfg(False), seed=3, delta=LearnedDeltaAction(learned))
    a = np.random.default_rng(3).uniform(-0.4, 0.4, (3, D))
    env.step(torch.as_tensor(a))  # moving, tilted states
    s = env.state
    target = TrackingEnv.pd_targets(env, a, env.reference(env.time_s + env.policy_dt_s))
    q, qd = env._qpos[:, env.qpos_adr].copy(), env._qvel[:, env.qvel_adr].copy()
    got = env.delta(target, q, qd, env._qpos[:, 3:7].copy(), env._qvel[:, 3:6].copy(), 0.25)
    for i in range(3):
        ref_feat = features(target[i], s.dof_pos[i], s.dof_vel[i], s.body_quat_w[i, 0], s.body_ang_vel_w[i, 0])
        one = learned.delta_target(target[i], s.dof_pos[i], s.dof_vel[i], s.body_quat_w[i, 0], s.body_ang_vel_w[i, 0])
        assert np.abs(ref_feat).max() > 0.01
        np.testing.assert_allclose(got[i], one / 0.25, atol=1e-5)
        assert np.abs(got[i]).max() > 1e-3 and np.all(got[i][np.setdiff1d(np.arange(D), learned.joint_ids)] == 0)


def test_policy_update_leaves_the_frozen_delta_unchanged(refs):
    learned = _random_learned(4)
    before = {k: v.clone() for k, v in learned.model.state_dict().items()}
    env = DeltaActionEnv(refs, 4, _cfg(False), seed=0, delta=LearnedDeltaAction(learned))
    runner = OnPolicyRunner(env, PPOConfig(num_steps_per_env=8), None)
    actor_before = [p.detach().clone() for p in runner.policy.actor.parameters()]
    runner.learn(1)
    assert all(not p.requires_grad and p.grad is None for p in learned.model.parameters())
    for k, v in learned.model.state_dict().items():
        torch.testing.assert_close(v, before[k], rtol=0, atol=0)
    assert any(not torch.equal(a, b) for a, b in zip(actor_before, runner.policy.actor.parameters()))
    delta_ids = {id(p) for p in learned.model.parameters()}
    assert not any(id(p) in delta_ids for g in runner.alg.optimizer.param_groups for p in g["params"])
    assert np.abs(env.last_delta_action).max() > 0  # it did act in the simulator


def test_delta_specs(tmp_path):
    assert load_delta_action("analytic:soft_ankles").name == "analytic:soft_ankles"
    assert (
        load_delta_action("constant:0.5")(
            np.zeros((2, D)), *[np.zeros((2, D))] * 2, np.zeros((2, 4)), np.zeros((2, 3)), 0.25
        ).tolist()
        == [[0.5] * D] * 2
    )
    from trainers.finetune.delta_actions import DeltaSpecError

    with pytest.raises(DeltaSpecError, match="missing.pt: no such delta model file"):
        load_delta_action(tmp_path / "missing.pt")
    with pytest.raises(DeltaSpecError, match="constant:x"):
        load_delta_action("constant:x")
    # Finite and within the action clip the simulator applies to a + Δa, or refused naming the option.
    from trainers.config import SimConfig

    clip = SimConfig().action_clip
    assert load_delta_action(f"constant:{-clip:g}").name == f"constant:{-clip:g}"
    assert load_delta_action(f"noise:{clip:g}").name == f"noise:{clip:g}"
    for spec in (
        "constant:inf",
        "constant:-inf",
        "constant:nan",
        f"constant:{clip * 1.01:g}",
        "noise:1e308",
        "noise:nan",
    ):
        with pytest.raises(DeltaSpecError, match=f"^--delta {spec}: .* finite number"):
            load_delta_action(spec)
    (tmp_path / "bad.pt").write_bytes(b"not torch")
    with pytest.raises(Exception, match="bad.pt: not a delta model file"):
        load_delta_action(tmp_path / "bad.pt")
