"""Every written file read the way its consumer reads it, body by body against our forward kinematics.

BeyondMimic and mjlab index bodies and joints by position, so the lists below are the consumers'
own, transcribed from ../shared/data/formats/CONSUMERS.md, not taken from the writer's tables.
Each tracked body is compared with our MuJoCo forward kinematics of the body of that *name*.
"""

from __future__ import annotations

import pickle
import pickletools
import warnings
from dataclasses import replace

import joblib
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import FIXTURES, asap_reference

from cli.convert_cmd import ROBOT_FORMAT_NAMES
from cli.main import main
from retarget.asap_pkl import RobotMotion
from retarget.errors import ConfigError, MotionFileError
from retarget.formats import FormatOptions, convert_dof, detect_input_format, read_motions, write_motion
from retarget.formats.convert import ConvertConfig, convert_file
from retarget.formats.kinematics import body_poses
from retarget.formats.orders import ConsumerOrder, _check, consumer_order, gmr_body_list
from retarget.formats.registry import ROBOT_FORMATS, FormatNote
from retarget.rotations import quat_conj, quat_mul, quat_to_matrix
from retarget.safe_pickle import safe_load
from robots.registry import load_robot_spec

G29 = load_robot_spec("g1_29dof")
SAMPLES = FIXTURES / "formats"
HOLOSOMA = SAMPLES / "beyondmimic_npz" / "sub3_largebox_003_mj.npz"
GMT = SAMPLES / "gmr_pkl" / "airkick_stand.pkl"
PROTOMOTIONS = SAMPLES / "g1_csv" / "output_jumpjack.csv"

_J = "_joint"
BEYONDMIMIC_JOINTS = [
    n + _J
    for n in (
        "left_hip_pitch",
        "right_hip_pitch",
        "waist_yaw",
        "left_hip_roll",
        "right_hip_roll",
        "waist_roll",
        "left_hip_yaw",
        "right_hip_yaw",
        "waist_pitch",
        "left_knee",
        "right_knee",
        "left_shoulder_pitch",
        "right_shoulder_pitch",
        "left_ankle_pitch",
        "right_ankle_pitch",
        "left_shoulder_roll",
        "right_shoulder_roll",
        "left_ankle_roll",
        "right_ankle_roll",
        "left_shoulder_yaw",
        "right_shoulder_yaw",
        "left_elbow",
        "right_elbow",
        "left_wrist_roll",
        "right_wrist_roll",
        "left_wrist_pitch",
        "right_wrist_pitch",
        "left_wrist_yaw",
        "right_wrist_yaw",
    )
]
BEYONDMIMIC_BODIES = ["pelvis"] + [
    j.replace("waist_pitch_joint", "torso_joint")[: -len(_J)] + "_link" for j in BEYONDMIMIC_JOINTS
]
_LEG = ["hip_pitch", "hip_roll", "hip_yaw", "knee", "ankle_pitch", "ankle_roll"]
_ARM = ["shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow", "wrist_roll", "wrist_pitch", "wrist_yaw"]
MJLAB_JOINTS = (
    [f"left_{j}_joint" for j in _LEG]
    + [f"right_{j}_joint" for j in _LEG]
    + ["waist_yaw_joint", "waist_roll_joint", "waist_pitch_joint"]
    + [f"left_{j}_joint" for j in _ARM]
    + [f"right_{j}_joint" for j in _ARM]
)
MJLAB_BODIES = (
    ["pelvis"]
    + [f"left_{j}_link" for j in _LEG]
    + [f"right_{j}_link" for j in _LEG]
    + ["waist_yaw_link", "waist_roll_link", "torso_link"]
    + [f"left_{j}_link" for j in _ARM]
    + [f"right_{j}_link" for j in _ARM]
)
TRACKED = [
    "pelvis",
    "left_hip_roll_link",
    "left_knee_link",
    "left_ankle_roll_link",
    "right_hip_roll_link",
    "right_knee_link",
    "right_ankle_roll_link",
    "torso_link",
    "left_shoulder_roll_link",
    "left_elbow_link",
    "left_wrist_yaw_link",
    "right_shoulder_roll_link",
    "right_elbow_link",
    "right_wrist_yaw_link",
]
GMR_BODIES = (
    ["pelvis"]
    + [f"left_{j}_link" for j in _LEG]
    + ["left_toe_link", "pelvis_contour_link"]
    + [f"right_{j}_link" for j in _LEG]
    + ["right_toe_link", "waist_yaw_link", "waist_roll_link", "torso_link", "head_link", "head_mocap", "imu_in_torso"]
    + [f"left_{j}_link" for j in _ARM]
    + ["left_rubber_hand"]
    + [f"right_{j}_link" for j in _ARM]
    + ["right_rubber_hand"]
)
POSITION_INDEXED = {"beyondmimic": (BEYONDMIMIC_JOINTS, BEYONDMIMIC_BODIES), "mjlab": (MJLAB_JOINTS, MJLAB_BODIES)}


