"""Helpers for the batch tests: short real clips (frame crops of the vendored SMPL clips), the bad
inputs a data engineer meets, and byte-level comparison of output folders. No tests here."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from pathlib import Path

import numpy as np
from conftest import smpl_clip

GOOD_CLIPS = ("walk_level1_filter", "kick_level1_filter", "squat_level1_filter", "CR7_level1_filter")
MARKER_NAME = "PWNED"


def write_crop(src: Path, dst: Path, start: int, frames: int, fps_scale: float = 1.0) -> Path:
    """A real clip cropped to `frames` frames from `start`; `fps_scale` relabels its rate (speed change)."""
    with np.load(src) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["poses"] = arrays["poses"][start : start + frames]
    arrays["trans"] = arrays["trans"][start : start + frames]
    arrays["mocap_framerate"] = np.asarray(float(arrays["mocap_framerate"]) * fps_scale)
    dst.parent.mkdir(parents=True, exist_ok=True)
    np.savez(dst, **arrays)
    return dst


def make_short_clips(folder: Path, count: int, frames: int = 12) -> list[Path]:
    """`count` short real clips named clip_00.npz..., varied in source, start and length. The starts cycle over
    eight offsets so every crop of up to 60 frames lies inside its source (the shortest, kick_level1, has 119
    frames): a crop past the end would be an empty, failing clip."""
    paths = []
    for i in range(count):
        src = smpl_clip(GOOD_CLIPS[i % len(GOOD_CLIPS)])
        length = frames + i % 3
        paths.append(write_crop(src, folder / f"clip_{i:02d}.npz", start=10 + 7 * (i % 8), frames=length))
        with np.load(paths[-1]) as written:
            assert len(written["poses"]) == length, f"{paths[-1]}: crop past the end of {src.name}"
    return paths


class _RunsShell:
    """Unpickling this calls os.system: what a malicious "motion file" would do."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def make_bad_clips(folder: Path, marker: Path) -> dict[str, str]:
    """Bad inputs in `folder`; returns {clip name: word the failure reason must contain}."""
    good = smpl_clip("walk_level1_filter")
    raw = good.read_bytes()
    (folder / "truncated.npz").write_bytes(raw[: len(raw) // 2])
    with np.load(good) as data:
        arrays = {k: data[k] for k in data.files}
    np.savez(folder / "wrong_shape.npz", **{**arrays, "poses": arrays["poses"][:20, :70]})
    nan_poses = arrays["poses"][:20].copy()
    nan_poses[5, 3] = np.nan
    np.savez(folder / "nan_frames.npz", **{**arrays, "poses": nan_poses, "trans": arrays["trans"][:20]})
    (folder / "a_folder.npz").mkdir()  # unreadable as a file, whoever runs the tests
    (folder / "malicious.npz").write_bytes(pickle.dumps(_RunsShell(marker)))
    os.mkfifo(folder / "a_fifo.npz")  # opening it would block: must be refused, not read
    return {
        "truncated": "truncated",
        "wrong_shape": "(T, 72)",
        "nan_frames": "NaN",
        "a_folder": "directory",
        "malicious": "pickle",
        "a_fifo": "not a regular file",
    }


def tree_digest(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder` (relative path -> digest); folders and FIFOs by kind."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if path.is_dir() or not path.is_file():
            out[rel] = "dir" if path.is_dir() else "special"
        else:
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def without_times(path: Path) -> object:
    """A manifest or record as JSON with the run-dependent fields (wall times, source paths) removed."""
    data = json.loads(path.read_text())

    def strip(node):
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k not in ("seconds", "source")}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    return strip(data)


def output_bytes(out_dir: Path) -> dict[str, str]:
    """Digests of the deterministic outputs: every clip .pkl and the combined library."""
    files = sorted((out_dir / "clips").glob("*.pkl")) + [out_dir / "motion_library.pkl"]
    return {str(p.relative_to(out_dir)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files if p.exists()}
