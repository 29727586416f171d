"""Which clips a batch has, and which outputs no longer have a source.

Discovery walks the source folder and lists the subfolders it cannot read instead of skipping
them silently. An output folder mirrors its source folder: after a rerun, a per-clip ``.pkl`` and
record whose source is gone are removed (or moved aside into ``stale/``), because ASAP's folder mode
would otherwise keep training on a clip the manifest and the combined library no longer list.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from retarget.batch.record import CLIPS_DIR, RECORDS_DIR
from retarget.errors import MotionFileError

CLIP_PATTERNS: tuple[str, ...] = ("*.npz", "*.pt", "*.pkl", "hps_track_*.npy")
"""Clip files a batch reads: AMASS clips, and the result files of video-pose estimators (GVHMR .pt,
WHAM .pkl, TRAM tracks)."""
STALE_DIR = "stale"
"""Where `--move-stale` puts outputs whose source is gone (`stale/clips`, `stale/records`)."""


@dataclass(frozen=True)
class ClipDiscovery:
    clips: list[Path]
    """Every clip file under the source folder, sorted (unreadable entries too: the batch reports them)."""
    unreadable: list[Path] = field(default_factory=list)
    """Subfolders that could not be listed (permissions): their clips are not in the batch."""


def discover_clips(source_dir: Path, patterns: tuple[str, ...] = CLIP_PATTERNS) -> ClipDiscovery:
    """Every file matching `patterns` under `source_dir`, and the subfolders that could not be read.
    A folder named like a clip (`x.npz`) that holds clips is not a clip itself; one that does not is
    kept, to be reported."""
    source_dir = Path(source_dir)
    if not source_dir.is_dir():
        raise MotionFileError(source_dir, "is not a directory of .npz clips")
    if not os.access(source_dir, os.R_OK | os.X_OK):
        raise MotionFileError(source_dir, "cannot be read (permission denied); fix its permissions")
    unreadable: list[Path] = []
    found: list[Path] = []
    holds_clips: set[Path] = set()
    for root, dirs, files in os.walk(source_dir, onerror=lambda exc: unreadable.append(Path(exc.filename))):
        here = Path(root)
        for name in dirs + files:
            if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns):
                found.append(here / name)
        if any(fnmatch.fnmatchcase(f, pattern) for f in files for pattern in patterns):
            holds_clips.update(here.parents)
            holds_clips.add(here)
    clips = sorted(p for p in found if p not in holds_clips or not p.is_dir())
    return ClipDiscovery(clips, sorted(unreadable))


def retire_stale_outputs(
    out_dir: Path, names: list[str], move: bool = False, exported: list[tuple[str, str]] | None = None
) -> list[str]:
    """Remove (or, with `move`, move into ``stale/``) `clips/<n>.pkl` and `records/<n>.json` of every clip
    name not in `names`, and its file in each `exported` (folder, extension) of a consumer dialect;
    returns those names, sorted."""
    keep = set(names)
    outputs = [(CLIPS_DIR, ".pkl"), (RECORDS_DIR, ".json"), *(exported or [])]
    stale = sorted(
        {
            p.name.removesuffix(suffix)
            for folder, suffix in outputs
            for p in (out_dir / folder).glob(f"*{suffix}")
            if not p.name.startswith(".") and p.name.removesuffix(suffix) not in keep
        }
    )
    for name in stale:
        for folder, suffix in outputs:
            path = out_dir / folder / f"{name}{suffix}"
            if not path.exists():
                continue
            if move:
                (out_dir / STALE_DIR / folder).mkdir(parents=True, exist_ok=True)
                shutil.move(path, out_dir / STALE_DIR / folder / path.name)
            else:
                path.unlink()
    return stale
