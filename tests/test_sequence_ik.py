"""The contact-aware whole-sequence IK: kinematics against pinocchio and finite differences, the
banded solve against a dense one, contact detection and targets, and the retargeting targets on real clips."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from conftest import smpl_clip

from retarget.contact_targets import foot_targets, stance_phases
from retarget.contacts import ContactConfig, detect_foot_contacts
from retarget.ik.banded import band_storage, band_to_dense
from retarget.ik.gauss_newton import (
    WOODBURY_MAX_PINS,
    hold_at_limits,
    linear_step,
    pin_to_limits,
    still_pressing,
)
from retarget.ik.problem import _kinematics_for, ankle_height_flat_m, soles_about_ankle_b
from retarget.ik.sequence import SequenceIkConfig, WholeSequenceIK
from retarget.pipeline import retarget_file
from retarget.readers.amass import read_amass_npz
from retarget.rotations import matrix_to_quat, quat_to_matrix
from retarget.skeleton import smpl_forward_kinematics
from retarget.tree_kinematics import so3_exp, so3_log
from robots.pinocchio_model import build_pinocchio_model, mujoco_qpos_to_pinocchio


def _random_states(robot, num, seed=0):
    rng = np.random.default_rng(seed)
    return (
        rng.normal(size=(num, 3)),
        so3_exp(rng.normal(size=(num, 3))),
        rng.uniform(robot.lower_rad, robot.upper_rad, size=(num, robot.num_dof)),
    )


def test_vectorised_kinematics_matches_pinocchio(g1):
    kin, _ = _kinematics_for(g1)
    root_pos, root_rot, dof = _random_states(g1, 10)
    pos, ori = kin.forward(root_pos, root_rot, dof)
    model = build_pinocchio_model(g1)
    data = model.createData()
    for t in range(10):
        qpos = np.concatenate([root_pos[t], matrix_to_quat(root_rot[t]), dof[t]])
        pin.framesForwardKinematics(model, data, mujoco_qpos_to_pinocchio(qpos))
        for k, point in enumerate(g1.matched_points):
            frame = data.oMf[model.getFrameId(point.body, pin.BODY)]
            np.testing.assert_allclose(pos[t, k], frame.act(np.array(point.offset_b)), atol=1e-12)
        for k, tracked in enumerate(g1.matched_frames):
            frame = data.oMf[model.getFrameId(tracked.body, pin.BODY)]
            np.testing.assert_allclose(ori[t, k], frame.rotation, atol=1e-12)


def test_jacobians_match_finite_differences(g1):
    kin, _ = _kinematics_for(g1)
    root_pos, root_rot, dof = _random_states(g1, 6, seed=1)
    pos, jac_pos, ori, jac_rot, _ = kin.jacobians(root_pos, root_rot, dof)
    eps = 1e-6
    for k in range(kin.num_tangent):
        dx = np.zeros(kin.num_tangent)
        dx[k] = eps
        pos2, ori2 = kin.forward(root_pos + dx[:3], so3_exp(np.tile(dx[3:6], (6, 1))) @ root_rot, dof + dx[6:])
        np.testing.assert_allclose((pos2 - pos) / eps, jac_pos[..., k], atol=2e-6)
        np.testing.assert_allclose(so3_log(ori2 @ np.swapaxes(ori, -1, -2)) / eps, jac_rot[..., k], atol=2e-6)


def _linear_step(solver, H, g, root_pos, dof, fps):
    """The compiled banded step (T, n) for H, g at the state's root position and joints, and the factor."""
    T, n = g.shape
    acc = solver.config.acceleration_weight
    penalty = (acc * fps**2) ** 2 if T >= 3 and acc > 0 else 0.0
    rows, width = band_storage(T * n, 2 * n)
    band, inv_diag, step = np.empty((rows, width)), np.empty(rows), np.empty(rows)
    linear_step(H, g, root_pos, dof, solver._smoothed_mask, solver.config.damping, penalty, band, inv_diag, step)
    return step[: T * n].reshape(T, n).copy(), (band, inv_diag, step, penalty)


def _random_system(g1, T, seed):
    rng = np.random.default_rng(seed)
    n = g1.num_dof + 6
    blocks = rng.normal(size=(T, n, n))
    return rng, blocks @ np.swapaxes(blocks, 1, 2) + np.eye(n), rng.normal(size=(T, n))


def test_banded_solve_equals_dense_solve(g1):
    kin, layout = _kinematics_for(g1)
    solver = WholeSequenceIK(kin, layout, g1.lower_rad, g1.upper_rad, SequenceIkConfig(acceleration_weight=0.01))
    T, n = 7, kin.num_tangent
    rng, H, g = _random_system(g1, T, seed=2)
    root_pos, dof = rng.normal(size=(T, 3)), rng.normal(size=(T, g1.num_dof))
    fps = 30.0
    step, _ = _linear_step(solver, H.copy(), g.copy(), root_pos, dof, fps)
    # Dense: block diagonal + w D2ᵀD2 on the smoothed coordinates (root position, joints).
    x = np.concatenate([root_pos, np.zeros((T, 3)), dof], axis=1)
    w = (0.01 * fps**2) ** 2
    D2 = np.zeros((T - 2, T))
    for t in range(T - 2):
        D2[t, t : t + 3] = [1, -2, 1]
    dense = np.zeros((T * n, T * n))
    rhs = g.reshape(-1).copy()
    for t in range(T):
        dense[t * n : (t + 1) * n, t * n : (t + 1) * n] = H[t] + solver.config.damping * np.eye(n)
    M = D2.T @ D2
    for d in solver._smoothed:
        idx = np.arange(T) * n + d
        dense[np.ix_(idx, idx)] += w * M
        rhs[idx] -= w * M @ x[:, d]
    np.testing.assert_allclose(step.reshape(-1), np.linalg.solve(dense, rhs), rtol=1e-8, atol=1e-10)


