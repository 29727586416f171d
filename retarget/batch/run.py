"""Retarget a folder of clips into per-clip `.pkl` files, a combined library and a manifest.

Output folder layout::

    clips/<clip>.pkl        one-clip ASAP library per clip (ASAP's directory mode: point it here)
    records/<clip>.json     per-clip record: source sha256, config digest, output sha256, metrics, error
    motion_library.pkl      all ok clips in one library (optional), streamed, never all in memory
    <format>/<clip>.<ext>   with output_format ≠ asap: each ok clip in that consumer's dialect
    manifest.json / .csv    one row per source clip, in clip-name order, plus totals
    config.json             the resolved config

Every clip goes through :func:`retarget.batch.clip.retarget_clip` in an executor (process pool,
Ray, or inline); only this driver writes files, each atomically, the `.pkl` before its record.
A rerun skips a clip whose record is ok and current (same source bytes, config digest, code
version and stages, intact `.pkl`) and redoes everything else, failed clips included; so a batch
killed at any moment resumes without corrupt files and without redoing finished clips.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from retarget.atomic_io import OutputFileError
from retarget.batch.clip import ClipJob, ClipOutcome, ClipStage, code_version, failed_outcome, retarget_clip, stage_name
from retarget.batch.export import BATCH_FORMATS, ExportResult, export_clips, export_path
from retarget.batch.library import (
    COMBINED_LIBRARY_NAME,
    MANIFEST_JSON,
    build_combined_library,
    read_manifest,
    write_manifest,
)
from retarget.batch.pool import BatchError, InlineExecutor, ProcessExecutor, ThreadExecutor
from retarget.batch.record import (
    CLIPS_DIR,
    RECORDS_DIR,
    STATUS_FAILED,
    ClipRecord,
    RunIdentity,
    file_sha256,
    is_current,
    read_record,
    record_to_json,
    write_atomic,
)
from retarget.batch.sources import discover_clips, retire_stale_outputs
from retarget.config import RetargetConfig
from retarget.errors import ConfigError
from retarget.folder_lock import FolderLock
from retarget.formats.asap import asap_clip_key
from robots.registry import load_robot_spec

__all__ = [
    "COMBINED_LIBRARY_NAME",
    "CONFIG_JSON",
    "EXECUTORS",
    "EXIT_SOME_FAILED",
    "MANIFEST_JSON",
    "BatchError",
    "BatchEvent",
    "BatchOptions",
    "BatchResult",
    "ClipRecord",
    "clip_names",
    "find_clips",
    "process_clip",
    "run_batch",
]

CONFIG_JSON = "config.json"
EXECUTORS = ("process", "thread", "ray", "inline")
UNTIMED_EXECUTORS = ("thread", "inline")
"""Executors that cannot enforce `BatchOptions.timeout_s`: a thread, or the calling process, cannot be stopped."""
EXIT_SOME_FAILED = 3
"""CLI exit code when the batch finished but at least one clip failed (1: the batch could not run)."""
LOCK_NAME = ".batch.lock"


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class BatchOptions:
    """How a batch runs (not what it computes: that is :class:`RetargetConfig` plus `stages`)."""

    workers: int = field(default_factory=available_cores)
    """Worker processes (process executor), threads (thread executor) or local Ray CPUs; default: all cores
    this process may use."""
    executor: str = "process"
    """'process' (spawned pool, crash-isolated), 'thread' (threads of this process: shared memory, no timeout),
    'ray' (Ray tasks) or 'inline' (this process; debugging)."""
    ray_address: str | None = None
    """Existing Ray cluster to join (e.g. 'auto', 'ray://head:10001'); None starts a local one."""
    timeout_s: float | None = 900.0
    """Per-clip wall-time limit [s]; the clip fails and its worker is killed. None: no limit."""
    force: bool = False
    """Redo every clip even when its record is current."""
    combined_library: bool = True
    """Also write `motion_library.pkl` with every ok clip."""
    stages: tuple[ClipStage, ...] = ()
    """Extra per-clip stages (filters, evals) run after retargeting, in order; module-level functions."""
    output_format: str = "asap"
    """Consumer dialect of the per-clip files (:data:`retarget.batch.export.BATCH_FORMATS`); other than
    'asap', each ok clip is also written to `<out>/<format>/` (:mod:`retarget.batch.export`)."""
    move_stale: bool = False
    """Outputs whose source is gone are moved into `stale/` instead of removed."""

    def __post_init__(self) -> None:
        if self.executor not in EXECUTORS:
            raise ConfigError(f"executor must be one of {', '.join(EXECUTORS)}; found {self.executor!r}")
        if self.workers < 1:
            raise ConfigError(f"workers must be at least 1, found {self.workers}")
        if self.timeout_s is not None and not self.timeout_s > 0:
            raise ConfigError(f"timeout_s must be positive or None, found {self.timeout_s}")
        if self.output_format not in BATCH_FORMATS:
            raise ConfigError(f"output_format must be one of {', '.join(BATCH_FORMATS)}; found {self.output_format!r}")


@dataclass(frozen=True)
class BatchEvent:
    """Progress after one clip: `kind` is 'done' (processed now) or 'skipped' (already current)."""

    kind: str
    record: ClipRecord
    total: int
    finished: int
    """Clips finished so far, skipped ones included."""
    failed: int
    skipped: int
    frames: int
    """Output frames of the clips processed (not skipped) so far in this run."""
    elapsed_s: float
    """Wall seconds since the batch started, worker start-up included."""
    work_s: float = 0.0
    """Wall seconds of clip work: since the first clip started in a worker (0 before any clip was processed).
    Rates are ``frames / work_s``: the one-time start-up (worker spawn, solver build) is :attr:`startup_s`."""
    startup_s: float = 0.0
    """Wall seconds from the batch's start to its first clip starting: worker start-up and the one-time solver
    build (0 before any clip was processed)."""


@dataclass(frozen=True)
class BatchResult:
    records: list[ClipRecord]
    """One per source, in input order."""
    processed: int
    skipped: int
    out_dir: Path
    library: Path | None
    export: ExportResult | None = None
    """The clips in the chosen consumer dialect (None: ASAP only)."""
    stale: tuple[str, ...] = ()
    """Clips whose source is gone: their outputs were removed (or moved into `stale/`)."""
    unwritten: tuple[str, ...] = ()
    """Outputs that could not be written (disk full, permissions), one line each; their clips count as failed."""

    @property
    def failed(self) -> list[ClipRecord]:
        return [r for r in self.records if not r.ok]


def find_clips(source_dir: Path) -> list[Path]:
    """Every clip file under `source_dir` (`*.npz`, and video-pose results: `*.pt`, `*.pkl`,
    `hps_track_*.npy`), sorted (see :func:`retarget.batch.sources.discover_clips`, which also lists the
    subfolders that could not be read)."""
    return discover_clips(source_dir).clips


def clip_names(sources: Sequence[Path]) -> list[str]:
    """Names from the paths relative to the sources' common folder: `a/b.npz` -> `a__b`; dots become
    underscores (`kick_v1.5.npz` -> `kick_v1_5`), since ASAP's folder mode cuts a file name at its
    first dot to find the clip (:func:`retarget.formats.asap.asap_clip_key`)."""
    if not sources:
        return []
    root = Path(os.path.commonpath([str(Path(s).absolute().parent) for s in sources]))
    return [asap_clip_key("__".join(Path(s).absolute().relative_to(root).with_suffix("").parts)) for s in sources]


def _commit(out_dir: Path, outcome: ClipOutcome) -> ClipRecord:
    record = outcome.record
    clip_path = out_dir / CLIPS_DIR / f"{record.clip}.pkl"
    if outcome.pkl_bytes is not None:
        write_atomic(clip_path, outcome.pkl_bytes)
    else:
        clip_path.unlink(missing_ok=True)  # a failed clip keeps no output from an older source
    write_atomic(out_dir / RECORDS_DIR / f"{record.clip}.json", record_to_json(record))
    return record


def process_clip(source: Path, out_dir: Path, config: RetargetConfig, name: str | None = None) -> ClipRecord:
    """Retarget one clip in this process into `out_dir` (batch layout). Never raises for a bad clip."""
    job = ClipJob(name or Path(source).stem, str(source), config, code_version())
    return _commit(Path(out_dir), retarget_clip(job))


def _remove_stale_temp_files(out_dir: Path) -> None:
    # `atomic_write` temp files (".<name>.<random>.tmp") left by a killed run; under the lock,
    # nobody else can be writing them.
    for folder in (out_dir, out_dir / CLIPS_DIR, out_dir / RECORDS_DIR):
        if folder.is_dir():
            for tmp in folder.glob(".*.tmp"):
                tmp.unlink(missing_ok=True)


def _executor(options: BatchOptions, config: RetargetConfig):
    if options.executor == "inline":
        return InlineExecutor(config)
    if options.executor == "thread":
        return ThreadExecutor(options.workers, config)
    if options.executor == "ray":
        from retarget.batch.ray import RayExecutor

        return RayExecutor(options.ray_address, options.workers, options.timeout_s)
    return ProcessExecutor(options.workers, options.timeout_s, config)


def run_batch(
    sources: Sequence[Path],
    out_dir: Path,
    config: RetargetConfig | None = None,
    options: BatchOptions | None = None,
    on_event: Callable[[BatchEvent], None] | None = None,
) -> BatchResult:
    """Retarget every source clip into `out_dir`, skipping clips already done with this config.

    `config` defaults to `RetargetConfig()`, `options` to `BatchOptions()` (all cores, process pool)."""
    config = RetargetConfig() if config is None else config
    options = BatchOptions() if options is None else options
    out_dir = Path(out_dir)
    load_robot_spec(config.robot)  # fail fast on an unknown robot, before any clip
    sources = [Path(s) for s in sources]
    names = clip_names(sources)
    out_dir.mkdir(parents=True, exist_ok=True)
    identity = RunIdentity(config.digest(), code_version(), tuple(stage_name(s) for s in options.stages))
    records: dict[int, ClipRecord] = {}  # by source index
    index_of = {name: i for i, name in reversed(list(enumerate(names)))}  # first source of each name
    counts = {"failed": 0, "skipped": 0, "frames": 0}
    start = time.monotonic()
    work_start: list[float] = []  # when the earliest processed clip started in its worker

    def emit(kind: str, index: int, record: ClipRecord) -> None:
        now = time.monotonic()
        records[index] = record
        counts["failed"] += not record.ok
        counts["skipped"] += kind == "skipped"
        counts["frames"] += record.frames if kind == "done" else 0
        if kind == "done" and record.seconds > 0:  # a clip's seconds exclude its worker's warm-up (pool.py)
            work_start[:] = [min([*work_start, max(start, now - record.seconds)])]
        if on_event is not None:
            event = BatchEvent(
                kind,
                record,
                len(sources),
                len(records),
                counts["failed"],
                counts["skipped"],
                counts["frames"],
                now - start,
                now - work_start[0] if work_start else 0.0,
                work_start[0] - start if work_start else 0.0,
            )
            on_event(event)

    def jobs() -> Iterator[ClipJob]:
        for i, (source, name) in enumerate(zip(sources, names)):
            job = ClipJob(name, str(source), config, identity.code_version, options.stages)
            if index_of[name] != i:
                first = sources[index_of[name]]
                message = f"{source}: clip name {name!r} is already used by {first}; rename one of them"
                emit("done", i, failed_outcome(job, message).record)
                continue
            try:  # never open a FIFO or folder here: the worker reports what it is
                sha = file_sha256(source) if source.is_file() else ""
            except OSError:
                sha = ""  # the worker reports why it cannot be read
            previous = read_record(out_dir / RECORDS_DIR / f"{name}.json")
            if not options.force and previous is not None and is_current(previous, sha, identity, out_dir):
                emit("skipped", i, replace(previous, source=str(source)))
                continue
            yield replace(job, source_sha256=sha)

    with FolderLock(out_dir, LOCK_NAME, "batch", BatchError):
        _remove_stale_temp_files(out_dir)
        config_text = json.dumps(config.to_dict(), indent=2, sort_keys=True) + "\n"
        write_atomic(out_dir / CONFIG_JSON, config_text)
        unwritten: list[str] = []
        processed: set[str] = set()
        for outcome in _executor(options, config).map_unordered(jobs()):
            try:
                record = _commit(out_dir, outcome)
            except OutputFileError as exc:  # disk full, read-only: the clip fails, the batch goes on
                unwritten.append(str(exc))
                record = replace(outcome.record, status=STATUS_FAILED, error=f"{outcome.record.source}: {exc}")
            emit("done", index_of[outcome.record.clip], record)
            processed.add(outcome.record.clip)
        in_order = [records[i] for i in range(len(sources))]
        ordered = sorted(in_order, key=lambda r: r.clip)
        fmt = options.output_format
        exported = [] if fmt == "asap" else [(fmt, export_path(out_dir, fmt, "x").suffix)]
        stale = retire_stale_outputs(out_dir, names, options.move_stale, exported)
        previous_manifest = read_manifest(out_dir) or {}
        library = None
        if options.combined_library:
            try:
                library = build_combined_library(out_dir, ordered, previous_manifest.get("library"))
            except OutputFileError as exc:
                unwritten.append(str(exc))
        header = {
            "config": config.to_dict(),
            "config_digest": identity.config_digest,
            "code_version": identity.code_version,
            "stages": list(identity.stages),
            "library": library,
            "format": options.output_format,
            "stale_removed": stale,
            "unwritten": unwritten,
        }
        export = None
        try:
            export = export_clips(out_dir, ordered, options.output_format, processed)
        except OutputFileError as exc:
            unwritten.append(str(exc))
        try:
            write_manifest(out_dir, ordered, header)
        except OutputFileError as exc:
            failed = sum(not r.ok for r in ordered)
            raise BatchError(
                f"{exc}; the batch ran ({len(ordered) - failed}/{len(ordered)} clips ok) but its manifest "
                f"could not be written, nor: {'; '.join(unwritten) or 'nothing else'}; free space and "
                "rerun the same command (finished clips are kept)"
            ) from exc
    return BatchResult(
        records=in_order,
        processed=len(records) - counts["skipped"],
        skipped=counts["skipped"],
        out_dir=out_dir,
        library=None if library is None else out_dir / COMBINED_LIBRARY_NAME,
        export=None if export is None or export.folder is None else export,
        stale=tuple(stale),
        unwritten=tuple(unwritten),
    )
