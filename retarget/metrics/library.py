"""Score a whole motion library (ours or ASAP's official one) against its source clips, aggregate
over clips, and write the report as JSON."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retarget.asap_pkl import asap_dict_to_motion, atomic_write, read_motion_library
from retarget.errors import MotionFileError
from retarget.metrics.clip import ClipMetrics, evaluate_motion, numeric_fields
from retarget.metrics.config import MetricsConfig
from retarget.metrics.human import find_source_clip, load_human_reference
from retarget.readers.source import SourceOptions
from robots.registry import ROBOT_NAMES, RobotSpec, load_robot_spec, robot_for_dof_count  # noqa: F401 (re-exported)


@dataclass(frozen=True)
class MetricsSummary:
    """Mean and median of every numeric metric over clips (NaN entries, e.g. a clip without stance, are
    left out of that metric's statistics)."""

    num_clips: int
    mean: dict[str, float]
    median: dict[str, float]


def summarize(clips: list[ClipMetrics]) -> MetricsSummary:
    mean: dict[str, float] = {}
    median: dict[str, float] = {}
    for name in numeric_fields():
        values = np.array([getattr(c, name) for c in clips], dtype=np.float64)
        values = values[np.isfinite(values)]
        mean[name] = float(values.mean()) if values.size else float("nan")
        median[name] = float(np.median(values)) if values.size else float("nan")
    return MetricsSummary(num_clips=len(clips), mean=mean, median=median)


def evaluate_library(
    library: str | Path,
    source: str | Path,
    robot: str | None = None,
    config: MetricsConfig = MetricsConfig(),
    source_options: SourceOptions | None = None,
) -> list[ClipMetrics]:
    """Metrics of every clip in an ASAP `.pkl` library against its source `.npz` (a file, or a folder
    in which each clip's source is found by name; see :func:`find_source_clip`)."""
    library = Path(library)
    try:
        clips = read_motion_library(library)
    except KeyError as exc:
        # safe_load lets the KeyError of an unknown pickle opcode through (e.g. a text file); report it as
        # the corrupt file it is.
        raise MotionFileError(library, f"corrupt or not a pickle (unknown opcode {exc})") from exc
    results = []
    for key, clip in clips.items():
        motion = asap_dict_to_motion(key, clip)
        spec = load_robot_spec(robot) if robot else robot_for_dof_count(motion.dof_pos.shape[1], library)
        if motion.dof_pos.shape[1] != spec.num_dof:
            raise MotionFileError(
                library, f"clip {key!r} has {motion.dof_pos.shape[1]} joints, {spec.name} has {spec.num_dof}"
            )
        src = find_source_clip(key, source)
        human = load_human_reference(src, motion.fps, config.contacts, source_options)
        try:
            results.append(evaluate_motion(motion, human, spec, config))
        except MotionFileError as exc:
            raise MotionFileError(library, f"{exc.problem} (source {src})") from exc
    return results


def finite_or_none(value):
    """``value`` with every non-finite float (NaN: a metric with no frames to measure) replaced by None, for JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite_or_none(v) for v in value]
    return value


def report_dict(clips: list[ClipMetrics], config: MetricsConfig = MetricsConfig(), **extra) -> dict:
    """JSON-ready report: config, per-clip metrics, and their mean and median (NaN written as null)."""
    summary = summarize(clips)
    return finite_or_none(
        {
            **extra,
            "config": dataclasses.asdict(config),
            "num_clips": summary.num_clips,
            "clips": [c.to_dict() for c in clips],
            "mean": summary.mean,
            "median": summary.median,
        }
    )


def write_report_json(
    path: str | Path, clips: list[ClipMetrics], config: MetricsConfig = MetricsConfig(), **extra
) -> Path:
    """Write :func:`report_dict` atomically."""
    path = Path(path)
    text = json.dumps(report_dict(clips, config, **extra), indent=2, allow_nan=False)
    atomic_write(path, lambda tmp: tmp.write_text(text))
    return path
