"""Floor from the motion: real clips tilted and lifted, the floor found again, and what levelling
does for the retarget's foot metrics.

    nice -n 10 python bench/bench_floor.py [--clips walk_level2_filter,...] [--tilts 3,8,15]

Each bundled clip is tilted by each angle about the diagonal horizontal axis (x+y) and lifted by
(0.4, -0.3, 0.25) m. Reported per clip and tilt: the floor normal's error against the tilted +z
[deg], the floor height's error [cm], and `eval`'s foot metrics (stance |sole z|, foot tilt,
sliding; medians), the human stance fraction the contact detector finds, and the median lean of the
robot's pelvis from vertical, for the retarget with levelling (the default) and without, as ratios
to the untilted clip's retarget, which is the reference (its own figures on the "0" row).
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_data import SMPL_DIR

from retarget.config import RetargetConfig
from retarget.floor import estimate_floor, level_sequence, transform_sequence
from retarget.metrics import MetricsConfig, evaluate_motion
from retarget.metrics.human import HumanReference
from retarget.pipeline import retarget_sequence
from retarget.readers.amass import read_amass_npz
from retarget.rotations import quat_to_matrix, rotvec_to_matrix
from retarget.skeleton import smpl_forward_kinematics
from retarget.smpl_sequence import SmplSequence
from robots.registry import load_robot_spec

DATA = SMPL_DIR
CLIPS = ("walk_level2_filter", "jump_forward_level2_filter", "step_forward_back_level2_filter")
FOOT = ("stance_sole_abs_height_mm", "stance_tilt_deg", "stance_slide_cm_s", "human_stance", "root_lean_deg")
AXIS = np.array([1.0, 1.0, 0.0]) / np.sqrt(2.0)
OFFSET_M = np.array([0.4, -0.3, 0.25])
# Motion type of each of the 39 bundled clips: "in place" where the feet never spread 8 cm apart while planted
# (the old footfall plane refuses them) or the pelvis stays within ~0.3 m, "jumping" for the other jump clips,
# "walking" for the rest (walks, steps, runs, moving around).
MOTION_TYPE: dict[str, tuple[str, ...]] = {
    "in place": (
        "jump_degree_level1_filter",
        "kick_level1_filter",
        "kick_level2_filter",
        "side_jump_level1_filter",
        "side_jump_level2_filter",
        "side_jump_level3_filter",
        "single_foot_balance_level1_filter",
        "single_foot_balance_level2_filter",
        "single_foot_balance_level4_filter",
        "single_foot_jump_level1_filter",
        "squat_level1_filter",
        "squat_level3_filter",
        "step_forward_back_level1_filter",
    ),
    "walking": (
        "APT_level1",
        "CR7_level1_filter",
        "CR7_level2_filter",
        "SpiderMan_level2",
        "lebron1_filter",
        "shoot_level1_filter",
        "shoot_level2_filter",
        "shoot_level3_filter",
        "step_forward_back_level2_filter",
        "step_forward_back_level3_filter",
        "step_forward_back_level4_filter",
        "step_forward_forward_level1_filter",
        "step_forward_forward_level2_filter",
        "step_forward_forward_level3_filter",
        "step_forward_forward_level4_filter",
        "walk_level1_filter",
        "walk_level2_filter",
        "walk_level3_filter",
    ),
    "jumping": (
        "jump_degree_level2_filter",
        "jump_degree_level4_filter",
        "jump_degree_level5_filter",
        "jump_forward_level1_filter",
        "jump_forward_level2_filter",
        "jump_forward_level3_filter",
        "jump_forward_level4_filter",
        "single_foot_jump_level2_filter",
    ),
}
# The fixed split, made before any tuning: within each motion type, clips sorted by name, alternately tuning
# (even positions) and reporting (odd). Figures that count are those on REPORTING_CLIPS (and on all clips).
TUNING_CLIPS: tuple[str, ...] = tuple(n for group in MOTION_TYPE.values() for n in sorted(group)[0::2])
REPORTING_CLIPS: tuple[str, ...] = tuple(n for group in MOTION_TYPE.values() for n in sorted(group)[1::2])
TYPE_OF: dict[str, str] = {n: kind for kind, group in MOTION_TYPE.items() for n in group}


def _joints(seq: SmplSequence) -> np.ndarray:
    return smpl_forward_kinematics(seq.pose_rotvec, seq.trans_w)[0]


def foot_metrics(seq: SmplSequence, level: bool) -> dict[str, float]:
    """Retarget `seq` (levelled first when `level`) and score it against the clip as retargeted."""
    config = RetargetConfig()
    src = level_sequence(seq)[0] if level else seq
    result = retarget_sequence(src, config)
    human = HumanReference.from_joints(_joints(src), src.fps, config.contacts)
    row = evaluate_motion(result.motion, human, load_robot_spec(config.robot), MetricsConfig())
    out = {k: float(getattr(row, k)) for k in FOOT[:3]}
    out["human_stance"] = float(human.stance.mean())
    # How far the robot's pelvis leans from gravity: a tilted world frame leans the whole robot.
    up_b = quat_to_matrix(result.motion.root_quat_w)[:, :, 2]
    out["root_lean_deg"] = float(np.degrees(np.median(np.arccos(np.clip(up_b[:, 2], -1.0, 1.0)))))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", default=",".join(CLIPS))
    parser.add_argument("--tilts", default="3,8,15", help="Tilt angles [deg].")
    args = parser.parse_args()
    print(
        "| clip | tilt | normal err [deg] | height err [cm] | "
        + " | ".join(f"{k} levelled / unlevelled (× untilted)" for k in FOOT)
        + " |"
    )
    print("|---|---|---|---|" + "---|" * len(FOOT))
    for name in args.clips.split(","):
        seq = read_amass_npz(DATA / f"video_{name}_amass.npz")
        level = estimate_floor(_joints(seq), seq.fps)
        base = foot_metrics(seq, level=True)
        print(f"| {name} | 0 | — | — | " + " | ".join(f"{base[k]:.3g}" for k in FOOT) + " |", flush=True)
        for tilt in (float(x) for x in args.tilts.split(",")):
            rot = rotvec_to_matrix(AXIS * np.radians(tilt))
            tilted = transform_sequence(seq, rot, OFFSET_M)
            est = estimate_floor(_joints(tilted), seq.fps)
            normal_true = rot @ np.array([0.0, 0.0, 1.0])
            err_deg = np.degrees(np.arccos(np.clip(est.normal_w @ normal_true, -1.0, 1.0)))
            err_cm = 100 * abs(est.height_m - (level.height_m + normal_true @ OFFSET_M))
            fixed, raw = foot_metrics(tilted, level=True), foot_metrics(tilted, level=False)
            cells = [f"{fixed[k] / base[k]:.2f} / {raw[k] / base[k]:.2f}" for k in FOOT]
            print(f"| {name} | {tilt:g}° | {err_deg:.2f} | {err_cm:.2f} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
