"""Robot motion formats: exact round trips, velocities against analytic answers, resampling,
23 ↔ 29 dof, and refusals of ambiguous or unsafe input."""

from __future__ import annotations

import json
import pickle
from dataclasses import replace

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import asap_reference

from cli.main import main
from retarget.asap_pkl import RobotMotion, read_motion_library
from retarget.errors import ConfigError, MotionFileError
from retarget.formats import FormatOptions, convert_dof, read_motions, resample_motion, write_motion
from retarget.formats.kinematics import body_poses
from retarget.formats.orders import ISAACLAB_G1_BODIES, ISAACLAB_G1_JOINTS
from retarget.formats.registry import FormatNote
from retarget.formats.velocity import angular_velocity_w, linear_velocity
from retarget.rotations import quat_mul, rotvec_to_quat
from retarget.safe_pickle import UnsafePickleError
from robots.registry import load_robot_spec


@pytest.fixture(scope="module")
def walk():
    (loaded,) = read_motions(asap_reference("walk_level1_filter"))
    return loaded


def _assert_same(a: RobotMotion, b: RobotMotion, atol: float = 1e-6) -> None:
    assert a.num_frames == b.num_frames and a.fps == pytest.approx(b.fps)
    np.testing.assert_allclose(a.dof_pos, b.dof_pos, atol=atol, rtol=0)
    np.testing.assert_allclose(a.root_pos_w, b.root_pos_w, atol=atol, rtol=0)
    dot = np.abs(np.sum(a.root_quat_w * b.root_quat_w, axis=1))
    assert np.all(1.0 - dot < 1e-12)


def _narrow(loaded, robot) -> RobotMotion:
    """A 29-dof motion read back, on the 23-dof robot (the wrists it was widened with dropped)."""
    motion, lost = convert_dof(loaded.motion, loaded.robot, robot)
    assert lost == 0.0  # the wrists a widened 23-dof motion gets are exactly zero
    return motion


def test_asap_to_beyondmimic_to_asap_is_exact(tmp_path, walk):
    assert walk.robot.name == "g1_23dof" and walk.motion.fps == 30
    with pytest.warns(FormatNote, match="23-dof motion written for beyondmimic"):
        write_motion(tmp_path / "walk.npz", walk.motion, walk.robot)
    (mid,) = read_motions(tmp_path / "walk.npz")
    assert mid.robot.name == "g1_29dof" and mid.motion.name == walk.motion.name
    write_motion(tmp_path / "back.pkl", _narrow(mid, walk.robot), walk.robot)
    (back,) = read_motions(tmp_path / "back.pkl")
    _assert_same(back.motion, walk.motion, atol=1e-6)
    np.testing.assert_allclose(back.motion.human_joints_w, walk.motion.human_joints_w, atol=1e-6)
    assert back.motion.name == "back"  # a one-clip ASAP file is keyed by its file name (folder mode)


def test_beyondmimic_npz_schema_and_metadata(tmp_path, walk):
    with pytest.warns(FormatNote):
        path = write_motion(tmp_path / "walk.npz", walk.motion, walk.robot, "beyondmimic")
    data = np.load(path, allow_pickle=False)
    num = walk.motion.num_frames
    assert data["fps"].tolist() == [30] and data["joint_pos"].shape == (num, 29)
    assert data["body_pos_w"].shape == (num, 30, 3) and data["body_quat_w"].shape == (num, 30, 4)
    assert data["body_lin_vel_w"].shape == data["body_ang_vel_w"].shape == (num, 30, 3)
    assert tuple(data["joint_names"]) == ISAACLAB_G1_JOINTS and tuple(data["body_names"]) == ISAACLAB_G1_BODIES
    # Body 0 is the root: its pose is the motion's root pose, quaternion wxyz.
    np.testing.assert_allclose(data["body_pos_w"][:, 0], walk.motion.root_pos_w, atol=1e-12)
    np.testing.assert_allclose(np.abs(np.sum(data["body_quat_w"][:, 0] * walk.motion.root_quat_w, -1)), 1, atol=1e-9)
    meta = json.loads(str(data["metadata"]))
    assert meta["quat_order"] == "wxyz" and meta["robot"] == "g1_29dof" and meta["format"] == "beyondmimic"
    # Velocities are the central differences of the stored positions.
    t = 40
    np.testing.assert_allclose(
        data["joint_vel"][t], (data["joint_pos"][t + 1] - data["joint_pos"][t - 1]) * 15, atol=1e-9
    )
    np.testing.assert_allclose(
        data["body_lin_vel_w"][t], (data["body_pos_w"][t + 1] - data["body_pos_w"][t - 1]) * 15, atol=1e-9
    )


