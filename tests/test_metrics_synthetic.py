"""Retargeting metrics on synthetic motions with known defects: each must be reported exactly.

The robot stands at q = 0 with its soles on the floor; the "human" is a static skeleton whose
segment end points are the robot's own, so every metric of the undisturbed motion is zero and
each edit below (tilt, slide, sink, float, limit, speed, self-collision, bent knee) has an
analytic answer.
"""

from __future__ import annotations

import numpy as np
import pytest

from retarget.asap_pkl import RobotMotion
from retarget.metrics import HumanReference, MetricsConfig, evaluate_motion, replay_motion

FPS = 30.0
T = 30


def _joint(g1, name: str) -> int:
    return g1.joint_names.index(name)


def _motion(g1, dof=None, root_pos=None, fps=FPS, frames=T) -> RobotMotion:
    return RobotMotion(
        name="synthetic",
        fps=fps,
        root_pos_w=np.zeros((frames, 3)) if root_pos is None else root_pos,
        root_quat_w=np.tile([1.0, 0.0, 0.0, 0.0], (frames, 1)),
        dof_pos=np.zeros((frames, g1.num_dof)) if dof is None else dof,
        human_joints_w=np.zeros((frames, 24, 3)),
    )


@pytest.fixture(scope="module")
def standing(g1):
    """Root positions (T, 3) that put the lowest sole point of the q = 0 robot exactly at z = 0,
    and the replay of that pose."""
    probe = replay_motion(g1, _motion(g1, frames=1))
    root = np.zeros((T, 3))
    root[:, 2] = -probe.sole_points_w[..., 2].min()
    return root


def _static_human(g1, root, fps=FPS, frames=T) -> HumanReference:
    """A motionless human whose segment end points coincide with the standing robot's."""
    rep = replay_motion(g1, _motion(g1, root_pos=root[:1], frames=1))
    joints = np.repeat(rep.body("pelvis")[:, None], 24, axis=1)
    points = {
        1: rep.body("left_hip_pitch_link"),
        2: rep.body("right_hip_pitch_link"),
        4: rep.body("left_knee_link"),
        5: rep.body("right_knee_link"),
        7: rep.body("left_ankle_roll_link"),
        8: rep.body("right_ankle_roll_link"),
        16: rep.body("left_shoulder_roll_link"),
        17: rep.body("right_shoulder_roll_link"),
        18: rep.body("left_elbow_link"),
        19: rep.body("right_elbow_link"),
        20: rep.site("match_left_hand"),
        21: rep.site("match_right_hand"),
        15: rep.site("match_head"),
    }
    for j, p in points.items():
        joints[:, j] = p
    joints[:, 10] = joints[:, 7] + [0.12, 0.0, -0.03]  # toes ahead of and below the ankles
    joints[:, 11] = joints[:, 8] + [0.12, 0.0, -0.03]
    return HumanReference.from_joints(np.repeat(joints, frames, axis=0), fps)


@pytest.fixture(scope="module")
def human(g1, standing):
    return _static_human(g1, standing)


def test_static_human_stands_on_both_feet(human):
    assert human.stance.all()


def test_standing_robot_has_no_defects(g1, standing, human):
    m = evaluate_motion(_motion(g1, root_pos=standing), human, g1)
    assert m.limb_direction_error_deg == pytest.approx(0.0, abs=1e-5)
    assert m.stance_samples == 2 * T
    assert m.stance_sole_height_mm == pytest.approx(0.0, abs=1e-9)
    assert m.stance_tilt_deg == pytest.approx(0.0, abs=1e-9)
    assert m.stance_slide_cm_s == pytest.approx(0.0, abs=1e-9)
    assert m.penetration_mm == pytest.approx(0.0, abs=1e-9)
    assert m.floating_frames == 0 and m.floating_fraction == 0.0
    assert m.joint_limit_violation_frames == 0 and m.velocity_limit_violation_frames == 0
    assert m.self_collision_frames == 0 and m.self_touch_fraction == 0.0
    assert m.mean_abs_acc_rad_s2 == 0.0 and m.mean_abs_jerk_rad_s3 == 0.0


