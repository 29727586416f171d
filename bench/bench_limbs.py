"""Limb direction and pelvis height by the independent definition: ours vs the official ASAP retargets.

    python bench/bench_limbs.py [--split all|test|tuning] [--sequence-ik KEY=VALUE ...] [--json OUT.json]

Scores every clip of the split (bench/clip_split.py) with :mod:`retarget.metrics.limbs_indep` -- the same code and
the same MuJoCo kinematics for both robots' motions -- against the source SMPL clip. Floor levelling is OFF for both
the human reference and our retarget, so robot and human share the source world frame (the official retargets were
made without levelling). Prints, for the test half and for all clips of the run: per segment the mean over clips of
ours and official, the ratio ours/official and the fraction of clips with ours <= official; the same per motion type;
and the pelvis-height error.
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
from retarget.metrics.clip import align
from retarget.metrics.human import load_human_reference
from retarget.metrics.limbs_indep import SEGMENT_NAMES_INDEP, IndepLimbMetrics, score_indep
from retarget.metrics.replay import replay_motion
from retarget.readers.source import SourceOptions
from robots.registry import load_robot_spec

ASAP_PREFIX = "0-motions_raw_tairantestbed_smpl_"
UNLEVELLED = SourceOptions(level_floor=False)
METHODS = ("official", "ours")


def score_clip(stem: str, config: RetargetConfig | None = None) -> dict[str, IndepLimbMetrics]:
    """Both methods' independent figures on one clip; ours with `config` (default: the default config, unlevelled)."""
    from retarget.pipeline import retarget_file

    robot = load_robot_spec("g1_23dof")
    npz = SMPL_DIR / f"{stem}.npz"
    key = f"{ASAP_PREFIX}{stem}"
    official = asap_dict_to_motion(key, read_motion_library(ASAP_REFERENCE_DIR / f"{key}.pkl")[key])
    ours = retarget_file(npz, config or RetargetConfig(source=UNLEVELLED)).motion
    out = {}
    for method, motion in (("official", official), ("ours", ours)):
        human = load_human_reference(npz, motion.fps, source=UNLEVELLED)
        motion, human = align(motion, human)
        out[method] = score_indep(stem, replay_motion(robot, motion), human)
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
    for i, stem in enumerate(SPLITS[args.split]):
        print(f"[{i + 1}/{len(SPLITS[args.split])}] {stem}", file=sys.stderr, flush=True)
        scores[stem] = score_clip(stem, config)
    console = Console(width=160)
    test = {k: v for k, v in scores.items() if k in TEST_CLIPS}
    for title, sub in (("test half", test), (f"split '{args.split}'", scores)):
        if sub and (title == "test half" or args.split != "test"):
            console.print(segment_table(title, sub))
            console.print(type_table(title, sub))
    print(f"total {time.perf_counter() - start:.0f} s")
    if args.json:
        per_clip = {stem: {m: asdict(s[m]) for m in METHODS} for stem, s in scores.items()}
        args.json.write_text(json.dumps(per_clip, indent=2))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