def test_angular_velocity_is_exact_for_constant_rate_rotation():
    omega_w = np.array([0.3, -1.2, 2.0])  # [rad/s], world frame
    q0 = rotvec_to_quat(np.array([0.2, 0.5, -0.4]))
    times = np.arange(20) / 50.0
    quat = quat_mul(rotvec_to_quat(times[:, None] * omega_w), q0)  # q(t) = exp(ω t) ⊗ q0
    np.testing.assert_allclose(angular_velocity_w(quat, 50.0), np.tile(omega_w, (20, 1)), atol=1e-9)
    # Sign flips of q (same rotation) do not change the result.
    flipped = quat * np.where(np.arange(20) % 2, -1.0, 1.0)[:, None]
    np.testing.assert_allclose(angular_velocity_w(flipped, 50.0), np.tile(omega_w, (20, 1)), atol=1e-9)
    np.testing.assert_allclose(linear_velocity(3.0 * times[:, None] ** 2, 50.0)[5:-5, 0], 6.0 * times[5:-5], atol=1e-9)


@pytest.mark.parametrize("order", ["xyzw", "wxyz"])
def test_csv_round_trip_both_orders(tmp_path, walk, order):
    options = FormatOptions(quat_order=order, csv_header=True)
    with pytest.warns(FormatNote):
        path = write_motion(tmp_path / "walk.csv", walk.motion, walk.robot, "csv", options)
    first = next(line for line in path.read_text().splitlines() if not line.startswith("#"))
    quat = np.array([float(v) for v in first.split(",")[3:7]])
    expected = walk.motion.root_quat_w[0] if order == "wxyz" else walk.motion.root_quat_w[0, [1, 2, 3, 0]]
    np.testing.assert_allclose(quat, expected, atol=1e-15)
    (back,) = read_motions(path)  # the header states the order and rate
    _assert_same(_narrow(back, walk.robot), walk.motion, atol=1e-12)
    # np.loadtxt (what BeyondMimic's csv_to_npz uses) reads the file despite the header.
    assert np.loadtxt(path, delimiter=",").shape == (walk.motion.num_frames, 7 + 29)


def test_bare_csv_needs_an_explicit_order_and_rate(tmp_path, walk):
    g29 = load_robot_spec("g1_29dof")
    path = write_motion(tmp_path / "bare.csv", convert_dof(walk.motion, walk.robot, g29)[0], g29, "csv")
    assert not path.read_text().startswith("#")  # Unitree's CSVs have no header, nor do ours by default
    with pytest.raises(MotionFileError, match="quaternion order is not stated"):
        read_motions(path)
    with pytest.raises(MotionFileError, match="frame rate is not stated"):
        read_motions(path, options=FormatOptions(quat_order="xyzw"))
    (back,) = read_motions(path, options=FormatOptions(quat_order="xyzw", csv_fps=30))
    _assert_same(_narrow(back, walk.robot), walk.motion, atol=1e-12)


def test_gmr_round_trip_and_local_body_positions(tmp_path, walk):
    with pytest.warns(FormatNote):
        path = write_motion(tmp_path / "walk.pkl", walk.motion, walk.robot, "gmr")
    (back,) = read_motions(path)  # detected as GMR from its keys
    _assert_same(_narrow(back, walk.robot), walk.motion, atol=1e-12)
    with open(path, "rb") as fh:
        raw = pickle.load(fh)  # our own file, read as GMR's loader does
    assert raw["metadata"]["quat_order"] == "xyzw" and raw["link_body_list"][0] == "pelvis"
    np.testing.assert_allclose(raw["root_rot"][:, 3], walk.motion.root_quat_w[:, 0], atol=1e-15)
    np.testing.assert_allclose(raw["local_body_pos"][:, 0], 0.0, atol=1e-12)
    # Left hip pitch link sits at the URDF's fixed offset from the pelvis, in the pelvis frame.
    i = raw["link_body_list"].index("left_hip_pitch_link")
    np.testing.assert_allclose(
        raw["local_body_pos"][:, i], np.tile([0.0, 0.064452, -0.1027], (len(raw["dof_pos"]), 1)), atol=1e-9
    )


def test_malicious_gmr_pickle_is_refused(tmp_path):
    class Evil:
        def __reduce__(self):
            return (print, ("owned",))

    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps({"fps": 30.0, "root_pos": Evil(), "root_rot": None, "dof_pos": None}))
    with pytest.raises(UnsafePickleError, match="builtins.print"):
        read_motions(path, "gmr")


