"""`asap-retarget eval`: table, JSON, our own .pkl files as well as ASAP's, and clean failures."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import SMPL_DIR, asap_reference

from cli.main import main
from retarget.asap_pkl import RobotMotion, motion_to_asap_dict, write_motion_library
from retarget.metrics import evaluate_library, replay_motion


def test_eval_scores_an_asap_reference_and_writes_json(tmp_path):
    out = tmp_path / "report.json"
    lib = asap_reference("walk_level1_filter")
    result = CliRunner().invoke(main, ["eval", str(lib), "--source", str(SMPL_DIR), "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "video_walk_level1_filter_amass" in result.output and "median" in result.output
    report = json.loads(out.read_text())
    (expected,) = evaluate_library(lib, SMPL_DIR)
    assert report["num_clips"] == 1
    assert report["clips"][0]["stance_tilt_deg"] == pytest.approx(expected.stance_tilt_deg)
    assert report["median"]["self_collision_frames"] == expected.self_collision_frames
    assert report["config"]["floating_threshold_m"] == 0.02


def _standing_tpose_npz(path, frames=40):
    """A motionless human in SMPL's rest pose, upright in the z-up world."""
    poses = np.zeros((frames, 72), dtype=np.float32)
    poses[:, 0] = np.pi / 2  # Rx(+90°): SMPL's y-up body stands up in the z-up world
    trans = np.tile(np.float32([0.0, 0.0, 0.9]), (frames, 1))
    np.savez(path, poses=poses, trans=trans, betas=np.zeros(16), gender="neutral", mocap_framerate=30.0)


def test_eval_scores_our_own_pkl(tmp_path, g1):
    frames = 40
    _standing_tpose_npz(tmp_path / "stand.npz", frames)
    probe = RobotMotion(
        "p", 30.0, np.zeros((1, 3)), np.array([[1.0, 0, 0, 0]]), np.zeros((1, g1.num_dof)), np.zeros((1, 24, 3))
    )
    root = np.zeros((frames, 3))
    root[:, 2] = -replay_motion(g1, probe).sole_points_w[..., 2].min() - 0.004  # 4 mm into the floor
    motion = RobotMotion(
        "stand",
        30.0,
        root,
        np.tile([1.0, 0, 0, 0], (frames, 1)),
        np.zeros((frames, g1.num_dof)),
        np.zeros((frames, 24, 3)),
    )
    lib = write_motion_library(tmp_path / "ours.pkl", {"stand": motion_to_asap_dict(motion, g1)})
    result = CliRunner().invoke(main, ["eval", str(lib), "--source", str(tmp_path), "--json", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    clip = json.loads((tmp_path / "r.json").read_text())["clips"][0]
    assert clip["stance_samples"] == 2 * frames
    assert clip["stance_sole_height_mm"] == pytest.approx(-4.0, abs=1e-3)  # float32 storage
    assert clip["penetration_mm"] == pytest.approx(4.0, abs=1e-3)
    assert clip["stance_tilt_deg"] == pytest.approx(0.0, abs=1e-3)


def test_eval_without_the_source_fails_cleanly(tmp_path):
    out = tmp_path / "report.json"
    lib = asap_reference("walk_level1_filter")
    result = CliRunner().invoke(main, ["eval", str(lib), "--source", str(tmp_path), "--json", str(out)])
    assert result.exit_code == 1
    assert "video_walk_level1_filter_amass.npz" in result.output
    assert not out.exists() and not list(tmp_path.iterdir())


def test_eval_of_a_corrupt_library_fails_cleanly(tmp_path):
    bad = tmp_path / "bad.pkl"
    bad.write_bytes(b"not a pickle")
    result = CliRunner().invoke(main, ["eval", str(bad), "--source", str(SMPL_DIR)])
    assert result.exit_code == 1
    assert "bad.pkl" in result.output
