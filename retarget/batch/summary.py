"""Totals and worst clips of a batch output folder, for `asap-retarget summary`.

Reads `manifest.json`; a batch that was killed before writing it is summarised from its
per-clip records instead (and says so).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from retarget.batch.library import MANIFEST_JSON, read_manifest, totals
from retarget.batch.record import RECORDS_DIR, ClipRecord, read_record
from retarget.errors import AsapRetargetError

DEFAULT_METRIC = "mean_match_error_mm"


class BatchSummaryError(AsapRetargetError):
    """The folder is not a batch output, or the requested metric does not exist."""


@dataclass(frozen=True)
class BatchSummary:
    out_dir: Path
    from_manifest: bool
    """False when the manifest was missing and the records were read instead."""
    totals: dict
    """clips, ok, failed, frames, duration_s [s of motion], seconds [s of worker time]."""
    metric: str
    metric_mean: float
    """Mean of `metric` over the ok clips that have it (nan when none)."""
    worst: list[ClipRecord] = field(default_factory=list)
    """Ok clips with the largest `metric`, worst first."""
    failures: list[ClipRecord] = field(default_factory=list)
    """Every failed clip, in clip-name order."""
    metric_names: tuple[str, ...] = ()
    """Metrics present in the records (for error messages and help)."""


_UNIT_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("_cm_s", "cm/s"),
    ("_mm_s", "mm/s"),
    ("_m_s", "m/s"),
    ("_mm", "mm"),
    ("_cm", "cm"),
    ("_m", "m"),
    ("_deg", "°"),
    ("_rad", "rad"),
    ("_hz", "Hz"),
    ("_pct", "%"),
    ("_s", "s"),
)
"""Unit suffixes of metric names (longest first: ``_cm_s`` before ``_s``) and how people write the unit."""


def metric_label(name: str) -> str:
    """A metric's name for people: words and the unit in brackets (``mean_match_error_mm`` → ``mean match error
    [mm]``, ``stance_slide_cm_s`` → ``stance slide [cm/s]``, ``seconds`` → ``time [s]``); the machine name stays
    the key in JSON, CSV and ``--metric``."""
    if name == "seconds":
        return "time [s]"
    for suffix, unit in _UNIT_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return f"{name[: -len(suffix)].replace('_', ' ')} [{unit}]"
    return name.replace("_", " ")


def load_records(out_dir: Path) -> tuple[list[ClipRecord], bool]:
    """The batch's records and whether they came from the manifest."""
    out_dir = Path(out_dir)
    manifest = read_manifest(out_dir)
    if manifest is not None:
        try:
            return [ClipRecord.from_json_dict(row) for row in manifest["clips"]], True
        except (KeyError, TypeError, ValueError, AttributeError):
            pass  # a damaged manifest: the per-clip records say the same
    read = [read_record(p) for p in sorted((out_dir / RECORDS_DIR).glob("*.json"))]
    records = [r for r in read if r is not None]
    if not records:
        if (out_dir / MANIFEST_JSON).exists():
            raise BatchSummaryError(
                f"{out_dir / MANIFEST_JSON}: not a batch manifest (expected an object with a "
                f"'clips' list) and no {RECORDS_DIR}/*.json to read instead; rerun the batch"
            )
        raise BatchSummaryError(f"{out_dir}: no {MANIFEST_JSON} and no {RECORDS_DIR}/*.json; not a batch output folder")
    return records, False


def _metric_value(record: ClipRecord, metric: str) -> float:
    if metric == "seconds":
        return record.seconds
    return record.metrics.get(metric, math.nan)


def summarize_batch(out_dir: Path, metric: str = DEFAULT_METRIC, top: int = 10) -> BatchSummary:
    records, from_manifest = load_records(out_dir)
    names = tuple(sorted({k for r in records for k in r.metrics} | {"seconds"}))
    ok = [r for r in records if r.ok]
    if ok and metric not in names:
        raise BatchSummaryError(f"{out_dir}: no metric {metric!r} in this batch; choose one of {', '.join(names)}")
    scored = [(v, r) for r in ok if math.isfinite(v := _metric_value(r, metric))]
    scored.sort(key=lambda vr: (-vr[0], vr[1].clip))
    mean = sum(v for v, _ in scored) / len(scored) if scored else math.nan
    return BatchSummary(
        out_dir=Path(out_dir),
        from_manifest=from_manifest,
        totals=totals(records),
        metric=metric,
        metric_mean=mean,
        worst=[r for _, r in scored[:top]],
        failures=sorted((r for r in records if not r.ok), key=lambda r: r.clip),
        metric_names=names,
    )
