"""Batch outputs in a consumer's dialect: `<out>/<format>/<clip>.<ext>` next to the ASAP clips.

The batch's own store stays `clips/<clip>.pkl` (ASAP), which its records, resume rule and combined
`motion_library.pkl` are built on. With ``--format X`` (X ≠ asap) each ok clip is also written in
X by :func:`retarget.formats.write_motion`'s writers, from that `.pkl`, one clip in memory at a
time. BeyondMimic, mjlab, holosoma, GMR and Unitree CSV have no multi-clip file: their trainers take
one file per motion or a folder of them, so the folder `<out>/<format>/` is the library in those
dialects. A clip is (re)exported when it was processed in this run or its file is missing or older
than its `.pkl`; the file of a clip that failed is removed, like its `.pkl`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from retarget.batch.record import ClipRecord
from retarget.formats.base import DEFAULT_OPTIONS
from retarget.formats.registry import ROBOT_FORMATS, prepare_motion, read_motions

BATCH_FORMATS: tuple[str, ...] = tuple(ROBOT_FORMATS)
"""Formats a batch can write; 'asap' is the batch's own `clips/` folder."""


@dataclass(frozen=True)
class ExportResult:
    """What an export pass wrote."""

    folder: Path | None
    """`<out>/<format>`; None for 'asap' (the clips themselves)."""
    written: int
    notes: tuple[str, ...]
    """One line per kind of change the consumer needed (e.g. 23-dof clips widened to 29), not per clip."""


def export_path(out_dir: Path, fmt: str, clip: str) -> Path:
    return Path(out_dir) / fmt / f"{clip}{ROBOT_FORMATS[fmt].extension}"


def export_clips(out_dir: Path, records: Iterable[ClipRecord], fmt: str, processed: set[str]) -> ExportResult:
    """Write each ok clip of `records` in `fmt` (see the module docstring for which ones)."""
    if fmt == "asap":
        return ExportResult(None, 0, ())
    out_dir, written = Path(out_dir), 0
    notes: dict[str, str] = {}  # what changed → first clip it changed
    for record in records:
        target = export_path(out_dir, fmt, record.clip)
        if not record.ok or record.output is None:
            target.unlink(missing_ok=True)
            continue
        source = out_dir / record.output
        if record.clip not in processed and target.is_file() and target.stat().st_mtime_ns >= source.stat().st_mtime_ns:
            continue  # current: a run killed between a clip's .pkl and its export leaves an older file
        # One motion per clip, or two with `--stage controller --performed beside` (<clip>_performed).
        for loaded in read_motions(source, "asap"):
            motion, robot, changed = prepare_motion(loaded.motion, loaded.robot, fmt)
            for note in changed:  # "<clip>: <what>" → one line per <what>
                notes.setdefault(note.split(": ", 1)[-1], record.clip)
            name = loaded.motion.name
            ROBOT_FORMATS[fmt].write(
                target if name == record.clip else export_path(out_dir, fmt, name), motion, robot, DEFAULT_OPTIONS
            )
            written += 1
    lines = tuple(f"{what} (first: {clip})" for what, clip in notes.items())
    return ExportResult(out_dir / fmt, written, lines)