def test_stance_detection_has_hysteresis_and_anchoring():
    fps = 30.0
    num = 60
    joints = np.zeros((num, 24, 3))
    # Left ankle: on the floor, lifts to 10 cm between frames 20 and 30, flickers 4 cm in frame 40.
    height = np.zeros(num)
    height[20:30] = 0.10
    height[40] = 0.04
    joints[:, 7, 2] = height
    joints[:, 10, 2] = height + 0.02
    # Right ankle: a slow shuffle, 1 cm per frame (0.3 m/s): stance must end after 5 cm of travel.
    joints[:, 8, 0] = 0.01 * np.arange(num)
    joints[:, 11] = joints[:, 8] + [0.1, 0, 0.02]
    contacts = detect_foot_contacts(joints, fps, ContactConfig())
    left, right = contacts.stance[:, 0], contacts.stance[:, 1]
    assert left[:20].all() and not left[20:30].any() and left[31:].all()  # the 4 cm flicker stays stance
    assert stance_phases(left) == [(0, 20), (31, 60)] or stance_phases(left) == [(0, 20), (30, 60)]
    phases = stance_phases(right)
    assert len(phases) > 1 and all(end - start <= 7 for start, end in phases)


def test_foot_targets_are_fixed_flat_and_on_the_floor():
    num = 40
    ankle = np.zeros((num, 2, 3))
    ankle[:, 0] = [0.0, 0.1, 0.12]
    ankle[:, 1] = [0.0, -0.1, 0.12]
    ankle[:, 0, 0] = np.linspace(0, 0.04, num)  # drifts 4 cm during stance
    yaw = 0.3
    tilt = so3_exp(np.array([0.2, 0.0, yaw]))  # human foot tilted but heading `yaw`
    rot = np.broadcast_to(tilt, (num, 2, 3, 3))
    stance = np.ones((num, 2), dtype=bool)
    targets = foot_targets(ankle, rot, stance, ankle_height_flat_m=0.035)
    np.testing.assert_allclose(targets.ankle_pos_w[:, 0, 0], 0.02)  # one position for the phase
    np.testing.assert_allclose(targets.ankle_pos_w[..., 2], 0.035)
    np.testing.assert_allclose(targets.vertical_shift_m, 0.035 - 0.12)
    assert np.allclose(targets.foot_rot_w[..., 2, 2], 1.0)  # flat
    heading = np.arctan2(targets.foot_rot_w[..., 1, 0], targets.foot_rot_w[..., 0, 0])
    assert np.allclose(heading, np.arctan2(tilt[1, 0], tilt[0, 0]))


def test_phase_floor_from_the_toe_where_the_heel_is_raised():
    """A left phase whose second half stands on the ball of the foot (ankle 6 cm up, toe still down), then a flat
    right phase: by the ankle alone the left phase's median floor is 3 cm too high; from the toe (plus the flat
    ankle-over-toe drop, 4 cm, the median over the stance frames) both phases give the flat-foot height, and so do
    one floor per clip and a low percentile of the ankle."""
    from retarget.contact_targets import flat_ankle_height_w

    num = 60
    ankle = np.zeros((num, 2, 3))
    ankle[..., 2] = 0.10
    ankle[20:40, 0, 2] = 0.16  # left heel up 6 cm
    toe = ankle.copy()
    toe[..., 2] = 0.06
    stance = np.zeros((num, 2), dtype=bool)
    stance[:40, 0] = True
    stance[40:, 1] = True
    np.testing.assert_allclose(flat_ankle_height_w(ankle, toe, stance), 0.10)
    rot = np.broadcast_to(np.eye(3), (num, 2, 3, 3))
    by_ankle = foot_targets(ankle, rot, stance, 0.035)
    assert by_ankle.vertical_shift_m[0] == pytest.approx(0.035 - 0.13)  # median of 0.10 and 0.16
    assert by_ankle.vertical_shift_m[-1] == pytest.approx(0.035 - 0.10)
    by_toe = foot_targets(ankle, rot, stance, 0.035, toe_w=toe)
    np.testing.assert_allclose(by_toe.vertical_shift_m, 0.035 - 0.10)
    low = foot_targets(ankle, rot, stance, 0.035, floor_percentile=20.0)
    np.testing.assert_allclose(low.vertical_shift_m, 0.035 - 0.10)
    clip = foot_targets(ankle, rot, stance, 0.035, floor_per_phase=False)
    np.testing.assert_allclose(clip.vertical_shift_m, 0.035 - 0.10)  # median of all stance ankles, 2/3 flat


