"""Motion sources of the downstream benchmark: each turns one SMPL clip into a one-clip G1 motion library.

A source is one registry entry (:data:`SOURCES`): a name, a one-line description and a function
``prepare(clip_npz, out_dir) -> library.pkl``. The benchmark trains the same tracker on each source's
library and scores every policy against the same human clip, so adding a source (a new retargeter, the
physics-cleaned output of a controller) is one entry here.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_data

from retarget.asap_pkl import motion_to_asap_dict, write_motion_library
from retarget.errors import AsapRetargetError, MotionFileError
from robots.registry import load_robot_spec

ASAP_PREFIX = "0-motions_raw_tairantestbed_smpl_"


class SourceUnavailable(AsapRetargetError):
    """A registered source that cannot produce a library (not built yet, or its input is missing)."""


@dataclass(frozen=True)
class MotionSource:
    """One way of turning a human clip into a robot motion library."""

    name: str
    """Registry key, used on the command line and in run folder names."""
    description: str
    """What the library holds, for the table's legend."""
    prepare: Callable[[Path, Path], Path]
    """(source .npz, output folder) -> path of the one-clip library the tracker trains on."""


def _asap_official(clip_npz: Path, out_dir: Path) -> Path:
    # Used in place: the file's hash in the summary is then the official file's own.
    path = (bench_data.ASAP_REFERENCE_DIR / f"{ASAP_PREFIX}{clip_npz.stem}.pkl").resolve()
    if not path.exists():
        raise SourceUnavailable(f"{path}: no official ASAP retarget of {clip_npz.stem}")
    return path


def _ours(clip_npz: Path, out_dir: Path) -> Path:
    """The per-clip file `asap-retarget batch` writes with its default config."""
    from retarget.batch import process_clip
    from retarget.config import RetargetConfig

    record = process_clip(clip_npz, out_dir / "batch", RetargetConfig(), name=clip_npz.stem)
    if not record.ok:
        raise MotionFileError(clip_npz, f"retargeting failed: {(record.error or '?').splitlines()[0]}")
    return out_dir / "batch" / "clips" / f"{clip_npz.stem}.pkl"


def _gmr_style(clip_npz: Path, out_dir: Path) -> Path:
    from baseline_gmr import GmrBaseline

    baseline = GmrBaseline()
    motion = baseline.retarget_file(clip_npz).motion
    path = out_dir / "gmr" / f"{clip_npz.stem}.pkl"
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_motion_library(path, {clip_npz.stem: motion_to_asap_dict(motion, load_robot_spec("g1_23dof"))})


def _controller(clip_npz: Path, out_dir: Path) -> Path:
    """The motion the controller layer's simulated G1 performed while tracking our retarget (`perform_clip`)."""
    from retarget.controller import perform_clip

    path = out_dir / "controller" / f"{clip_npz.stem}.pkl"
    if path.exists():  # deterministic but slow (sampling MPC): made once per results folder
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    result = perform_clip(clip_npz, path)
    if result.motion is None:
        raise SourceUnavailable(f"{clip_npz}: the controller layer rejected this clip; no performed motion to train on")
    kept, total = result.verdict.kept_ranges[0], result.verdict.num_frames
    if kept != (0, total):  # a trimmed motion would be scored against the wrong human frames
        path.unlink()
        raise SourceUnavailable(
            f"{clip_npz}: the controller layer kept frames {kept[0]}-{kept[1]} of {total} only; "
            "the benchmark compares whole clips"
        )
    return path


SOURCES: dict[str, MotionSource] = {
    s.name: s
    for s in (
        MotionSource("asap", "official ASAP/PHC retarget (bench_data.ASAP_REFERENCE_DIR)", _asap_official),
        MotionSource("ours", "this project's kinematic retarget (`batch` defaults)", _ours),
        MotionSource("gmr", "GMR-style per-frame IK (bench/baseline_gmr.py)", _gmr_style),
        MotionSource(
            "controller", "motion performed by the controller layer's simulated G1 (perform_clip)", _controller
        ),
    )
}
