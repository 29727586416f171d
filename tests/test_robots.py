"""The robot spec, MuJoCo and pinocchio models built from the same URDF."""

from __future__ import annotations

import mujoco
import numpy as np
import pinocchio as pin
import pytest
from conftest import ASAP_REF_DIR

from retarget.asap_pkl import read_motion_library
from retarget.errors import UnknownRobotError
from robots import ROBOT_NAMES, load_robot_spec
from robots.g1 import ARMATURE_5020, ARMATURE_5020_X2, ARMATURE_7520_14, ARMATURE_7520_22
from robots.mujoco_model import build_mujoco_model, build_mujoco_spec, dof_qpos_indices
from robots.pinocchio_model import build_pinocchio_model, mujoco_qpos_to_pinocchio

ASAP_23_ORDER = [
    "left_hip_pitch_joint",
    "left_hip_roll_joint",
    "left_hip_yaw_joint",
    "left_knee_joint",
    "left_ankle_pitch_joint",
    "left_ankle_roll_joint",
    "right_hip_pitch_joint",
    "right_hip_roll_joint",
    "right_hip_yaw_joint",
    "right_knee_joint",
    "right_ankle_pitch_joint",
    "right_ankle_roll_joint",
    "waist_yaw_joint",
    "waist_roll_joint",
    "waist_pitch_joint",
    "left_shoulder_pitch_joint",
    "left_shoulder_roll_joint",
    "left_shoulder_yaw_joint",
    "left_elbow_joint",
    "right_shoulder_pitch_joint",
    "right_shoulder_roll_joint",
    "right_shoulder_yaw_joint",
    "right_elbow_joint",
]


def test_spec_reads_joint_order_and_limits_from_urdf():
    spec = load_robot_spec("g1_23dof")
    assert list(spec.joint_names) == ASAP_23_ORDER
    knee = spec.joint_names.index("left_knee_joint")
    # Values as written in the URDF's <limit> element.
    assert spec.lower_rad[knee] == pytest.approx(-0.087267)
    assert spec.upper_rad[knee] == pytest.approx(2.8798)
    assert spec.velocity_limit_rad_s[knee] == 20
    assert spec.effort_limit_nm[knee] == 139
    assert load_robot_spec("g1_29dof").num_dof == 29
    assert np.all(spec.lower_rad < spec.upper_rad)


def test_unknown_robot_lists_valid_choices():
    with pytest.raises(UnknownRobotError, match="g1_23dof, g1_29dof"):
        load_robot_spec("h1")


@pytest.mark.parametrize("name", ROBOT_NAMES)
def test_mujoco_and_pinocchio_forward_kinematics_agree(name):
    spec = load_robot_spec(name)
    mj_model = build_mujoco_model(spec)
    mj_data = mujoco.MjData(mj_model)
    pin_model = build_pinocchio_model(spec)
    pin_data = pin_model.createData()
    rng = np.random.default_rng(7)
    dof_idx = dof_qpos_indices(mj_model, spec)
    for _ in range(20):
        qpos = np.zeros(mj_model.nq)
        qpos[:3] = rng.normal(size=3)
        quat = rng.normal(size=4)
        qpos[3:7] = quat / np.linalg.norm(quat)
        qpos[dof_idx] = rng.uniform(spec.lower_rad, spec.upper_rad)
        mj_data.qpos[:] = qpos
        mujoco.mj_kinematics(mj_model, mj_data)
        pin.framesForwardKinematics(pin_model, pin_data, mujoco_qpos_to_pinocchio(qpos))
        for body in range(1, mj_model.nbody):
            frame = pin_model.getFrameId(mj_model.body(body).name, pin.BODY)
            np.testing.assert_allclose(pin_data.oMf[frame].translation, mj_data.xpos[body], atol=1e-6)
            np.testing.assert_allclose(pin_data.oMf[frame].rotation, mj_data.xmat[body].reshape(3, 3), atol=1e-6)


