"""The controller layer on the real clips: speed, tracking quality and verdicts beside today's static ones.

    nice -n 10 python bench/bench_controller.py [--clips squat_level1_filter,kick_level2_filter]
        [--budget-s 2100] [--json out.json] [--samples 32 --horizon-s 0.6 --replan-steps 2]

Reads ../shared/data/smpl_video (relative to the repo root). Per clip: CPU seconds of the tracker per
second of motion (single thread, so per core), the fraction of frames the controller keeps, Eg-mpjpe /
Empjpe [mm] of the performed motion against the kinematic retarget over the tracked frames, falls, the
controller verdict and the static (kinematic + dynamic) verdict. Prints median and worst speed and the
ratio against the naive predictive-sampling probe of issue 15 (≈10 s wall per s of motion on 2 threads,
i.e. ≈20 CPU s per s). With --budget-s, clips are taken in name order until the budget is spent.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

from retarget.asap_pkl import motion_qpos
from retarget.controller import ControllerConfig, TrackerConfig, perform_result, tracker_model
from retarget.filter import FilterConfig, filter_result
from retarget.filter.dynamics import analyse_dynamics
from retarget.filter.robot_geometry import compute_robot_geometry
from retarget.pipeline import retarget_sequence
from retarget.readers.amass import read_amass_npz
from robots.registry import load_robot_spec

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "smpl_video"
PROBE_CPU_S_PER_S = 20.0
"""Issue 15's naive probe: ≈10 s of wall time per s of motion on 2 threads."""


def _label(v) -> str:
    return v.decision if v.first_failure is None else f"{v.decision}:{v.first_failure}"


