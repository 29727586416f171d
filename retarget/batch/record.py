"""The per-clip record of a batch: what was done to which source, with which config, and how it went.

A record is the batch's commit point. The runner writes the clip's `.pkl` first and its record
second, both atomically; a clip counts as done only when its record says `ok`, names the same
source content (sha256), config digest, code version and stages as the current run, and the
`.pkl` beside it still has the sha256 the record names. Anything else is redone.

Records are plain JSON (never pickles) so a manifest or a later stage can read them safely.
Later filter/eval stages extend a record through its open `metrics` and `verdicts` fields.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from retarget.atomic_io import atomic_write

STATUS_OK = "ok"
STATUS_FAILED = "failed"
CLIPS_DIR = "clips"
"""Per-clip `.pkl` files, one-clip libraries (point ASAP's directory mode here)."""
RECORDS_DIR = "records"
"""Per-clip JSON records, one per source clip."""


@dataclass(frozen=True)
class ClipRecord:
    """One row of the batch manifest."""

    clip: str
    """Clip name: the source path relative to the batch root, without `.npz`, `/` replaced by `__`."""
    source: str
    """Source file as given to the batch."""
    status: str
    """'ok' or 'failed'."""
    error: str | None = None
    """Why the clip failed (names the file and the problem); None when ok."""
    source_sha256: str = ""
    """sha256 of the source file's bytes as read for this result ('' when unreadable)."""
    config_digest: str = ""
    """`RetargetConfig.digest()` of the config the clip was retargeted with."""
    code_version: str = ""
    """asap-retarget version + digest of the code that made the output (see `retarget.batch.clip.code_version`)."""
    stages: tuple[str, ...] = ()
    """Qualified names of the extra per-clip stages (filters, evals) that ran after retargeting."""
    output: str | None = None
    """The clip's `.pkl`, relative to the batch output folder; None when failed."""
    output_sha256: str | None = None
    """sha256 of the `.pkl` bytes."""
    frames: int = 0
    """Output frames."""
    fps: float = 0.0
    """Output frame rate [Hz]."""
    duration_s: float = 0.0
    """Output duration, first to last frame [s]."""
    source_frames: int = 0
    source_fps: float = 0.0
    """Source frame rate [Hz]."""
    seconds: float = 0.0
    """Wall time spent on the clip in its worker [s] (the one field that differs between runs)."""
    metrics: dict[str, float] = field(default_factory=dict)
    """Open set of per-clip figures: the retargeting's own (match error, IK iterations, ...) and
    any added by later stages. Units are in the key names."""
    verdicts: dict[str, str] = field(default_factory=dict)
    """Per stage name, that stage's verdict on the clip (e.g. 'pass', 'reject: floating')."""

    @property
    def ok(self) -> bool:
        return self.status == STATUS_OK

    def to_json_dict(self) -> dict[str, Any]:
        row = dataclasses.asdict(self)
        row["stages"] = list(self.stages)
        row["metrics"] = {k: _json_float(v) for k, v in sorted(self.metrics.items())}
        row["verdicts"] = dict(sorted(self.verdicts.items()))
        return row

    @classmethod
    def from_json_dict(cls, row: dict[str, Any]) -> ClipRecord:
        names = {f.name for f in dataclasses.fields(cls)}
        kwargs = {k: v for k, v in row.items() if k in names}
        kwargs["stages"] = tuple(kwargs.get("stages") or ())
        kwargs["metrics"] = {k: (math.nan if v is None else float(v)) for k, v in (row.get("metrics") or {}).items()}
        kwargs["verdicts"] = {k: str(v) for k, v in (row.get("verdicts") or {}).items()}
        return cls(**kwargs)


def _json_float(value: float) -> float | None:
    # JSON has no NaN; a missing figure is null.
    value = float(value)
    return value if math.isfinite(value) else None


def record_to_json(record: ClipRecord) -> str:
    """Stable text: sorted keys, so identical records are identical bytes."""
    return json.dumps(record.to_json_dict(), indent=1, sort_keys=True) + "\n"


def read_record(path: Path) -> ClipRecord | None:
    """The record at `path`, or None if it is missing or unreadable (the clip is then redone)."""
    try:
        return ClipRecord.from_json_dict(json.loads(Path(path).read_text()))
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write `data` to `path` through a temporary file and a rename, with ordinary permissions."""
    payload = data.encode() if isinstance(data, str) else data

    atomic_write(path, lambda tmp: tmp.write_bytes(payload))


def bytes_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class RunIdentity:
    """What must match for an earlier clip result to count as current."""

    config_digest: str
    code_version: str
    stages: tuple[str, ...]

    def matches(self, record: ClipRecord) -> bool:
        return (record.config_digest, record.code_version, tuple(record.stages)) == (
            self.config_digest,
            self.code_version,
            self.stages,
        )


def is_current(record: ClipRecord | None, source_sha256: str, identity: RunIdentity, out_dir: Path) -> bool:
    """True when `record` is a finished, intact result for this source content and this run."""
    if record is None or not record.ok or record.output is None or record.source_sha256 != source_sha256:
        return False
    if not identity.matches(record):
        return False
    try:
        return file_sha256(out_dir / record.output) == record.output_sha256
    except OSError:
        return False
