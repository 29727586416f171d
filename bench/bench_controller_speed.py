"""The tracker's speed/quality knob: several tracker settings on the same clips, interleaved, in one run.

    nice -n 10 python bench/bench_controller_speed.py --clips tuning --settings issue15,default \\
        [--json-dir /tmp/speed] [--budget-s 3600]

Every setting runs the whole controller verdict (`perform_result`: kinematic pre-screen + tracker) on each clip,
one thread, the settings in a rotating order per clip so machine load falls on all alike. Per clip and setting:
CPU seconds of the verdict per second of motion (`time.process_time`), rollouts, decision, kept frames, the
controller check's bad frames, tracked fraction, falls, Eg-mpjpe / Empjpe. The summary compares every setting with
the first one (the reference) on the same clips: CPU s per s median / worst and the median per-clip ratio,
decisions equal, frames whose keep/trim status is equal, frames whose controller-check status is equal, and the
change of tracked fraction, falls and Empjpe.

--clips: `tuning`, `test`, `all` (bench/clip_split.py) or comma-separated names without 'video_'/'_amass'.
--settings: comma-separated names from :data:`SETTINGS`, or `name:key=value;key=value` over TrackerConfig's defaults.
With --json-dir each (clip, setting) row is written to `<dir>/<clip>.<setting>.json` and reused when present,
so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import fields, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from clip_split import SPLITS

from retarget.controller import ControllerConfig, TrackerConfig, perform_result
from retarget.pipeline import retarget_sequence
from retarget.readers.amass import read_amass_npz

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "smpl_video"

ISSUE15 = TrackerConfig(
    num_samples=32,
    horizon_s=0.8,
    num_knots=5,
    replan_steps=2,
    plan_step_factor=1,
    plan_primitive_contacts=False,
    plan_tail_step_factor=0,
    min_samples=0,
    skip_replan_error_m=0.0,
    skip_replan_max_cost=0.0,
)
"""The tracker as issue 15 measured it (median 2.87 CPU s per s): the reference of the speed figures."""

F10MS24 = replace(ISSUE15, num_samples=24, plan_step_factor=2, plan_primitive_contacts=True)
"""10 ms planning step, primitive contacts, 24 samples, the whole horizon at 10 ms (the default before the tail)."""

TAIL04 = replace(F10MS24, plan_tail_step_factor=4, plan_fine_horizon_s=0.4)
"""The 20 ms tail after the first 0.4 s of each plan, a replan every `replan_steps` (the default)."""

SETTINGS: dict[str, TrackerConfig] = {
    "issue15": ISSUE15,
    "default": TrackerConfig(),
    "issue15_primitive_contacts": replace(ISSUE15, plan_primitive_contacts=True),
    "f10ms24": F10MS24,
    "tail04": TAIL04,
    "tail02": replace(F10MS24, plan_tail_step_factor=4, plan_fine_horizon_s=0.2),
    "skip05": replace(TAIL04, skip_replan_error_m=0.0005, max_skipped_replans=1),
    "skip03": replace(TAIL04, skip_replan_error_m=0.0003, max_skipped_replans=1),
    "skip05c1": replace(TAIL04, skip_replan_error_m=0.0005, max_skipped_replans=1, skip_replan_max_cost=1.0),
}
"""Named settings; each spells every knob it depends on, so a name means the same run after defaults change."""


def _parse_setting(text: str) -> tuple[str, TrackerConfig]:
    if ":" not in text:
        return text, SETTINGS[text]
    name, body = text.split(":", 1)
    types = {f.name: f.type for f in fields(TrackerConfig)}
    kw: dict[str, object] = {}
    for item in filter(None, body.split(";")):
        key, value = item.split("=", 1)
        kind = str(types[key])
        kw[key] = value.lower() in ("1", "true") if "bool" in kind else int(value) if "int" in kind else float(value)
    return name, replace(TrackerConfig(), **kw)


def _clips(spec: str) -> list[str]:
    if spec in SPLITS:
        return list(SPLITS[spec])
    return [f"video_{c}_amass" for c in spec.split(",")]


def _mask(ranges, num_frames: int) -> np.ndarray:
    mask = np.zeros(num_frames, dtype=bool)
    for a, b in ranges:
        mask[a:b] = True
    return mask


def run_one(result, seq, tracker: TrackerConfig) -> dict:
    cpu0 = time.process_time()
    out = perform_result(result, seq, ControllerConfig(tracker=replace(tracker, num_threads=1)))
    cpu_s = time.process_time() - cpu0
    v = out.verdict
    check = v.check("controller.tracking")
    duration_s = (v.num_frames - 1) / v.fps
    f = check.figures
    return {
        "duration_s": duration_s,
        "cpu_s_per_s": cpu_s / duration_s,
        "rollouts": int(f["rollouts"]),
        "plans": int(f["plans"]),
        "skipped_replans": int(f["skipped_replans"]),
        "decision": v.decision,
        "first_failure": v.first_failure,
        "num_frames": v.num_frames,
        "kept_ranges": [list(r) for r in v.kept_ranges],
        "bad_ranges": [list(r) for r in check.bad_ranges],
        "tracked_fraction": float(f["tracked_fraction"]),
        "falls": int(f["falls"]),
        "eg_mpjpe_mm": float(f["eg_mpjpe_mm"]),
        "empjpe_mm": float(f["empjpe_mm"]),
        "p95_anchored_mm": float(f["p95_anchored_distance_mm"]),
    }


def compare(ref: dict, row: dict) -> dict:
    """How a row's verdict agrees with the reference row's on the same clip."""
    n = ref["num_frames"]
    kept = _mask(ref["kept_ranges"], n) == _mask(row["kept_ranges"], n)
    bad = _mask(ref["bad_ranges"], n) == _mask(row["bad_ranges"], n)
    return {
        "same_decision": ref["decision"] == row["decision"],
        "kept_agreement": float(kept.mean()),
        "bad_agreement": float(bad.mean()),
        "speed_ratio": ref["cpu_s_per_s"] / row["cpu_s_per_s"],
        "d_tracked": row["tracked_fraction"] - ref["tracked_fraction"],
        "d_empjpe_mm": row["empjpe_mm"] - ref["empjpe_mm"],
    }


def plan_steps_per_s(row: dict, cfg: TrackerConfig) -> float:
    """Physics steps the planner's rollouts took per second of motion (the machine-independent cost)."""
    horizon = max(2, round(cfg.horizon_s / (cfg.physics_dt_s * cfg.decimation)))
    fine = horizon
    if cfg.plan_tail_step_factor > cfg.plan_step_factor:
        fine = min(max(round(cfg.plan_fine_horizon_s / (cfg.physics_dt_s * cfg.decimation)), 1), horizon)
    steps = fine * (cfg.decimation // cfg.plan_step_factor)
    if fine < horizon:
        steps += (horizon - fine) * (cfg.decimation // cfg.plan_tail_step_factor)
    return row["rollouts"] * steps / row["duration_s"]


def summarize(
    settings: dict[str, TrackerConfig], rows: dict[tuple[str, str], dict], clips: list[str], label: str
) -> None:
    names = list(settings)
    ref_name = names[0]
    clips = [c for c in clips if all((c, s) in rows for s in names)]
    if not clips:
        return
    motion_s = sum(rows[(c, ref_name)]["duration_s"] for c in clips)
    print(f"\n== {label}: {len(clips)} clips, {motion_s:.0f} s of motion; reference: {ref_name}")
    header = (
        f"{'setting':>16s} {'plan steps/s':>12s} {'CPU s/s med':>11s} {'worst':>6s} {'×faster':>7s} {'same dec':>8s} "
        f"{'kept agr':>8s} {'bad agr':>7s} {'tracked':>7s} {'Δtracked':>8s} {'falls':>5s} {'Em mm':>6s} {'ΔEm':>6s}"
    )
    print(header)
    for s in names:
        got = [rows[(c, s)] for c in clips]
        cmp = [compare(rows[(c, ref_name)], rows[(c, s)]) for c in clips]
        speed = np.array([r["cpu_s_per_s"] for r in got])
        steps = np.median([plan_steps_per_s(r, settings[s]) for r in got])
        print(
            f"{s:>16s} {steps:12.0f} {np.median(speed):11.2f} {speed.max():6.2f} "
            f"{np.median([x['speed_ratio'] for x in cmp]):7.2f} "
            f"{sum(x['same_decision'] for x in cmp):4d}/{len(clips):<3d} "
            f"{np.mean([x['kept_agreement'] for x in cmp]):8.3f} {np.mean([x['bad_agreement'] for x in cmp]):7.3f} "
            f"{np.mean([r['tracked_fraction'] for r in got]):7.3f} {np.mean([x['d_tracked'] for x in cmp]):+8.3f} "
            f"{sum(r['falls'] for r in got):5d} {np.median([r['empjpe_mm'] for r in got]):6.1f} "
            f"{np.median([x['d_empjpe_mm'] for x in cmp]):+6.1f}"
        )
    differ = [(c, s) for c in clips for s in names[1:] if rows[(c, s)]["decision"] != rows[(c, ref_name)]["decision"]]
    for c, s in differ:
        a, b = rows[(c, ref_name)], rows[(c, s)]
        print(
            f"  decision differs: {c[6:-6]} {s}: {b['decision']} (tracked {b['tracked_fraction']:.2f}, falls "
            f"{b['falls']}) vs {ref_name}: {a['decision']} (tracked {a['tracked_fraction']:.2f}, falls {a['falls']})"
        )


def markdown_table(names: list[str], rows: dict[tuple[str, str], dict], clips: list[str]) -> None:
    """Per clip: CPU s/s, decision with kept ranges, tracked fraction, falls and Empjpe of every setting."""
    print(
        "\n| clip | split | s | "
        + " | ".join(f"{s}: CPU s/s · decision (kept) · tracked · falls · Empjpe" for s in names)
        + " |"
    )
    print("|---|---|---|" + "---|" * len(names))
    for clip in clips:
        cells = []
        for s in names:
            r = rows[(clip, s)]
            kept = " ".join(f"{a}–{b}" for a, b in r["kept_ranges"])
            cells.append(
                f"{r['cpu_s_per_s']:.2f} · {r['decision']} ({kept}) · {r['tracked_fraction']:.2f} · {r['falls']} · "
                f"{r['empjpe_mm']:.0f} mm"
            )
        split = "test" if clip in SPLITS["test"] else "tuning"
        duration_s = rows[(clip, names[0])]["duration_s"]
        print(f"| {clip[6:-6]} | {split} | {duration_s:.1f} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clips", default="tuning")
    parser.add_argument("--settings", default="issue15,default")
    parser.add_argument("--json-dir", type=Path, default=None)
    parser.add_argument("--budget-s", type=float, default=0.0, help="stop starting clips after this wall time [s]")
    parser.add_argument("--markdown", action="store_true", help="also print the per-clip table in Markdown")
    args = parser.parse_args()
    settings = dict(_parse_setting(s) for s in args.settings.split(","))
    names = list(settings)
    for name, cfg in settings.items():
        print(f"{name}: {json.dumps(cfg.to_dict())}")
    clips = _clips(args.clips)
    if args.json_dir:
        args.json_dir.mkdir(parents=True, exist_ok=True)
    rows: dict[tuple[str, str], dict] = {}
    start = time.perf_counter()
    for i, clip in enumerate(clips):
        if args.budget_s and time.perf_counter() - start > args.budget_s:
            print(f"budget spent after {i}/{len(clips)} clips")
            break
        result = seq = None
        order = names[i % len(names) :] + names[: i % len(names)]
        for s in order:
            path = args.json_dir / f"{clip}.{s}.json" if args.json_dir else None
            if path is not None and path.exists():
                rows[(clip, s)] = json.loads(path.read_text())
                continue
            if result is None:
                seq = read_amass_npz(DATA / f"{clip}.npz")
                result = retarget_sequence(seq)
            row = run_one(result, seq, settings[s])
            rows[(clip, s)] = row
            if path is not None:
                path.write_text(json.dumps({"setting": settings[s].to_dict(), **row}))
        line = "  ".join(
            f"{s} {rows[(clip, s)]['cpu_s_per_s']:.2f}s/s {rows[(clip, s)]['decision']} "
            f"tr {rows[(clip, s)]['tracked_fraction']:.2f} f{rows[(clip, s)]['falls']} "
            f"Em {rows[(clip, s)]['empjpe_mm']:.0f}"
            for s in names
        )
        print(f"{clip[6:-6]:34s} {line}", flush=True)
    done = [c for c in clips if all((c, s) in rows for s in names)]
    if args.markdown:
        markdown_table(names, rows, done)
    if args.clips in ("all", "test", "tuning"):
        for split in ("test", "tuning", "all") if args.clips == "all" else (args.clips,):
            summarize(settings, rows, [c for c in done if c in SPLITS[split]], split)
    else:
        summarize(settings, rows, done, "clips")


if __name__ == "__main__":
    main()
