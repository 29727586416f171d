"""AMASS-layout reader: every layout variant, and every kind of bad input."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest
from conftest import smpl_clip

from retarget.errors import MotionFileError
from retarget.readers.amass import read_amass_npz

WALK = smpl_clip("walk_level1_filter")


def _real():
    with np.load(WALK) as npz:
        return {k: npz[k] for k in npz.files}


def _write(tmp_path, name="clip.npz", **arrays):
    path = tmp_path / name
    np.savez(path, **arrays)
    return path


def test_reads_real_video_clip():
    seq = read_amass_npz(WALK)
    assert seq.name == "video_walk_level1_filter_amass"
    assert seq.num_frames == 152 and seq.fps == 30.0
    assert seq.pose_rotvec.shape == (152, 24, 3) and seq.trans_w.shape == (152, 3)
    assert seq.gender == "neutral" and seq.model_type == "smpl" and seq.betas.shape == (16,)
    np.testing.assert_allclose(seq.pose_rotvec.reshape(152, 72), _real()["poses"], atol=0)


def test_smplh_drops_hands_and_keeps_body(tmp_path):
    real = _real()
    poses = np.zeros((152, 156), np.float32)
    poses[:, :66] = real["poses"][:, :66]
    poses[:, 66:] = 0.7  # finger rotations that must not leak into the SMPL hands
    seq = read_amass_npz(
        _write(
            tmp_path,
            poses=poses,
            trans=real["trans"],
            betas=np.zeros(16),
            gender=np.array(b"male"),
            mocap_frame_rate=np.array(59.94),
        )
    )
    assert seq.model_type == "smplh" and seq.gender == "male" and seq.fps == pytest.approx(59.94)
    np.testing.assert_array_equal(seq.pose_rotvec[:, :22].reshape(152, 66), real["poses"][:, :66])
    assert np.all(seq.pose_rotvec[:, 22:] == 0)


def test_smplx_full_and_split_layouts_agree(tmp_path):
    real = _real()
    poses = np.zeros((152, 165), np.float32)
    poses[:, :66] = real["poses"][:, :66]
    a = read_amass_npz(
        _write(tmp_path, "a.npz", poses=poses, trans=real["trans"], mocap_framerate=30, betas=np.ones(300))
    )
    b = read_amass_npz(
        _write(
            tmp_path,
            "b.npz",
            root_orient=real["poses"][:, :3],
            pose_body=real["poses"][:, 3:66],
            trans=real["trans"],
            mocap_frame_rate=30.0,
            gender="female",
        )
    )
    assert a.model_type == b.model_type == "smplx"
    assert a.betas.shape == (300,) and b.gender == "female"
    np.testing.assert_array_equal(a.pose_rotvec, b.pose_rotvec)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.pop("poses"), "missing pose keys"),
        (lambda d: d.pop("trans"), "missing key 'trans'"),
        (lambda d: d.pop("mocap_framerate"), "missing frame-rate key"),
        (lambda d: d.update(poses=d["poses"][:, :70]), r"'poses' must have shape"),
        (lambda d: d.update(trans=d["trans"][:-1]), r"'trans' must have shape \(152, 3\)"),
        (lambda d: d["poses"].__setitem__((40, 5), np.nan), "NaN or inf in 1 frame.*frame 40"),
        (lambda d: d["trans"].__setitem__((3, 2), np.inf), "'trans' has NaN or inf"),
        (lambda d: d.update(poses=d["poses"][:0], trans=d["trans"][:0]), "zero frames"),
        (lambda d: d.update(mocap_framerate=np.array(0)), "must be a positive number, found 0"),
    ],
)
def test_bad_content_is_named(tmp_path, mutate, message):
    data = _real()
    data["poses"] = data["poses"].copy()
    data["trans"] = data["trans"].copy()
    mutate(data)
    path = _write(tmp_path, **data)
    with pytest.raises(MotionFileError, match=message) as info:
        read_amass_npz(path)
    assert str(path) in str(info.value)


def test_truncated_and_non_npz_files(tmp_path):
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(WALK.read_bytes()[:5000])
    with pytest.raises(MotionFileError, match="truncated.npz: .*(corrupt|truncated|readable)"):
        read_amass_npz(truncated)
    text = tmp_path / "notes.npz"
    text.write_text("not a motion")
    with pytest.raises(MotionFileError, match="notes.npz"):
        read_amass_npz(text)
    with pytest.raises(MotionFileError, match="does not exist"):
        read_amass_npz(tmp_path / "missing.npz")


def test_pickled_objects_are_refused(tmp_path):
    data = _real()
    data["gender"] = np.array([{"a": 1}], dtype=object)
    path = tmp_path / "objects.npz"
    np.savez(path, **data)
    with pytest.raises(MotionFileError, match="pickled Python objects"):
        read_amass_npz(path)


def test_zip_with_broken_member(tmp_path):
    path = tmp_path / "broken.npz"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("poses.npy", b"\x93NUMPY garbage")
    with pytest.raises(MotionFileError, match="broken.npz"):
        read_amass_npz(path)