@pytest.fixture(scope="module")
def walk29() -> RobotMotion:
    """ASAP's walk retarget (23-dof) on the 29-dof G1 with the wrists bent, so wrist bodies are tested too."""
    (loaded,) = read_motions(asap_reference("walk_level1_filter"))
    motion, _ = convert_dof(loaded.motion, loaded.robot, G29)
    wrists = np.array(["wrist" in n for n in G29.joint_names])
    wave = 0.4 * np.sin(np.arange(motion.num_frames) / 7.0)[:, None]
    return replace(motion, dof_pos=motion.dof_pos + wrists * wave)


@pytest.fixture(scope="module")
def fk(walk29):
    poses = body_poses(walk29, G29)
    return {n: (poses.pos_w[:, i], poses.quat_w[:, i]) for i, n in enumerate(poses.names)}


def _same_rotation(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all(1.0 - np.abs(np.sum(a * b, axis=-1)) < 1e-10))


def test_orders_are_the_tree_walks_of_the_robot_model():
    for fmt, (joints, bodies) in POSITION_INDEXED.items():  # the writer's tables = CONSUMERS.md's lists
        assert consumer_order(fmt).joints == tuple(joints) and consumer_order(fmt).bodies == tuple(bodies)
    assert gmr_body_list() == tuple(GMR_BODIES)
    swapped = list(MJLAB_JOINTS)
    swapped[0], swapped[6] = swapped[6], swapped[0]
    bodies = tuple(["pelvis"] + [j.replace("waist_pitch_joint", "torso_joint")[: -len(_J)] + "_link" for j in swapped])
    with pytest.raises(ConfigError, match="depth-first walk"):
        _check(ConsumerOrder("bad", tuple(swapped), bodies, "depth-first", "test"), G29)
    with pytest.raises(ConfigError, match="child links"):
        _check(ConsumerOrder("bad", tuple(MJLAB_JOINTS), tuple(BEYONDMIMIC_BODIES), "depth-first", "test"), G29)
    assert tuple(ROBOT_FORMATS) == ROBOT_FORMAT_NAMES  # the CLI's choices are the registry's formats


@pytest.mark.parametrize("fmt", ["beyondmimic", "mjlab"])
def test_position_indexed_consumers_read_the_right_bodies(tmp_path, walk29, fk, fmt):
    path = write_motion(tmp_path / f"walk_{fmt}.npz", walk29, G29, fmt)
    data = np.load(path)  # as their MotionLoader does: keys by name, bodies and joints by position
    joints, bodies = POSITION_INDEXED[fmt]
    assert data["fps"].tolist() == [30] and data["joint_pos"].shape == (walk29.num_frames, 29)
    assert data["body_pos_w"].shape == (walk29.num_frames, 30, 3)
    for k, name in enumerate(joints):
        np.testing.assert_array_equal(data["joint_pos"][:, k], walk29.dof_pos[:, G29.joint_names.index(name)])
    wrong = [
        n
        for n in TRACKED
        if np.abs(data["body_pos_w"][:, bodies.index(n)] - fk[n][0]).max() > 1e-5
        or not _same_rotation(data["body_quat_w"][:, bodies.index(n)], fk[n][1])
    ]
    assert wrong == []
    for i, name in enumerate(bodies):  # every body, not only the tracked ones
        np.testing.assert_allclose(data["body_pos_w"][:, i], fk[name][0], atol=1e-12, rtol=0)
    anchor = bodies.index("torso_link")
    np.testing.assert_allclose(
        data["body_lin_vel_w"][5, anchor], (fk["torso_link"][0][6] - fk["torso_link"][0][4]) * 15, atol=1e-9
    )


