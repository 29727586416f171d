"""The tracking environment on a real ASAP clip: reference FK and phase, model, PD law, shapes, observations."""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
import pytest
import torch
from conftest import asap_reference

from retarget.asap_pkl import asap_dict_to_motion, read_motion_library
from retarget.rotations import quat_angle_between, quat_slerp
from robots.registry import load_robot_spec
from trainers.config import ActionOffset, DomainRandConfig, TrackingEnvConfig
from trainers.env import TrackingEnv
from trainers.observations import frame_size, projected_gravity_b
from trainers.reference import body_layout, load_references
from trainers.sim_model import build_training_model, default_joint_pos, joint_addresses, pd_torque
from trainers.vecenv import VecEnv

CLIP = "kick_level2_filter"  # 101 frames at 30 Hz, official ASAP retarget


@pytest.fixture(scope="module")
def robot():
    return load_robot_spec("g1_23dof")


@pytest.fixture(scope="module")
def model():
    return build_training_model()


@pytest.fixture(scope="module")
def motion():
    lib = read_motion_library(asap_reference(CLIP))
    ((name, clip),) = lib.items()
    return asap_dict_to_motion(name, clip)


@pytest.fixture(scope="module")
def ref(model, robot):
    (reference,) = load_references(asap_reference(CLIP), model, robot)
    return reference


def fk(model, robot, root_pos, root_quat, dof):
    data = mujoco.MjData(model)
    qpos_adr, _ = joint_addresses(model, robot)
    data.qpos[:3], data.qpos[3:7], data.qpos[qpos_adr] = root_pos, root_quat, dof
    mujoco.mj_kinematics(model, data)
    return data


def test_reference_at_frame_phases_equals_fk_of_the_library(model, robot, motion, ref):
    assert ref.num_frames == motion.num_frames == 101 and ref.fps == 30.0
    frames = np.array([0, 17, 50, 100])
    sample = ref.sample(frames / (ref.num_frames - 1))
    for k, t in enumerate(frames):
        data = fk(model, robot, motion.root_pos_w[t], motion.root_quat_w[t], motion.dof_pos[t])
        np.testing.assert_allclose(sample.point_pos_w[k, 0], data.xpos[model.body("pelvis").id], atol=1e-12)
        np.testing.assert_allclose(sample.point_pos_w[k, -1], data.site_xpos[model.site("match_head").id], atol=1e-12)
        knee = model.body("left_knee_link").id
        assert quat_angle_between(sample.body_quat_w[k, 4], data.xquat[knee]) < 1e-9
        np.testing.assert_allclose(sample.dof_pos[k], motion.dof_pos[t])
        np.testing.assert_allclose(sample.root_pos_w[k], motion.root_pos_w[t], atol=1e-6)


def test_reference_between_frames_is_close_to_fk_of_the_interpolated_pose(model, robot, motion, ref):
    t, a = 40, 0.5
    sample = ref.sample(np.array([(t + a) / (ref.num_frames - 1)]))
    dof = (1 - a) * motion.dof_pos[t] + a * motion.dof_pos[t + 1]
    quat = quat_slerp(motion.root_quat_w[t], motion.root_quat_w[t + 1], np.array(a))
    data = fk(model, robot, 0.5 * (motion.root_pos_w[t] + motion.root_pos_w[t + 1]), quat, dof)
    names = ("left_ankle_roll_link", "right_elbow_link", "torso_link")
    ids = [model.body(n).id for n in names]
    got = sample.point_pos_w[0, [body_layout(robot).point_names.index(n) for n in names]]
    np.testing.assert_allclose(got, data.xpos[ids], atol=2e-3)  # interpolating points vs FK of interpolated q
    np.testing.assert_allclose(sample.dof_pos[0], dof, atol=1e-12)


def test_reference_velocities_are_central_differences(ref):
    dt = 1.0 / ref.fps
    np.testing.assert_allclose(ref.point_lin_vel_w[10], (ref.point_pos_w[11] - ref.point_pos_w[9]) / (2 * dt))
    np.testing.assert_allclose(ref.dof_vel[10], (ref.dof_pos[11] - ref.dof_pos[9]) / (2 * dt))
    # Angular velocity integrates back to the next orientation over one frame (small-angle check).
    w = 0.5 * (ref.body_ang_vel_w[10] + ref.body_ang_vel_w[11])
    from retarget.rotations import quat_mul, rotvec_to_quat

    predicted = quat_mul(rotvec_to_quat(w * dt), ref.body_quat_w[10])
    assert np.max(quat_angle_between(predicted, ref.body_quat_w[11])) < 0.02


