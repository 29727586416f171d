"""Batch outputs built from the per-clip results: the combined library and the manifest.

The combined library is written as one joblib pickle *streamed* clip by clip: each clip is read
from its own `.pkl`, pickled, and dropped, so 10,000 clips never sit in memory together. The
pickler runs in pickle's "fast" mode (no memo), which is what makes dropping possible: a memo
would keep a reference to every object already written. The file is an ordinary dict
`{name: clip}` that `joblib.load` (ASAP's loader) and :func:`retarget.asap_pkl.read_motion_library`
read; only the memo opcodes differ from `joblib.dump` of the same dict.

The manifest (`manifest.json` and `manifest.csv`) has one row per source clip, in clip-name
order, whatever order the workers finished in.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from joblib.numpy_pickle import NumpyPickler

from retarget.asap_pkl import atomic_write, read_motion_library
from retarget.batch.record import ClipRecord, file_sha256, write_atomic

MANIFEST_JSON = "manifest.json"
MANIFEST_CSV = "manifest.csv"
COMBINED_LIBRARY_NAME = "motion_library.pkl"
_CSV_COLUMNS = (
    "clip",
    "status",
    "source",
    "source_sha256",
    "config_digest",
    "code_version",
    "output",
    "output_sha256",
    "frames",
    "fps",
    "duration_s",
    "source_frames",
    "source_fps",
    "seconds",
    "error",
)


class _ClipStream:
    """Marks an iterable of (name, clip) pairs to be pickled as one dict, lazily."""

    def __init__(self, items: Iterable[tuple[str, dict]]):
        self.items = items


class _StreamingPickler(NumpyPickler):
    dispatch = NumpyPickler.dispatch.copy()

    def _save_clip_stream(self, stream: _ClipStream) -> None:
        # EMPTY_DICT then one SETITEM per clip: what a dict pickles to, minus the batching.
        self.write(b"}")
        for name, clip in stream.items:
            self.save(name)
            self.save(clip)
            self.write(b"s")
            del clip  # or the loop variable keeps this clip alive while the next one loads

    dispatch[_ClipStream] = _save_clip_stream


def write_streamed_library(path: Path, clips: Iterable[tuple[str, dict]]) -> Path:
    """Write `{name: clip}` for the (name, clip) pairs, consuming them one at a time."""

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            pickler = _StreamingPickler(fh)
            pickler.fast = True  # no memo: nothing already written stays referenced
            pickler.dump(_ClipStream(clips))

    atomic_write(path, write)
    return path


def library_inputs_digest(records: Iterable[ClipRecord]) -> str:
    """Hash of the (name, output sha256) pairs a combined library is made of."""
    text = "\n".join(f"{r.clip} {r.output_sha256}" for r in records if r.ok)
    return hashlib.sha256(text.encode()).hexdigest()


def _clips_from(out_dir: Path, records: list[ClipRecord]) -> Iterator[tuple[str, dict]]:
    for record in records:
        if record.ok and record.output:
            yield from read_motion_library(out_dir / record.output).items()


def build_combined_library(out_dir: Path, records: list[ClipRecord], previous: dict | None) -> dict | None:
    """(Re)write `motion_library.pkl` from the ok clips unless the previous one is still current.

    `previous` is the manifest's earlier 'library' entry. Returns the new entry (None: no ok clip)."""
    ok = [r for r in records if r.ok]
    if not ok:
        return None
    path = out_dir / COMBINED_LIBRARY_NAME
    digest = library_inputs_digest(ok)
    current = previous and previous.get("inputs_digest") == digest and path.is_file()
    if current and previous is not None and file_sha256(path) == previous.get("sha256"):
        return previous
    write_streamed_library(path, _clips_from(out_dir, ok))
    return {"path": COMBINED_LIBRARY_NAME, "clips": len(ok), "inputs_digest": digest, "sha256": file_sha256(path)}


def totals(records: list[ClipRecord]) -> dict:
    ok = [r for r in records if r.ok]
    return {
        "clips": len(records),
        "ok": len(ok),
        "failed": len(records) - len(ok),
        "frames": sum(r.frames for r in ok),
        "duration_s": sum(r.duration_s for r in ok),
        "seconds": sum(r.seconds for r in records),
    }


def read_manifest(out_dir: Path) -> dict | None:
    """The manifest as written by :func:`write_manifest`, or None if it is missing or not one."""
    try:
        manifest = json.loads((Path(out_dir) / MANIFEST_JSON).read_text())
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) and isinstance(manifest.get("clips"), list) else None


def write_manifest(out_dir: Path, records: list[ClipRecord], header: dict) -> None:
    """`manifest.json` (header, totals, one entry per clip) and `manifest.csv` (one row per clip,
    metrics and verdicts flattened into `metric.<key>` and `verdict.<stage>` columns)."""
    payload = {**header, "totals": totals(records), "clips": [r.to_json_dict() for r in records]}
    text = json.dumps(payload, indent=1, sort_keys=True) + "\n"
    write_atomic(out_dir / MANIFEST_JSON, text)
    metric_keys = sorted({k for r in records for k in r.metrics})
    verdict_keys = sorted({k for r in records for k in r.verdicts})

    def write_csv(tmp: Path) -> None:
        with open(tmp, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(
                [*_CSV_COLUMNS, *(f"metric.{k}" for k in metric_keys), *(f"verdict.{k}" for k in verdict_keys)]
            )
            for r in records:
                row = r.to_json_dict()
                writer.writerow(
                    [("" if row[c] is None else row[c]) for c in _CSV_COLUMNS]
                    + [("" if row["metrics"].get(k) is None else row["metrics"][k]) for k in metric_keys]
                    + [r.verdicts.get(k, "") for k in verdict_keys]
                )

    atomic_write(out_dir / MANIFEST_CSV, write_csv)