def test_known_rotated_pose_has_the_stated_quaternion_orders(tmp_path):
    """Root turned 90° left (yaw), left elbow bent 90°: every format stores the rotations as it says."""
    s = np.sqrt(0.5)
    dof = np.zeros((3, 29))
    dof[:, G29.joint_names.index("left_elbow_joint")] = np.pi / 2
    motion = RobotMotion(
        "turn", 50.0, np.tile([0.0, 0.0, 0.8], (3, 1)), np.tile([s, 0.0, 0.0, s], (3, 1)), dof, np.zeros((3, 24, 3))
    )
    for fmt in ("beyondmimic", "mjlab"):
        data = np.load(write_motion(tmp_path / f"turn_{fmt}.npz", motion, G29, fmt))
        bodies = POSITION_INDEXED[fmt][1]
        np.testing.assert_allclose(data["body_quat_w"][0, bodies.index("pelvis")], [s, 0, 0, s], atol=1e-12)  # wxyz
        upper = data["body_quat_w"][0, bodies.index("left_shoulder_yaw_link")]
        fore = data["body_quat_w"][0, bodies.index("left_elbow_link")]
        rel = quat_mul(quat_conj(upper), fore)  # the elbow joint: +90° about its y axis
        np.testing.assert_allclose(rel * np.sign(rel[0]), [s, 0, s, 0], atol=1e-9)
        # The pelvis +x axis (forward) points along world +y after a 90° left turn.
        np.testing.assert_allclose(quat_to_matrix(data["body_quat_w"][0, 0])[:, 0], [0, 1, 0], atol=1e-12)
    holo = np.load(write_motion(tmp_path / "turn_holo.npz", motion, G29, "holosoma"))
    np.testing.assert_allclose(holo["joint_pos"][0, 3:7], [s, 0, 0, s], atol=1e-12)  # qpos: wxyz
    rows = np.loadtxt(write_motion(tmp_path / "turn.csv", motion, G29, "csv"), delimiter=",")
    np.testing.assert_allclose(rows[0, 3:7], [0, 0, s, s], atol=1e-15)  # Unitree: xyzw
    with open(write_motion(tmp_path / "turn.pkl", motion, G29, "gmr"), "rb") as fh:
        np.testing.assert_allclose(pickle.load(fh)["root_rot"][0], [0, 0, s, s], atol=1e-15)  # GMR: xyzw


