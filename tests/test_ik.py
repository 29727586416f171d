"""IK of FK recovers the configuration: random feasible poses and a real motion."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from conftest import asap_reference

from retarget.asap_pkl import read_motion_library
from retarget.ik import FrameByFrameIK, IkConfig
from robots.mujoco_model import dof_qpos_indices


def _targets(model, robot, qpos_seq):
    data = mujoco.MjData(model)
    points, frames = [], []
    for q in qpos_seq:
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        points.append([data.site(f"match_{p.name}").xpos.copy() for p in robot.matched_points])
        frames.append([data.body(f.body).xmat.reshape(3, 3).copy() for f in robot.matched_frames])
    return np.array(points), np.array(frames)


def _random_pose(model, robot, rng):
    q = model.qpos0.copy()
    q[:3] = [rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(0.6, 0.9)]
    yaw = rng.uniform(-np.pi, np.pi)
    q[3:7] = [np.cos(yaw / 2), 0, 0, np.sin(yaw / 2)]
    lo, hi = robot.lower_rad, robot.upper_rad
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    # Stay inside the limits and within ±0.8 rad of the rest pose so the pose is reachable from it.
    q_dof = np.clip(rng.uniform(mid - 0.5 * half, mid + 0.5 * half), -0.8, 0.8)
    q_dof = np.clip(q_dof, lo + 0.05, hi - 0.05)
    for name in ("left_elbow_joint", "right_elbow_joint"):
        q_dof[robot.joint_names.index(name)] = rng.uniform(0.4, 1.2)  # bent: shoulder yaw observable
    for name in ("left_knee_joint", "right_knee_joint"):
        q_dof[robot.joint_names.index(name)] = rng.uniform(0.3, 1.2)  # bent: hip yaw observable
    q[dof_qpos_indices(model, robot)] = q_dof
    return q


def test_ik_of_fk_recovers_random_feasible_poses(g1, g1_mj_model):
    rng = np.random.default_rng(3)
    ik = FrameByFrameIK(g1_mj_model, g1, IkConfig(max_iters_first_frame=500, step_tolerance=1e-10))
    dof = dof_qpos_indices(g1_mj_model, g1)
    for _ in range(8):
        q_true = _random_pose(g1_mj_model, g1, rng)
        points, frames = _targets(g1_mj_model, g1, [q_true])
        q_init = ik.initial_qpos(points[0, 0], frames[0, 0])
        q_ik, _ = ik.solve(points, frames, q_init)
        np.testing.assert_allclose(q_ik[0, :3], q_true[:3], atol=1e-4)
        np.testing.assert_allclose(q_ik[0, dof], q_true[dof], atol=2e-3)


def test_ik_reproduces_a_real_official_retarget(g1, g1_mj_model):
    """Targets from FK of the official retarget of a real clip: the warm-started IK recovers its joint angles."""
    clip = next(iter(read_motion_library(asap_reference("squat_level1_filter")).values()))
    num = 60
    qpos = np.zeros((num, g1_mj_model.nq))
    qpos[:, :3] = clip["root_trans_offset"][:num]
    qpos[:, 3:7] = clip["root_rot"][:num][:, [3, 0, 1, 2]]
    qpos[:, 7:] = clip["dof"][:num]
    points, frames = _targets(g1_mj_model, g1, qpos)
    q_ik, iterations = FrameByFrameIK(g1_mj_model, g1, IkConfig(step_tolerance=1e-9)).solve(points, frames)
    dof = dof_qpos_indices(g1_mj_model, g1)
    err = np.abs(q_ik[:, dof] - qpos[:, dof])
    assert np.median(err) < 1e-4
    assert err.max() < 0.02
    assert iterations[1:].mean() < iterations[0]  # warm start pays off


def test_solution_respects_joint_limits_when_targets_are_out_of_reach(g1, g1_mj_model):
    q = g1_mj_model.qpos0.copy()
    q[2] = 0.8
    q[3] = 1.0
    points, frames = _targets(g1_mj_model, g1, [q])
    # Pull the left ankle far up and inward: the knee and hip would have to exceed their limits.
    left_ankle = [p.name for p in g1.matched_points].index("left_ankle")
    points[0, left_ankle] += [0.0, -0.6, 0.6]
    q_ik, _ = FrameByFrameIK(g1_mj_model, g1).solve(points, frames)
    dof = q_ik[0, dof_qpos_indices(g1_mj_model, g1)]
    assert np.all(dof >= g1.lower_rad - 1e-6) and np.all(dof <= g1.upper_rad + 1e-6)


@pytest.mark.parametrize("name", ["g1_29dof"])
def test_retarget_runs_on_the_29dof_robot(name):
    from conftest import smpl_clip

    from retarget.config import RetargetConfig
    from retarget.pipeline import retarget_file

    result = retarget_file(smpl_clip("kick_level1_filter"), RetargetConfig(robot=name))
    assert result.motion.dof_pos.shape[1] == 29
    assert result.mean_match_error_mm < 30
