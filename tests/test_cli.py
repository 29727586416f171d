"""The command line end to end, on real clips and on bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import smpl_clip

from cli.main import main
from retarget.asap_pkl import read_motion_library

REPO = Path(__file__).resolve().parent.parent


def test_packages_resolve_to_this_project():
    import cli
    import retarget
    import robots

    for module in (cli, retarget, robots):
        assert Path(module.__file__).resolve().parent.parent == REPO, module


def test_retarget_one_clip(tmp_path):
    out = tmp_path / "walk.pkl"
    result = CliRunner().invoke(main, ["retarget", str(smpl_clip("walk_level1_filter")), "-o", str(out), "--fps", "50"])
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output and "mean matched-point distance" in result.output
    clip = read_motion_library(out)["walk"]  # keyed by the file name, as ASAP's folder mode looks it up
    assert clip["fps"] == 50 and clip["dof"].shape == (252, 23)


def test_batch_with_bad_inputs_keeps_going_and_lists_failures(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(smpl_clip("kick_level1_filter"), src / "good_kick.npz")
    (src / "truncated.npz").write_bytes(smpl_clip("walk_level1_filter").read_bytes()[:4000])
    with np.load(smpl_clip("squat_level1_filter")) as npz:
        data = {k: npz[k] for k in npz.files}
    data["poses"] = data["poses"].copy()
    data["poses"][10] = np.nan
    np.savez(src / "nan_frames.npz", **data)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["batch", str(src), "-o", str(out), "--executor", "inline", "--stage", "eval"])
    assert result.exit_code == 3  # finished, some clips failed
    assert "good_kick" in result.output and "truncated.npz" in result.output
    manifest = json.loads((out / "manifest.json").read_text())
    rows = manifest["clips"] if isinstance(manifest, dict) else manifest
    status = {c["clip"]: c for c in rows}
    assert status["good_kick"]["status"] == "ok"
    assert status["good_kick"]["metrics"]["eval.stance_tilt_deg"] < 1.0  # the eval stage ran
    assert status["truncated"]["status"] == "failed" and "truncated.npz" in status["truncated"]["error"]
    assert "NaN" in status["nan_frames"]["error"] and "frame 10" in status["nan_frames"]["error"]
    assert sorted(p.name for p in (out / "clips").glob("*.pkl")) == ["good_kick.pkl"]
    assert not list(out.rglob("*.tmp"))  # no half-written files left
    assert list(read_motion_library(out / "motion_library.pkl")) == ["good_kick"]


@pytest.mark.parametrize("executor", ["inline", "thread"])
def test_batch_warns_when_its_executor_cannot_enforce_the_timeout(tmp_path, executor):
    src = tmp_path / "src"
    src.mkdir()
    (src / "truncated.npz").write_bytes(smpl_clip("walk_level1_filter").read_bytes()[:4000])
    base = ["batch", str(src), "-o", str(tmp_path / "out"), "--executor", executor, "--workers", "1", "--quiet"]
    warned = CliRunner().invoke(main, [*base, "--timeout", "60"])
    assert warned.exit_code == 3, warned.output  # the bad clip still fails cleanly
    assert f"--timeout 60 is not enforced with --executor {executor}" in warned.output
    default = CliRunner().invoke(main, [*base, "--force"])  # the default limit is not a request: no warning
    assert default.exit_code == 3 and "not enforced" not in default.output


def test_bad_single_clip_exits_1_without_output(tmp_path):
    out = tmp_path / "x.pkl"
    bad = tmp_path / "bad.npz"
    bad.write_text("garbage")
    result = CliRunner().invoke(main, ["retarget", str(bad), "-o", str(out)])
    assert result.exit_code == 1 and "bad.npz" in result.output
    assert not out.exists()
    result = CliRunner().invoke(
        main, ["retarget", str(smpl_clip("kick_level1_filter")), "-o", str(out), "--robot", "h1"]
    )
    assert result.exit_code == 1 and "valid choices: g1_23dof, g1_29dof" in result.output
    assert not out.exists()


def test_inspect_official_and_malicious(tmp_path):
    from conftest import asap_reference

    result = CliRunner().invoke(main, ["inspect", str(asap_reference("walk_level1_filter"))])
    assert result.exit_code == 0 and "g1_23dof" in result.output and "ok" in result.output
    evil = tmp_path / "evil.pkl"
    evil.write_bytes(b"cos\nsystem\n(S'echo pwned'\ntR.")
    result = CliRunner().invoke(main, ["inspect", str(evil)])
    assert result.exit_code == 1 and "refusing to load" in result.output


def test_console_script_default_batch_on_motions_raw(tmp_path):
    """The README's first command: `asap-retarget batch` with no arguments, via the installed entry point."""
    exe = Path(sys.executable).parent / "asap-retarget"
    if not exe.exists():
        pytest.skip("console script not installed in this environment")
    proc = subprocess.run([str(exe), "batch"], cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "asap_retarget_out"
    assert str(out) in proc.stdout.replace("\n", "")
    assert "walk_level1" in proc.stdout and "squat_level1" in proc.stdout  # per-clip figures are printed
    library = read_motion_library(out / "motion_library.pkl")
    assert len(library) == len(list((REPO / "motions_raw").glob("*.npz"))) == 6


def test_retarget_writes_other_formats(tmp_path):
    from retarget.formats import read_motions

    clip = str(smpl_clip("kick_level1_filter"))
    pkl, npz = tmp_path / "kick.pkl", tmp_path / "kick.npz"
    assert CliRunner().invoke(main, ["retarget", clip, "-o", str(pkl)]).exit_code == 0
    result = CliRunner().invoke(main, ["retarget", clip, "-o", str(npz), "--format", "beyondmimic"])
    assert result.exit_code == 0, result.output
    (asap,), (bm,) = read_motions(pkl), read_motions(npz)
    assert bm.robot.name == "g1_29dof"  # BeyondMimic's G1; the 23-dof motion's wrists are zero
    columns = [bm.robot.joint_names.index(n) for n in asap.robot.joint_names]
    np.testing.assert_allclose(bm.motion.dof_pos[:, columns], asap.motion.dof_pos, atol=1e-6)
    np.testing.assert_allclose(bm.motion.root_pos_w, asap.motion.root_pos_w, atol=1e-6)
    bad = CliRunner().invoke(main, ["retarget", clip, "-o", str(tmp_path / "kick.txt")])
    assert bad.exit_code == 1 and "kick.txt" in bad.output and not (tmp_path / "kick.txt").exists()


def test_retarget_refuses_unwritable_output_names_before_reading_the_clip(tmp_path):
    unread = tmp_path / "unread.npz"
    unread.write_text("garbage")  # a load error naming this file would mean the clip was read first

    def refused(output: Path, *extra: str) -> str:
        result = CliRunner().invoke(main, ["retarget", str(unread), "-o", str(output), *extra])
        assert result.exit_code == 1, result.output
        assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
        return result.output

    message = refused(tmp_path / "kick_v1.5.pkl")  # ASAP's folder mode would look the clip up as 'kick_v1'
    assert "kick_v1.5.pkl" in message and "first dot" in message and "kick_v1_5.pkl" in message
    assert not (tmp_path / "kick_v1.5.pkl").exists()
    (tmp_path / "folder.pkl").mkdir()
    assert "is a folder" in refused(tmp_path / "folder.pkl")
    assert "the output is the input file" in refused(unread, "--format", "beyondmimic")
    assert unread.read_text() == "garbage"