def test_holosoma_reads_by_name_after_dropping_the_root_columns(tmp_path, walk29, fk):
    data = np.load(write_motion(tmp_path / "walk_holo.npz", walk29, G29, "holosoma"))
    names = [str(n) for n in data["joint_names"]]
    assert data["joint_pos"].shape == (walk29.num_frames, 36) and data["joint_vel"].shape == (walk29.num_frames, 35)
    dof, dof_vel = data["joint_pos"][:, 7:], data["joint_vel"][:, 6:]  # what holosoma keeps
    for name in G29.joint_names:
        np.testing.assert_array_equal(dof[:, names.index(name)], walk29.dof_pos[:, G29.joint_names.index(name)])
    t = 20
    np.testing.assert_allclose(dof_vel[t], (dof[t + 1] - dof[t - 1]) * 15, atol=1e-9)
    np.testing.assert_allclose(data["joint_pos"][:, :3], walk29.root_pos_w, atol=0)
    # Root angular velocity in the world frame, as holosoma's own sample stores it.
    step = quat_mul(data["joint_pos"][t + 1, 3:7], quat_conj(data["joint_pos"][t - 1, 3:7]))
    np.testing.assert_allclose(
        data["joint_vel"][t, 3:6],
        2 * np.arctan2(np.linalg.norm(step[1:]), step[0]) * step[1:] / np.linalg.norm(step[1:]) * 15,
        atol=1e-9,
    )
    bodies = [str(n) for n in data["body_names"]]
    holosoma_robot = [str(n) for n in np.load(HOLOSOMA)["body_names"]]  # the bodies of holosoma's own G1
    assert [n for n in holosoma_robot if n not in bodies] == []  # its MotionLoader asserts each one is there
    for name in TRACKED:
        np.testing.assert_allclose(data["body_pos_w"][:, bodies.index(name)], fk[name][0], atol=1e-12, rtol=0)
    # A marker body: holosoma's left toe sphere, 12 cm ahead of the ankle roll link, 3 cm to its left and below.
    ankle_pos, ankle_quat = fk["left_ankle_roll_link"]
    sphere = ankle_pos + quat_to_matrix(ankle_quat) @ np.array([0.12, 0.03, -0.03])
    np.testing.assert_allclose(data["body_pos_w"][:, bodies.index("left_ankle_roll_sphere_3_link")], sphere, atol=1e-12)


def test_holosoma_sample_round_trips_into_its_own_layout(tmp_path):
    sample = np.load(HOLOSOMA)
    (loaded,) = read_motions(HOLOSOMA)
    out = np.load(write_motion(tmp_path / "again.npz", loaded.motion, loaded.robot, "holosoma"))
    assert set(sample.files) <= set(out.files) and out["fps"].tolist() == sample["fps"].tolist() == [50]
    assert out["joint_pos"].shape == sample["joint_pos"].shape and out["joint_vel"].shape == sample["joint_vel"].shape
    assert list(out["joint_names"]) == list(sample["joint_names"])
    np.testing.assert_allclose(out["joint_pos"], sample["joint_pos"], atol=1e-12)
    # Velocities: ours are central differences of the poses, theirs come from their pipeline.
    assert np.abs(out["joint_vel"][1:-1] - sample["joint_vel"][1:-1]).max() < 0.05
    assert (
        list(out["body_names"]) == list(sample["body_names"]) and out["body_pos_w"].shape == sample["body_pos_w"].shape
    )
    # Legs, feet and their marker bodies agree with holosoma's own model to 1e-6 m; from the waist up its G1
    # places the waist roll joint 9 mm from the unitree_ros URDF this package uses.
    legs = [
        i
        for i, n in enumerate(sample["body_names"])
        if str(n) == "pelvis" or any(k in str(n) for k in ("hip", "knee", "ankle"))
    ]
    assert len(legs) == 25  # pelvis; per side 3 hip links, knee, ankle intermediate, 2 ankle links, 5 spheres
    np.testing.assert_allclose(out["body_pos_w"][:, legs], sample["body_pos_w"][:, legs], atol=1e-6)
    np.testing.assert_allclose(np.abs(np.sum(out["body_quat_w"] * sample["body_quat_w"], axis=-1)), 1.0, atol=1e-9)