def test_stance_shank_weight_only_where_the_planted_shank_stands_up():
    """The stance-shank weight applies in the frames a foot is planted and its human shank is within 45° of
    vertical; a lying shank (kneeling) and a swinging one keep their weights."""
    from dataclasses import replace

    from retarget.ik.problem import LIMB_SEGMENTS, _segment_weights_per_frame
    from retarget.ik.sequence import SequenceIkConfig

    config = replace(SequenceIkConfig(), stance_shank_segment_weight=4.0)
    stance = np.array([[True, False], [True, False], [False, False]])
    vec = np.zeros((3, len(LIMB_SEGMENTS), 3))
    vec[:, :, 2] = -0.3
    left = LIMB_SEGMENTS.index(("left_knee", "left_ankle"))
    vec[1, left] = [0.3, 0.0, -0.2]  # 56° from vertical
    weights = _segment_weights_per_frame(config, stance, vec)
    assert weights[:, left].tolist() == [4.0, config.leg_segment_weight, config.swing_shank_segment_weight]
    right = LIMB_SEGMENTS.index(("right_knee", "right_ankle"))
    assert (weights[:, right] == config.swing_shank_segment_weight).all()


def test_stance_posture_share_is_a_smoothstep_of_the_pelvis_height_ratio():
    """0 at or below the off ratio, 1 at or above the full one, 3x² − 2x³ between (x the position in the band)."""
    from retarget.ik.problem import stance_posture_share

    standing = 0.75
    ratios = np.array([[0.3, 0.6], [0.65, 0.7], [0.8, 1.1]])
    share = stance_posture_share(ratios * standing, standing, 0.6, 0.8)
    np.testing.assert_allclose(share, [[0.0, 0.0], [0.15625, 0.5], [1.0, 1.0]], atol=1e-12)


def test_stance_shank_upright_ratios_out_of_order_are_refused():
    from retarget.errors import ConfigError

    with pytest.raises(ConfigError, match="stance_shank_upright_ratios"):
        SequenceIkConfig(stance_shank_upright_ratios=(0.8, 0.6))


class _ProblemBuilt(Exception):
    """Raised once the pipeline has built its sequence problem, so a test reads it without solving."""


def _problem_only(monkeypatch, clip: str, config: SequenceIkConfig):
    from retarget import pipeline
    from retarget.config import RetargetConfig

    original = pipeline.build_sequence_problem
    captured = {}

    def capture(*args, **kwargs):
        captured["problem"] = original(*args, **kwargs)
        raise _ProblemBuilt

    monkeypatch.setattr(pipeline, "build_sequence_problem", capture)
    with pytest.raises(_ProblemBuilt):
        retarget_file(smpl_clip(clip), RetargetConfig(sequence_ik=config))
    monkeypatch.setattr(pipeline, "build_sequence_problem", original)
    return captured["problem"]


def test_stance_shank_guard_keeps_a_real_crawl_frame_at_the_ordinary_weight(monkeypatch):
    """SpiderMan_level2 stands, drops to a crawl with the left foot planted under a pelvis at ~0.4 of its standing
    height (2.0-3.0 s) and stands up again. Standing (frame 15) the planted left shank takes the stance-shank
    weight; in the crawl (frame 69, the human shank still within 45° of vertical) the guard leaves it at the
    ordinary leg weight, which it would not be without the guard."""
    from dataclasses import replace

    from retarget.ik.problem import LIMB_SEGMENTS

    config = SequenceIkConfig()
    assert config.stance_shank_segment_weight is not None and config.stance_shank_upright_ratios is not None
    left = LIMB_SEGMENTS.index(("left_knee", "left_ankle"))
    stand, crawl = 15, 69
    problem = _problem_only(monkeypatch, "SpiderMan_level2", config)
    assert problem.stance[stand, 0] and problem.stance[crawl, 0]
    weights = problem.targets.segment_weight[:, left]
    assert weights[stand] == pytest.approx(config.stance_shank_segment_weight)
    assert weights[crawl] == pytest.approx(config.leg_segment_weight)
    unguarded = _problem_only(monkeypatch, "SpiderMan_level2", replace(config, stance_shank_upright_ratios=None))
    assert unguarded.targets.segment_weight[crawl, left] == pytest.approx(config.stance_shank_segment_weight)


def test_stance_shank_guard_leaves_an_upright_walk_untouched(monkeypatch):
    """Walking, the pelvis never drops below 0.8 of standing over a planted foot: every shank weight of
    walk_level1 is the same with and without the guard, and the planted upright frames carry the stance weight."""
    from dataclasses import replace

    from retarget.ik.problem import LIMB_SEGMENTS

    config = SequenceIkConfig()
    guarded = _problem_only(monkeypatch, "walk_level1_filter", config).targets.segment_weight
    unguarded = _problem_only(
        monkeypatch, "walk_level1_filter", replace(config, stance_shank_upright_ratios=None)
    ).targets.segment_weight
    np.testing.assert_array_equal(guarded, unguarded)
    left = LIMB_SEGMENTS.index(("left_knee", "left_ankle"))
    assert (guarded[:, left] == config.stance_shank_segment_weight).mean() > 0.4


