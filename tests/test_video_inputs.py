"""Video-pose results in (GVHMR, WHAM, TRAM), made from the bundled real clips in each estimator's
saved layout (tests/video_results.py): joints recovered to float precision, people and frame gaps,
y-up worlds, bad input; and the clips usable wherever a clip is (batch, eval, render, convert)."""

from __future__ import annotations

import json
import os
import pickle
import sys
from collections import defaultdict

import joblib
import numpy as np
import pytest
import torch
from click.testing import CliRunner
from conftest import asap_reference, smpl_clip
from video_results import wham_entry, write_gvhmr, write_tram, write_wham

from cli.main import main
from retarget.metrics import find_source_clip
from retarget.readers.amass import read_amass_npz
from retarget.readers.source import SourceOptions, detect_clip_format, load_clip, read_tracks
from retarget.skeleton import smpl_forward_kinematics
from retarget.smpl_sequence import SmplSequence

RAW = SourceOptions(level_floor=False, smooth_hz=0)  # the file's own numbers: no floor levelling, no low-pass
FLOAT32_M = 2e-6  # float32 storage of positions of a few metres


def _joints(seq: SmplSequence) -> np.ndarray:
    return smpl_forward_kinematics(seq.pose_rotvec, seq.trans_w)[0]


@pytest.fixture(scope="module")
def walk() -> SmplSequence:
    return read_amass_npz(smpl_clip("walk_level1_filter"))


def test_gvhmr_smplx_and_smpl_recover_the_joints(tmp_path, walk):
    truth = _joints(walk)
    for smplx, model in ((True, "smplx"), (False, "smpl")):
        path = write_gvhmr(tmp_path / f"{model}_hmr4d_results.pt", walk, smplx=smplx)
        assert detect_clip_format(path) == "gvhmr"
        clip = load_clip(path, RAW)
        assert clip.seq.model_type == model and clip.seq.fps == 30.0
        assert np.abs(_joints(clip.seq) - truth).max() < FLOAT32_M


def test_y_up_is_explicit(tmp_path, walk):
    path = write_gvhmr(tmp_path / "hmr4d_results.pt", walk)
    as_z = load_clip(path, SourceOptions(level_floor=False, smooth_hz=0, up_axis="z")).seq
    head_z = _joints(as_z)[:, 15, 2]
    # Read as z-up, a y-up file stands the person on its back: the head is not above the pelvis.
    assert np.median(head_z - _joints(as_z)[:, 0, 2]) < 0.1
    upright = load_clip(path, RAW).seq
    assert np.median(_joints(upright)[:, 15, 2] - _joints(upright)[:, 0, 2]) > 0.4


def test_wham_two_people_default_longest_and_person_option(tmp_path, walk):
    n = walk.num_frames
    other = np.r_[20:60, 70:110]  # tracking lost for 10 frames
    path = write_wham(tmp_path / "wham_output.pkl", {3: wham_entry(walk, np.arange(n)), 7: wham_entry(walk, other)})
    assert sorted(read_tracks(path)) == [3, 7]
    clip = load_clip(path, RAW)
    assert any("person 3, the longest of 2 tracks" in note for note in clip.notes)
    assert np.abs(_joints(clip.seq) - _joints(walk)).max() < FLOAT32_M
    second = load_clip(path, SourceOptions(level_floor=False, smooth_hz=0, person=7))
    assert second.seq.num_frames == 110 - 20  # the gap is filled, so time runs at the video's rate
    assert any("filled 10 missing frame(s)" in note for note in second.notes)
    seen = np.isin(np.arange(20, 110), other)
    err = np.abs(_joints(second.seq) - _joints(walk)[20:110]).max(axis=(1, 2))
    assert err[seen].max() < FLOAT32_M
    assert 0.0 < err[~seen].max() < 0.25  # interpolated across 0.37 s of walking: a swinging foot


def test_gaps_are_filled_at_their_true_times(tmp_path, walk):
    """Every other frame kept: the filled clip has the source's length and its in-between frames are
    the slerp/lerp midpoints, close to the dropped frames; indices read as consecutive would play at
    double speed."""
    n = walk.num_frames - (walk.num_frames + 1) % 2
    kept = np.arange(0, n, 2)
    path = write_wham(tmp_path / "wham_output.pkl", {0: wham_entry(walk, kept)})
    seq = load_clip(path, SourceOptions(level_floor=False, smooth_hz=0, video_fps=walk.fps)).seq
    assert seq.num_frames == n and seq.duration_s == pytest.approx((n - 1) / walk.fps)
    err = np.abs(_joints(seq) - _joints(walk)[:n]).max(axis=(1, 2))
    assert err[kept].max() < FLOAT32_M
    assert np.median(err[1::2]) < 0.01