def test_gmr_pickle_as_gmr_loads_it(tmp_path, walk29, fk):
    path = write_motion(tmp_path / "walk_gmr.pkl", walk29, G29, "gmr")
    raw_bytes = path.read_bytes()
    referenced = {str(arg) for op, arg, _ in pickletools.genops(raw_bytes) if op.name in ("GLOBAL", "STACK_GLOBAL")}
    assert not any("numpy._core" in r for r in referenced) and "numpy.core.multiarray _reconstruct" in referenced
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy 2 loads numpy 1.x names silently
        with open(path, "rb") as fh:
            data = pickle.load(fh)  # GMR's load_robot_motion
    assert data["link_body_list"] == GMR_BODIES and len(GMR_BODIES) == 38
    assert data["dof_pos"].shape == (walk29.num_frames, 29) and data["local_body_pos"].shape == (
        walk29.num_frames,
        38,
        3,
    )
    np.testing.assert_array_equal(data["dof_pos"], walk29.dof_pos)
    rot_w = quat_to_matrix(walk29.root_quat_w)
    for i, name in enumerate(GMR_BODIES):
        if name in fk:
            expected = np.einsum("tji,tj->ti", rot_w, fk[name][0] - walk29.root_pos_w)
        elif name.endswith("toe_link"):  # GMR's marker 0.1 m ahead of and 2 cm below the ankle roll link
            ankle = name.replace("toe", "ankle_roll")
            ankle_w = fk[ankle][0] + quat_to_matrix(fk[ankle][1]) @ np.array([0.1, 0.0, -0.02])
            expected = np.einsum("tji,tj->ti", rot_w, ankle_w - walk29.root_pos_w)
        else:  # head_mocap: 0.4 m above the torso link
            head_w = fk["torso_link"][0] + quat_to_matrix(fk["torso_link"][1]) @ np.array([0.0, 0.0, 0.4])
            expected = np.einsum("tji,tj->ti", rot_w, head_w - walk29.root_pos_w)
        np.testing.assert_allclose(data["local_body_pos"][:, i], expected, atol=1e-12, err_msg=name)


def test_gmt_sample_round_trips_into_its_own_layout(tmp_path):
    sample = safe_load(GMT)
    report = convert_file(GMT, tmp_path / "again.pkl", ConvertConfig(to="gmr", robot="g1_23dof"))
    assert report.robot == "g1_23dof" and report.notes == ()
    with open(tmp_path / "again.pkl", "rb") as fh:
        out = pickle.load(fh)
    assert set(sample) <= set(out) and out["link_body_list"] == sample["link_body_list"]
    for key in ("root_pos", "root_rot", "dof_pos", "local_body_pos"):
        assert out[key].shape == sample[key].shape, key
    np.testing.assert_allclose(out["dof_pos"], sample["dof_pos"], atol=1e-7)
    np.testing.assert_allclose(
        out["root_rot"] / np.linalg.norm(out["root_rot"], axis=1, keepdims=True),
        sample["root_rot"] / np.linalg.norm(sample["root_rot"], axis=1, keepdims=True),
        atol=1e-6,
    )
    # Legs: the same kinematics as GMT's. (GMT's model puts its toe marker 3.5 cm below the ankle roll
    # link where GMR's g1_mocap_29dof.xml, which the writer follows, puts it 2 cm below.)
    for name in ("left_knee_link", "right_ankle_roll_link"):
        i = sample["link_body_list"].index(name)
        np.testing.assert_allclose(out["local_body_pos"][:, i], sample["local_body_pos"][:, i], atol=1e-5, err_msg=name)


def test_unitree_csv_reads_with_plain_loadtxt(tmp_path, walk29):
    path = write_motion(tmp_path / "walk.csv", walk29, G29, "csv")
    rows = np.loadtxt(path, delimiter=",")  # no header handling at all
    assert rows.shape == (walk29.num_frames, 36)
    np.testing.assert_array_equal(rows[:, 7:], walk29.dof_pos)  # Unitree's order is the URDF's
    np.testing.assert_array_equal(rows[:, 3:7], walk29.root_quat_w[:, [1, 2, 3, 0]])
    # BeyondMimic's csv_to_npz --frame_range skips rows: frame 10 is row 10.
    np.testing.assert_array_equal(np.loadtxt(path, delimiter=",", skiprows=10, max_rows=1), rows[10])