def test_heel_raise_pitch_lifts_the_ankle_about_the_toe():
    """Ankle 3 cm above its flat-foot height, toe reach 0.1 m, threshold 1 cm: pitch asin(0.02 / 0.1); a raise
    under the threshold and a swing frame stay flat."""
    from retarget.contact_targets import heel_raise_pitch_rad

    ankle = np.zeros((3, 1, 3))
    ankle[:, 0, 2] = [0.10, 0.13, 0.105]
    toe = np.zeros((3, 1, 3))
    toe[:, 0, 2] = 0.06
    stance = np.array([[True], [True], [True]])
    # flat drop = median over stance of ankle − toe = 0.045, so the flat-foot ankle is 0.105 in every frame
    pitch = heel_raise_pitch_rad(ankle, toe, stance, toe_reach_m=0.1, threshold_m=0.01)
    np.testing.assert_allclose(pitch[:, 0], [0.0, np.arcsin(0.015 / 0.1), 0.0])
    swing = heel_raise_pitch_rad(ankle, toe, ~stance, toe_reach_m=0.1, threshold_m=0.01)
    np.testing.assert_allclose(swing, 0.0)


def test_flat_foot_height_is_measured_from_the_matched_ankle_point(g1):
    """The stance targets place the matched ankle point: its flat-foot height is the sole depth below that point
    (the G1's is the foot link origin, 35 mm above the sole spheres' bottoms); a point raised on the foot link
    raises it by as much, and a point off the foot link is refused (the stance targets could not fix the foot)."""
    from dataclasses import replace

    assert ankle_height_flat_m(g1) == pytest.approx(0.035)
    raised = replace(
        g1,
        matched_points=tuple(
            replace(p, offset_b=(0.0, 0.0, 0.017558)) if p.name.endswith("_ankle") else p for p in g1.matched_points
        ),
    )
    assert ankle_height_flat_m(raised) == pytest.approx(0.052558)
    np.testing.assert_allclose(
        soles_about_ankle_b(raised)[1], g1.sole_points_b("right_ankle_roll_link") - [0.0, 0.0, 0.017558]
    )
    off_foot = replace(
        g1,
        matched_points=tuple(
            replace(p, body="left_ankle_pitch_link") if p.name == "left_ankle" else p for p in g1.matched_points
        ),
    )
    with pytest.raises(ValueError, match="not on the foot link"):
        ankle_height_flat_m(off_foot)


@pytest.fixture(scope="module")
def walk():
    return retarget_file(smpl_clip("walk_level1_filter"))


def test_real_clip_feet_flat_fixed_and_on_the_floor_in_stance(g1, walk):
    seq = read_amass_npz(smpl_clip("walk_level1_filter"))
    joints, _ = smpl_forward_kinematics(seq.pose_rotvec, seq.trans_w)
    stance = detect_foot_contacts(joints, seq.fps).stance
    kin, layout = _kinematics_for(g1)
    rot = quat_to_matrix(walk.motion.root_quat_w)
    pos, ori = kin.forward(walk.motion.root_pos_w, rot, walk.motion.dof_pos)
    soles = pos[:, layout.num_points : layout.num_points + layout.num_soles, 2].reshape(-1, 2, 4)
    feet_rot = ori[:, [2, 3]]
    for foot in range(2):
        on = stance[:, foot]
        assert on.sum() > 30
        # Inside each stance phase (its first and last two frames blend with the swing) every sole point is
        # within 3 mm of the floor, the foot is flat and does not slide.
        ankle = pos[:, [3, 6][foot], :2]
        for start, end in stance_phases(on):
            inner = slice(start + 2, end - 2)
            assert np.abs(soles[inner, foot]).max(initial=0) < 0.003
            tilt_deg = np.degrees(np.arccos(np.clip(feet_rot[inner, foot, 2, 2], -1, 1)))
            assert tilt_deg.max(initial=0) < 0.5
            assert np.abs(ankle[inner] - ankle[start + 2]).max(initial=0) < 0.003
        assert np.percentile(np.abs(soles[on, foot]), 95) < 0.002
    assert soles.min() > -0.005  # nothing below the floor
    dof = walk.motion.dof_pos
    assert np.all(dof >= g1.lower_rad - 1e-9) and np.all(dof <= g1.upper_rad + 1e-9)
    speed = np.abs(np.diff(dof, axis=0)) * walk.motion.fps
    assert np.all(speed <= g1.velocity_limit_rad_s)


def test_whole_sequence_is_smoother_than_per_frame_ik(walk):
    from retarget.config import RetargetConfig

    per_frame = retarget_file(smpl_clip("walk_level1_filter"), RetargetConfig(solver="per_frame"))
    acc = lambda m: np.abs(np.diff(m.dof_pos, 2, axis=0)).mean() * m.fps**2
    assert acc(walk.motion) < acc(per_frame.motion)


