"""The per-clip function every batch executor runs: source path in, `.pkl` bytes and a record out.

:func:`retarget_clip` is pure (same job, same bytes out), touches no output file and never raises
for a bad clip, so the same function runs inline, in a process pool worker or as a Ray task, and
the driver alone writes files. It hashes the source *before* reading it: if the file changes in
between, the recorded hash is the old one and the next run sees a mismatch and redoes the clip,
instead of trusting an output made from other bytes.

Extra stages (physics filters, evaluations) plug in as :data:`ClipStage` functions: each sees the
retargeted result and its SMPL source and may add metrics, a verdict, or replace the motion that gets
written (see :mod:`retarget.batch.stages`).
"""

from __future__ import annotations

import ast
import hashlib
import io
import os
import stat
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import joblib

from retarget.asap_pkl import RobotMotion, motion_to_asap_dict
from retarget.batch.record import CLIPS_DIR, STATUS_FAILED, STATUS_OK, ClipRecord, bytes_sha256, file_sha256
from retarget.config import RetargetConfig
from retarget.errors import AsapRetargetError
from retarget.pipeline import RetargetResult, retarget_sequence
from retarget.readers.source import load_clip
from retarget.smpl_sequence import SmplSequence
from robots.registry import load_robot_spec


@dataclass(frozen=True)
class StageResult:
    """What one extra stage says about a clip."""

    metrics: dict[str, float] = field(default_factory=dict)
    """Figures to add to the record's metrics (units in the key names)."""
    verdict: str | None = None
    """Short verdict, recorded under the stage's name (None: no verdict)."""
    motion: RobotMotion | None = None
    """A replacement motion to write instead of the retargeted one (e.g. a physics-filtered one)."""
    extra_motions: dict[str, RobotMotion] = field(default_factory=dict)
    """Further motions written beside it into the clip's library, by key (e.g. the motion a controller
    performed, next to the kinematic retarget)."""


ClipStage = Callable[[RetargetResult, SmplSequence, RetargetConfig], StageResult]
"""A module-level function (it must pickle by reference for worker processes and Ray)."""


def stage_name(stage: ClipStage) -> str:
    return f"{stage.__module__}.{stage.__qualname__}"


@dataclass(frozen=True)
class ClipJob:
    """One unit of batch work."""

    name: str
    """Clip name; also the key inside its `.pkl`."""
    source: str
    """Path of the AMASS-layout `.npz` clip (must be readable where the job runs)."""
    config: RetargetConfig
    code_version: str
    """The driver's `code_version()`; used only in records of clips whose worker died."""
    stages: tuple[ClipStage, ...] = ()
    source_sha256: str = ""
    """The driver's hash of the source, used only in records of clips whose worker died."""


@dataclass(frozen=True)
class ClipOutcome:
    record: ClipRecord
    pkl_bytes: bytes | None
    """The one-clip library to write to `clips/<name>.pkl`; None when the clip failed."""


def output_relpath(name: str) -> str:
    return f"{CLIPS_DIR}/{name}.pkl"


_DATA_PATTERNS = ("retarget/data/*", "robots/**/*.urdf")
_PACKAGES = ("retarget", "robots")


def _module_file(root: Path, dotted: str) -> Path | None:
    base = root.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _import_closure(root: Path, start: Path) -> set[Path]:
    """Project source files reachable from `start` through `retarget.*`/`robots.*` imports
    (function-level ones included), found by reading the code, not by what happens to be loaded."""
    seen: set[Path] = set()
    todo = [start]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            for name in names:
                parts = name.split(".")
                for i in range(1, len(parts) + 1):  # the package __init__ files run too
                    found = _module_file(root, ".".join(parts[:i])) if parts[0] in _PACKAGES else None
                    if found is not None:
                        todo.append(found)
    return seen