def test_protomotions_csv_round_trips_into_its_own_layout(tmp_path):
    options = FormatOptions(quat_order="wxyz", csv_fps=30.0)
    (loaded,) = read_motions(PROTOMOTIONS, "csv", options)
    out = write_motion(tmp_path / "again.csv", loaded.motion, loaded.robot, "csv", options)
    ours, theirs = np.loadtxt(out, delimiter=","), np.loadtxt(PROTOMOTIONS, delimiter=",")
    assert ours.shape == theirs.shape == (120, 36)
    np.testing.assert_array_equal(ours[:, [0, 1, 2, *range(7, 36)]], theirs[:, [0, 1, 2, *range(7, 36)]])
    np.testing.assert_allclose(ours[:, 3:7], theirs[:, 3:7], atol=1e-7)  # read quaternions are normalised


def test_asap_folder_mode_finds_every_clip(tmp_path):
    folder = tmp_path / "lib"
    src = asap_reference("kick_level1_filter")
    convert_file(src, folder / "kick_v1_5.pkl")
    with pytest.raises(MotionFileError, match="cuts the file name at the first dot.*kick_v1_5.pkl"):
        convert_file(src, folder / "kick_v1.5.pkl")
    assert sorted(p.name for p in folder.iterdir()) == ["kick_v1_5.pkl"]  # nothing half-written
    for f in folder.iterdir():  # ASAP folder mode: key = file name cut at the first dot
        clip = joblib.load(f)[f.name.split(".")[0]]
        assert clip["dof"].shape[1] == 23


def test_dialect_detection_and_refusals(tmp_path, walk29):
    assert detect_input_format(HOLOSOMA) == "holosoma"
    for fmt in ("beyondmimic", "mjlab"):
        path = write_motion(tmp_path / f"{fmt}.npz", walk29, G29, fmt)
        assert detect_input_format(path) == fmt
        data = {k: v for k, v in np.load(path).items() if k not in ("joint_names", "body_names", "metadata")}
        np.savez(tmp_path / f"bare_{fmt}.npz", **data)  # what BeyondMimic's and mjlab's own tools write
        with pytest.raises(MotionFileError, match="--from beyondmimic or --from mjlab"):
            detect_input_format(tmp_path / f"bare_{fmt}.npz")
        other = "mjlab" if fmt == "beyondmimic" else "beyondmimic"
        with pytest.raises(MotionFileError, match=f"it is not a {other} file"):  # a wrong --from is caught
            read_motions(tmp_path / f"bare_{fmt}.npz", other)
        (back,) = read_motions(tmp_path / f"bare_{fmt}.npz", fmt)  # --from settles it
        np.testing.assert_array_equal(back.motion.dof_pos, walk29.dof_pos)
        np.testing.assert_allclose(back.motion.root_pos_w, walk29.root_pos_w, atol=0)


