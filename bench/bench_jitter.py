"""What video jitter does to the pipeline: `eval`'s foot and limb metrics on jittered copies of real clips.

    nice -n 10 python bench/bench_jitter.py [--clips walk_level2_filter,...] [--levels 0,1,2,4] [--json OUT]

Video-pose estimators add frame-to-frame noise that mocap does not have. Each bundled clip is
copied with independent Gaussian noise per frame: on every joint's rotation (axis-angle, σ_rot per
axis) and on the root translation (σ_trans per axis), at noise levels k = 0 (the clip itself),
1, 2, 4 with σ_rot = k · 0.5 deg and σ_trans = k · 5 mm. Each copy is retargeted with the default
config and scored by `eval`'s metrics (:mod:`retarget.metrics`) against the jittered clip itself,
as a user would run it. Also reported: the human's stance fraction (contact detection on the
jittered joints) and the limb direction error against the CLEAN clip (what the robot lost of the
real motion). The table gives the median over clips at each level and the ratio to level 0.
The noise is seeded: reruns give the same copies. With ``--prefilter-hz F`` every copy (level 0
too) is first low-passed at F Hz by :func:`retarget.smoothing.smooth_sequence`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from bench_data import SMPL_DIR

from retarget.config import RetargetConfig
from retarget.contacts import detect_foot_contacts
from retarget.metrics import MetricsConfig, evaluate_motion, load_human_reference
from retarget.metrics.human import HumanReference
from retarget.pipeline import retarget_sequence
from retarget.readers.amass import read_amass_npz
from retarget.resample import resample_sequence
from retarget.skeleton import smpl_forward_kinematics
from retarget.smoothing import smooth_sequence
from retarget.smpl_sequence import SmplSequence
from robots.registry import load_robot_spec

DATA = SMPL_DIR
CLIPS = ("walk_level2_filter", "jump_forward_level2_filter", "step_forward_back_level2_filter")
ROT_STEP_DEG = 0.5
TRANS_STEP_M = 0.005
ROWS: tuple[tuple[str, str], ...] = (
    ("human_stance_fraction", "human stance (frames x feet)"),
    ("limb_direction_error_deg", "limb error vs jittered source [deg]"),
    ("limb_error_vs_clean_deg", "limb error vs clean source [deg]"),
    ("stance_sole_abs_height_mm", "stance |sole z| [mm]"),
    ("stance_tilt_deg", "stance foot tilt [deg]"),
    ("stance_slide_cm_s", "stance sliding [cm/s]"),
    ("floating_fraction", "floating (of human-stance frames)"),
    ("mean_abs_acc_rad_s2", "mean |q̈| [rad/s²]"),
    ("human_joint_acc_m_s2", "human joints, mean |p̈| [m/s²]"),
)


def jittered(seq: SmplSequence, level: float, seed: int) -> SmplSequence:
    """`seq` with independent Gaussian noise per frame on every rotation and on the root translation."""
    if level == 0:
        return seq
    rng = np.random.default_rng(seed)
    pose = seq.pose_rotvec + rng.normal(0.0, np.radians(level * ROT_STEP_DEG), seq.pose_rotvec.shape)
    trans = seq.trans_w + rng.normal(0.0, level * TRANS_STEP_M, seq.trans_w.shape)
    return seq.with_frames(pose, trans, seq.fps)


def score(name: str, clean: SmplSequence, level: float, seed: int, prefilter_hz: float | None) -> dict[str, float]:
    config = RetargetConfig()
    spec = load_robot_spec(config.robot)
    src = jittered(clean, level, seed)
    if prefilter_hz:
        src = smooth_sequence(src, prefilter_hz)
    result = retarget_sequence(src, config)
    fps = result.motion.fps
    joints_w, _ = smpl_forward_kinematics(resample_sequence(src, fps).pose_rotvec, resample_sequence(src, fps).trans_w)
    human = HumanReference.from_joints(joints_w, fps, config.contacts)
    row = evaluate_motion(result.motion, human, spec, MetricsConfig()).__dict__
    clean_human = load_human_reference(DATA / f"video_{name}_amass.npz", fps, config.contacts)
    out = {k: float(row[k]) for k, _ in ROWS if k in row}
    out["limb_error_vs_clean_deg"] = float(evaluate_motion(result.motion, clean_human, spec).limb_direction_error_deg)
    out["human_stance_fraction"] = float(detect_foot_contacts(joints_w, fps, config.contacts).stance.mean())
    out["human_joint_acc_m_s2"] = float(np.abs(np.diff(joints_w, 2, axis=0)).mean() * fps**2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", default=",".join(CLIPS))
    parser.add_argument("--levels", default="0,1,2,4", help="Noise levels k (σ_rot = k·0.5 deg, σ_trans = k·5 mm).")
    parser.add_argument(
        "--prefilter-hz", type=float, default=None, help="Low-pass every copy at this cut-off [Hz] first."
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    levels = [float(x) for x in args.levels.split(",")]
    results: dict[float, list[dict[str, float]]] = {k: [] for k in levels}
    for i, name in enumerate(args.clips.split(",")):
        clean = read_amass_npz(DATA / f"video_{name}_amass.npz")
        for k in levels:
            results[k].append(score(name, clean, k, 1000 * i + int(10 * k), args.prefilter_hz))
            print(f"{name} level {k:g}: " + ", ".join(f"{m}={v:.3g}" for m, v in results[k][-1].items()), flush=True)
    base = {m: float(np.median([r[m] for r in results[levels[0]]])) for m, _ in ROWS}
    header = (
        "| metric (median of clips) | "
        + " | ".join(f"k={k:g} (σ {k * ROT_STEP_DEG:g}°, {k * TRANS_STEP_M * 1000:g} mm)" for k in levels)
        + " |"
    )
    print("\n" + header)
    print("|---|" + "---|" * len(levels))
    for m, label in ROWS:
        cells = []
        for k in levels:
            med = float(np.median([r[m] for r in results[k]]))
            ratio = med / base[m] if base[m] else float("nan")
            cells.append(f"{med:.3g}" + ("" if k == levels[0] else f" (×{ratio:.2f})"))
        print(f"| {label} | " + " | ".join(cells) + " |")
    if args.json is not None:
        args.json.write_text(json.dumps({str(k): v for k, v in results.items()}, indent=1))


if __name__ == "__main__":
    main()