@cache
def code_version() -> str:
    """Package version plus a digest of the source this per-clip function runs (its project
    imports, followed through the code) and the robot files, so a rerun after editing the
    retargeting code redoes the clips, while editing an unrelated module redoes nothing."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        release = version("asap-retarget")
    except PackageNotFoundError:  # running from a source tree that was never installed
        release = "unknown"
    root = Path(__file__).resolve().parents[2]  # the source root, above retarget/batch/
    files = _import_closure(root, Path(__file__).resolve())
    files |= {p for pattern in _DATA_PATTERNS for p in root.glob(pattern) if p.is_file()}
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return f"{release}+{digest.hexdigest()[:12]}"


def warm_up(config: RetargetConfig) -> None:
    """Pay the per-process start-up costs (model compilation, solver caches) once per worker, on
    a tiny still clip, so no real clip's time or timeout includes them. Best effort: a real
    problem (e.g. a missing body model) is reported by each clip instead."""
    import numpy as np

    from retarget.smpl_sequence import SmplSequence

    still = SmplSequence(name="warm_up", pose_rotvec=np.zeros((4, 24, 3)), trans_w=np.zeros((4, 3)), fps=30.0)
    code_version()  # hash the code this worker has just loaded
    try:
        retarget_sequence(still, config)
    except Exception:  # noqa: BLE001, S110 -- best effort, see docstring
        pass


def dumps_library(clips: dict[str, dict]) -> bytes:
    """joblib bytes of a library, exactly what `joblib.dump` writes to a file (no timestamps)."""
    buffer = io.BytesIO()
    joblib.dump(clips, buffer)
    return buffer.getvalue()


def _base_record(job: ClipJob, status: str, **fields) -> ClipRecord:
    # An ok record names the code *this process* loaded: if the files changed after the driver
    # started, the next run sees the mismatch and redoes the clip instead of trusting it.
    return ClipRecord(
        clip=job.name,
        source=job.source,
        status=status,
        config_digest=job.config.digest(),
        code_version=code_version() if status == STATUS_OK else job.code_version,
        stages=tuple(stage_name(s) for s in job.stages),
        **fields,
    )


def failed_outcome(job: ClipJob, error: str, seconds: float = 0.0, source_sha256: str | None = None) -> ClipOutcome:
    sha = job.source_sha256 if source_sha256 is None else source_sha256
    return ClipOutcome(_base_record(job, STATUS_FAILED, error=error, source_sha256=sha, seconds=seconds), None)


def retarget_clip(job: ClipJob) -> ClipOutcome:
    """Retarget one clip and run its stages. Never raises for a bad clip or a bug in one."""
    start = time.perf_counter()
    source = Path(job.source)
    try:
        if not stat.S_ISREG(os.stat(source).st_mode):
            # A folder or a FIFO named like a clip: opening a FIFO would block until the timeout.
            kind = "a directory" if source.is_dir() else "not a regular file"
            return failed_outcome(job, f"{source}: is {kind}, expected a clip file", source_sha256="")
        sha = file_sha256(source)
    except OSError as exc:
        return failed_outcome(job, f"{source}: cannot read ({exc.strerror or exc})", source_sha256="")
    try:
        clip = load_clip(source, job.config.source)
        seq = clip.seq
        result = retarget_sequence(seq, job.config)
        motion = result.motion
        metrics = {
            "mean_match_error_mm": result.mean_match_error_mm,
            "max_match_error_mm": float(result.match_error_m.max() * 1000.0),
            "ik_iterations_mean": float(result.ik_iterations.mean()),
            "ground_offset_m": float(result.ground_offset_m),
            **(clip.floor.manifest_metrics() if clip.floor is not None else {}),
        }
        verdicts: dict[str, str] = {}
        extra: dict[str, RobotMotion] = {}
        for stage in job.stages:
            report = stage(result, seq, job.config)
            metrics.update(report.metrics)
            if report.verdict is not None:
                verdicts[stage_name(stage)] = report.verdict
            if report.motion is not None:
                motion = report.motion
            extra.update(report.extra_motions)
        robot = load_robot_spec(job.config.robot)
        clips = {job.name: motion_to_asap_dict(motion, robot)}
        clips.update({key: motion_to_asap_dict(m, robot) for key, m in extra.items()})
        data = dumps_library(clips)
    except AsapRetargetError as exc:
        return failed_outcome(job, str(exc), time.perf_counter() - start, sha)
    except Exception as exc:  # noqa: BLE001 -- a bug must not stop the batch; keep the trace for the report
        trace = traceback.format_exc(limit=4)
        message = f"{source}: internal error {type(exc).__name__}: {exc}\n{trace}"
        return failed_outcome(job, message, time.perf_counter() - start, sha)
    record = _base_record(
        job,
        STATUS_OK,
        source_sha256=sha,
        output=output_relpath(job.name),
        output_sha256=bytes_sha256(data),
        frames=motion.num_frames,
        fps=float(motion.fps),
        duration_s=(motion.num_frames - 1) / motion.fps,
        source_frames=seq.num_frames,
        source_fps=float(seq.fps),
        seconds=time.perf_counter() - start,
        metrics=metrics,
        verdicts=verdicts,
    )
    return ClipOutcome(record, data)
