"""Rotations, SMPL forward kinematics against ASAP's stored joints, and resampling."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import all_clip_names, asap_reference, smpl_clip

from retarget.asap_pkl import read_motion_library
from retarget.readers.amass import read_amass_npz
from retarget.resample import resample_sequence
from retarget.rotations import (
    quat_angle_between,
    quat_mul,
    quat_slerp,
    quat_to_matrix,
    quat_to_rotvec,
    quat_wxyz_to_xyzw,
    quat_xyzw_to_wxyz,
    rotvec_to_matrix,
    rotvec_to_quat,
)
from retarget.skeleton import neutral_skeleton, smpl_forward_kinematics


def test_quaternion_conventions_and_group_axioms():
    rng = np.random.default_rng(0)
    rv = rng.normal(size=(50, 3))
    q = rotvec_to_quat(rv)
    np.testing.assert_allclose(quat_to_matrix(q), rotvec_to_matrix(rv), atol=1e-12)
    np.testing.assert_allclose(quat_xyzw_to_wxyz(quat_wxyz_to_xyzw(q)), q)
    # Rx(90°) in wxyz is (cos 45°, sin 45°, 0, 0).
    np.testing.assert_allclose(rotvec_to_quat(np.array([np.pi / 2, 0, 0])), [np.sqrt(0.5), np.sqrt(0.5), 0, 0])
    a, b, c = q[:10], q[10:20], q[20:30]
    np.testing.assert_allclose(
        quat_to_matrix(quat_mul(quat_mul(a, b), c)), quat_to_matrix(quat_mul(a, quat_mul(b, c))), atol=1e-12
    )
    np.testing.assert_allclose(quat_to_matrix(quat_mul(a, b)), quat_to_matrix(a) @ quat_to_matrix(b), atol=1e-12)
    np.testing.assert_allclose(quat_angle_between(q, -q), 0, atol=1e-6)
    back = quat_to_rotvec(q)
    np.testing.assert_allclose(rotvec_to_matrix(back), rotvec_to_matrix(rv), atol=1e-12)
    assert np.all(np.linalg.norm(back, axis=1) <= np.pi + 1e-12)


def test_slerp_is_constant_speed_on_a_known_arc():
    q0 = rotvec_to_quat(np.zeros(3))
    q1 = rotvec_to_quat(np.array([0.0, 0.0, 1.2]))
    for t in (0.0, 0.25, 0.5, 1.0):
        np.testing.assert_allclose(quat_to_rotvec(quat_slerp(q0, q1, t)), [0, 0, 1.2 * t], atol=1e-12)
    # Shortest arc: -q1 is the same rotation.
    np.testing.assert_allclose(quat_to_rotvec(quat_slerp(q0, -q1, 0.5)), [0, 0, 0.6], atol=1e-12)


def test_neutral_skeleton_pelvis_is_trans_plus_unrotated_j0():
    seq = read_amass_npz(smpl_clip("walk_level1_filter"))
    joints, rot = smpl_forward_kinematics(seq.pose_rotvec, seq.trans_w)
    np.testing.assert_allclose(joints[:, 0], seq.trans_w + neutral_skeleton().offsets[0], atol=1e-12)
    np.testing.assert_allclose(rot[:, 0], rotvec_to_matrix(seq.pose_rotvec[:, 0]), atol=1e-12)


@pytest.mark.parametrize("clip", all_clip_names())
def test_fk_rotations_agree_with_asap_stored_joints(clip):
    """Every ASAP bone vector, expressed in our FK's parent-joint frame, is constant over the clip (within 0.1 mm):
    our joint rotations are ASAP's, only the (fitted) bone lengths differ."""
    seq = read_amass_npz(smpl_clip(clip))
    _, rot_w = smpl_forward_kinematics(seq.pose_rotvec, seq.trans_w)
    asap = next(iter(read_motion_library(asap_reference(clip)).values()))["smpl_joints"].astype(np.float64)
    parents = neutral_skeleton().parents
    for j in range(1, 24):
        p = parents[j]
        bone_in_parent = np.einsum("tji,tj->ti", rot_w[:, p], asap[:, j] - asap[:, p])
        assert np.abs(bone_in_parent - bone_in_parent.mean(axis=0)).max() < 1e-4, (clip, j)


def test_resample_rates_and_true_fps():
    seq = read_amass_npz(smpl_clip("walk_level1_filter"))  # 152 frames at 30 Hz = 5.033 s
    up = resample_sequence(seq, 50.0)
    assert up.fps == 50.0 and up.num_frames == 252  # floor(5.0333 * 50) + 1
    down = resample_sequence(seq, 12.5)
    assert down.num_frames == 63
    same = resample_sequence(seq, 30.0)
    np.testing.assert_array_equal(same.pose_rotvec, seq.pose_rotvec)
    # Every second 60 Hz sample is an original frame.
    up60 = resample_sequence(seq, 60.0)
    np.testing.assert_allclose(up60.trans_w[::2], seq.trans_w, atol=1e-12)
    np.testing.assert_allclose(
        quat_angle_between(rotvec_to_quat(up60.pose_rotvec[::2]), rotvec_to_quat(seq.pose_rotvec)), 0, atol=1e-6
    )
    # Midpoints are the slerp / lerp halfway values.
    mid_q = quat_slerp(rotvec_to_quat(seq.pose_rotvec[:-1]), rotvec_to_quat(seq.pose_rotvec[1:]), 0.5)
    np.testing.assert_allclose(quat_angle_between(rotvec_to_quat(up60.pose_rotvec[1::2]), mid_q), 0, atol=1e-6)
    np.testing.assert_allclose(up60.trans_w[1::2], 0.5 * (seq.trans_w[:-1] + seq.trans_w[1:]), atol=1e-12)


def test_non_integer_source_rate_resamples_to_exact_duration():
    seq = read_amass_npz(smpl_clip("walk_level1_filter"))
    seq = seq.with_frames(seq.pose_rotvec, seq.trans_w, 29.97)
    out = resample_sequence(seq, 30.0)
    assert out.fps == 30.0
    assert out.duration_s <= seq.duration_s + 1e-9
    assert seq.duration_s - out.duration_s < 1 / 30


def test_skew_is_the_cross_product_matrix():
    from retarget.rotations import skew

    rng = np.random.default_rng(0)
    v, f = rng.normal(size=(5, 4, 3)), rng.normal(size=(5, 4, 3))
    np.testing.assert_allclose(np.einsum("...ij,...j->...i", skew(v), f), np.cross(v, f), atol=1e-12)
    np.testing.assert_allclose(skew(v), -np.swapaxes(skew(v), -1, -2))


def test_positions_of_a_few_joints_are_the_full_kinematics_bit_for_bit():
    """The floor levelling's kinematics of six joints (10 of the 24 rotations) equal the full FK's."""
    from retarget.skeleton import smpl_joint_positions

    seq = read_amass_npz(smpl_clip("walk_level2_filter"))
    joints_w, _ = smpl_forward_kinematics(seq.pose_rotvec, seq.trans_w)
    for subset in ([7, 10, 8, 11, 0, 12], [0], [23, 4], list(range(24))):
        np.testing.assert_array_equal(smpl_joint_positions(seq.pose_rotvec, seq.trans_w, subset), joints_w[:, subset])
