"""The shared write and size guards on their own: atomic_write's refusals and OS errors, the size
limits and their overrides, the restricted unpickler's bounds, and the collection's one validation."""

from __future__ import annotations

import os
import pickle
import re
import resource
import signal
import stat
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import asap_reference, smpl_clip

from cli.main import main
from retarget.atomic_io import OutputFileError, atomic_write, reading_inputs
from retarget.errors import MotionFileError
from retarget.limits import MAX_ELEMENTS_ENV, MAX_FRAMES_ENV, Limits, current_limits
from retarget.readers.amass import read_amass_npz
from retarget.resample import resample_sequence
from retarget.safe_pickle import safe_load


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_atomic_write_replaces_a_regular_file_and_keeps_the_usual_mode(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    out.write_text("old")
    atomic_write(out, lambda tmp: tmp.write_text("new"))
    umask = os.umask(0)
    os.umask(umask)
    assert out.read_text() == "new" and stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory", "device"])
def test_atomic_write_refuses_what_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    target, out = tmp_path / "target.txt", tmp_path / "out.txt"
    target.write_text("keep")
    make = {
        "symlink": lambda: out.symlink_to(target),
        "fifo": lambda: os.mkfifo(out),
        "directory": out.mkdir,
        "device": lambda: os.mknod(out, stat.S_IFCHR | 0o600, os.makedev(1, 3)),
    }
    make[kind]()
    mode = out.lstat().st_mode
    with pytest.raises(OutputFileError, match="out.txt"):
        atomic_write(out, lambda tmp: tmp.write_text("new"))
    assert out.lstat().st_mode == mode and target.read_text() == "keep" and _leftovers(tmp_path) == []


def test_atomic_write_refuses_an_input_only_while_it_is_one(tmp_path: Path) -> None:
    src = tmp_path / "clip.pkl"
    src.write_bytes(b"source")
    os.link(src, tmp_path / "hardlink.pkl")
    with reading_inputs([src]):
        for out in (src, tmp_path / "hardlink.pkl"):
            with pytest.raises(OutputFileError, match="the output is the input"):
                atomic_write(out, lambda tmp: tmp.write_bytes(b"x"))
        atomic_write(tmp_path / "other.pkl", lambda tmp: tmp.write_bytes(b"x"))
    assert src.read_bytes() == b"source"
    atomic_write(src, lambda tmp: tmp.write_bytes(b"rewritten"))  # a library caller may rewrite its own files
    assert src.read_bytes() == b"rewritten"


def test_atomic_write_reports_a_full_disk_in_one_error_and_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "big.bin"
    out.write_bytes(b"previous")
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, hard))
    try:
        with pytest.raises(OutputFileError, match=r"big\.bin: cannot write: the file would exceed the file-size limit"):
            atomic_write(out, lambda tmp: tmp.write_bytes(b"\0" * 100_000))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old_handler)
    assert out.read_bytes() == b"previous" and _leftovers(tmp_path) == []


def test_frame_limit_has_one_default_and_an_override(monkeypatch: pytest.MonkeyPatch) -> None:
    seq = read_amass_npz(smpl_clip("kick_level1_filter"))
    monkeypatch.delenv(MAX_FRAMES_ENV, raising=False)
    assert current_limits().max_frames == Limits.max_frames == 200_000
    expected = int(np.floor((seq.num_frames - 1) / seq.fps * 3000 + 1e-9)) + 1
    monkeypatch.setenv(MAX_FRAMES_ENV, str(expected - 1))
    with pytest.raises(
        MotionFileError, match=rf"video_kick.*gives {expected} frames, more than the limit of {expected - 1}"
    ):
        resample_sequence(seq, 3000.0)
    monkeypatch.setenv(MAX_FRAMES_ENV, str(expected))
    assert resample_sequence(seq, 3000.0).num_frames == expected


def test_cli_flag_raises_or_lowers_the_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_FRAMES_ENV, "")  # restored after the test: the flag writes the environment
    result = CliRunner().invoke(
        main, ["--max-frames", "50", "retarget", str(smpl_clip("kick_level1_filter")), "-o", str(tmp_path / "out.pkl")]
    )
    assert result.exit_code == 1 and "more than the limit of 50" in result.stderr
    assert not (tmp_path / "out.pkl").exists()


