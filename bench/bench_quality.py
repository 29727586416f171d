"""Retargeting quality on the 39 real clips: official ASAP retargets vs ours vs the GMR-style baseline.

    python bench/bench_quality.py [--clips N] [--methods M ...] [--sequence-ik KEY=VALUE ...] [--json OUT.json]

Every method is scored by the same metrics (:mod:`retarget.metrics`) against the SOURCE SMPL clip
(`tests/fixtures/smpl_video/`); the official retargets come from `tests/fixtures/asap_reference/` (bench/bench_data.py).
Ours is `retarget.pipeline.retarget_file` with its default config; the baseline is
`bench/baseline_gmr.py` on the same scaled targets. One table: median and mean over clips of every
metric, with ours/ASAP and ours/GMR ratios.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baseline_gmr import GmrBaseline
from bench_data import DATA_ROOT
from config_args import sequence_ik_from_args

from retarget.config import RetargetConfig
from retarget.metrics import (
    ClipMetrics,
    evaluate_library,
    evaluate_motion,
    load_human_reference,
    report_dict,
    summarize,
)
from robots.registry import load_robot_spec

DATA = DATA_ROOT
ASAP_PREFIX = "0-motions_raw_tairantestbed_smpl_"
METHODS = ("ASAP official", "ours", "GMR-style")
# (metric field, row label) in table order.
ROWS: tuple[tuple[str, str], ...] = (
    ("limb_direction_error_deg", "limb direction error [deg]"),
    ("stance_sole_abs_height_mm", "stance |sole z| [mm]"),
    ("stance_sole_height_mm", "stance sole z, signed [mm]"),
    ("stance_tilt_deg", "stance foot tilt [deg]"),
    ("stance_tilt_flat_deg", "stance foot tilt, human foot flat [deg]"),
    ("stance_slide_cm_s", "stance sliding [cm/s]"),
    ("stance_slide_mean_cm_s", "stance sliding, mean [cm/s]"),
    ("penetration_mm", "penetration, soles [mm]"),
    ("penetration_all_geoms_mm", "penetration, all geoms [mm]"),
    ("floating_fraction", "floating (of human-stance frames)"),
    ("joint_limit_violation_frames", "joint-limit frames"),
    ("joint_limit_max_excess_rad", "joint-limit max excess [rad]"),
    ("velocity_limit_violation_frames", "velocity-limit steps"),
    ("max_speed_ratio", "max |q̇| / limit"),
    ("self_collision_fraction", "self-collision >1 cm (frames)"),
    ("self_touch_fraction", "self-touch >0 (frames)"),
    ("self_collision_max_depth_mm", "self-collision max depth [mm]"),
    ("mean_abs_acc_rad_s2", "mean |q̈| [rad/s²]"),
    ("mean_abs_jerk_rad_s3", "mean |jerk| [rad/s³]"),
)


_ZERO = 1e-6  # below this a metric is "zero" (e.g. 1e-15 mm of penetration is round-off)


def _ratio(a: float, b: float) -> str:
    if not (np.isfinite(a) and np.isfinite(b)) or abs(b) < _ZERO:
        return "—"
    return f"{a / b:.2f}×"


def _fmt(x: float) -> str:
    if not np.isfinite(x):
        return "—"
    if abs(x) < _ZERO:
        return "0"
    return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"


def run(
    num_clips: int | None, methods: tuple[str, ...] = METHODS, config: RetargetConfig = RetargetConfig()
) -> dict[str, list[ClipMetrics]]:
    robot = load_robot_spec("g1_23dof")
    from retarget.pipeline import retarget_file

    baseline = GmrBaseline() if "GMR-style" in methods else None
    clips = sorted((DATA / "smpl_video").glob("*.npz"))[:num_clips]
    results: dict[str, list[ClipMetrics]] = {m: [] for m in METHODS}
    failures: dict[str, list[str]] = {m: [] for m in METHODS}
    for i, npz in enumerate(clips):
        print(f"[{i + 1}/{len(clips)}] {npz.stem}", file=sys.stderr, flush=True)
        if "ASAP official" in methods:
            results["ASAP official"] += evaluate_library(DATA / "asap_reference" / f"{ASAP_PREFIX}{npz.stem}.pkl", npz)
        solvers = {"ours": lambda p: retarget_file(p, config).motion}
        if baseline is not None:
            solvers["GMR-style"] = lambda p: baseline.retarget_file(p).motion
        for method, solve in solvers.items():
            try:
                motion = solve(npz)
                human = load_human_reference(npz, motion.fps)
                results[method].append(evaluate_motion(motion, human, robot))
            except Exception as exc:  # noqa: BLE001 -- a solver in development may fail on a clip: report it, keep going
                failures[method].append(f"{npz.stem}: {type(exc).__name__}: {exc}")
    for method, msgs in failures.items():
        for msg in msgs:
            print(f"FAILED {method} {msg}", file=sys.stderr)
    return results


def table(results: dict[str, list[ClipMetrics]]) -> Table:
    sums = {m: summarize(c) for m, c in results.items() if c}
    counts = " / ".join(f"{m} {len(c)}" for m, c in results.items())
    out = Table(title=f"Retargeting quality on the real clips (clips: {counts}); median over clips (mean)")
    out.add_column("metric")
    for m in METHODS:
        out.add_column(m, justify="right")
    out.add_column("ours / ASAP", justify="right")
    out.add_column("ours / GMR", justify="right")
    for field, label in ROWS:
        cells = []
        for m in METHODS:
            s = sums.get(m)
            cells.append("—" if s is None else f"{_fmt(s.median[field])} ({_fmt(s.mean[field])})")
        med = {m: (sums[m].median[field] if m in sums else np.nan) for m in METHODS}
        if field in ("joint_limit_violation_frames", "velocity_limit_violation_frames"):
            med = {m: (sums[m].mean[field] if m in sums else np.nan) for m in METHODS}  # medians are mostly 0
        out.add_row(
            escape(label), *cells, _ratio(med["ours"], med["ASAP official"]), _ratio(med["ours"], med["GMR-style"])
        )
    return out


def segment_table(results: dict[str, list[ClipMetrics]]) -> Table:
    """Limb direction error per segment (left and right pooled): mean over clips, ours/ASAP ratio."""
    out = Table(title="Limb direction error per segment [deg], mean over clips")
    out.add_column("segment")
    for m in METHODS:
        out.add_column(m, justify="right")
    out.add_column("ours / ASAP", justify="right")
    means: dict[str, dict[str, float]] = {}
    for m, clips in results.items():
        if not clips:
            continue
        pooled: dict[str, list[float]] = {}
        for c in clips:
            for name, deg in c.limb_direction_error_by_segment_deg.items():
                pooled.setdefault(name.removeprefix("left_").removeprefix("right_"), []).append(deg)
        means[m] = {k: float(np.mean(v)) for k, v in pooled.items()}
    for segment in means.get("ours", {}):
        cells = [_fmt(means[m][segment]) if m in means else "—" for m in METHODS]
        ratio = _ratio(means["ours"][segment], means["ASAP official"][segment]) if "ASAP official" in means else "—"
        out.add_row(segment, *cells, ratio)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clips", type=int, default=None, help="only the first N clips (default: all 39)")
    parser.add_argument(
        "--methods",
        nargs="+",
        choices=METHODS,
        default=list(METHODS),
        help="methods to score (default: all three; 'ours' always runs)",
    )
    parser.add_argument(
        "--sequence-ik", nargs="+", metavar="KEY=VALUE", help="ours with these SequenceIkConfig fields changed"
    )
    parser.add_argument("--json", type=Path, default=None, help="write per-clip metrics and summaries here")
    args = parser.parse_args()
    start = time.perf_counter()
    config = RetargetConfig(sequence_ik=sequence_ik_from_args(args.sequence_ik))
    results = run(args.clips, tuple(args.methods), config)
    Console(width=200).print(table(results))
    Console(width=200).print(segment_table(results))
    print(f"(ratios use medians; for limit-violation counts, means) total {time.perf_counter() - start:.0f} s")
    if args.json:
        report = {m: report_dict(cs) for m, cs in results.items() if cs}
        args.json.write_text(json.dumps(report, indent=2, allow_nan=False))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
