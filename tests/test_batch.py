"""Batch runner: determinism across executors, skip/redo rules, bad input, crashes and timeouts."""

from __future__ import annotations

import gc
import io
import json
import os
import time
import weakref
from dataclasses import replace
from pathlib import Path

import joblib
import numpy as np
import pytest
from click.testing import CliRunner
from test_batch_helpers import MARKER_NAME, make_bad_clips, make_short_clips, output_bytes, tree_digest, without_times

from cli.batch_cmd import clip_rate_text
from cli.main import main as cli_main
from retarget.asap_pkl import motion_to_asap_dict, read_motion_library
from retarget.batch import BatchOptions, find_clips, run_batch
from retarget.batch.clip import StageResult
from retarget.batch.library import write_streamed_library
from retarget.config import RetargetConfig
from retarget.pipeline import retarget_file
from robots.registry import load_robot_spec

INLINE = BatchOptions(executor="inline")


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> list[Path]:
    return make_short_clips(tmp_path_factory.mktemp("src"), 4)


@pytest.fixture(scope="module")
def inline_out(clips, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("inline")
    run_batch(clips, out, RetargetConfig(), INLINE)
    return out


def test_batch_pkl_is_the_pipeline_output_byte_for_byte(clips, inline_out):
    # The runner adds nothing to a clip: its .pkl is joblib.dump of the pipeline's ASAP dict.
    result = retarget_file(clips[0])
    buffer = io.BytesIO()
    joblib.dump({"clip_00": motion_to_asap_dict(result.motion, load_robot_spec("g1_23dof"))}, buffer)
    assert (inline_out / "clips" / "clip_00.pkl").read_bytes() == buffer.getvalue()
    assert b"time" not in buffer.getvalue()  # no timestamps in the format


def test_process_pool_gives_identical_bytes_and_a_complete_manifest(clips, inline_out, tmp_path):
    seen = []
    result = run_batch(clips, tmp_path, RetargetConfig(), BatchOptions(workers=2), on_event=seen.append)
    assert output_bytes(tmp_path) == output_bytes(inline_out)
    assert len(output_bytes(tmp_path)) == len(clips) + 1
    assert without_times(tmp_path / "manifest.json") == without_times(inline_out / "manifest.json")
    assert [r.clip for r in result.records] == [p.stem for p in clips]
    assert sorted(e.finished for e in seen) == [1, 2, 3, 4] and seen[-1].frames == sum(r.frames for r in result.records)
    # Rates count clip work only: the workers' start-up (spawn, model build, warm-up) is its own step.
    first, last = seen[0], seen[-1]
    assert first.startup_s > 0 and first.work_s == pytest.approx(first.record.seconds, abs=0.05)
    assert last.startup_s + last.work_s == pytest.approx(last.elapsed_s, abs=1e-6)
    assert last.work_s <= sum(r.seconds for r in result.records) + 0.05
    assert clip_rate_text(last) == f"{last.frames / last.work_s:.0f}"
    # The streamed combined library holds exactly the per-clip libraries.
    library = read_motion_library(tmp_path / "motion_library.pkl")
    assert list(library) == sorted(p.stem for p in clips)
    for name, clip in library.items():
        single = read_motion_library(tmp_path / "clips" / f"{name}.pkl")[name]
        for key in ("root_trans_offset", "pose_aa", "dof", "root_rot", "smpl_joints"):
            np.testing.assert_array_equal(clip[key], single[key])
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["totals"]["ok"] == 4 and manifest["totals"]["failed"] == 0
    row = manifest["clips"][0]
    assert row["frames"] == row["source_frames"] == 12 and row["fps"] == 30.0
    assert 0 < row["metrics"]["mean_match_error_mm"] < 100
    assert row["config_digest"] == RetargetConfig().digest()
    csv_lines = (tmp_path / "manifest.csv").read_text().splitlines()
    assert len(csv_lines) == 5 and "metric.mean_match_error_mm" in csv_lines[0]


def test_thread_executor_gives_identical_bytes(clips, inline_out, tmp_path):
    # Two threads share one process's models and caches; each clip's output is still the inline one's.
    result = run_batch(clips, tmp_path, RetargetConfig(), BatchOptions(executor="thread", workers=2))
    assert output_bytes(tmp_path) == output_bytes(inline_out)
    assert [r.clip for r in result.records] == [p.stem for p in clips] and all(r.ok for r in result.records)


def _mtimes(out: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (out / "clips").glob("*.pkl")}


def test_rerun_skips_current_clips_and_redoes_what_changed(clips, inline_out, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    sources = [Path(src / p.name) for p in clips]
    for p, q in zip(clips, sources):
        q.write_bytes(p.read_bytes())
    out = tmp_path / "out"
    assert run_batch(sources, out, RetargetConfig(), INLINE).processed == 4
    before = _mtimes(out)
    time.sleep(0.01)
    again = run_batch(sources, out, RetargetConfig(), INLINE)
    assert (again.processed, again.skipped) == (0, 4) and _mtimes(out) == before
    # New source bytes for one clip: only that clip is redone.
    sources[1].write_bytes(clips[2].read_bytes())
    changed = run_batch(sources, out, RetargetConfig(), INLINE)
    assert changed.processed == 1 and changed.records[1].source_sha256 != again.records[1].source_sha256
    # A damaged output and a lost record are redone too.
    (out / "clips" / "clip_00.pkl").write_bytes(b"garbage")
    (out / "records" / "clip_03.json").unlink()
    repaired = run_batch(sources, out, RetargetConfig(), INLINE)
    assert repaired.processed == 2
    assert (out / "clips" / "clip_00.pkl").read_bytes() == (inline_out / "clips" / "clip_00.pkl").read_bytes()
    # Another config redoes all; --force redoes all.
    assert run_batch(sources, out, RetargetConfig(fps_out=25.0), INLINE).processed == 4
    assert run_batch(sources, out, RetargetConfig(fps_out=25.0), replace(INLINE, force=True)).processed == 4


def test_bad_inputs_are_reported_and_good_clips_done(tmp_path):
    src = tmp_path / "src"
    make_short_clips(src, 2)
    marker = tmp_path / MARKER_NAME
    expected = make_bad_clips(src, marker)
    before = tree_digest(src)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli_main, ["batch", str(src), "-o", str(out), "--workers", "2", "--quiet"])
    assert result.exit_code == 3, result.output
    assert not marker.exists()  # the malicious pickle never ran
    assert tree_digest(src) == before  # sources untouched
    rows = {r["clip"]: r for r in json.loads((out / "manifest.json").read_text())["clips"]}
    assert {k for k, r in rows.items() if r["status"] == "ok"} == {"clip_00", "clip_01"}
    for name, word in expected.items():
        assert rows[name]["status"] == "failed" and rows[name]["output"] is None
        assert str(src / f"{name}.npz") in rows[name]["error"] and word in rows[name]["error"], rows[name]["error"]
    assert sorted(p.name for p in (out / "clips").iterdir()) == ["clip_00.pkl", "clip_01.pkl"]
    assert list(read_motion_library(out / "motion_library.pkl")) == ["clip_00", "clip_01"]
    summary = CliRunner().invoke(cli_main, ["summary", str(out), "--json"])
    report = json.loads(summary.output)
    assert report["totals"]["ok"] == 2 and report["totals"]["failed"] == len(expected)
    assert [w["clip"] for w in report["worst"]][:2] and {f["clip"] for f in report["failures"]} == set(expected)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads chmod-000 files; the folder-named-.npz case covers it")
def test_unreadable_file_is_reported(tmp_path):
    src = tmp_path / "src"
    make_short_clips(src, 1)
    locked = src / "locked.npz"
    locked.write_bytes((src / "clip_00.npz").read_bytes())
    locked.chmod(0)
    try:
        result = run_batch(find_clips(src), tmp_path / "out", RetargetConfig(), INLINE)
    finally:
        locked.chmod(0o644)
    bad = [r for r in result.records if not r.ok]
    assert [r.clip for r in bad] == ["locked"] and "Permission denied" in bad[0].error


def crash_or_hang_stage(result, seq, config) -> StageResult:
    """A real fault for the isolation test: clip_01's worker dies, clip_02's hangs."""
    if result.motion.name == "clip_01":
        os._exit(7)
    if result.motion.name == "clip_02":
        time.sleep(120)
    return StageResult(metrics={"frames_seen": float(result.motion.num_frames)}, verdict="pass")


def test_worker_crash_and_timeout_fail_only_their_clip(clips, tmp_path):
    options = BatchOptions(workers=2, timeout_s=6.0, stages=(crash_or_hang_stage,))
    result = run_batch(clips, tmp_path, RetargetConfig(), options)
    status = {r.clip: r for r in result.records}
    assert status["clip_00"].ok and status["clip_03"].ok
    assert "worker process exited with code 7" in status["clip_01"].error
    assert "timed out after 6 s" in status["clip_02"].error
    # The stage hook's metric and verdict reach the manifest.
    row = json.loads((tmp_path / "records" / "clip_00.json").read_text())
    assert row["metrics"]["frames_seen"] == 12 and set(row["verdicts"].values()) == {"pass"}
    assert row["stages"] == [f"{__name__}.crash_or_hang_stage"]


def test_streamed_library_keeps_no_clip_alive(tmp_path):
    clip = read_motion_library(make_library_clip(tmp_path))
    ((_, template),) = clip.items()
    alive: list[weakref.ref] = []

    def clips():
        for i in range(5):
            gc.collect()
            assert all(ref() is None for ref in alive), "an earlier clip is still referenced"
            one = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in template.items()}
            alive.append(weakref.ref(one["dof"]))
            yield f"c{i}", one
            del one

    write_streamed_library(tmp_path / "lib.pkl", clips())
    library = read_motion_library(tmp_path / "lib.pkl")
    assert list(library) == [f"c{i}" for i in range(5)]
    np.testing.assert_array_equal(library["c4"]["dof"], template["dof"])


