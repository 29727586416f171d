"""ASAP .pkl: golden reading of the official files, our writer's invariants, the restricted unpickler."""

from __future__ import annotations

import os
import pickle

import joblib
import numpy as np
import pytest
from conftest import ASAP_KEY_PREFIX, ASAP_REF_DIR, smpl_clip

from retarget.asap_pkl import (
    asap_dict_to_motion,
    motion_to_asap_dict,
    read_motion_library,
    structural_problems,
    write_motion_library,
)
from retarget.errors import MotionFileError
from retarget.pipeline import retarget_file
from retarget.safe_pickle import UnsafePickleError, safe_load


def test_reader_loads_all_official_retargets():
    paths = sorted(ASAP_REF_DIR.glob("*.pkl"))
    assert len(paths) == 39
    for path in paths:
        library = read_motion_library(path)
        ((key, clip),) = library.items()
        assert key == path.stem and key.startswith(ASAP_KEY_PREFIX)
        assert structural_problems(clip) == []
        assert clip["pose_aa"].shape[1:] == (27, 3) and clip["dof"].shape[1] == 23
        assert clip["fps"] == 30
        # ASAP's ankle roll is exactly zero in every frame (a known defect of the official retargets).
        assert np.all(clip["dof"][:, [5, 11]] == 0)


@pytest.fixture(scope="module")
def walk_result():
    return retarget_file(smpl_clip("walk_level1_filter"))


def test_written_file_has_asap_schema_and_invariants(tmp_path, g1, walk_result):
    path = write_motion_library(tmp_path / "walk.pkl", {"walk": motion_to_asap_dict(walk_result.motion, g1)})
    # ASAP's own loader is joblib.load: the file must load with it unchanged.
    clip = joblib.load(path)["walk"]
    num = walk_result.motion.num_frames
    assert set(clip) == {"root_trans_offset", "pose_aa", "dof", "root_rot", "smpl_joints", "fps"}
    assert clip["root_trans_offset"].shape == (num, 3) and clip["root_trans_offset"].dtype == np.float32
    assert clip["pose_aa"].shape == (num, 27, 3) and clip["pose_aa"].dtype == np.float32
    assert clip["dof"].shape == (num, 23) and clip["dof"].dtype == np.float32
    assert clip["root_rot"].shape == (num, 4) and clip["root_rot"].dtype == np.float64
    assert clip["smpl_joints"].shape == (num, 24, 3) and clip["smpl_joints"].dtype == np.float32
    assert clip["fps"] == 30 and isinstance(clip["fps"], int)
    np.testing.assert_allclose(clip["pose_aa"][:, 1:24].sum(-1), clip["dof"], atol=1e-6)
    assert np.all(clip["pose_aa"][:, 24:] == 0)
    assert structural_problems(clip) == []
    # Round trip through the safe reader back to wxyz.
    back = asap_dict_to_motion("walk", read_motion_library(path)["walk"])
    np.testing.assert_allclose(back.root_quat_w, walk_result.motion.root_quat_w, atol=1e-12)
    np.testing.assert_allclose(back.dof_pos, walk_result.motion.dof_pos, atol=1e-6)


def test_non_integer_rate_is_written_as_is(tmp_path, g1, walk_result):
    from dataclasses import replace

    motion = replace(walk_result.motion, fps=29.97)
    clip = motion_to_asap_dict(motion, g1)
    assert clip["fps"] == pytest.approx(29.97)


def test_multi_clip_library(tmp_path, g1, walk_result):
    clips = {f"clip{i}": motion_to_asap_dict(walk_result.motion, g1) for i in range(3)}
    library = read_motion_library(write_motion_library(tmp_path / "lib.pkl", clips))
    assert list(library) == ["clip0", "clip1", "clip2"]


class _Exploit:
    def __reduce__(self):
        return (os.system, ("touch pwned_marker",))


def test_pickle_that_runs_code_is_refused(tmp_path):
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps({"clip": {"dof": _Exploit()}}))
    with pytest.raises(UnsafePickleError, match=r"evil.pkl: refusing to load: .*system"):
        read_motion_library(path)
    assert not (tmp_path / "pwned_marker").exists() and not os.path.exists("pwned_marker")


def test_object_array_in_joblib_file_is_refused(tmp_path):
    path = tmp_path / "objects.pkl"
    joblib.dump({"clip": {"dof": np.array([_Exploit()], dtype=object)}}, path)
    with pytest.raises(UnsafePickleError, match="object-dtype"):
        safe_load(path)


def test_truncated_and_malformed_libraries(tmp_path, g1, walk_result):
    good = write_motion_library(tmp_path / "good.pkl", {"walk": motion_to_asap_dict(walk_result.motion, g1)})
    truncated = tmp_path / "truncated.pkl"
    truncated.write_bytes(good.read_bytes()[:3000])
    with pytest.raises(MotionFileError, match="truncated.pkl: corrupt or truncated"):
        read_motion_library(truncated)
    clip = motion_to_asap_dict(walk_result.motion, g1)
    del clip["root_rot"]
    bad = write_motion_library(tmp_path / "missing.pkl", {"walk": clip})
    with pytest.raises(MotionFileError, match=r"missing.pkl: clip 'walk': missing keys \['root_rot'\]"):
        read_motion_library(bad)
    clip = motion_to_asap_dict(walk_result.motion, g1)
    clip["dof"] = clip["dof"] + 0.1  # no longer pose_aa's sum
    with pytest.raises(MotionFileError, match="differs from pose_aa"):
        read_motion_library(write_motion_library(tmp_path / "inconsistent.pkl", {"walk": clip}))


def test_written_files_get_the_usual_permissions(tmp_path, g1, walk_result):
    """Atomic writes go through a private temporary file; the result is readable like any new file."""
    mask = os.umask(0o022)
    try:
        path = write_motion_library(tmp_path / "perm.pkl", {"walk": motion_to_asap_dict(walk_result.motion, g1)})
    finally:
        os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o644
