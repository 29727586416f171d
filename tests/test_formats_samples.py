"""The community's own sample files: they load with the right joints, on the floor, not mirrored."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import FIXTURES

from retarget.errors import MotionFileError
from retarget.formats import FormatOptions, detect_input_format, read_motions, write_motion
from retarget.formats.kinematics import body_poses, foot_check
from retarget.formats.registry import FormatNote
from retarget.safe_pickle import safe_load

SAMPLES = FIXTURES / "formats"
NPZ = SAMPLES / "beyondmimic_npz" / "sub3_largebox_003_mj.npz"
CSV = SAMPLES / "g1_csv" / "output_jumpjack.csv"
GMR = SAMPLES / "gmr_pkl" / "airkick_stand.pkl"

CASES = {
    "holosoma": (NPZ, FormatOptions(), "g1_29dof", 325, 50.0),
    "csv": (CSV, FormatOptions(quat_order="wxyz", csv_fps=30.0), "g1_29dof", 120, 30.0),
    "gmr": (GMR, FormatOptions(ground=True), "g1_23dof", 200, 29.887359198998748),
}


@pytest.mark.parametrize("fmt", list(CASES))
def test_sample_loads_on_the_floor_and_not_mirrored(fmt):
    path, options, robot, frames, fps = CASES[fmt]
    assert detect_input_format(path) == fmt
    (loaded,) = read_motions(path, options=options)
    assert loaded.robot.name == robot and loaded.motion.num_frames == frames and loaded.motion.fps == pytest.approx(fps)
    check = foot_check(loaded.motion, loaded.robot, frame=0)  # all three clips start standing
    assert check.left_of_right_m > 0.1  # left foot on the robot's left
    assert all(abs(h) < 0.02 for h in check.sole_height_m), check


def test_gmr_sample_as_stored_is_below_the_floor():
    # GMT lifts clips when loading; read as stored, the soles are 4.2 cm under the floor.
    (raw,) = read_motions(GMR)
    assert foot_check(raw.motion, raw.robot, 0).sole_height_m == pytest.approx((-0.0416, -0.0415), abs=1e-3)


def test_beyondmimic_sample_bodies_match_our_forward_kinematics():
    (loaded,) = read_motions(NPZ)
    ours = body_poses(loaded.motion, loaded.robot)
    data = np.load(NPZ)
    names = [str(n) for n in data["body_names"]]
    for i, name in enumerate(ours.names):
        if name not in names:
            continue
        theirs = names.index(name)
        dot = np.abs(np.sum(ours.quat_w[:, i] * data["body_quat_w"][:, theirs], axis=-1))
        assert np.all(1 - dot < 1e-9), name
        # Legs exact; holosoma's G1 places the waist roll joint 9 mm from the unitree_ros URDF.
        tol = 1e-6 if ("hip" in name or "knee" in name or "ankle" in name or name == "pelvis") else 0.011
        assert np.abs(ours.pos_w[:, i] - data["body_pos_w"][:, theirs]).max() < tol, name


def test_tracking_files_pass_the_forward_kinematics_check_with_margin(tmp_path):
    """The tolerance convert refuses bodies at, against the files that must pass: holosoma's own sample (another
    G1 model: its waist bodies 1 cm off) and our writer's files in each dialect (the same model: exact)."""
    from conftest import asap_reference

    from retarget.formats.tracking_checks import FK_ANGLE_TOLERANCE_RAD, FK_POSITION_TOLERANCE_M, body_pose_errors

    def errors(path):
        (loaded,) = read_motions(path)
        data = dict(np.load(path))
        names, error_m, error_rad = body_pose_errors(
            data, list(data["body_names"]), body_poses(loaded.motion, loaded.robot)
        )
        return len(names), float(error_m.max()), float(error_rad.max())

    count, error_m, error_rad = errors(NPZ)
    assert count == 51 and 0.009 < error_m < FK_POSITION_TOLERANCE_M / 2.5 and error_rad < FK_ANGLE_TOLERANCE_RAD / 1000
    (walk,) = read_motions(asap_reference("walk_level1_filter"))
    for dialect in ("beyondmimic", "mjlab", "holosoma"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FormatNote)
            path = write_motion(tmp_path / f"{dialect}.npz", walk.motion, walk.robot, dialect)
        count, error_m, error_rad = errors(path)
        assert count in (30, 51) and error_m < 1e-9 and error_rad < 1e-6, dialect


def test_gmr_sample_joint_order_matches_its_own_body_positions():
    (loaded,) = read_motions(GMR)
    from retarget.formats.gmr_pkl import local_body_positions

    names, local = local_body_positions(loaded.motion, loaded.robot)
    raw = safe_load(GMR)
    for link in ("left_knee_link", "left_ankle_roll_link", "right_knee_link", "right_ankle_roll_link"):
        theirs = raw["local_body_pos"][:, raw["link_body_list"].index(link)]
        assert np.abs(local[:, names.index(link)] - theirs).max() < 1e-5, link


def test_csv_sample_read_with_the_wrong_order_is_refused():
    with pytest.raises(MotionFileError, match="upside down in 100% of frames"):
        read_motions(CSV, options=FormatOptions(quat_order="xyzw", csv_fps=30.0))


@pytest.mark.parametrize(
    "fmt,ext",
    [
        ("asap", ".pkl"),
        ("beyondmimic", ".npz"),
        ("mjlab", ".npz"),
        ("holosoma", ".npz"),
        ("csv", ".csv"),
        ("gmr", ".pkl"),
    ],
)
def test_samples_survive_every_writer(tmp_path, fmt, ext):
    for src, options, *_ in CASES.values():
        (loaded,) = read_motions(src, options=options)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FormatNote)  # GMT's 23-dof sample is widened for 29-dof consumers
            out = write_motion(tmp_path / f"{src.stem}{ext}", loaded.motion, loaded.robot, fmt)
        (back,) = read_motions(out, fmt, FormatOptions(quat_order="xyzw", csv_fps=loaded.motion.fps))
        tol = 1e-6 if fmt == "asap" else 1e-12  # ASAP stores float32
        columns = [back.robot.joint_names.index(n) for n in loaded.robot.joint_names]
        np.testing.assert_allclose(back.motion.dof_pos[:, columns], loaded.motion.dof_pos, atol=tol, rtol=0)
        np.testing.assert_allclose(back.motion.root_pos_w, loaded.motion.root_pos_w, atol=tol, rtol=0)
        assert back.robot.name == (loaded.robot.name if fmt == "asap" else "g1_29dof")