def make_library_clip(tmp_path: Path) -> Path:
    src = make_short_clips(tmp_path / "one", 1)
    run_batch(src, tmp_path / "one_out", RetargetConfig(), replace(INLINE, combined_library=False))
    return tmp_path / "one_out" / "clips" / "clip_00.pkl"


def test_summary_names_metrics_with_their_units(inline_out):
    from retarget.batch.summary import metric_label, summarize_batch

    assert metric_label("mean_match_error_mm") == "mean match error [mm]"
    assert metric_label("stance_slide_cm_s") == "stance slide [cm/s]"
    assert metric_label("stance_tilt_deg") == "stance tilt [°]"
    assert metric_label("seconds") == "time [s]"
    names = summarize_batch(inline_out).metric_names
    assert "mean_match_error_mm" in names and all("_" not in metric_label(n) for n in names), names
    out = CliRunner().invoke(cli_main, ["summary", str(inline_out)], terminal_width=200)
    assert out.exit_code == 0, out.output
    assert "mean match error [mm]: " in out.output and "mean_match_error_mm" not in out.output, out.output
    out = CliRunner().invoke(cli_main, ["summary", str(inline_out), "--metric", "seconds"], terminal_width=200)
    # The summary line, the table's title and one column (no second time column).
    assert out.exit_code == 0 and out.output.count("time [s]") == 3, out.output


def test_tables_print_units_in_brackets(inline_out):
    out = CliRunner().invoke(cli_main, ["inspect", str(inline_out / "clips" / "clip_00.pkl")], terminal_width=200)
    assert out.exit_code == 0 and "[s]" in out.output and "[deg]" in out.output, out.output  # headers may wrap