def test_wham_repeated_frames_keep_the_first(tmp_path, walk):
    frames = np.r_[0:50, 49, 50:80]
    entry = wham_entry(walk, np.r_[0:50, 50, 50:80])
    entry["frame_ids"] = frames
    clip = load_clip(write_wham(tmp_path / "wham_output.pkl", {0: entry}), RAW)
    assert clip.seq.num_frames == 80 and any("dropped 1 repeated" in note for note in clip.notes)
    assert np.abs(_joints(clip.seq) - _joints(walk)[:80]).max() < FLOAT32_M


def test_tram_track_file_and_folder_with_a_moving_camera(tmp_path, walk):
    n = walk.num_frames
    folder = write_tram(tmp_path / "results" / "walk", walk, {0: np.arange(n), 1: np.arange(30, 90)})
    assert detect_clip_format(folder) == "tram"
    assert find_source_clip("walk_track0", folder) == folder  # eval --source takes the folder as one clip
    clip = load_clip(folder, RAW)
    assert clip.seq.name == "walk_track0" and any("longest of 2" in note for note in clip.notes)
    assert np.abs(_joints(clip.seq) - _joints(walk)).max() < 1e-5  # float32 rotations compose with the camera
    one = load_clip(folder / "hps" / "hps_track_1.npy", RAW).seq
    assert one.name == "walk_track1" and np.abs(_joints(one) - _joints(walk)[30:90]).max() < 1e-5
    with pytest.raises(Exception, match="no person 2; tracks: 0 .*1 "):
        load_clip(folder, SourceOptions(person=2))


def test_inspect_lists_the_tracks(tmp_path, walk):
    path = write_wham(
        tmp_path / "wham_output.pkl", {0: wham_entry(walk, np.arange(40)), 5: wham_entry(walk, np.r_[0:30, 35:100])}
    )
    result = CliRunner().invoke(main, ["inspect", str(path)])
    assert result.exit_code == 0, result.output
    assert "5 (default)" in result.output and "95" in result.output and "smpl" in result.output


def _bad_inputs(tmp_path, walk):
    torch.save({"smpl_params_incam": {}}, tmp_path / "other.pt")
    joblib.dump({"clip": {"dof": np.zeros((3, 23))}}, tmp_path / "library.pkl")
    np.save(tmp_path / "hps_track_0.npy", {"pred_cam": torch.zeros(3)})
    empty = wham_entry(walk, np.arange(0))
    write_wham(tmp_path / "empty.pkl", {0: empty})
    write_wham(tmp_path / "two.pkl", {0: wham_entry(walk, np.arange(10)), 1: wham_entry(walk, np.arange(5))})
    return [
        ("other.pt", [], "not a GVHMR result"),
        ("library.pkl", [], "not a WHAM result"),
        ("hps_track_0.npy", [], "not a TRAM track"),
        ("empty.pkl", [], "track 0 is empty"),
        ("two.pkl", ["--person", "4"], "no person 4; tracks: 0 (10 frames), 1 (5 frames)"),
    ]


def test_bad_video_results_one_line_exit_1_nothing_written(tmp_path, walk):
    for name, extra, message in _bad_inputs(tmp_path, walk):
        out = tmp_path / f"{name.split('.')[0]}_out.pkl"  # no dot before .pkl: ASAP one-clip key
        result = CliRunner().invoke(main, ["retarget", str(tmp_path / name), "-o", str(out), *extra])
        assert result.exit_code == 1, (name, result.output)
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and message in lines[0] and name in lines[0], (name, result.output)
        assert not out.exists()
        assert "Traceback" not in result.output


def test_code_in_a_result_pickle_is_refused(tmp_path):
    class Evil:
        def __reduce__(self):
            return (os.system, ("touch pwned",))

    results = defaultdict(dict)
    results[0]["pose_world"] = Evil()
    with open(tmp_path / "wham_output.pkl", "wb") as fh:
        pickle.dump(results, fh)
    np.save(tmp_path / "hps_track_0.npy", {"pred_rotmat": Evil()})
    torch.save({"smpl_params_global": Evil()}, tmp_path / "hmr4d_results.pt")
    for name in ("wham_output.pkl", "hps_track_0.npy", "hmr4d_results.pt"):
        with pytest.raises(Exception, match="refusing to load"):
            load_clip(tmp_path / name)
    assert not (tmp_path / "pwned").exists() and not os.path.exists("pwned")