def test_23dof_for_29dof_consumers_warns_and_keeps_the_legs(tmp_path):
    (loaded,) = read_motions(asap_reference("walk_level1_filter"))
    runner = CliRunner()
    out = runner.invoke(
        main, ["convert", str(asap_reference("walk_level1_filter")), "-o", str(tmp_path / "w.npz"), "--to", "mjlab"]
    )
    assert out.exit_code == 0, out.output
    assert "warning:" in out.output and "g1_29dof kinematics with 6 joints it lacks at zero" in out.output
    data = np.load(tmp_path / "w.npz")
    assert data["joint_pos"].shape[1] == 29 and np.all(
        data["joint_pos"][:, [MJLAB_JOINTS.index(n) for n in MJLAB_JOINTS if "wrist" in n]] == 0
    )
    ours = body_poses(loaded.motion, loaded.robot)
    # 30 → 50 Hz: every 5th output frame is every 3rd source frame; the legs of both URDFs agree.
    ankle = data["body_pos_w"][::5, MJLAB_BODIES.index("left_ankle_roll_link")]
    np.testing.assert_allclose(ankle, ours.pos_w[::3, ours.names.index("left_ankle_roll_link")], atol=1e-6)
    with pytest.raises(ConfigError, match="g1_29dof"):
        convert_file(
            asap_reference("walk_level1_filter"), tmp_path / "x.npz", ConvertConfig(to="beyondmimic", robot="g1_23dof")
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error", FormatNote)
        with pytest.raises(FormatNote, match="23-dof motion written for csv"):
            write_motion(tmp_path / "x.csv", loaded.motion, loaded.robot)


def test_convert_cli_output_option_and_input_guard(tmp_path):
    runner = CliRunner()
    src = tmp_path / "walk.pkl"
    src.write_bytes(asap_reference("walk_level1_filter").read_bytes())
    before = src.read_bytes()
    out = runner.invoke(main, ["convert", str(src), "-o", str(src)])
    assert out.exit_code == 1 and "the output is the input" in out.output and src.read_bytes() == before
    assert runner.invoke(main, ["convert", str(src), str(tmp_path / "a.npz")]).exit_code == 0  # older form
    out = runner.invoke(main, ["convert", str(src), str(tmp_path / "a.npz"), "-o", str(tmp_path / "b.npz")])
    assert out.exit_code == 2 and "two outputs" in out.output
    assert runner.invoke(main, ["convert", str(src)]).exit_code == 2
    out = runner.invoke(main, ["convert", str(tmp_path / "a.npz"), "-o", str(tmp_path / "h.npz"), "--to", "holosoma"])
    assert out.exit_code == 0 and np.load(tmp_path / "h.npz")["joint_pos"].shape[1] == 36, out.output


def test_batch_writes_clips_in_the_chosen_dialect(tmp_path):
    from test_batch_helpers import make_short_clips

    from retarget.batch import BatchOptions, run_batch
    from retarget.config import RetargetConfig

    src = make_short_clips(tmp_path / "src", 2)
    src[1] = src[1].rename(src[1].with_name("kick_v1.5.npz"))  # ASAP's folder mode would cut this name at the dot
    out = tmp_path / "out"
    options = BatchOptions(executor="inline", output_format="beyondmimic")
    result = run_batch(src, out, RetargetConfig(fps_out=50.0), options)
    assert [r.clip for r in result.records] == ["clip_00", "kick_v1_5"] and not result.failed
    assert result.export is not None and result.export.written == 2
    assert any("23-dof motion written for beyondmimic" in n for n in result.export.notes)
    for record in result.records:
        (asap,) = read_motions(out / record.output)
        assert joblib.load(out / "clips" / f"{record.clip}.pkl").keys() == {record.clip}  # folder-mode key
        data = np.load(out / "beyondmimic" / f"{record.clip}.npz")  # read as BeyondMimic does: by position
        assert data["fps"].tolist() == [50] and data["body_pos_w"].shape[1:] == (30, 3)
        ours = body_poses(asap.motion, asap.robot)
        for name in ("pelvis", "left_knee_link", "right_ankle_roll_link"):  # legs: same on both G1 URDFs
            np.testing.assert_allclose(
                data["body_pos_w"][:, BEYONDMIMIC_BODIES.index(name)], ours.pos_w[:, ours.names.index(name)], atol=1e-5
            )
    again = run_batch(src, out, RetargetConfig(fps_out=50.0), options)
    assert again.skipped == 2 and again.export is not None and again.export.written == 0


def test_batch_cli_format_option(tmp_path):
    from test_batch_helpers import make_short_clips

    make_short_clips(tmp_path / "src", 1)
    out = CliRunner().invoke(
        main,
        [
            "batch",
            str(tmp_path / "src"),
            "-o",
            str(tmp_path / "out"),
            "--executor",
            "inline",
            "--format",
            "gmr",
            "--quiet",
        ],
    )
    assert out.exit_code == 0, out.output
    assert "gmr files:" in out.output and "warning:" in out.output
    with open(tmp_path / "out" / "gmr" / "clip_00.pkl", "rb") as fh:
        data = pickle.load(fh)
    assert data["dof_pos"].shape[1] == 29 and data["fps"] == 30.0 and len(data["link_body_list"]) == 38
    stream = (tmp_path / "out" / "motion_library.pkl").read_bytes()
    assert b"numpy._core" not in stream  # the ASAP library loads under numpy 1.x as well