def _reference_normal_equations(solver, state, targets):
    """H and g assembled with numpy from the reference kinematics (all residual rows, dense)."""
    kin, lay, cfg = solver.kin, solver.layout, solver.config
    pos, jac, ori, jac_rot, _ = kin.jacobians(*state)
    P, S = lay.num_points, lay.num_soles
    rows, res = [], []
    for k in range(P):
        rows.append(jac[:, k] * targets.point_weight[:, k, None, None])
        res.append((targets.point_pos_w[:, k] - pos[:, k]) * targets.point_weight[:, k, None])
    for s, (a, b) in enumerate(zip(lay.segment_a, lay.segment_b)):
        w = targets.segment_weight[:, s, None]
        rows.append((jac[:, b] - jac[:, a]) * w[..., None])
        res.append((targets.segment_vec_w[:, s] - (pos[:, b] - pos[:, a])) * w)
    err = so3_log(targets.frame_rot_w @ np.swapaxes(ori, -1, -2))
    for f in range(ori.shape[1]):
        # Roll/pitch components (world x, y) at frame_weight, the heading (world z) at frame_yaw_weight.
        w = np.stack([targets.frame_weight[:, f]] * 2 + [targets.frame_yaw_weight[:, f]], axis=1)
        rows.append(jac_rot[:, f] * w[..., None])
        res.append(err[:, f] * w)
    margin = np.where(targets.sole_floor_check, cfg.floor_margin_m, 0.0)
    for s in range(S):
        z = pos[:, P + s, 2]
        on = (z < margin[:, s]) * cfg.floor_weight
        rows.append((jac[:, P + s, 2] * on[:, None])[:, None])
        res.append((np.maximum(margin[:, s] - z, 0) * on)[:, None])
    proxy = pos[:, P + S :]
    for q, radius in enumerate(lay.proxy_radius_m):
        on = (proxy[:, q, 2] < radius) * cfg.floor_weight
        rows.append((jac[:, P + S + q, 2] * on[:, None])[:, None])
        res.append((np.maximum(radius - proxy[:, q, 2], 0) * on)[:, None])
    for a, b, clear in zip(lay.pair_a, lay.pair_b, lay.pair_clearance_m):
        diff = proxy[:, a] - proxy[:, b]
        dist = np.linalg.norm(diff, axis=1)
        on = (dist < clear) * cfg.self_collision_weight
        normal = diff / dist[:, None]
        row = np.einsum("ta,tan->tn", normal, jac[:, P + S + a] - jac[:, P + S + b]) * on[:, None]
        rows.append(row[:, None])
        res.append((np.maximum(clear - dist, 0) * on)[:, None])
    A = np.concatenate(rows, axis=1)
    b = np.concatenate(res, axis=1)
    return np.swapaxes(A, 1, 2) @ A, (np.swapaxes(A, 1, 2) @ b[..., None])[..., 0]