def test_tilted_foot_reports_the_tilt_angle(g1, standing, human):
    pitch, roll = 0.2, 0.1
    dof = np.zeros((T, g1.num_dof))
    for side in ("left", "right"):
        dof[:, _joint(g1, f"{side}_ankle_pitch_joint")] = pitch
        dof[:, _joint(g1, f"{side}_ankle_roll_joint")] = roll
    m = evaluate_motion(_motion(g1, dof, standing), human, g1)
    # Foot z axis after pitch then roll: its world-z component is cos(pitch)·cos(roll).
    assert m.stance_tilt_deg == pytest.approx(np.degrees(np.arccos(np.cos(pitch) * np.cos(roll))), abs=1e-9)


def test_flat_foot_tilt_leaves_out_the_human_heel_raised_frames(g1, standing, human):
    """The human's heels are raised (ankles 2 cm above their flat-foot height, toes still down) in the first 40 %
    of the frames, where the robot feet pitch 0.2 rad; elsewhere they pitch 0.1 rad in half of the frames and lie
    flat in the rest. The tilt over all stance samples is their median (0.1 rad), the flat-foot tilt the median
    over the human-flat frames only."""
    import dataclasses

    from retarget.metrics.feet import human_foot_flat

    raised, half = int(0.4 * T), int(0.7 * T)
    pitch = np.zeros(T)
    pitch[:raised], pitch[raised:half] = 0.2, 0.1
    dof = np.zeros((T, g1.num_dof))
    for side in ("left", "right"):
        dof[:, _joint(g1, f"{side}_ankle_pitch_joint")] = pitch
    joints = human.joints_w.copy()
    joints[:raised, [7, 8], 2] += 0.02
    heel_up = dataclasses.replace(human, joints_w=joints)
    flat = human_foot_flat(joints, human.stance, 0.01)
    assert not flat[:raised].any() and flat[raised:].all()
    m = evaluate_motion(_motion(g1, dof, standing), heel_up, g1)
    assert m.stance_tilt_deg == pytest.approx(np.degrees(np.median(pitch)), abs=1e-6)
    assert m.stance_tilt_flat_deg == pytest.approx(np.degrees(np.median(pitch[raised:])), abs=1e-6)
    assert m.stance_tilt_flat_deg < m.stance_tilt_deg


def test_sliding_foot_reports_the_sliding_speed(g1, standing, human):
    speed_m_s = 0.1
    root = standing.copy()
    root[:, 0] += speed_m_s * np.arange(T) / FPS
    m = evaluate_motion(_motion(g1, root_pos=root), human, g1)
    assert m.stance_slide_cm_s == pytest.approx(10.0, abs=1e-9)
    assert m.stance_slide_mean_cm_s == pytest.approx(10.0, abs=1e-9)
    assert m.limb_direction_error_deg == pytest.approx(0.0, abs=1e-5)  # translation keeps directions


def test_sunk_foot_reports_depth_and_penetration(g1, standing, human):
    depth_m = 0.012
    m = evaluate_motion(_motion(g1, root_pos=standing - [0.0, 0.0, depth_m]), human, g1)
    assert m.stance_sole_height_mm == pytest.approx(-12.0, abs=1e-9)
    assert m.stance_sole_abs_height_mm == pytest.approx(12.0, abs=1e-9)
    assert m.penetration_mm == pytest.approx(12.0, abs=1e-9)
    # The soles are spheres; MuJoCo's sphere-plane depth is exact.
    assert m.penetration_all_geoms_mm == pytest.approx(12.0, abs=1e-6)
    assert m.floating_frames == 0


