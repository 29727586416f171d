"""Retarget a folder of clips: one `.pkl` per clip, a combined library, and a summary.

Each clip is processed by :func:`process_clip`, a pure function of (source file, config)
that writes its own output atomically and returns a :class:`ClipRecord`. A clip that fails
becomes a record with its error; the other clips go on. The summary (JSON and CSV) and the
resolved config are written beside the outputs.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from retarget.asap_pkl import motion_to_asap_dict, read_motion_library, write_motion_library, atomic_write
from retarget.config import RetargetConfig
from retarget.errors import AsapRetargetError, MotionFileError
from retarget.pipeline import retarget_file
from robots.registry import load_robot_spec

COMBINED_LIBRARY_NAME = "motion_library.pkl"
SUMMARY_JSON = "summary.json"
SUMMARY_CSV = "summary.csv"
CONFIG_JSON = "config.json"


@dataclass(frozen=True)
class ClipRecord:
    """One row of the batch summary."""

    clip: str
    source: str
    source_sha256: str
    output: str | None
    status: str
    """'ok' or 'failed'."""
    frames: int = 0
    fps: float = 0.0
    duration_s: float = 0.0
    seconds: float = 0.0
    """Wall time spent on the clip [s]."""
    mean_match_error_mm: float = float("nan")
    """Mean distance of the matched robot points from their scaled human targets [mm]."""
    max_match_error_mm: float = float("nan")
    ik_iterations_mean: float = float("nan")
    error: str | None = None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def find_clips(source_dir: Path) -> list[Path]:
    """All `.npz` clips under `source_dir`, sorted for a deterministic order."""
    if not source_dir.is_dir():
        raise MotionFileError(source_dir, "is not a directory of .npz clips")
    return sorted(p for p in source_dir.rglob("*.npz") if p.is_file())


def process_clip(source: Path, out_dir: Path, config: RetargetConfig) -> ClipRecord:
    """Retarget one clip into `out_dir/<stem>.pkl`. Never raises for a bad clip."""
    start = time.perf_counter()
    try:
        sha = file_sha256(source)
    except OSError as exc:
        sha = ""
        return ClipRecord(source.stem, str(source), sha, None, "failed", error=f"{source}: cannot read ({exc})")
    try:
        result = retarget_file(source, config)
        robot = load_robot_spec(config.robot)
        output = out_dir / f"{source.stem}.pkl"
        write_motion_library(output, {source.stem: motion_to_asap_dict(result.motion, robot)})
        motion = result.motion
        return ClipRecord(
            clip=source.stem,
            source=str(source),
            source_sha256=sha,
            output=str(output),
            status="ok",
            frames=motion.num_frames,
            fps=motion.fps,
            duration_s=(motion.num_frames - 1) / motion.fps,
            seconds=time.perf_counter() - start,
            mean_match_error_mm=result.mean_match_error_mm,
            max_match_error_mm=float(result.match_error_m.max() * 1000.0),
            ik_iterations_mean=float(result.ik_iterations.mean()),
        )
    except AsapRetargetError as exc:
        message = str(exc)
    except Exception as exc:  # a bug must not stop the batch; keep the trace for the report
        message = f"{source}: internal error {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"
    return ClipRecord(
        source.stem, str(source), sha, None, "failed", seconds=time.perf_counter() - start, error=message
    )


def write_summary(out_dir: Path, records: list[ClipRecord], config: RetargetConfig) -> None:
    rows = [dataclasses.asdict(r) for r in records]
    payload = {
        "config": config.to_dict(),
        "config_sha256": config.digest(),
        "clips": rows,
        "totals": {
            "clips": len(records),
            "ok": sum(r.status == "ok" for r in records),
            "failed": sum(r.status != "ok" for r in records),
            "frames": sum(r.frames for r in records),
        },
    }
    atomic_write(out_dir / SUMMARY_JSON, lambda tmp: tmp.write_text(json.dumps(payload, indent=2)))

    def _csv(tmp: Path) -> None:
        with open(tmp, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=[f.name for f in dataclasses.fields(ClipRecord)])
            writer.writeheader()
            writer.writerows(rows)

    atomic_write(out_dir / SUMMARY_CSV, _csv)
    atomic_write(
        out_dir / CONFIG_JSON, lambda tmp: tmp.write_text(json.dumps(config.to_dict(), indent=2, sort_keys=True))
    )


def write_combined_library(out_dir: Path, records: Iterable[ClipRecord]) -> Path | None:
    clips = {}
    for record in records:
        if record.status == "ok" and record.output:
            clips.update(read_motion_library(record.output))
    if not clips:
        return None
    return write_motion_library(out_dir / COMBINED_LIBRARY_NAME, clips)


def run_batch(
    sources: list[Path],
    out_dir: Path,
    config: RetargetConfig,
    on_record: Callable[[ClipRecord], None] | None = None,
) -> list[ClipRecord]:
    """Retarget every source clip; returns one record per clip in input order."""
    out_dir.mkdir(parents=True, exist_ok=True)
    load_robot_spec(config.robot)  # fail fast on an unknown robot, before any clip
    records = []
    for source in sources:
        record = process_clip(source, out_dir, config)
        records.append(record)
        if on_record is not None:
            on_record(record)
    write_combined_library(out_dir, records)
    write_summary(out_dir, records, config)
    return records