def test_model_has_armature_rates_and_one_pd_actuator_per_joint(model, robot):
    qvel_adr = joint_addresses(model, robot)[1]
    np.testing.assert_allclose(model.dof_armature[qvel_adr], robot.armature_kgm2)
    assert model.opt.timestep == 0.005 and model.nu == robot.num_dof
    np.testing.assert_allclose(model.actuator_gainprm[:, 0], robot.kp)
    np.testing.assert_allclose(model.actuator_biasprm[:, 2], -robot.kd)
    np.testing.assert_allclose(model.actuator_forcerange[:, 1], robot.effort_limit_nm)


def test_actuator_torques_match_the_pd_formula(model, robot):
    data = mujoco.MjData(model)
    qpos_adr, qvel_adr = joint_addresses(model, robot)
    rng = np.random.default_rng(1)
    data.qpos[2], data.qpos[3] = 1.0, 1.0
    data.qpos[qpos_adr] = rng.uniform(-0.3, 0.3, robot.num_dof)
    data.qvel[qvel_adr] = rng.uniform(-3, 3, robot.num_dof)
    data.ctrl[:] = rng.uniform(-1.5, 1.5, robot.num_dof)  # big errors: some torques hit the limit
    mujoco.mj_forward(model, data)
    expected = pd_torque(robot.kp, robot.kd, data.ctrl, data.qpos[qpos_adr], data.qvel[qvel_adr], robot.effort_limit_nm)
    np.testing.assert_allclose(data.actuator_force, expected, atol=1e-9)
    assert np.any(np.abs(expected) == robot.effort_limit_nm)


@pytest.fixture(scope="module")
def env(ref, model):
    cfg = TrackingEnvConfig(domain_rand=DomainRandConfig(enabled=False))
    return TrackingEnv([ref], 4, cfg, seed=0, model=model)


def test_env_shapes_and_vecenv_contract(env, robot):
    assert isinstance(env, VecEnv)
    f = frame_size(robot.num_dof)
    assert f == 76 and env.num_obs == 5 * f and env.num_privileged_obs == 5 * f + 3 + 6 * 27
    obs, extras = env.reset()
    assert obs.shape == (4, env.num_obs) and obs.dtype == torch.float32
    assert extras["observations"]["critic"].shape == (4, env.num_privileged_obs)
    obs, rew, done, extras = env.step(torch.zeros(4, robot.num_dof))
    assert obs.shape == (4, env.num_obs) and rew.shape == (4,) and done.shape == (4,) and done.dtype == torch.bool
    assert extras["time_outs"].shape == (4,)
    assert env.max_episode_length == int(np.ceil(100 / 30 / 0.02))


def test_reset_puts_the_robot_on_the_reference(env, ref):
    phase = np.array([0.0, 0.25, 0.5, 0.75])
    env.reset_envs(np.arange(4), start_phase=phase)
    s = env.state
    sample = ref.sample(phase)
    # The root is raised by init_height_offset_m; joint noise of ±0.02 rad moves the limbs a little.
    dist = np.linalg.norm(s.point_pos_w - sample.point_pos_w, axis=-1)
    assert dist.mean() < 0.03
    np.testing.assert_allclose(s.point_pos_w[:, 0, 2] - sample.point_pos_w[:, 0, 2], 0.01, atol=1e-9)
    np.testing.assert_allclose(env.phase(), phase)


def test_observation_layout_and_history_order(env, robot):
    env.reset_envs(np.arange(4), start_phase=np.zeros(4))
    f, d = env.frame_size, robot.num_dof
    actions = [np.full((4, d), 0.1), np.full((4, d), -0.2), np.full((4, d), 0.3)]
    for a in actions:
        obs, *_ = env.step(torch.as_tensor(a, dtype=torch.float32))
    obs = obs.numpy()
    frames = obs.reshape(4, 5, f)
    last_action = frames[:, :, 6 + 2 * d : 6 + 3 * d]
    np.testing.assert_allclose(last_action[:, 0], 0.3, atol=1e-6)  # newest first
    np.testing.assert_allclose(last_action[:, 1], -0.2, atol=1e-6)
    np.testing.assert_allclose(last_action[:, 2], 0.1, atol=1e-6)
    np.testing.assert_allclose(last_action[:, 3:], 0.0)  # history filled with the reset frame
    phase = frames[:, :, -1]
    np.testing.assert_allclose(phase[:, 0], 3 * 0.02 / env.refs[0].duration_s, rtol=1e-5)
    np.testing.assert_allclose(phase[:, 1], 2 * 0.02 / env.refs[0].duration_s, rtol=1e-5)
    np.testing.assert_allclose(frames[:, 0, 3:6], projected_gravity_b(env._qpos[:, 3:7]), atol=1e-6)
    np.testing.assert_allclose(
        frames[:, 0, 6 : 6 + d], env._qpos[:, env.qpos_adr] - default_joint_pos(robot), atol=1e-6
    )