def test_eval_and_render_take_a_video_result_as_source(tmp_path):
    """ASAP's own retarget of a clip scored against the clip and against a GVHMR file of it: the same figures."""
    walk = read_amass_npz(smpl_clip("walk_level2_filter"))
    gvhmr = write_gvhmr(tmp_path / "walk_level2.pt", walk)
    library = asap_reference("walk_level2_filter")
    reports = []
    for source in (smpl_clip("walk_level2_filter"), gvhmr):
        out = tmp_path / f"{source.stem}.json"
        result = CliRunner().invoke(
            main, ["eval", str(library), "--source", str(source), "--json", str(out), "--smooth-hz", "0"]
        )
        assert result.exit_code == 0, result.output
        reports.append(json.loads(out.read_text())["clips"][0])
    for key in ("limb_direction_error_deg", "stance_sole_abs_height_mm", "stance_slide_cm_s"):
        assert reports[1][key] == pytest.approx(reports[0][key], rel=1e-4, abs=1e-4), key
    png = tmp_path / "still.png"
    result = CliRunner().invoke(
        main, ["render", str(library), "-o", str(png), "--source", str(gvhmr), "--width", "160", "--height", "120"]
    )
    assert result.exit_code == 0, result.output
    assert png.stat().st_size > 0


def test_batch_on_a_mixed_folder_and_convert(tmp_path):
    """AMASS, GVHMR, WHAM and TRAM side by side in one batch; the manifest carries the floor figures."""
    src = tmp_path / "src"
    src.mkdir()
    clip = read_amass_npz(smpl_clip("step_forward_back_level2_filter"))
    short = clip.with_frames(clip.pose_rotvec[:36], clip.trans_w[:36], clip.fps)
    np.savez(src / "amass.npz", poses=short.pose_rotvec.reshape(36, 72), trans=short.trans_w, mocap_framerate=30.0)
    write_gvhmr(src / "hmr4d_results.pt", short)
    write_wham(src / "wham_output.pkl", {0: wham_entry(short, np.arange(36))})
    write_tram(tmp_path / "tram", short, {0: np.arange(36)})
    (src / "tram_hps").mkdir()
    for name in ("camera.npy",):
        (src / name).write_bytes((tmp_path / "tram" / name).read_bytes())
    (src / "tram_hps" / "hps_track_0.npy").write_bytes((tmp_path / "tram" / "hps" / "hps_track_0.npy").read_bytes())
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["batch", str(src), "-o", str(out), "--executor", "inline", "--quiet"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    records = {r["clip"]: r for r in manifest["clips"]}
    assert set(records) == {"amass", "hmr4d_results", "wham_output", "tram_hps__hps_track_0"}
    frames = {r["frames"] for r in records.values()}
    assert frames == {36}
    for record in records.values():
        assert record["metrics"]["floor_correction_deg"] == 0.0 and "floor_tilt_deg" in record["metrics"]
    csv_out = tmp_path / "walk.csv"
    result = CliRunner().invoke(main, ["convert", str(src / "hmr4d_results.pt"), str(csv_out)])
    assert result.exit_code == 0, result.output
    assert "gvhmr → csv (retargeted)" in result.output and csv_out.stat().st_size > 0


def test_video_results_are_low_passed_by_default_and_mocap_is_not(tmp_path, walk):
    clip = load_clip(write_gvhmr(tmp_path / "hmr4d_results.pt", walk))
    assert any("low-passed at 6 Hz" in note for note in clip.notes)
    moved = np.linalg.norm(_joints(clip.seq) - _joints(walk), axis=-1)
    assert 0.0 < np.median(moved) < 0.002
    amass = load_clip(smpl_clip("walk_level1_filter"))
    assert not any("low-passed" in note for note in amass.notes)


def test_without_torch_the_message_says_what_to_install(tmp_path, walk, monkeypatch):
    path = write_gvhmr(tmp_path / "hmr4d_results.pt", walk)
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises ImportError
    result = CliRunner().invoke(main, ["retarget", str(path), "-o", str(tmp_path / "out.pkl")])
    assert result.exit_code == 1 and "pip install torch==2.13.0" in result.output and str(path) in result.output