def test_compiled_normal_equations_match_the_numpy_reference(g1):
    """The compiled per-frame kernel equals a dense numpy assembly from the reference kinematics, on a real
    clip's targets at a perturbed (so floor and collision rows are active) configuration."""
    from retarget import pipeline

    captured = {}
    original = pipeline.build_sequence_problem

    def capture(*args, **kwargs):
        captured["problem"] = original(*args, **kwargs)
        return captured["problem"]

    pipeline.build_sequence_problem = capture
    try:
        result = retarget_file(smpl_clip("squat_level1_filter"))
    finally:
        pipeline.build_sequence_problem = original
    problem = captured["problem"]
    solver = WholeSequenceIK(problem.kinematics, problem.layout, g1.lower_rad, g1.upper_rad)
    rng = np.random.default_rng(5)
    state = (
        result.motion.root_pos_w - [0, 0, 0.03],  # push the feet into the floor
        quat_to_matrix(result.motion.root_quat_w),
        np.clip(
            result.motion.dof_pos + rng.normal(scale=0.3, size=result.motion.dof_pos.shape), g1.lower_rad, g1.upper_rad
        ),
    )
    H, g, violation = solver._normal_equations(state, problem.targets)
    H_ref, g_ref = _reference_normal_equations(solver, state, problem.targets)
    assert violation > 0.01
    np.testing.assert_allclose(H, H_ref, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(g, g_ref, rtol=1e-9, atol=1e-9)


def test_pinned_step_equals_the_equality_constrained_solution(g1):
    """Joints that would cross a limit are held at it; the rest is the exact constrained least-squares step."""
    kin, layout = _kinematics_for(g1)
    solver = WholeSequenceIK(kin, layout, g1.lower_rad, g1.upper_rad, SequenceIkConfig(acceleration_weight=0.01))
    T = 6
    rng, H, g = _random_system(g1, T, seed=4)
    g *= 5.0
    root_pos = np.zeros((T, 3))
    dof = np.clip(rng.normal(scale=0.3, size=(T, g1.num_dof)), g1.lower_rad, g1.upper_rad)
    step, (band, inv_diag, flat, penalty) = _linear_step(solver, H.copy(), g.copy(), root_pos, dof, 30.0)
    crossing = np.clip(dof + step[:, 6:], g1.lower_rad, g1.upper_rad) != dof + step[:, 6:]
    assert 0 < crossing.sum() <= WOODBURY_MAX_PINS  # exercise the factor-reuse path
    none_held = np.zeros(dof.shape, dtype=bool)
    mask = np.empty(dof.shape, dtype=bool)
    args = (root_pos, dof, none_held, solver.lower, solver.upper, solver._smoothed_mask, 0.1, penalty)
    pin_to_limits(H.copy(), g.copy(), *args, band, inv_diag, flat, mask)
    pinned = flat[: step.size].reshape(step.shape)
    np.testing.assert_array_equal(mask, crossing)
    t, d = np.nonzero(crossing)
    limits = np.clip(dof + step[:, 6:], g1.lower_rad, g1.upper_rad)
    np.testing.assert_allclose(pinned[t, 6 + d], limits[t, d] - dof[t, d], atol=1e-10)
    # Same answer as the stiff-spring refactorisation.
    H2, g2 = H.copy(), g.copy()
    H2[t, 6 + d, 6 + d] += 1e8
    g2[t, 6 + d] += 1e8 * (limits[t, d] - dof[t, d])
    spring, _ = _linear_step(solver, H2, g2, root_pos, dof, 30.0)
    np.testing.assert_allclose(pinned, spring, atol=1e-5)


def test_many_pinned_joints_refactor_with_springs(g1):
    """Past the low-rank limit the pins become springs in a new factorisation: the pinned joints land on their
    limits, the others move as the constrained solution says (checked against the dense KKT system)."""
    kin, layout = _kinematics_for(g1)
    solver = WholeSequenceIK(kin, layout, g1.lower_rad, g1.upper_rad, SequenceIkConfig(acceleration_weight=0.01))
    T, n = 8, kin.num_tangent
    rng, H, g = _random_system(g1, T, seed=11)
    g *= 40.0
    root_pos = np.zeros((T, 3))
    dof = np.clip(rng.normal(scale=0.3, size=(T, g1.num_dof)), g1.lower_rad, g1.upper_rad)
    step, (band, inv_diag, flat, penalty) = _linear_step(solver, H.copy(), g.copy(), root_pos, dof, 30.0)
    crossing = np.clip(dof + step[:, 6:], g1.lower_rad, g1.upper_rad) != dof + step[:, 6:]
    assert crossing.sum() > WOODBURY_MAX_PINS
    mask = np.empty(dof.shape, dtype=bool)
    none_held = np.zeros(dof.shape, dtype=bool)
    args = (root_pos, dof, none_held, solver.lower, solver.upper, solver._smoothed_mask, 0.1, penalty)
    pin_to_limits(H.copy(), g.copy(), *args, band, inv_diag, flat, mask)
    pinned = flat[: T * n].reshape(T, n)
    t, d = np.nonzero(crossing)
    limits = np.clip(dof + step[:, 6:], g1.lower_rad, g1.upper_rad)
    # A spring of stiffness 1e8 gives way by force / 1e8: micro-radians under these large gradients.
    np.testing.assert_allclose(pinned[t, 6 + d], limits[t, d] - dof[t, d], atol=1e-5)
    # KKT: minimise the quadratic model with E x = y for the pinned coordinates.
    band0 = _linear_step(solver, H.copy(), g.copy(), root_pos, dof, 30.0)[1][0]
    L = band_to_dense(band0, T * n)
    A = L @ L.T
    b = A @ step.reshape(-1)
    E = np.zeros((len(t), T * n))
    E[np.arange(len(t)), t * n + 6 + d] = 1.0
    kkt = np.block([[A, E.T], [E, np.zeros((len(t), len(t)))]])
    exact = np.linalg.solve(kkt, np.r_[b, limits[t, d] - dof[t, d]])[: T * n]
    np.testing.assert_allclose(pinned.reshape(-1), exact, atol=1e-5)


def test_joints_held_at_a_limit_stay_while_pressing_and_are_released_when_pulled_back(g1):
    """The active set carried to the next iteration: held joints get springs in the factor (their step is the
    distance to the limit), stay held while the spring pushes back, and are released when it pulls."""
    kin, layout = _kinematics_for(g1)
    solver = WholeSequenceIK(kin, layout, g1.lower_rad, g1.upper_rad, SequenceIkConfig(acceleration_weight=0.01))
    T, D = 5, g1.num_dof
    rng, H, _ = _random_system(g1, T, seed=7)
    root_pos = np.zeros((T, 3))
    dof = np.zeros((T, D))
    knee = g1.joint_names.index("left_knee_joint")
    dof[:, knee] = g1.upper_rad[knee]  # at its upper limit in every frame
    held = np.zeros((T, D), dtype=bool)
    held[:, knee] = True
    for push, expect_held in ((+50.0, True), (-50.0, False)):
        g = rng.normal(size=(T, kin.num_tangent))
        g[:, 6 + knee] = push  # the gradient pushes the knee past its limit, or pulls it back inside
        H1, g1_ = H.copy(), g.copy()
        side = np.empty((T, D))
        hold_at_limits(H1, g1_, dof, held, solver.lower, solver.upper, side)
        np.testing.assert_array_equal(side[:, knee], 1.0)
        np.testing.assert_array_equal(side[:, np.arange(D) != knee], 0.0)
        step, _ = _linear_step(solver, H1, g1_, root_pos, dof, 30.0)
        np.testing.assert_allclose(step[:, 6 + knee], 0.0, atol=1e-6)  # held at the limit
        still = np.empty((T, D), dtype=bool)
        still_pressing(step, dof, side, solver.lower, solver.upper, still)
        assert np.all(still[:, knee] == expect_held)
        assert not still[:, np.arange(D) != knee].any()


def _captured_problem(clip: str):
    """The sequence problem `retarget_file` builds for a clip (captured at build_sequence_problem) and its fps."""
    from retarget import pipeline

    captured = {}
    original = pipeline.build_sequence_problem

    def capture(*args, **kwargs):
        captured["problem"] = original(*args, **kwargs)
        return captured["problem"]

    pipeline.build_sequence_problem = capture
    try:
        fps = retarget_file(smpl_clip(clip)).motion.fps
    finally:
        pipeline.build_sequence_problem = original
    return captured["problem"], fps


@pytest.mark.parametrize("clip", ["shoot_level1_filter", "jump_forward_level3_filter"])
def test_augmented_lagrangian_rows_converge_where_plain_penalties_stall(g1, clip):
    """Floor and collision rows with the augmented-Lagrangian shift end within the 2 mm tolerance before the
    iteration cap; as plain penalties they balance the tracking pull a few mm inside and use every iteration.
    Measured: shoot 1.98 mm in 11.8 iterations vs 9.1 mm in 14.2 (the cap); jump 1.15 mm in 8.7 vs 4.8 in 12.7."""
    import dataclasses

    problem, fps = _captured_problem(clip)
    results = {}
    for augmented in (True, False):
        config = dataclasses.replace(SequenceIkConfig(), augmented_lagrangian=augmented)
        solver = WholeSequenceIK(problem.kinematics, problem.layout, g1.lower_rad, g1.upper_rad, config)
        state, iterations = solver.solve(problem.targets, fps, problem.initial_state)
        _, _, violation = solver._normal_equations(state, problem.targets)
        results[augmented] = (violation, iterations)
    tolerance = SequenceIkConfig().constraint_tolerance_m
    assert results[True][0] <= tolerance + 1e-4
    assert results[False][0] > 2 * tolerance
    assert results[True][1] < results[False][1] - 1.0


def test_stance_headings_are_held_at_the_solved_mean_heading_of_each_phase():
    from retarget.ik.sequence import SequenceTargets, _hold_stance_headings
    from retarget.tree_kinematics import axis_angle_matrices

    z, y = np.array([0.0, 0.0, 1.0]), np.array([0.0, 1.0, 0.0])
    num_frames, num_targets = 6, 2
    # Target 1 is a stance foot in two phases (frames 0-2 and 4-5), pitched 0.2 rad, heading 0.3 rad.
    phase = np.full((num_frames, num_targets), -1)
    phase[0:3, 1], phase[4:6, 1] = 0, 1
    target_rot = np.tile(np.eye(3), (num_frames, num_targets, 1, 1))
    target_rot[:, 1] = axis_angle_matrices(z, np.array(0.3)) @ axis_angle_matrices(y, np.array(0.2))
    targets = SequenceTargets(
        point_pos_w=np.zeros((num_frames, 1, 3)),
        point_weight=np.ones((num_frames, 1)),
        frame_rot_w=target_rot,
        frame_weight=np.ones((num_frames, num_targets)),
        frame_yaw_weight=np.full((num_frames, num_targets), 0.5),
        segment_vec_w=np.zeros((num_frames, 1, 3)),
        segment_weight=np.ones((num_frames, 1)),
        sole_floor_check=np.zeros((num_frames, 1), dtype=bool),
        heading_phase=phase,
    )
    # The solved foot headings: phase 0 at 0.1, 0.2, 0.6 (circular mean 0.3 rad within 1e-2), phase 1 at
    # ±3.1 rad (across the ±π seam: mean π, not 0).
    solved_yaw = np.array([[0.0, 0.1], [0.0, 0.2], [0.0, 0.6], [0.0, 2.0], [0.0, 3.1], [0.0, -3.1]])
    solved = axis_angle_matrices(z, solved_yaw.reshape(-1)).reshape(num_frames, num_targets, 3, 3)
    held = _hold_stance_headings(targets, solved, 2.0)
    yaw = np.arctan2(held.frame_rot_w[..., 1, 0], held.frame_rot_w[..., 0, 0])
    mean0 = np.arctan2(np.sin([0.1, 0.2, 0.6]).sum(), np.cos([0.1, 0.2, 0.6]).sum())
    np.testing.assert_allclose(yaw[0:3, 1], mean0, atol=1e-12)
    np.testing.assert_allclose(np.abs(yaw[4:6, 1]), np.pi, atol=1e-12)
    # Frame 3 (swing) and target 0 are untouched; the pitch about the foot's own y axis is kept.
    np.testing.assert_array_equal(held.frame_rot_w[3], target_rot[3])
    np.testing.assert_array_equal(held.frame_rot_w[:, 0], target_rot[:, 0])
    np.testing.assert_allclose(held.frame_rot_w[0:3, 1, 2, 2], np.cos(0.2), atol=1e-12)
    np.testing.assert_array_equal(held.frame_yaw_weight[:, 1], [2.0, 2.0, 2.0, 0.5, 2.0, 2.0])
    np.testing.assert_array_equal(held.frame_yaw_weight[:, 0], 0.5)


def _heading_turn_in_stance_deg(motion, g1, stance) -> np.ndarray:
    """Per stance phase (first and last two frames left out), the foot's largest heading change [deg]."""
    kin, _ = _kinematics_for(g1)
    _, ori = kin.forward(motion.root_pos_w, quat_to_matrix(motion.root_quat_w), motion.dof_pos)
    turns = []
    for foot in range(2):
        yaw = np.unwrap(np.arctan2(ori[:, 2 + foot, 1, 0], ori[:, 2 + foot, 0, 0]))
        for start, end in stance_phases(stance[:, foot]):
            inner = yaw[start + 2 : end - 2]
            turns.append(np.degrees(np.ptp(inner)) if inner.size else 0.0)
    return np.array(turns)


def test_stance_feet_keep_one_heading_through_each_stance(g1, walk):
    """The heading hold: inside each stance phase of a real walk the foot turns far less than with only the
    light pull to the human foot's heading."""
    from retarget.config import RetargetConfig

    seq = read_amass_npz(smpl_clip("walk_level1_filter"))
    joints, _ = smpl_forward_kinematics(seq.pose_rotvec, seq.trans_w)
    stance = detect_foot_contacts(joints, seq.fps).stance
    free = retarget_file(
        smpl_clip("walk_level1_filter"),
        RetargetConfig(sequence_ik=SequenceIkConfig(contact_heading_hold_weight=None)),
    )
    held_turn = _heading_turn_in_stance_deg(walk.motion, g1, stance)
    free_turn = _heading_turn_in_stance_deg(free.motion, g1, stance)
    # Measured: held 0.2-1.8°, free 2.5-9.1° per phase.
    assert held_turn.max() < 2.0
    assert held_turn.mean() < 0.5 * free_turn.mean()
    assert np.all(held_turn < free_turn)


def test_keyframe_states_interpolate_exactly_between_keys_at_any_frames():
    """Positions and joints linear in time and a root turning at a constant rate are reproduced exactly at
    frames between the keys (the coarser keyframe pass hands its solution to the finer one this way)."""
    from retarget.ik.sequence import _interpolate_state

    keys = np.array([0, 18, 36, 41])
    axis = np.array([0.3, -0.4, 0.866])
    axis /= np.linalg.norm(axis)
    rate_rad = 0.02  # per frame
    root_pos = np.stack([0.01 * keys, -0.02 * keys, 0.8 + 0 * keys], axis=1).astype(float)
    root_rot = so3_exp(np.outer(keys * rate_rad, axis))
    dof = np.outer(keys, np.linspace(-0.01, 0.01, 5))
    frames = np.array([0, 5, 6, 17, 18, 30, 40, 41])
    pos, rot, q = _interpolate_state((root_pos, root_rot, dof), keys, frames)
    np.testing.assert_allclose(pos, np.stack([0.01 * frames, -0.02 * frames, 0.8 + 0 * frames], axis=1), atol=1e-12)
    np.testing.assert_allclose(q, np.outer(frames, np.linspace(-0.01, 0.01, 5)), atol=1e-12)
    np.testing.assert_allclose(rot, so3_exp(np.outer(frames * rate_rad, axis)), atol=1e-12)


@pytest.mark.parametrize(
    ("num_frames", "factor", "expected"),
    [(200, 3, [18, 6]), (37, 3, [18, 6]), (36, 3, [6]), (13, 3, [6]), (12, 3, []), (200, 1, [6])],
)
def test_keyframe_passes_run_coarsest_first_where_the_clip_is_long_enough(g1, num_frames, factor, expected):
    kin, layout = _kinematics_for(g1)
    config = SequenceIkConfig(keyframe_stride=6, coarse_keyframe_factor=factor)
    solver = WholeSequenceIK(kin, layout, g1.lower_rad, g1.upper_rad, config)
    assert solver._keyframe_strides(num_frames) == expected


def test_compiled_clip_kinematics_match_the_numpy_reference(g1):
    """The solver's compiled forward kinematics (match errors, stance heading hold) give the reference's tracked
    points and frames, also for a prefix of the points and for none."""
    kin, layout = _kinematics_for(g1)
    solver = WholeSequenceIK(kin, layout, g1.lower_rad, g1.upper_rad)
    state = _random_states(g1, 12, seed=3)
    pos_ref, rot_ref = kin.forward(*state)
    pos, rot = solver.forward(*state, num_points=kin.num_points)
    np.testing.assert_allclose(pos, pos_ref, atol=1e-12)
    np.testing.assert_allclose(rot, rot_ref, atol=1e-12)
    targets, frames_only = solver.forward(*state), solver.forward(*state, num_points=0)
    assert targets[0].shape == (12, layout.num_points, 3) and frames_only[0].shape == (12, 0, 3)
    np.testing.assert_array_equal(targets[0], pos[:, : layout.num_points])
    np.testing.assert_array_equal(frames_only[1], rot)


def test_keyframe_interpolation_is_numpys_interp_bit_for_bit():
    """Joints and root positions between keys come out exactly as a loop of `np.interp` over the columns
    would give them (the solver's iterations, and so its results, do not move)."""
    from retarget.ik.sequence import _lerp_columns

    rng = np.random.default_rng(7)
    for num_frames, stride in ((158, 18), (158, 6), (40, 7), (7, 3)):
        keys = np.unique(np.r_[np.arange(0, num_frames, stride), num_frames - 1])
        values = rng.normal(size=(len(keys), 23))
        for frames in (np.arange(num_frames), keys, np.unique(np.r_[np.arange(0, num_frames, 5), num_frames - 1])):
            expected = np.stack([np.interp(frames, keys, values[:, i]) for i in range(values.shape[1])], axis=1)
            np.testing.assert_array_equal(_lerp_columns(values, keys, frames), expected)