def test_mujoco_model_has_free_base_floor_and_rotor_inertia():
    spec = load_robot_spec("g1_23dof")
    model = build_mujoco_model(spec)
    assert model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
    assert model.geom("floor").type == mujoco.mjtGeom.mjGEOM_PLANE
    expected = {
        "left_hip_pitch_joint": ARMATURE_7520_14,
        "left_hip_yaw_joint": ARMATURE_7520_14,
        "waist_yaw_joint": ARMATURE_7520_14,
        "left_hip_roll_joint": ARMATURE_7520_22,
        "right_knee_joint": ARMATURE_7520_22,
        "left_ankle_pitch_joint": ARMATURE_5020_X2,
        "waist_pitch_joint": ARMATURE_5020_X2,
        "right_elbow_joint": ARMATURE_5020,
    }
    for joint, armature in expected.items():
        assert model.dof_armature[model.joint(joint).dofadr[0]] == pytest.approx(armature)


def _pd_hold_diverges_at_s(with_armature: bool) -> float | None:
    """Explicit PD at 200 Hz with ASAP's gains, robot dropped on the floor; time of divergence or None."""
    spec = load_robot_spec("g1_23dof")
    mj_spec = build_mujoco_spec(spec)
    if not with_armature:
        for joint in spec.joint_names:
            mj_spec.joint(joint).armature = 0.0
    model = mj_spec.compile()
    model.opt.timestep = 0.005
    data = mujoco.MjData(model)
    data.qpos[2] = 0.8
    dof_q = dof_qpos_indices(model, spec)
    dof_v = np.array([model.joint(n).dofadr[0] for n in spec.joint_names])
    for step in range(400):  # 2 s
        data.qfrc_applied[dof_v] = spec.kp * (0.0 - data.qpos[dof_q]) - spec.kd * data.qvel[dof_v]
        mujoco.mj_step(model, data)
        if not np.isfinite(data.qvel).all() or np.abs(data.qvel).max() > 1e3:
            return step * model.opt.timestep
    return None


def test_rotor_inertia_keeps_asap_pd_stable():
    """Without the rotor inertia the explicit PD loop blows up within a second; with it, it stays bounded."""
    assert _pd_hold_diverges_at_s(with_armature=True) is None
    diverged = _pd_hold_diverges_at_s(with_armature=False)
    assert diverged is not None and diverged < 1.0


def test_replaying_official_retargets_reproduces_matched_point_distance(g1, g1_mj_model):
    """ASAP's 14 matched points (hands 0.25 m past the elbow, head 0.42 m above the torso) sit 26.8 mm (mean
    over the 39 clips; 23.9-32.1 per clip) from the smpl_joints stored in the same files."""
    data = mujoco.MjData(g1_mj_model)
    sites = [g1_mj_model.site(f"match_{p.name}").id for p in g1.matched_points]
    joints = [p.smpl_joint for p in g1.matched_points]
    per_clip = []
    for path in sorted(ASAP_REF_DIR.glob("*.pkl")):
        clip = next(iter(read_motion_library(path).values()))
        dists = []
        for t in range(len(clip["dof"])):
            x, y, z, w = clip["root_rot"][t]
            data.qpos[:3] = clip["root_trans_offset"][t]
            data.qpos[3:7] = (w, x, y, z)
            data.qpos[7:] = clip["dof"][t]
            mujoco.mj_kinematics(g1_mj_model, data)
            dists.append(np.linalg.norm(data.site_xpos[sites] - clip["smpl_joints"][t][joints], axis=1))
        per_clip.append(np.mean(dists))
    per_clip_mm = np.array(per_clip) * 1000
    assert len(per_clip_mm) == 39
    assert per_clip_mm.mean() == pytest.approx(26.8, abs=0.1)
    assert per_clip_mm.min() == pytest.approx(23.9, abs=0.1)
    assert per_clip_mm.max() == pytest.approx(32.1, abs=0.1)
