"""Reward, penalty and termination terms on hand-built states with known answers."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from retarget.rotations import rotvec_to_quat
from robots.registry import load_robot_spec
from trainers import rewards
from trainers.config import RewardConfig, TrackingEnvConfig
from trainers.reference import body_layout
from trainers.state import TrackingState
from trainers.tracking_step import compute_reward, failed, mean_point_distance_m

N = 3


@pytest.fixture(scope="module")
def robot():
    return load_robot_spec("g1_23dof")


def perfect_state(robot) -> TrackingState:
    """Robot exactly on the reference, standing still, feet flat 1 m up (no contact)."""
    layout = body_layout(robot)
    rng = np.random.default_rng(0)
    p, b, d = len(layout.point_names), len(layout.body_names), robot.num_dof
    pos = rng.normal(size=(N, p, 3)) + np.array([0.0, 0.0, 1.0])
    quat = rotvec_to_quat(rng.normal(size=(N, b, 3)) * 0.3)
    quat[:, layout.feet_body_ids] = np.array([1.0, 0.0, 0.0, 0.0])
    pos[:, layout.feet_point_ids, 2] = 1.0
    q = np.broadcast_to(0.5 * (robot.lower_rad + robot.upper_rad), (N, d)).copy()  # mid-range: inside every limit
    vel, ang, qd = (rng.normal(size=s) for s in ((N, p, 3), (N, b, 3), (N, d)))
    return TrackingState(
        layout=layout,
        point_pos_w=pos,
        ref_point_pos_w=pos.copy(),
        point_lin_vel_w=vel,
        ref_point_lin_vel_w=vel.copy(),
        body_quat_w=quat,
        ref_body_quat_w=quat.copy(),
        body_ang_vel_w=ang,
        ref_body_ang_vel_w=ang.copy(),
        dof_pos=q,
        ref_dof_pos=q.copy(),
        dof_vel=qd,
        ref_dof_vel=qd.copy(),
        action=np.ones((N, d)),
        last_action=np.ones((N, d)),
        actuator_force=np.zeros((N, d)),
        dof_lower_rad=robot.lower_rad,
        dof_upper_rad=robot.upper_rad,
        dof_vel_limit_rad_s=robot.velocity_limit_rad_s,
        effort_limit_nm=robot.effort_limit_nm,
        terminated=np.zeros(N, dtype=bool),
    )


def test_zero_error_gives_reward_one_for_every_tracking_term(robot):
    s = perfect_state(robot)
    for term in RewardConfig().tracking:
        np.testing.assert_allclose(np.exp(-term.fn(s) / term.sigma), 1.0, atol=1e-12, err_msg=term.fn.__name__)


def test_zero_error_total_reward_is_the_sum_of_tracking_weights(robot):
    s = perfect_state(robot)
    cfg = RewardConfig()
    total, terms = compute_reward(s, cfg, penalty_scale=1.0, policy_dt_s=0.02)
    # Every term is multiplied by the policy step (scale_by_dt).
    np.testing.assert_allclose(total, 0.02 * sum(t.weight for t in cfg.tracking), atol=1e-9)
    unscaled, _ = compute_reward(s, RewardConfig(scale_by_dt=False), penalty_scale=1.0, policy_dt_s=0.02)
    np.testing.assert_allclose(unscaled, sum(t.weight for t in cfg.tracking), atol=1e-9)
    assert terms["termination"].max() == 0.0 and terms["action_rate"].max() == 0.0


def test_position_errors_are_means_of_squares(robot):
    s = perfect_state(robot)
    lay = s.layout
    s.point_pos_w[:, lay.feet_point_ids] += np.array([0.1, 0.0, 0.0])  # both feet 10 cm off in x
    np.testing.assert_allclose(rewards.feet_pos_error(s), 0.01 / 3)  # mean over 2 points × 3 axes
    # Feet are lower-body points: the error spreads over the lower-body count.
    np.testing.assert_allclose(rewards.body_pos_lower_error(s), 2 * 0.01 / (3 * len(lay.lower_point_ids)))
    np.testing.assert_allclose(rewards.body_pos_upper_error(s), 0.0)
    s.point_pos_w[:, lay.vr_point_ids] += np.array([0.0, 0.0, 0.3])
    np.testing.assert_allclose(rewards.vr_3point_error(s), 0.09 / 3)


def test_rotation_error_is_the_mean_squared_geodesic_angle(robot):
    s = perfect_state(robot)
    body = 5
    s.body_quat_w[:, body] = rewards.quat_mul(rotvec_to_quat(np.array([0.0, 0.0, 0.2])), s.ref_body_quat_w[:, body])
    np.testing.assert_allclose(rewards.body_rot_error(s), 0.04 / len(s.layout.body_names), rtol=1e-9)


def test_joint_and_velocity_errors(robot):
    s = perfect_state(robot)
    d = robot.num_dof
    s.dof_pos = s.dof_pos + 0.1
    s.dof_vel = s.dof_vel - 2.0
    s.point_lin_vel_w = s.point_lin_vel_w + np.array([1.0, 0.0, 0.0])
    s.body_ang_vel_w = s.body_ang_vel_w + np.array([0.0, 3.0, 0.0])
    np.testing.assert_allclose(rewards.joint_pos_error(s), 0.01)
    np.testing.assert_allclose(rewards.joint_vel_error(s), 4.0)
    np.testing.assert_allclose(rewards.body_lin_vel_error(s), 1.0 / 3)
    np.testing.assert_allclose(rewards.body_ang_vel_error(s), 9.0 / 3)
    assert d == 23


def test_action_rate_and_limits(robot):
    s = perfect_state(robot)
    s.action = s.action + 0.5
    np.testing.assert_allclose(rewards.action_rate(s), 0.25 * robot.num_dof)
    knee = robot.joint_names.index("left_knee_joint")
    lo, hi = robot.lower_rad[knee], robot.upper_rad[knee]
    soft_hi = 0.5 * (lo + hi) + 0.5 * (hi - lo) * 0.95
    s.dof_pos[:, knee] = soft_hi + 0.1
    np.testing.assert_allclose(rewards.dof_pos_limits(s), 0.1, rtol=1e-9)
    s.dof_vel = np.zeros_like(s.dof_vel)
    s.dof_vel[:, knee] = -(0.95 * robot.velocity_limit_rad_s[knee] + 2.0)
    np.testing.assert_allclose(rewards.dof_vel_limits(s), 2.0, rtol=1e-9)
    s.actuator_force[:, knee] = robot.effort_limit_nm[knee]
    np.testing.assert_allclose(rewards.torque_limits(s), 0.05 * robot.effort_limit_nm[knee], rtol=1e-9)


def test_feet_orientation_and_slippage(robot):
    s = perfect_state(robot)
    lay = s.layout
    assert np.allclose(rewards.feet_orientation(s), 0.0)
    tilt = 0.3
    s.body_quat_w[:, lay.feet_body_ids[0]] = rotvec_to_quat(np.array([tilt, 0.0, 0.0]))
    np.testing.assert_allclose(rewards.feet_orientation(s), np.sin(tilt), rtol=1e-9)
    s.point_lin_vel_w[:] = 0.0
    s.point_lin_vel_w[:, lay.feet_point_ids] = np.array([0.3, 0.4, 1.0])  # 0.5 m/s horizontal
    assert np.allclose(rewards.feet_slippage(s), 0.0)  # feet in the air: no slippage
    s.point_pos_w[:, lay.feet_point_ids[1], 2] = 0.04  # right foot on the floor
    np.testing.assert_allclose(rewards.feet_slippage(s), 0.5)


def test_termination_rule_and_penalty(robot):
    s = perfect_state(robot)
    s.point_pos_w[0] += np.array([0.0, 0.0, 0.4])
    s.point_pos_w[1] += np.array([0.0, 0.2, 0.0])
    s.point_pos_w[2, 0] = np.nan
    np.testing.assert_allclose(mean_point_distance_m(s)[:2], [0.4, 0.2])
    np.testing.assert_array_equal(failed(s, 0.3), [True, False, True])
    np.testing.assert_array_equal(failed(s, 1.5), [False, False, True])
    s.terminated = failed(s, 0.3)
    cfg = RewardConfig(
        tracking=(),
        penalties=tuple(p for p in RewardConfig().penalties if p.fn is rewards.termination),
        scale_by_dt=False,
    )
    total, _ = compute_reward(s, cfg, penalty_scale=0.1, policy_dt_s=0.02)
    # The termination penalty is outside the penalty curriculum; a non-finite state gives 0, not NaN.
    np.testing.assert_allclose(total, [-200.0, 0.0, -200.0])


def test_penalty_curriculum_scales_penalties_only(robot):
    s = perfect_state(robot)
    s.action = s.action + 1.0
    cfg = RewardConfig(tracking=RewardConfig().tracking[:1], scale_by_dt=False)
    full, _ = compute_reward(s, cfg, 1.0, 0.02)
    tenth, _ = compute_reward(s, cfg, 0.1, 0.02)
    np.testing.assert_allclose(full - 1.0, -0.5 * robot.num_dof)
    np.testing.assert_allclose(tenth - 1.0, -0.05 * robot.num_dof)


def test_reward_terms_are_function_objects():
    cfg = TrackingEnvConfig()
    for term in cfg.reward.tracking + cfg.reward.penalties:
        assert callable(term.fn) and term.fn.__module__ == "trainers.rewards"
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.reward.tracking[0].weight = 2.0
