"""Stage-3 baselines: one-step replay, SysID, DeltaDynamics (model and simulator) and ActionNoise,
with known answers."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from conftest import asap_reference
from trajectories import frames

from cli.main import main
from retarget.errors import AsapRetargetError
from robots.registry import load_robot_spec
from trainers.config import ActionOffset, SimConfig, TrackingEnvConfig
from trainers.defaults import DEFAULT_NUM_THREADS
from trainers.delta.collect import collect_rollouts
from trainers.delta.collection import read_collection, write_collection
from trainers.delta.dynamics import DeltaDynamics, DeltaDynamicsConfig, dynamics_labels, fit_delta_dynamics
from trainers.delta.learned import DeltaMLP, DeltaModelError
from trainers.delta.one_step import one_step_rms, predict_next, recorded_next, transitions
from trainers.delta.sysid import SysIdConfig, identify, profile_from_parameters, recorded_sim_config
from trainers.env import TrackingEnv
from trainers.evaluate import eval_env_config
from trainers.finetune.delta_actions import DeltaSpecError, NoiseDeltaAction, load_delta_action
from trainers.finetune.dynamics_env import DeltaDynamicsEnv
from trainers.real.model import build_real_model
from trainers.real.profiles import UnknownProfileError, get_profile, save_profile
from trainers.reference import load_references

CLIP = "squat_level1_filter"
D = 23


@pytest.fixture(scope="module")
def refs():
    return load_references(asap_reference(CLIP), build_real_model("nominal"), load_robot_spec())


@pytest.fixture(scope="module")
def rollouts(refs):
    """Zero-policy rollouts (PD on the reference) in three robots, 40 frames each."""
    out = {}
    for profile in ("nominal", "soft_ankles", "soft_ankles_delay"):
        (traj,) = collect_rollouts(None, refs, profile).values()
        out[profile] = frames(traj, slice(40))
    return out


def test_one_step_replay_reproduces_the_recording_in_the_robot_that_made_it(rollouts):
    for profile, traj in rollouts.items():
        pairs = transitions([traj])
        assert len(pairs) == 39
        pred, goal = predict_next(build_real_model(profile), pairs), recorded_next(pairs)
        # Same simulator, same state, same targets (the delay history from the previous target): exact
        # up to the float32 the collection stores.
        assert np.abs(pred.dof_pos - goal.dof_pos).max() < 1e-5
        assert np.abs(pred.root_pos_w - goal.root_pos_w).max() < 1e-6
    # The nominal simulator does not reproduce the delayed soft-ankle robot.
    pairs = transitions([rollouts["soft_ankles_delay"]])
    own = one_step_rms(build_real_model("soft_ankles_delay"), pairs)
    assert one_step_rms(build_real_model("nominal"), pairs) > 1e-4 > 100 * own


def test_sysid_recovers_the_soft_ankle_delay_robot_and_round_trips_as_json(rollouts, tmp_path):
    cfg = SysIdConfig(
        kp_ratios=(0.5, 0.65, 1.0, 1.25),
        delays_physics_steps=(0, 2, 4),
        torso_mass_offsets_kg=(0.0, 2.0),
        rounds=1,
        max_transitions=30,
    )
    result = identify([rollouts["soft_ankles_delay"]], cfg)
    assert result.parameters == {
        "delay_physics_steps": 4.0,
        "kp_ankles": 0.65,
        "kp_legs": 1.0,
        "kp_waist": 1.0,
        "kp_arms": 1.0,
        "torso_mass_offset_kg": 0.0,
    }
    assert result.rms_identified < 1e-6
    assert result.rms_nominal > 1e-4
    profile = result.profile
    assert profile.kp_multiplier("left_ankle_roll_joint") == 0.65 and profile.kp_multiplier("left_knee_joint") == 1.0
    path = save_profile(profile, tmp_path / "sysid.json")
    assert get_profile(str(path)) == profile
    (tmp_path / "bad.json").write_text('{"name": "x", "delay": 3}')
    with pytest.raises(UnknownProfileError, match="bad.json"):
        get_profile(str(tmp_path / "bad.json"))
    # A model built from the file is the soft-ankle delay robot: the same one-step prediction.
    pairs = transitions([rollouts["soft_ankles_delay"]])[:10]
    a = predict_next(build_real_model(str(path)), pairs).vector()
    b = predict_next(build_real_model("soft_ankles_delay"), pairs).vector()
    np.testing.assert_allclose(a, b, atol=1e-12)


def test_profile_from_parameters_leaves_unit_ratios_out():
    p = profile_from_parameters(
        {"kp_legs": 1.0, "kp_ankles": 0.8, "delay_physics_steps": 2.0, "torso_mass_offset_kg": 1.0}
    )
    assert dict(p.kp_scale) == {"ankle_pitch_joint": 0.8, "ankle_roll_joint": 0.8}
    assert p.delay_physics_steps == 2 and p.torso_mass_offset_kg == 1.0


def test_delta_dynamics_labels_vanish_in_the_nominal_robot_and_the_fit_explains_the_soft_ankles(rollouts, tmp_path):
    _, y = dynamics_labels([rollouts["nominal"]])
    assert np.abs(y).max() < 1e-3  # float32 velocities in the file
    model, stats = fit_delta_dynamics([rollouts["soft_ankles"]], DeltaDynamicsConfig(epochs=400))
    assert stats["transitions"] == 39
    assert stats["explained_variance"] > 0.9
    assert stats["fit_residual_rms_dof_pos_rad"] < 0.3 * stats["label_rms_dof_pos_rad"]
    path = model.save(tmp_path / "dyn.pt")
    again = DeltaDynamics.load(path)
    x = np.random.default_rng(0)
    args = (
        x.normal(0, 0.1, (3, D)),
        x.normal(0, 0.1, (3, D)),
        x.normal(0, 1, (3, D)),
        np.tile([1.0, 0, 0, 0], (3, 1)),
        x.normal(0, 0.5, (3, 3)),
        x.normal(0, 0.1, (3, D)),
    )
    np.testing.assert_array_equal(model(*args), again(*args))
    assert again.previous_target and len(again.x_mean) == 3 * D + 6
    with pytest.raises(DeltaModelError, match="previous PD target"):
        again(*args[:5])
    torch.save({"model": {}}, tmp_path / "not_dyn.pt")
    with pytest.raises(DeltaModelError, match="not_dyn.pt"):
        DeltaDynamics.load(tmp_path / "not_dyn.pt")


def _constant_dynamics(delta: np.ndarray) -> DeltaDynamics:
    """A Δs model whose output is ``delta`` for every input (zero weights, bias 1, output scale = delta)."""
    net = DeltaMLP(2 * D + 6, delta.size, (4,))
    for p in net.parameters():
        torch.nn.init.zeros_(p)
    torch.nn.init.ones_(net.net[-1].bias)
    return DeltaDynamics(net.eval(), np.zeros(2 * D + 6), np.ones(2 * D + 6), delta, (4,))


def test_delta_dynamics_env_adds_the_residual_to_the_state_after_the_physics(refs):
    cfg = eval_env_config(
        dataclasses.replace(TrackingEnvConfig(), sim=dataclasses.replace(TrackingEnvConfig().sim, num_threads=1))
    )
    delta = np.zeros(2 * D + 6)
    delta[3], delta[D + 4], delta[2 * D] = 0.01, 0.2, 0.05  # knee +0.01 rad, ankle +0.2 rad/s, root vx +0.05 m/s
    plain = TrackingEnv(refs, 2, cfg, seed=0, model=build_real_model("nominal"))
    dyn = DeltaDynamicsEnv(refs, 2, cfg, seed=0, model=build_real_model("nominal"), dynamics=_constant_dynamics(delta))
    start = np.array([0.3, 0.3])
    plain.reset_envs(np.arange(2), start_phase=start, clip_ids=np.zeros(2, int))
    dyn.reset_envs(np.arange(2), start_phase=start, clip_ids=np.zeros(2, int))
    action = np.zeros((2, D))
    plain.step(action)
    dyn.step(action)
    np.testing.assert_allclose(
        dyn._qpos[:, dyn.qpos_adr] - plain._qpos[:, plain.qpos_adr], np.tile(delta[:D], (2, 1)), atol=1e-12
    )
    np.testing.assert_allclose(
        dyn._qvel[:, dyn.qvel_adr] - plain._qvel[:, plain.qvel_adr], np.tile(delta[D : 2 * D], (2, 1)), atol=1e-12
    )
    np.testing.assert_allclose(dyn._qvel[:, :3] - plain._qvel[:, :3], np.tile([0.05, 0, 0], (2, 1)), atol=1e-12)
    # The observed state is the corrected one (kinematics recomputed after the edit).
    knee_body = dyn.model.jnt_bodyid[dyn.model.joint("left_knee_joint").id]
    assert not np.allclose(dyn._xpos[:, knee_body + 1], plain._xpos[:, knee_body + 1])
    np.testing.assert_allclose(dyn.state.dof_pos, dyn._qpos[:, dyn.qpos_adr])


def test_action_noise_is_seeded_gaussian_and_parsed_from_its_spec():
    target = np.zeros((4000, D))
    a = NoiseDeltaAction(0.1, seed=3)(target, target, target, None, None, 0.25)
    b = load_delta_action("noise:0.1", seed=3)(target, target, target, None, None, 0.25)
    np.testing.assert_array_equal(a, b)
    assert abs(a.std() - 0.1) < 0.002 and abs(a.mean()) < 0.002
    with pytest.raises(DeltaSpecError, match="noise:abc"):
        load_delta_action("noise:abc")
    with pytest.raises(DeltaSpecError):
        load_delta_action("noise:-1")


def test_sysid_and_fit_dynamics_commands(rollouts, tmp_path):
    coll = tmp_path / "collect.pkl"
    write_collection(coll, {"squat__0": rollouts["soft_ankles"]})
    cli = CliRunner()
    out = cli.invoke(main, ["delta", "fit-dynamics", str(coll), "-o", str(tmp_path / "dyn.pt"), "--epochs", "50"])
    assert out.exit_code == 0, out.output
    assert DeltaDynamics.load(tmp_path / "dyn.pt").num_dof == D
    out = cli.invoke(main, ["delta", "sysid", str(coll), "-o", str(tmp_path / "s.json"), "--max-transitions", "8"])
    assert out.exit_code == 0, out.output
    saved = json.loads((tmp_path / "s.json").read_text())
    assert saved["name"] == "sysid" and "identified" in out.output
    assert isinstance(get_profile(str(tmp_path / "s.json")).delay_physics_steps, int)
    out = cli.invoke(main, ["delta", "sysid", str(tmp_path / "missing.pkl"), "-o", str(tmp_path / "t.json")])
    assert out.exit_code == 1 and "missing.pkl" in out.output
    assert not (tmp_path / "t.json").exists()
    assert issubclass(UnknownProfileError, AsapRetargetError)


def test_resets_of_a_delayed_robot_start_from_a_held_pose_like_the_single_robot_stepper(refs):
    """A TrackingEnv on a delayed "real" model, reset at a phase, then one zero-action step: the same joints as the
    single-robot stepper reset to the same state (history filled with the start pose), to 1e-9 rad."""
    from trainers.real.stepper import PdRobot

    cfg = eval_env_config(
        dataclasses.replace(TrackingEnvConfig(), sim=dataclasses.replace(TrackingEnvConfig().sim, num_threads=1))
    )
    model = build_real_model("soft_ankles_delay")
    env = TrackingEnv(refs, 2, cfg, seed=0, model=model)
    env.step(np.zeros((2, D)))  # fill the history with something else first
    env.reset_envs(np.arange(2), start_phase=np.array([0.2, 0.6]), clip_ids=np.zeros(2, int))
    s = env.state
    start = [(s.dof_pos[i].copy(), env._qpos[i].copy(), env._qvel[i].copy()) for i in range(2)]
    target = env.pd_targets(np.zeros((2, D)))
    env.step(np.zeros((2, D)))
    robot = PdRobot(build_real_model("soft_ankles_delay"))
    for i, (q, qpos, qvel) in enumerate(start):
        robot.reset(
            q,
            qvel[env.qvel_adr],
            targets=q,
            root_pos_w=qpos[:3],
            root_quat_w=qpos[3:7],
            root_lin_vel_w=qvel[:3],
            root_ang_vel_b=qvel[3:6],
        )
        robot.step_policy(target[i])
        np.testing.assert_allclose(env._qpos[i, env.qpos_adr], robot.dof_pos, atol=1e-9)


def test_delta_labels_of_a_one_step_delay_are_the_previous_target_change(refs):
    """A robot whose targets arrive exactly one policy step late executes q*_{t−1}: the Δa that makes the nominal
    simulator repeat it is δ = q*_{t−1} − q*_t on every joint — the labels find it, and the features carry it."""
    from trainers.delta.learned import LearnedDeltaConfig, features, transition_labels
    from trainers.delta.one_step import previous_targets

    (traj,) = collect_rollouts(None, refs, "delay").values()
    traj = frames(traj, slice(5, 17))  # frames 5..16, mid-motion
    x, y = transition_labels([traj], LearnedDeltaConfig(joints="all", previous_target=True))
    want = (previous_targets(traj) - traj.pd_target)[:-1]
    assert np.abs(want).max() > 1e-3  # the targets do move
    # Row 0 is left out: cut from mid-rollout, the slice's first "previous target" is its start pose by convention,
    # not the q*_4 the robot was executing.
    np.testing.assert_allclose(y[1:], want[1:], atol=2e-4 + 0.02 * np.abs(want).max())
    # The last 23 features are exactly that change.
    np.testing.assert_allclose(x[:, -D:], want, atol=1e-12)
    assert x.shape[1] == len(
        features(
            traj.pd_target[0],
            traj.dof_pos[0],
            traj.dof_vel[0],
            traj.root_quat_w[0],
            traj.root_ang_vel_w[0],
            traj.pd_target[0],
        )
    )


class _RecordingDelta:
    """A zero Δa that records the previous targets it was given."""

    name = "recording"

    def __init__(self):
        self.seen: list[np.ndarray] = []

    def __call__(self, target, q, qd, root_quat_w, base_ang_vel_b, action_scale, previous_target=None):
        self.seen.append((previous_target.copy(), target.copy()))
        return np.zeros_like(target)


def test_delta_env_passes_the_previous_nominal_target_and_the_start_pose_after_a_reset(refs):
    from trainers.finetune.delta_env import DeltaActionEnv

    cfg = eval_env_config(
        dataclasses.replace(TrackingEnvConfig(), sim=dataclasses.replace(TrackingEnvConfig().sim, num_threads=1))
    )
    rec = _RecordingDelta()
    env = DeltaActionEnv(refs, 2, cfg, seed=0, model=build_real_model("nominal"), delta=rec)
    env.reset_envs(np.arange(2), start_phase=np.array([0.2, 0.5]), clip_ids=np.zeros(2, int))
    start = env.state.dof_pos.copy()
    rng = np.random.default_rng(0)
    env.step(rng.normal(0, 0.1, (2, D)))
    env.step(rng.normal(0, 0.1, (2, D)))
    (prev0, target0), (prev1, _) = rec.seen
    np.testing.assert_array_equal(prev0, start)
    np.testing.assert_array_equal(prev1, target0)
    env.reset_envs(np.array([1]), start_phase=np.array([0.3]), clip_ids=np.zeros(1, int))
    env.step(np.zeros((2, D)))
    restarted = rec.seen[-1][0]
    np.testing.assert_array_equal(restarted[0], rec.seen[-2][1][0])  # env 0 goes on from its last target
    assert not np.allclose(restarted[1], rec.seen[-2][1][1])  # env 1 restarted from its new start pose


def test_sysid_replays_with_the_simconfig_the_rollouts_were_recorded_with(refs, tmp_path):
    """Rollouts of a run at another decimation and action offset: `delta sysid` steps its replay as they were
    stepped, so the nominal robot that made them reproduces them (with the default SimConfig it would not)."""
    env_cfg = TrackingEnvConfig()
    sim = dataclasses.replace(env_cfg.sim, decimation=2, action_offset=ActionOffset.DEFAULT_POSE)
    (traj,) = collect_rollouts(None, refs, "nominal", dataclasses.replace(env_cfg, sim=sim)).values()
    coll = write_collection(tmp_path / "collect.pkl", {"squat__0": frames(traj, slice(20))})
    (read,) = read_collection(coll).values()
    assert recorded_sim_config([read]) == dataclasses.replace(sim, num_threads=DEFAULT_NUM_THREADS)
    assert recorded_sim_config([rollouts_without_config(read)]) == SimConfig()
    out = CliRunner().invoke(
        main, ["delta", "sysid", str(coll), "-o", str(tmp_path / "s.json"), "--max-transitions", "8"]
    )
    assert out.exit_code == 0, out.output
    rms_nominal = float(out.output.split("one-step residual RMS ")[1].split()[0])
    pairs = transitions([read])
    default_rms = one_step_rms(build_real_model("nominal"), pairs)  # stepped with the default SimConfig
    assert rms_nominal < 1e-5 < default_rms


def rollouts_without_config(traj):
    """The trajectory as a robot log holds it: no SimConfig recorded."""
    return dataclasses.replace(traj, sim_config_json="")