@pytest.mark.parametrize("where", ["after the command name", "after the name, overriding the one before"])
def test_size_limit_flags_also_work_after_the_command_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    monkeypatch.setenv(MAX_FRAMES_ENV, "")  # restored after the test: the flag writes the environment
    monkeypatch.setenv(MAX_ELEMENTS_ENV, "")
    before = ["--max-frames", "1000000"] if "overriding" in where else []
    out = tmp_path / "out.pkl"
    args = [*before, "retarget", str(smpl_clip("kick_level1_filter")), "-o", str(out), "--max-frames", "50"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1 and "more than the limit of 50" in result.stderr and not out.exists()
    result = CliRunner().invoke(main, ["inspect", str(asap_reference("kick_level1_filter")), "--max-elements", "10"])
    assert result.exit_code == 1 and "the limit of 10;" in result.stderr and "--max-elements" in result.stderr


def test_pickled_arrays_count_against_the_element_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ref = asap_reference("kick_level1_filter")
    (clip,) = safe_load(ref).values()
    total = sum(np.asarray(v).size for v in clip.values() if isinstance(v, np.ndarray))
    monkeypatch.setenv(MAX_ELEMENTS_ENV, str(total))
    assert set(safe_load(ref)) == {ref.stem}
    monkeypatch.setenv(MAX_ELEMENTS_ENV, str(total - 1))
    with pytest.raises(MotionFileError, match=re.escape(f"{total:.3g} array elements")):
        safe_load(ref)


def test_shared_containers_count_each_time_they_are_reached(tmp_path: Path) -> None:
    row = [0.0] * 100
    fits, too_big = tmp_path / "fits.pkl", tmp_path / "too_big.pkl"
    fits.write_bytes(pickle.dumps({"a": [[row] * 100] * 100}))  # 1.01e6 items
    too_big.write_bytes(pickle.dumps({"a": [[row] * 100] * 1000}))  # 1.01e7 items
    assert len(safe_load(fits)["a"]) == 100
    with pytest.raises(MotionFileError, match=r"too_big\.pkl: expands to 1\.01e\+07 container items"):
        safe_load(too_big)


def test_extra_globals_widen_the_restricted_unpickler_by_exactly_those_names(tmp_path: Path) -> None:
    import collections
    import io

    from retarget.safe_pickle import UnsafePickleError, restricted_load

    counts = collections.defaultdict(list, {"q": [np.arange(3.0)]})
    data = pickle.dumps(counts)
    with pytest.raises(UnsafePickleError, match=r"res\.pkl.*collections\.defaultdict"):
        restricted_load(io.BytesIO(data), tmp_path / "res.pkl")
    asked: list[tuple[str, str]] = []

    def allow(module: str, name: str, obj: object):
        def resolve() -> object:
            asked.append((module, name))
            return obj

        return resolve

    extra = {
        ("collections", "defaultdict"): allow("collections", "defaultdict", collections.defaultdict),
        ("builtins", "list"): allow("builtins", "list", list),
        ("os", "getcwd"): allow("os", "getcwd", os.getcwd),  # allowed but never asked for: never resolved
    }
    loaded = restricted_load(io.BytesIO(data), tmp_path / "res.pkl", extra)
    assert type(loaded) is collections.defaultdict and loaded.default_factory is list
    np.testing.assert_array_equal(loaded["q"][0], [0.0, 1.0, 2.0])
    assert sorted(set(asked)) == [("builtins", "list"), ("collections", "defaultdict")]
    hostile = pickle.dumps(collections.defaultdict(os.getpid))  # a global outside the extras stays refused
    with pytest.raises(UnsafePickleError, match=r"os\.getpid|posix\.getpid"):
        restricted_load(io.BytesIO(hostile), tmp_path / "res.pkl", extra)


def test_collect_writes_only_what_delta_fit_reads(tmp_path: Path) -> None:
    from trainers.delta.collection import Trajectory, read_collection, write_collection

    num = 5
    traj = Trajectory(
        motion_id="walk",
        fps=50.0,
        root_pos_w=np.zeros((num, 3)),
        root_quat_w=np.tile([1.0, 0, 0, 0], (num, 1)),
        root_lin_vel_w=np.zeros((num, 3)),
        root_ang_vel_w=np.zeros((num, 3)),
        dof_pos=np.zeros((num, 23)),
        dof_vel=np.zeros((num, 23)),
        action=np.zeros((num, 23)),
        pd_target=np.zeros((num, 23)),
        phase=np.linspace(0, 1, num),
    )
    good = write_collection(tmp_path / "good.pkl", {"walk__0": traj})
    assert read_collection(good)["walk__0"].num_frames == num
    for bad in ({"fps": 0.0}, {"fps": float("nan")}, {"phase": np.full(num, np.nan)}):
        with pytest.raises(MotionFileError, match="bad.pkl: refusing to write entry 'walk__0'"):
            write_collection(tmp_path / "bad.pkl", {"walk__0": replace(traj, **bad)})
        assert not (tmp_path / "bad.pkl").exists()