def _residual(out, fps: float) -> float | None:
    """Median contact-wrench residual force of the performed motion in its stance frames, as a fraction
    of the robot's weight (layer 2's measure; the kinematic retargets' limit is 0.25)."""
    if out.motion is None:
        return None
    robot = load_robot_spec("g1_23dof")
    qpos = motion_qpos(out.motion, robot, tracker_model("g1_23dof", 0.005))
    dyn = analyse_dynamics(qpos, compute_robot_geometry(qpos, robot).sole_w, fps, robot)
    stance = dyn.in_contact.any(axis=1)
    if not stance.any():
        return None
    return round(float(np.median(dyn.residual_force_n[stance]) / (dyn.mass_kg * 9.81)), 4)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clips", default="", help="comma-separated clip names without 'video_'/'_amass' (all: empty)")
    parser.add_argument("--budget-s", type=float, default=0.0, help="stop starting clips after this wall time [s]")
    parser.add_argument("--json", type=Path, default=None, help="write the per-clip rows here (after every clip)")
    parser.add_argument("--samples", type=int, default=TrackerConfig.num_samples)
    parser.add_argument("--horizon-s", type=float, default=TrackerConfig.horizon_s)
    parser.add_argument("--replan-steps", type=int, default=TrackerConfig.replan_steps)
    args = parser.parse_args()
    paths = sorted(DATA.glob("*.npz"))
    if args.clips:
        wanted = {f"video_{c}_amass.npz" for c in args.clips.split(",")}
        paths = [p for p in paths if p.name in wanted]
    tracker = replace(
        TrackerConfig(),
        num_samples=args.samples,
        horizon_s=args.horizon_s,
        replan_steps=args.replan_steps,
        num_threads=1,
    )
    config = ControllerConfig(tracker=tracker)
    print("settings:", json.dumps(tracker.to_dict()))
    rows: list[dict] = []
    start = time.perf_counter()
    for path in paths:
        if args.budget_s and time.perf_counter() - start > args.budget_s:
            print(f"budget spent: {len(rows)}/{len(paths)} clips measured")
            break
        seq = read_amass_npz(path)
        result = retarget_sequence(seq)
        static = filter_result(result, seq, FilterConfig(layers=("kinematic", "dynamic")))
        cpu0 = time.process_time()
        out = perform_result(result, seq, config)
        cpu_s = time.process_time() - cpu0
        v = out.verdict
        check = v.check("controller.tracking")
        duration_s = (v.num_frames - 1) / v.fps
        row = {
            "clip": path.name[6:-10],
            "duration_s": round(duration_s, 2),
            "cpu_s_per_s": round(cpu_s / duration_s, 2),
            "kept_fraction": round(v.kept_frames / v.num_frames, 3),
            "tracked_fraction": round(float(check.figures["tracked_fraction"]), 3),
            "falls": check.figures["falls"],
            "eg_mpjpe_mm": round(float(check.figures["eg_mpjpe_mm"]), 1),
            "empjpe_mm": round(float(check.figures["empjpe_mm"]), 1),
            "p95_distance_mm": round(float(check.figures["p95_distance_mm"]), 1),
            "p95_anchored_mm": round(float(check.figures["p95_anchored_distance_mm"]), 1),
            "performed_residual_force_frac": _residual(out, result.motion.fps),
            "controller": _label(v),
            "static": _label(static),
            "static_kept_fraction": round(static.kept_frames / static.num_frames, 3),
            "fall_reasons": check.figures["fall_reasons"],
        }
        rows.append(row)
        print(
            f"{row['clip']:34s} {duration_s:5.2f}s {row['cpu_s_per_s']:5.2f} s/s  kept {row['kept_fraction']:.2f} "
            f"Eg {row['eg_mpjpe_mm']:5.1f} Em {row['empjpe_mm']:5.1f} p95 {row['p95_distance_mm']:5.1f} "
            f"anchored p95 {row['p95_anchored_mm']:5.1f} mm "
            f"falls {row['falls']} res {row['performed_residual_force_frac']}  "
            f"controller {row['controller']:30s} static {row['static']}",
            flush=True,
        )
        if args.json:
            args.json.write_text(json.dumps({"settings": tracker.to_dict(), "rows": rows}, indent=1))
    if not rows:
        return
    speed = np.array([r["cpu_s_per_s"] for r in rows])
    total_s = sum(r["duration_s"] for r in rows)
    print(f"\n{len(rows)} clips, {total_s:.0f} s of motion")
    print(
        f"CPU s per s of motion (one core): median {np.median(speed):.2f}, worst {speed.max():.2f}; "
        f"issue-15 probe ≈{PROBE_CPU_S_PER_S:g} → {PROBE_CPU_S_PER_S / np.median(speed):.1f}× faster (median)"
    )
    print(
        "controller decisions:",
        dict(Counter(r["controller"].split(":")[0] for r in rows)),
        " static decisions:",
        dict(Counter(r["static"].split(":")[0] for r in rows)),
    )
    pairs = Counter((r["static"].split(":")[0], r["controller"].split(":")[0]) for r in rows)
    print("static → controller:", {f"{a}→{b}": n for (a, b), n in sorted(pairs.items())})
    print(
        f"tracked fraction: mean {np.mean([r['tracked_fraction'] for r in rows]):.3f}; clips without a fall: "
        f"{sum(r['falls'] == 0 for r in rows)}/{len(rows)}"
    )
    eg = np.array([r["eg_mpjpe_mm"] for r in rows])
    em = np.array([r["empjpe_mm"] for r in rows])
    p95 = np.array([r["p95_distance_mm"] for r in rows])
    anchored = np.array([r["p95_anchored_mm"] for r in rows])
    res = [r["performed_residual_force_frac"] for r in rows if r["performed_residual_force_frac"] is not None]
    print(
        f"Eg-mpjpe [mm] median {np.nanmedian(eg):.1f} max {np.nanmax(eg):.1f}; "
        f"Empjpe [mm] median {np.nanmedian(em):.1f} max {np.nanmax(em):.1f}; "
        f"p95 mean body distance [mm] median {np.nanmedian(p95):.1f} max {np.nanmax(p95):.1f}; "
        f"root-anchored p95 [mm] median {np.nanmedian(anchored):.1f} max {np.nanmax(anchored):.1f}"
    )
    if res:
        print(
            f"performed motion, median stance contact-wrench residual / weight: median over clips "
            f"{np.median(res):.3f}, max {max(res):.3f}"
        )


if __name__ == "__main__":
    main()