def test_point_velocities_match_mujoco_object_velocity(env, model):
    env.step(torch.zeros(4, env.num_actions))
    lin, ang = env._velocities()
    data = env.batch.get_data(2)
    res = np.zeros(6)
    for k, body in enumerate(env.body_ids[[0, 4, 20]]):
        mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_XBODY, body, res, 0)
        np.testing.assert_allclose(lin[2, [0, 4, 20][k]], res[3:], atol=1e-9)
        np.testing.assert_allclose(ang[2, [0, 4, 20][k]], res[:3], atol=1e-9)


def test_pd_targets_follow_the_action_offset(ref, model, robot):
    for offset in ActionOffset:
        cfg = TrackingEnvConfig(domain_rand=DomainRandConfig(enabled=False))
        cfg = dataclasses.replace(cfg, sim=dataclasses.replace(cfg.sim, action_offset=offset))
        e = TrackingEnv([ref], 2, cfg, seed=0, model=model)
        a = np.full((2, robot.num_dof), 2.0)
        base = default_joint_pos(robot) if offset is ActionOffset.DEFAULT_POSE else e.reference(e.time_s + 0.02).dof_pos
        np.testing.assert_allclose(e.pd_targets(a), 0.25 * 2.0 + np.broadcast_to(base, (2, robot.num_dof)))


def test_episode_times_out_at_the_end_of_the_clip(ref, model):
    cfg = TrackingEnvConfig(domain_rand=DomainRandConfig(enabled=False))
    e = TrackingEnv([ref], 2, cfg, seed=0, model=model)
    e.termination_distance_m = 100.0  # only the end of the motion ends these episodes
    e.reset_envs(np.arange(2), start_phase=np.array([0.9, 0.9]))
    remaining = int(np.ceil(0.1 * ref.duration_s / 0.02 - 1e-9))
    for k in range(remaining):
        _, _, done, extras = e.step(torch.zeros(2, e.num_actions))
        if done.any():
            break
    assert k == remaining - 1 and extras["time_outs"].all()
    assert np.all(e.episode_length_buf.numpy() == 0)  # reset for the next episode


def test_curricula_tighten_on_long_episodes_and_relax_on_short_ones(env):
    c = env.cfg.curriculum
    env.termination_distance_m, env.penalty_scale = 1.5, 0.1
    env.finished_ratios[:] = [0.9, 0.95]  # long episodes
    env.update_curricula()
    assert env.termination_distance_m == pytest.approx(1.5 * c.termination_rate)
    assert env.penalty_scale == pytest.approx(0.1 * c.penalty_rate)
    for _ in range(200):
        env.finished_ratios[:] = [1.0]
        env.update_curricula()
    assert env.termination_distance_m == pytest.approx(c.termination_distance_min_m)  # 1.5 m → 0.3 m
    assert env.penalty_scale == pytest.approx(c.penalty_scale_max)
    env.finished_ratios[:] = [0.1]  # short episodes
    env.update_curricula()
    assert env.termination_distance_m == pytest.approx(0.3 / c.termination_rate)
    env.finished_ratios[:] = [0.6]  # in between: unchanged
    before = (env.termination_distance_m, env.penalty_scale)
    env.update_curricula()
    assert (env.termination_distance_m, env.penalty_scale) == before


def test_domain_randomization_gives_each_env_its_own_physics(ref, model, robot):
    dr = DomainRandConfig(friction_range=(0.5, 1.25), pd_gain_range=(0.9, 1.1), link_mass_range=(0.95, 1.05))
    e = TrackingEnv([ref], 3, TrackingEnvConfig(domain_rand=dr), seed=3, model=model)
    kp = e.batch.expanded("actuator_gainprm")[:, :, 0]
    ratio = kp / robot.kp
    assert np.all((ratio >= 0.9) & (ratio <= 1.1)) and np.ptp(ratio) > 0.01
    np.testing.assert_allclose(e.batch.expanded("actuator_biasprm")[:, :, 1], -kp)  # Kp in gain and bias alike
    friction = e.batch.expanded("geom_friction")[:, 0, 0] / model.geom_friction[0, 0]
    assert np.all((friction >= 0.5) & (friction <= 1.25)) and len(set(friction.round(6))) == 3
    mass = e.batch.expanded("body_mass")[:, e.body_ids] / model.body_mass[e.body_ids]
    assert np.all((mass >= 0.95) & (mass <= 1.05))
