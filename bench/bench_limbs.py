"""Limb direction and pelvis height by the independent definition: ours vs the official ASAP retargets.

    python bench/bench_limbs.py [--split all|test|tuning] [--sequence-ik KEY=VALUE ...] [--json OUT.json]

Scores every clip of the split (bench/clip_split.py) with :mod:`retarget.metrics.limbs_indep` -- the same code and
the same MuJoCo kinematics for both robots' motions -- against the source SMPL clip. Floor levelling is OFF for both
the human reference and our retarget, so robot and human share the source world frame (the official retargets were
made without levelling). Prints, for the test half and for all clips of the run: per segment the mean over clips of
ours and official, the ratio ours/official and the fraction of clips with ours <= official; the same per motion type;
and the pelvis-height error, with ours' signed pelvis-height error split into its sources
(:func:`pelvis_bias_parts_m`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_data import ASAP_REFERENCE_DIR, SMPL_DIR
from clip_split import MOTION_TYPES, SPLITS, TEST_CLIPS, motion_type
from config_args import sequence_ik_from_args

from retarget.asap_pkl import asap_dict_to_motion, read_motion_library
from retarget.config import RetargetConfig
from retarget.ik.problem import ankle_height_flat_m, rest_matched_points
from retarget.metrics.clip import align
from retarget.metrics.human import load_human_reference
from retarget.metrics.limbs_indep import (
    ANKLE_FLOOR_PERCENTILE,
    PELVIS_HEIGHT_OFFSET_M,
    PELVIS_HEIGHT_SCALE,
    SEGMENT_NAMES_INDEP,
    IndepLimbMetrics,
    score_indep,
)
from retarget.metrics.replay import replay_motion
from retarget.readers.source import SourceOptions
from retarget.scaling import limb_scales_from_rest
from retarget.skeleton import neutral_skeleton
from robots.registry import load_robot_spec

ASAP_PREFIX = "0-motions_raw_tairantestbed_smpl_"
UNLEVELLED = SourceOptions(level_floor=False)
METHODS = ("official", "ours")
BIAS_PARTS: dict[str, str] = {
    "scale": "(a1) root scale vs the evaluator's s, (r − s)·(z_pelvis − g_ankle)",
    "offset": "(a2) flat-foot ankle height and scaled leg, at the clip floor",
    "floor": "(b) our floor (per stance phase) vs the clip's 2nd percentile",
    "ik": "(c) robot pelvis vs its own target",
}
REACH_ROW = "beyond reach: target above the straight-leg, flat-foot pelvis, human-stance frames"


def pelvis_bias_parts_m(
    robot_pelvis_z_m: np.ndarray,
    target_joints_w: np.ndarray,
    shift_m: np.ndarray,
    human_joints_w: np.ndarray,
    root_scale: float,
    ankle_height_flat: float,
    straight_pelvis_m: float,
    stance: np.ndarray,
) -> dict[str, float]:
    """Ours' mean signed pelvis-height error (robot − the evaluator's target) [m] as the sum of four parts.

    With E the evaluator's target (0.053 m + s·(z_pelvis − g_ankle)), O our pelvis target (r·z_pelvis + the
    per-frame floor shift) and C our pelvis under the evaluator's floor rule (r·z_pelvis + the shift that puts
    the clip's 2nd percentile of the lower scaled ankle at the flat-foot ankle height): scale + offset = C − E,
    floor = O − C, ik = robot − O; they add up to the bench's signed row. The floor part also carries the leg
    rebuild's move of the ankle targets (the per-phase floor sees the rebuilt ankle, C the bone-scaled one).

    Args:
        robot_pelvis_z_m: (T,) replayed robot pelvis height.
        target_joints_w: (T, 24, 3) our scaled human targets after the floor shift (``RobotMotion.human_joints_w``).
        shift_m: (T,) the floor shift applied to them.
        human_joints_w: (T, 24, 3) the unscaled human (the evaluator's reference).
        root_scale, ankle_height_flat: the pipeline's pelvis-path scale and flat-foot ankle-point height [m].
        straight_pelvis_m: the robot's pelvis height standing at q = 0 on flat feet [m].
        stance: (T, 2) the human's stance.

    Beside the parts, ``reach`` [m]: the mean over frames with a human foot down of how far the evaluator's
    target stands above ``straight_pelvis_m`` -- error that a robot whose stance feet stay flat on the floor cannot
    avoid (where the human stands on the ball of the foot, or the reconstruction floats a planted foot above the
    clip's floor); not part of the sum.
    """
    z_h = human_joints_w[:, 0, 2]
    g_h = float(np.percentile(np.minimum(human_joints_w[:, 7, 2], human_joints_w[:, 8, 2]), ANKLE_FLOOR_PERCENTILE))
    evaluator = PELVIS_HEIGHT_OFFSET_M + PELVIS_HEIGHT_SCALE * (z_h - g_h)
    scaled_ankle_z = np.minimum(target_joints_w[:, 7, 2], target_joints_w[:, 8, 2]) - shift_m
    clip_floor = root_scale * z_h + ankle_height_flat - float(np.percentile(scaled_ankle_z, ANKLE_FLOOR_PERCENTILE))
    scale = (root_scale - PELVIS_HEIGHT_SCALE) * (z_h - g_h)
    ours = target_joints_w[:, 0, 2]
    return {
        "scale": float(scale.mean()),
        "offset": float((clip_floor - evaluator - scale).mean()),
        "floor": float((ours - clip_floor).mean()),
        "ik": float((robot_pelvis_z_m - ours).mean()),
        "reach": float(np.maximum(evaluator - straight_pelvis_m, 0.0)[stance.any(axis=1)].mean()),
    }


def score_clip(stem: str, config: RetargetConfig | None = None) -> tuple[dict[str, IndepLimbMetrics], dict[str, float]]:
    """Both methods' independent figures on one clip, and ours' pelvis-bias parts (:func:`pelvis_bias_parts_m`);
    ours with `config` (default: the default config, unlevelled)."""
    from retarget.pipeline import retarget_file

    robot = load_robot_spec("g1_23dof")
    npz = SMPL_DIR / f"{stem}.npz"
    key = f"{ASAP_PREFIX}{stem}"
    official = asap_dict_to_motion(key, read_motion_library(ASAP_REFERENCE_DIR / f"{key}.pkl")[key])
    result = retarget_file(npz, config or RetargetConfig(source=UNLEVELLED))
    out = {}
    parts: dict[str, float] = {}
    for method, motion in (("official", official), ("ours", result.motion)):
        human = load_human_reference(npz, motion.fps, source=UNLEVELLED)
        motion, human = align(motion, human)
        replay = replay_motion(robot, motion)
        out[method] = score_indep(stem, replay, human)
        if method == "ours":
            n = motion.num_frames
            rest = rest_matched_points(robot)
            parts = pelvis_bias_parts_m(
                replay.body("pelvis")[:, 2],
                motion.human_joints_w,
                result.vertical_shift_m[:n],
                human.joints_w,
                limb_scales_from_rest(neutral_skeleton(), rest).root_scale,
                ankle_height_flat_m(robot),
                ankle_height_flat_m(robot) + float(rest[0][2] - rest[7][2]),
                human.stance,
            )
    return out, parts


def bias_table(title: str, parts: dict[str, dict[str, float]]) -> Table:
    """Mean over clips of each part of ours' signed pelvis-height error [cm], and their sum."""
    out = Table(title=f"{title} ({len(parts)} clips): ours' signed pelvis height error by source [cm]")
    out.add_column("part")
    out.add_column("mean over clips", justify="right")
    out.add_column("clips < 0", justify="right")
    for key, label in BIAS_PARTS.items():
        v = np.array([p[key] for p in parts.values()]) * 100
        out.add_row(label, f"{v.mean():+.2f}", f"{int((v < 0).sum())}/{len(v)}")
    total = np.array([sum(p[k] for k in BIAS_PARTS) for p in parts.values()]) * 100
    out.add_row("sum (= the signed row)", f"{total.mean():+.2f}", f"{int((total < 0).sum())}/{len(total)}")
    reach = np.array([p["reach"] for p in parts.values()]) * 100
    out.add_row(REACH_ROW, f"{reach.mean():.2f}", "")
    return out


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}×" if b > 0 else "—"


def segment_table(title: str, scores: dict[str, dict[str, IndepLimbMetrics]]) -> Table:
    """Per segment: mean over clips (ours, official), ratio, fraction of clips with ours <= official."""
    out = Table(title=f"{title} ({len(scores)} clips): limb direction error, independent definition [deg]")
    for col in ("segment", "official", "ours", "ours/official", "clips ours<=official"):
        out.add_column(col, justify="left" if col == "segment" else "right")
    for seg in SEGMENT_NAMES_INDEP:
        off = np.array([s["official"].limb_dir_err_indep_deg[seg] for s in scores.values()])
        our = np.array([s["ours"].limb_dir_err_indep_deg[seg] for s in scores.values()])
        win = f"{int((our <= off).sum())}/{len(our)} ({(our <= off).mean():.0%})"
        out.add_row(seg, f"{off.mean():.2f}", f"{our.mean():.2f}", _ratio(our.mean(), off.mean()), win)
    off = np.array([s["official"].pelvis_height_err_indep_m for s in scores.values()]) * 100
    our = np.array([s["ours"].pelvis_height_err_indep_m for s in scores.values()]) * 100
    win = f"{int((our <= off).sum())}/{len(our)} ({(our <= off).mean():.0%})"
    out.add_row("pelvis height [cm]", f"{off.mean():.2f}", f"{our.mean():.2f}", _ratio(our.mean(), off.mean()), win)
    off = np.array([s["official"].pelvis_height_bias_indep_m for s in scores.values()]) * 100
    our = np.array([s["ours"].pelvis_height_bias_indep_m for s in scores.values()]) * 100
    out.add_row("pelvis height, signed [cm]", f"{off.mean():+.2f}", f"{our.mean():+.2f}", "", "")
    return out


def type_table(title: str, scores: dict[str, dict[str, IndepLimbMetrics]]) -> Table:
    """Per motion type and segment: ours / official means [deg] (pelvis height in cm)."""
    out = Table(title=f"{title}: per motion type, ours / official (mean over clips)")
    out.add_column("type (clips)")
    for seg in (*SEGMENT_NAMES_INDEP, "pelvis z [cm]"):
        out.add_column(seg, justify="right")
    for kind in MOTION_TYPES:
        sub = [s for stem, s in scores.items() if motion_type(stem) == kind]
        if not sub:
            continue
        cells = []
        for seg in SEGMENT_NAMES_INDEP:
            off = np.mean([s["official"].limb_dir_err_indep_deg[seg] for s in sub])
            our = np.mean([s["ours"].limb_dir_err_indep_deg[seg] for s in sub])
            cells.append(f"{our:.2f} / {off:.2f}")
        off = np.mean([s["official"].pelvis_height_err_indep_m for s in sub]) * 100
        our = np.mean([s["ours"].pelvis_height_err_indep_m for s in sub]) * 100
        cells.append(f"{our:.2f} / {off:.2f}")
        out.add_row(f"{kind} ({len(sub)})", *cells)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=sorted(SPLITS), default="all", help="clips to score (default: all 39)")
    parser.add_argument(
        "--sequence-ik", nargs="+", metavar="KEY=VALUE", help="ours with these SequenceIkConfig fields changed"
    )
    parser.add_argument("--json", type=Path, default=None, help="write per-clip figures here")
    args = parser.parse_args()
    start = time.perf_counter()
    config = RetargetConfig(source=UNLEVELLED, sequence_ik=sequence_ik_from_args(args.sequence_ik))
    scores: dict[str, dict[str, IndepLimbMetrics]] = {}
    parts: dict[str, dict[str, float]] = {}
    for i, stem in enumerate(SPLITS[args.split]):
        print(f"[{i + 1}/{len(SPLITS[args.split])}] {stem}", file=sys.stderr, flush=True)
        scores[stem], parts[stem] = score_clip(stem, config)
    console = Console(width=160)
    for title, keep in (("test half", TEST_CLIPS), (f"split '{args.split}'", SPLITS[args.split])):
        sub = {k: v for k, v in scores.items() if k in keep}
        if sub and (title == "test half" or args.split != "test"):
            console.print(segment_table(title, sub))
            console.print(type_table(title, sub))
            console.print(bias_table(title, {k: parts[k] for k in sub}))
    print(f"total {time.perf_counter() - start:.0f} s")
    if args.json:
        per_clip = {
            stem: {**{m: asdict(s[m]) for m in METHODS}, "ours_pelvis_bias_parts_m": parts[stem]}
            for stem, s in scores.items()
        }
        args.json.write_text(json.dumps(per_clip, indent=2))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