def test_23_to_29_and_back(tmp_path, walk):
    g29 = load_robot_spec("g1_29dof")
    up, lost = convert_dof(walk.motion, walk.robot, g29)
    assert lost == 0.0 and up.dof_pos.shape[1] == 29
    wrists = [i for i, n in enumerate(g29.joint_names) if "wrist" in n]
    assert len(wrists) == 6 and np.all(up.dof_pos[:, wrists] == 0)
    write_motion(tmp_path / "walk29.pkl", up, g29)
    clip = next(iter(read_motion_library(tmp_path / "walk29.pkl").values()))
    assert clip["pose_aa"].shape[1:] == (1 + 29 + 3, 3) and clip["dof"].shape[1] == 29
    (back29,) = read_motions(tmp_path / "walk29.pkl")
    assert back29.robot.name == "g1_29dof"
    down, lost = convert_dof(back29.motion, g29, walk.robot)
    _assert_same(down, walk.motion, atol=1e-6)
    bent = replace(up, dof_pos=up.dof_pos + np.isin(np.arange(29), wrists) * 0.25)
    assert convert_dof(bent, g29, walk.robot)[1] == pytest.approx(0.25)
    # The legs land at the same place on both robots; the two URDFs' torsos differ by a few mm.
    a, b = body_poses(walk.motion, walk.robot), body_poses(up, g29)
    for link, tol in (("left_ankle_roll_link", 1e-6), ("right_elbow_link", 5e-3)):
        np.testing.assert_allclose(a.pos_w[:, a.names.index(link)], b.pos_w[:, b.names.index(link)], atol=tol)


def test_resample_slerps_root_and_lerps_joints(walk):
    m = walk.motion
    up = resample_motion(m, 60.0)
    assert up.num_frames == 2 * m.num_frames - 1 and up.fps == 60.0
    np.testing.assert_allclose(up.dof_pos[::2], m.dof_pos, atol=1e-12)
    np.testing.assert_allclose(up.dof_pos[1::2], 0.5 * (m.dof_pos[:-1] + m.dof_pos[1:]), atol=1e-12)
    # Midpoint of a slerp: equal geodesic angle to both neighbours.
    from retarget.rotations import quat_angle_between

    mid = up.root_quat_w[1::2]
    np.testing.assert_allclose(
        quat_angle_between(mid, m.root_quat_w[:-1]), quat_angle_between(mid, m.root_quat_w[1:]), atol=1e-9
    )
    _assert_same(resample_motion(up, 30.0), m, atol=1e-12)
    with pytest.raises(ConfigError):
        resample_motion(m, 0.0)


def test_npz_without_joint_names_is_refused(tmp_path, walk):
    with pytest.warns(FormatNote):
        path = write_motion(tmp_path / "walk.npz", walk.motion, walk.robot)
    data = dict(np.load(path, allow_pickle=False))
    for key in ("joint_names", "body_names", "metadata"):  # what BeyondMimic's own files lack
        del data[key]
    np.savez(tmp_path / "nameless.npz", **data)
    with pytest.raises(MotionFileError, match="--from beyondmimic or --from mjlab"):
        read_motions(tmp_path / "nameless.npz")
    (named,), (settled,) = read_motions(path), read_motions(tmp_path / "nameless.npz", "beyondmimic")
    _assert_same(settled.motion, named.motion, atol=0)
    (tmp_path / "trunc.npz").write_bytes(path.read_bytes()[:5000])
    with pytest.raises(MotionFileError, match="trunc.npz"):
        read_motions(tmp_path / "trunc.npz")


def test_convert_cli_between_formats(tmp_path):
    runner = CliRunner()
    src = asap_reference("walk_level1_filter")
    out = runner.invoke(main, ["convert", str(src), str(tmp_path / "w.npz")])
    assert out.exit_code == 0, out.output
    assert "50 Hz" in out.output and np.load(tmp_path / "w.npz")["fps"].tolist() == [50]
    assert "warning:" in out.output and "23-dof motion written for beyondmimic" in out.output
    out = runner.invoke(
        main, ["convert", str(tmp_path / "w.npz"), "-o", str(tmp_path / "w.csv"), "--quat-order", "wxyz"]
    )
    assert out.exit_code == 0 and "g1_29dof" in out.output and "wxyz" in out.output, out.output
    (csv,) = read_motions(tmp_path / "w.csv", options=FormatOptions(quat_order="wxyz", csv_fps=30))
    assert csv.robot.name == "g1_29dof" and csv.motion.fps == 30
    out = runner.invoke(main, ["convert", str(tmp_path / "w.npz"), "-o", str(tmp_path / "w.csv"), "--csv-header"])
    assert out.exit_code == 0 and read_motions(tmp_path / "w.csv")[0].motion.fps == 30
    out = runner.invoke(
        main, ["convert", str(tmp_path / "w.csv"), str(tmp_path / "w.pkl"), "--to", "gmr", "--fps", "30"]
    )
    assert out.exit_code == 0, out.output
    assert read_motions(tmp_path / "w.pkl")[0].robot.name == "g1_29dof"
    # A bare CSV without --quat-order: exit 1, message names the file, nothing written.
    (tmp_path / "bare.csv").write_text(
        "\n".join(line for line in (tmp_path / "w.csv").read_text().splitlines() if line[0] != "#")
    )
    out = runner.invoke(main, ["convert", str(tmp_path / "bare.csv"), str(tmp_path / "x.npz")])
    assert out.exit_code == 1 and "bare.csv" in out.output and "--quat-order" in out.output
    assert not (tmp_path / "x.npz").exists()
    out = runner.invoke(main, ["convert", str(src), str(tmp_path / "x.txt")])
    assert out.exit_code == 1 and "output format" in out.output
