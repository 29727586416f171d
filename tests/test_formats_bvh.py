"""Human inputs: CMU BVH and joint-position arrays → SMPL → G1, limb directions kept."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import FIXTURES, smpl_clip

from cli.main import main
from retarget.asap_pkl import motion_qpos
from retarget.errors import ConfigError, MotionFileError
from retarget.formats import read_motions
from retarget.pipeline import retarget_sequence
from retarget.readers.amass import read_amass_npz
from retarget.readers.bvh import BvhConfig, read_bvh
from retarget.readers.bvh_smpl import CMU_MAP, bvh_to_smpl
from retarget.readers.joint_positions import read_joint_positions_as_smpl, write_joint_positions
from retarget.readers.smpl_from_joints import PRIMARY_CHILD, swing_rotation
from retarget.skeleton import smpl_forward_kinematics
from retarget.smpl_sequence import SMPL_JOINT_NAMES
from robots.mujoco_model import build_mujoco_model
from robots.registry import load_robot_spec

BVH = FIXTURES / "formats" / "bvh" / "cmu_01_01.bvh"
CMU = BvhConfig(unit="cmu")


@pytest.fixture(scope="module")
def bvh():
    return read_bvh(BVH, CMU)


def _angle_deg(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    cos = np.sum(a * b, -1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def test_bvh_parse_and_units(bvh):
    assert bvh.num_frames == 2752 and bvh.fps == 120.0  # "Frame Time: .0083333"
    assert len(bvh.joint_names) == 31 + 7  # 31 joints + 7 end sites
    # CMU ASF unit: the left thigh is 7.16 units = 0.404 m; the toes are just above a floor at z = 0.
    thigh = np.linalg.norm(bvh.positions_w[0, bvh.index("LeftLeg")] - bvh.positions_w[0, bvh.index("LeftUpLeg")])
    assert thigh == pytest.approx(np.hypot(2.44811, 6.72613) * 0.0254 / 0.45, rel=1e-9)  # OFFSET of LeftLeg
    assert 0.0 < bvh.positions_w[:, bvh.index("LeftToeBase"), 2].min() < 0.05
    with pytest.raises(MotionFileError, match="probably one of \\['cmu'\\]"):
        bvh_to_smpl(read_bvh(BVH), BVH)  # the default unit (cm) makes a 15 cm leg
    with pytest.raises(ConfigError, match="valid choices"):
        BvhConfig(unit="furlong")


def test_truncated_bvh_is_refused(tmp_path):
    bad = tmp_path / "cut.bvh"
    bad.write_text(BVH.read_text()[:300_000])
    with pytest.raises(MotionFileError, match="cut.bvh"):
        read_bvh(bad, CMU)


def test_swing_rotation_is_minimal():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(50, 3)), rng.normal(size=(50, 3))
    a[0], b[0] = [0, 0, 1], [0, 0, -1]  # opposite vectors
    rot = swing_rotation(a, b)
    unit = lambda v: v / np.linalg.norm(v, axis=-1, keepdims=True)
    np.testing.assert_allclose(np.einsum("tij,tj->ti", rot, unit(a)), unit(b), atol=1e-12)
    np.testing.assert_allclose(rot @ np.transpose(rot, (0, 2, 1)), np.tile(np.eye(3), (50, 1, 1)), atol=1e-12)
    # Minimal: the rotation angle equals the angle between the vectors.
    angle = np.arccos(np.clip((np.trace(rot, axis1=1, axis2=2) - 1) / 2, -1, 1))
    np.testing.assert_allclose(angle, np.radians(_angle_deg(a, b)), atol=1e-6)


def test_bvh_to_smpl_reproduces_every_mapped_segment_direction(bvh):
    seq = bvh_to_smpl(bvh, BVH, config=CMU)
    assert seq.fps == 120.0 and seq.pose_rotvec.shape == (2752, 24, 3)
    joints, _ = smpl_forward_kinematics(seq.pose_rotvec, seq.trans_w)
    for j, bone in CMU_MAP.bones.items():
        if bone.segment is None:
            continue
        seg = bvh.positions_w[:, bvh.index(bone.segment[1])] - bvh.positions_w[:, bvh.index(bone.segment[0])]
        err = _angle_deg(joints[:, PRIMARY_CHILD[j]] - joints[:, j], seg)
        assert err.max() < 1e-4, (SMPL_JOINT_NAMES[j], err.max())
    # Not mirrored: SMPL's left hip stays on the BVH's left hip side of the body.
    lr_smpl = joints[:, 1] - joints[:, 2]
    lr_bvh = bvh.positions_w[:, bvh.index("LeftUpLeg")] - bvh.positions_w[:, bvh.index("RightUpLeg")]
    assert np.all(np.sum(lr_smpl * lr_bvh, -1) > 0)
    # Root scaled by the leg ratio: the feet stay near the floor.
    assert -0.01 < joints[:, [10, 11], 2].min() < 0.05


def test_smpl_joint_positions_round_trip_exactly(tmp_path):
    seq = read_amass_npz(smpl_clip("walk_level1_filter"))
    joints, _ = smpl_forward_kinematics(seq.pose_rotvec, seq.trans_w)
    path = write_joint_positions(tmp_path / "walk_joints.npz", joints, SMPL_JOINT_NAMES, seq.fps)
    back = read_joint_positions_as_smpl(path)
    joints_back, _ = smpl_forward_kinematics(back.pose_rotvec, back.trans_w)
    np.testing.assert_allclose(joints_back, joints, atol=1e-9)
    np.savez(tmp_path / "partial.npz", joints_w=joints[:, :10], joint_names=np.array(SMPL_JOINT_NAMES[:10]), fps=30.0)
    with pytest.raises(MotionFileError, match="lack SMPL body joints"):
        read_joint_positions_as_smpl(tmp_path / "partial.npz")


# Robot segment (from body, to body or site) ↔ CMU segment; tolerances on the first 4 s of 01_01.
SEGMENTS = {
    "thigh": ("{s}_hip_pitch_link", "{s}_knee_link", "{S}UpLeg", "{S}Leg", 10.0, 16.0),
    "shank": ("{s}_knee_link", "{s}_ankle_roll_link", "{S}Leg", "{S}Foot", 10.0, 16.0),
    "upper_arm": ("{s}_shoulder_roll_link", "{s}_elbow_link", "{S}Arm", "{S}ForeArm", 15.0, 25.0),
}


def test_cmu_clip_retargets_to_g1_with_limb_directions_of_the_source(bvh):
    seq = bvh_to_smpl(bvh, BVH, config=CMU)
    first = 4 * 120 + 1
    seq = seq.with_frames(seq.pose_rotvec[:first], seq.trans_w[:first], seq.fps)
    result = retarget_sequence(seq)  # G1 23-dof at 30 Hz: robot frame t = BVH frame 4 t
    assert result.motion.num_frames == 121
    model = build_mujoco_model("g1_23dof")
    data = mujoco.MjData(model)
    err: dict[str, list[float]] = {}
    g1 = load_robot_spec("g1_23dof")
    for t, q in enumerate(motion_qpos(result.motion, g1)):
        data.qpos[:] = q
        mujoco.mj_kinematics(model, data)
        for name, (rb0, rb1, hb0, hb1, *_tol) in SEGMENTS.items():
            for s, S in (("left", "Left"), ("right", "Right")):
                robot_dir = data.body(rb1.format(s=s)).xpos - data.body(rb0.format(s=s)).xpos
                src = bvh.positions_w[4 * t]
                human_dir = src[bvh.index(hb1.format(S=S))] - src[bvh.index(hb0.format(S=S))]
                err.setdefault(name, []).append(float(_angle_deg(robot_dir, human_dir)))
    for name, (*_, median_deg, p95_deg) in SEGMENTS.items():
        assert np.median(err[name]) < median_deg and np.percentile(err[name], 95) < p95_deg, (
            name,
            np.median(err[name]),
        )
    assert result.mean_match_error_mm < 40.0


def test_convert_cli_retargets_a_bvh(tmp_path):
    text = BVH.read_text()
    head, motion = text.split("Frame Time:")
    rows = motion.strip().splitlines()
    short = tmp_path / "cmu_short.bvh"  # the first second of the clip
    short.write_text(head.replace("Frames: 2752", "Frames: 121") + "Frame Time: " + "\n".join(rows[:122]) + "\n")
    out = tmp_path / "cmu.npz"
    result = CliRunner().invoke(main, ["convert", str(short), str(out), "--bvh-unit", "cmu", "--robot", "g1_29dof"])
    assert result.exit_code == 0, result.output
    assert "bvh → beyondmimic (retargeted)" in result.output
    (loaded,) = read_motions(out)
    assert loaded.robot.name == "g1_29dof" and loaded.motion.fps == 50.0 and loaded.motion.num_frames == 51
    result = CliRunner().invoke(main, ["convert", str(short), str(tmp_path / "x.npz")])
    assert result.exit_code == 1 and "--bvh-unit" in result.output and not (tmp_path / "x.npz").exists()