def test_floating_counts_frames_above_the_threshold(g1, standing, human):
    root = standing.copy()
    root[:10, 2] += 0.03  # 3 cm up: floating
    root[10:20, 2] += 0.019  # 1.9 cm up: below the 2 cm threshold
    m = evaluate_motion(_motion(g1, root_pos=root), human, g1)
    assert m.floating_frames == 10
    assert m.floating_fraction == pytest.approx(10 / T)
    looser = evaluate_motion(_motion(g1, root_pos=root), human, g1, MetricsConfig(floating_threshold_m=0.015))
    assert looser.floating_frames == 20


def test_joint_limit_violation_reports_frames_and_excess(g1, standing, human):
    dof = np.zeros((T, g1.num_dof))
    knee, waist = _joint(g1, "left_knee_joint"), _joint(g1, "waist_roll_joint")
    dof[10:15, knee] = g1.upper_rad[knee] + 0.05
    dof[20:23, waist] = g1.lower_rad[waist] - 0.02
    m = evaluate_motion(_motion(g1, dof, standing), human, g1)
    assert m.joint_limit_violation_frames == 8
    assert m.joint_limit_max_excess_rad == pytest.approx(0.05, abs=1e-12)


def test_velocity_limit_violation_reports_steps_and_excess(g1):
    fps, frames = 300.0, 12
    elbow = _joint(g1, "left_elbow_joint")
    limit = g1.velocity_limit_rad_s[elbow]
    dof = np.zeros((frames, g1.num_dof))
    dof[:, elbow] = np.clip(np.arange(frames) - 4, 0, 2) * (limit + 3.0) / fps  # two steps at limit + 3 rad/s
    root = np.zeros((frames, 3))
    root[:, 2] = 0.8
    motion = _motion(g1, dof, root, fps=fps, frames=frames)
    m = evaluate_motion(motion, _static_human(g1, root, fps, frames), g1)
    assert m.velocity_limit_violation_frames == 2
    assert m.velocity_limit_max_excess_rad_s == pytest.approx(3.0, abs=1e-9)
    assert m.max_speed_ratio == pytest.approx((limit + 3.0) / limit, abs=1e-12)


def test_smoothness_is_exact_for_polynomials(g1, standing, human):
    t = np.arange(T)[:, None] / FPS
    acc = 0.4  # rad/s²: q = a t²/2 on every joint
    m = evaluate_motion(_motion(g1, np.tile(0.5 * acc * t**2, (1, g1.num_dof)), standing), human, g1)
    assert m.mean_abs_acc_rad_s2 == pytest.approx(acc, rel=1e-9)
    assert m.mean_abs_jerk_rad_s3 == pytest.approx(0.0, abs=1e-6)
    jerk = 1.5  # rad/s³: q = j t³/6
    m = evaluate_motion(_motion(g1, np.tile(jerk * t**3 / 6, (1, g1.num_dof)), standing), human, g1)
    assert m.mean_abs_jerk_rad_s3 == pytest.approx(jerk, rel=1e-9)


def test_arm_through_the_torso_is_a_self_collision(g1, standing, human):
    dof = np.zeros((T, g1.num_dof))
    dof[5:10, _joint(g1, "left_shoulder_roll_joint")] = -0.5  # left arm swung into the torso
    m = evaluate_motion(_motion(g1, dof, standing), human, g1)
    assert m.self_collision_frames == 5
    assert m.self_collision_fraction == pytest.approx(5 / T)
    assert m.self_collision_max_depth_mm > 10.0


def test_bent_knee_reports_its_angle_on_the_shank_only(g1, standing, human):
    angle = 0.3
    dof = np.zeros((T, g1.num_dof))
    dof[:, _joint(g1, "left_knee_joint")] = angle
    m = evaluate_motion(_motion(g1, dof, standing), human, g1)
    segs = m.limb_direction_error_by_segment_deg
    # The shank turns about the knee axis, to which it is perpendicular (to 3e-4), by the knee angle.
    assert segs["left_shank"] == pytest.approx(np.degrees(angle), abs=1e-4)
    assert all(v == pytest.approx(0.0, abs=1e-5) for k, v in segs.items() if k != "left_shank")
    assert m.limb_direction_error_deg == pytest.approx(np.degrees(angle) / len(segs), abs=1e-4)
