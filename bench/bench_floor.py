"""Floor from the motion: real clips tilted and lifted, the floor found again, and what levelling
does for the retarget's foot metrics.

    nice -n 10 python bench/bench_floor.py              # estimator: all 39 clips x tilts x axes, old / before / new
    nice -n 10 python bench/bench_floor.py --calibrate  # the flat-foot joint heights on the level clips, per split
    nice -n 10 python bench/bench_floor.py --mocap      # each cue on the CMU studio clip, whose floor is level
    nice -n 10 python bench/bench_floor.py --set flat_edge_s=0.1 [--calibrate]  # the new estimator, one field changed
    nice -n 10 python bench/bench_floor.py --retarget [--clips walk_level2_filter,...] [--tilts 3,8,15]
    nice -n 10 python bench/bench_floor.py --flight     # the flight fit on the level clips: pelvis vs centre of mass
    nice -n 10 python bench/bench_floor.py --limbs [--clips all|NAME,...] [--tilts 3,8,15] [--axis x+y]  # 30 s

Estimator mode: every bundled clip tilted by 3, 8 and 15 deg about x, y and both horizontal diagonals
and lifted by (0.4, -0.3, 0.25) m. The error counted is the tilt left in the clip after the estimator
has acted: the angle between the estimated and the true normal when it corrects, the whole tilt when it
leaves the clip as it is. Old = the footfall plane alone (free offset per foot-joint kind); before = the
fused estimator with the rest skeleton's flat feet; new = the defaults (footfalls, measured flat-foot
geometry, ballistic flight, quiet standing where no foot cue is usable). Per motion type, median and worst,
on the test half, the tuning half (bench/clip_split.py, the project's one split) and all clips; each cue's
tilt on the untilted (level) clips (its bias), whole and as pitch along the feet / roll across; how far
two cues differ on the same clip; the depth drift; level clips changed; per-clip medians. The untilted
bundled clips are taken as level (ASAP levelled them).

Flight mode: on every untilted clip, the parabola the flight cue fits, to the pelvis and to the body's centre of
mass over the same airborne frames: the tilt of its acceleration from +z and its size, and per set the bias that
makes the centre of mass's cue honest (Mahalanobis size sqrt(2) RMS; FloorConfig.flight_bias_deg is the tuning
half's).

Limbs mode: the limb direction error (both definitions: retarget/metrics/limbs.py, limbs_indep.py) against the
untilted human clip of (a) the untilted clip's retarget, (b) the tilted and lifted clip's retarget after
levelling, (c) its retarget without; b - a per clip and the share of clips within 0.5 deg, per set, motion type
and tilt.

Retarget mode (the original bench):
Each bundled clip is tilted by each angle about the diagonal horizontal axis (x+y) and lifted by
(0.4, -0.3, 0.25) m. Reported per clip and tilt: the floor normal's error against the tilted +z
[deg], the floor height's error [cm], and `eval`'s foot metrics (stance |sole z|, foot tilt,
sliding; medians), the human stance fraction the contact detector finds, and the median lean of the
robot's pelvis from vertical, for the retarget with levelling (the default) and without, as ratios
to the untilted clip's retarget, which is the reference (its own figures on the "0" row).
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable

import clip_split
import numpy as np
from bench_data import SMPL_DIR

from retarget.config import RetargetConfig
from retarget.floor import (
    _USED,
    CUE_NAMES,
    FloorConfig,
    estimate_floor,
    flight_min_frames,
    level_sequence,
    rotation_to_up,
    tilt_size,
    transform_sequence,
    used_com_w,
)
from retarget.floor_cues import GRAVITY_M_S2, fit_free_fall, isotropic_cov, rest_foot_heights_m, settled
from retarget.metrics import MetricsConfig, evaluate_motion
from retarget.metrics.clip import align
from retarget.metrics.human import HumanReference
from retarget.metrics.limbs_indep import score_indep
from retarget.metrics.replay import replay_motion
from retarget.pipeline import retarget_sequence
from retarget.readers.amass import read_amass_npz
from retarget.readers.bvh import BvhConfig, read_bvh
from retarget.readers.bvh_smpl import bvh_to_smpl
from retarget.resample import resample_sequence
from retarget.rotations import quat_to_matrix, rotvec_to_matrix
from retarget.skeleton import smpl_forward_kinematics
from retarget.smpl_sequence import SmplSequence
from robots.registry import load_robot_spec

DATA = SMPL_DIR


def _stem_name(stem: str) -> str:
    """``video_walk_level2_filter_amass`` → ``walk_level2_filter`` (the names used here)."""
    return stem.removeprefix("video_").removesuffix("_amass")


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
# The split is the project's one (bench/clip_split.py: TUNING_CLIPS / TEST_CLIPS), by clip name here; the motion
# types above only group the tables. Figures that count are those on TEST_CLIPS (and on all clips).
TUNING_CLIPS: tuple[str, ...] = tuple(_stem_name(s) for s in clip_split.TUNING_CLIPS)
TEST_CLIPS: tuple[str, ...] = tuple(_stem_name(s) for s in clip_split.TEST_CLIPS)
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


TILTS_DEG = (3.0, 8.0, 15.0)
AXES = {
    "x": np.array([1.0, 0.0, 0.0]),
    "y": np.array([0.0, 1.0, 0.0]),
    "x+y": np.array([1.0, 1.0, 0.0]) / np.sqrt(2.0),
    "x-y": np.array([1.0, -1.0, 0.0]) / np.sqrt(2.0),
}
_REST_RISE_M = rest_foot_heights_m()[[0, 2]] - rest_foot_heights_m()[[1, 3]]
"""(2,) the rest skeleton's ankle above its own toe, left and right [m]."""
OLD = FloorConfig(
    min_flat_s=float("inf"),
    flight_min_s=float("inf"),
    footfall_bias_deg=0.0,
    min_standing_s=float("inf"),
    flat_foot_heights_m=(0.0, 0.0, 0.0, 0.0),
    directional=False,
)
"""The footfall plane alone, as before the foot-geometry and flight cues: same numbers as the old estimator."""
NEW = FloorConfig()
BEFORE = dataclasses.replace(NEW, directional=False, footfall_bias_deg=0.0)
"""The fused estimator with one standard error per cue (inverse-variance weights, tilt > 3 standard errors):
the same cues and calibration as the defaults, before the 2 x 2 covariances."""
CONFIGS = {"old": OLD, "before": BEFORE, "new": NEW}
_UP = np.array([0.0, 0.0, 1.0])


def _angle_deg(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.degrees(np.arccos(np.clip(a @ b, -1.0, 1.0))))


def _forward_w(joints: np.ndarray, fps: float) -> np.ndarray:
    """(3,) horizontal unit direction the planted feet point along (heel to toe), over the clip."""
    foot = joints[:, [7, 10, 8, 11]]
    speed = np.linalg.norm(np.gradient(foot, 1.0 / fps, axis=0), axis=-1)
    low = foot[..., 2] - np.percentile(foot[..., 2], 5, axis=0) < 0.04
    planted = (speed < 0.2) & low
    along = sum(
        ((foot[:, 2 * s + 1] - foot[:, 2 * s]) * (planted[:, 2 * s] & planted[:, 2 * s + 1])[:, None]).sum(0)
        for s in range(2)
    )
    along = along - (along @ _UP) * _UP
    return along / (np.linalg.norm(along) + 1e-12)


def _pitch_roll_deg(normal: np.ndarray, forward: np.ndarray) -> tuple[float, float]:
    """Signed tilt of `normal` toward the toes (pitch, along the feet) and toward the left (roll, across) [deg]."""
    left = np.cross(_UP, forward)
    return float(np.degrees(np.arcsin(normal @ forward))), float(np.degrees(np.arcsin(normal @ left)))


def _stats(values: np.ndarray) -> str:
    if not len(values):
        return "— (0)"
    return (
        f"{np.median(values):.2f} / {np.percentile(values, 90):.2f} / {values.max():.2f} / "
        f"{np.sqrt(np.mean(values**2)):.2f} ({len(values)})"
    )


def _left_normal(joints: np.ndarray, fps: float, config: FloorConfig) -> np.ndarray:
    """The floor normal the clip is left with: the estimate where the estimator corrects, +z where not."""
    est = estimate_floor(joints, fps, config)
    return est.normal_w if est.applied else _UP


def _error_table(
    rows: dict[str, dict[str, list[float]]],
    sets: dict[str, tuple[str, ...]],
    suffix: str,
    untouched: Callable[[str], np.ndarray],
) -> None:
    """One error definition (`suffix`: "" the issue's, " self" self-consistency) per set and motion type."""
    print(
        "| set | motion type | clips x cases | old median / worst | before median / worst (<= 0.5°, <= 1°) | "
        "new median / worst | new <= 0.5° | new <= 1° | new worse than untouched |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for set_name, names in sets.items():
        for kind in (*MOTION_TYPE, "all types"):
            group = [n for n in names if kind == "all types" or TYPE_OF[n] == kind]
            old, before, new = (np.concatenate([rows[n][label + suffix] for n in group]) for label in CONFIGS)
            limit = np.concatenate([untouched(n) for n in group])
            print(
                f"| {set_name} | {kind} | {len(group)} x {len(old) // len(group)} | {np.median(old):.2f} / "
                f"{old.max():.2f} | {np.median(before):.2f} / {before.max():.2f} ({np.mean(before <= 0.5):.0%}, "
                f"{np.mean(before <= 1.0):.0%}) | {np.median(new):.2f} / {new.max():.2f} | {np.mean(new <= 0.5):.0%} | "
                f"{np.mean(new <= 1.0):.0%} | {int(np.sum(new > limit + 1e-9))} |"
            )


def estimator_bench() -> None:
    """Old vs new estimator over every clip x tilt x axis; cue biases and changed level clips."""
    rows: dict[str, dict[str, list[float]]] = {}
    bias: dict[
        str, dict[str, tuple[float, float, float, float, float]]
    ] = {}  # "before NAME" / "new NAME" -> cue -> angles
    changed: dict[str, list[str]] = {label: [] for label in CONFIGS}
    missing: dict[str, str] = {}
    drift: dict[str, tuple[float, float]] = {}
    size: dict[str, float] = {}  # "LABEL NAME" -> the untilted clip's gated tilt size
    gates: list[str] = []  # tilted cases the two estimators, or the new one's two gates, decide differently
    one_foot: dict[str, float] = {}  # untilted clips with a trunk-over-one-foot cue -> its tilt [deg]
    for name in sorted(TYPE_OF):
        seq = read_amass_npz(DATA / f"video_{name}_amass.npz")
        joints = _joints(seq)
        for label, config in CONFIGS.items():
            untilted = estimate_floor(joints, seq.fps, config)
            size[f"{label} {name}"] = untilted.tilt_size
            if untilted.applied:
                changed[label].append(name)
        level = estimate_floor(joints, seq.fps, NEW)
        forward = _forward_w(joints, seq.fps)
        for label, config in (("before", BEFORE), ("new", NEW)):
            bias[f"{label} {name}"] = {
                c.name: (
                    _angle_deg(c.normal_w, _UP),
                    *_pitch_roll_deg(c.normal_w, forward),
                    c.stderr_deg,
                    tilt_size(c.normal_w, c.covariance_w()),
                )
                for c in estimate_floor(joints, seq.fps, config).considered
            }
        if not level.cues:
            missing[name] = "; ".join(level.missing)
        drift[name] = (level.drift_deg, 100 * level.drift_m)
        # The clip's own untilted estimate per estimator: the truth of the self-consistency error.
        own = {label: estimate_floor(joints, seq.fps, config).normal_w for label, config in CONFIGS.items()}
        rows[name] = {
            key: []
            for label in CONFIGS
            for key in (label, f"{label} self", f"{label} self untouched", f"{label} applied")
        }
        rows[name]["tilt"] = []
        for tilt in TILTS_DEG:
            for axis in AXES.values():
                rot = rotvec_to_matrix(axis * np.radians(tilt))
                tilted = joints @ rot.T + OFFSET_M  # a rigid motion of the joints = the clip transformed
                decided = {}
                for label, config in CONFIGS.items():
                    est = estimate_floor(tilted, seq.fps, config)
                    decided[label] = est
                    left = est.normal_w if est.applied else _UP
                    rows[name][f"{label} applied"].append(float(est.applied))
                    rows[name][label].append(_angle_deg(left, rot @ _UP))
                    rows[name][f"{label} self"].append(_angle_deg(left, rot @ own[label]))
                    rows[name][f"{label} self untouched"].append(_angle_deg(_UP, rot @ own[label]))
                rows[name]["tilt"].append(tilt)
                new, before = decided["new"], decided["before"]
                axis_name = next(k for k, v in AXES.items() if v is axis)
                scalar = new.tilt_deg / new.stderr_deg if new.cues else float("nan")
                if new.applied != before.applied or (
                    new.cues and (scalar >= NEW.significance) != (new.tilt_size > NEW.mahalanobis_significance)
                ):
                    gates.append(
                        f"{'T' if name in TUNING_CLIPS else 'R'} {name.removesuffix('_filter')} {tilt:g}° about "
                        f"{axis_name}: before {'corrects' if before.applied else 'leaves'}, new "
                        f"{'corrects' if new.applied else 'leaves'} (scalar {scalar:.2f}, Mahalanobis "
                        f"{new.tilt_size:.2f})"
                    )
        for cue in estimate_floor(joints, seq.fps, NEW).considered:
            if cue.name == "quiet standing" and cue.bias_deg == NEW.one_foot_standing_bias_deg:
                one_foot[name] = _angle_deg(cue.normal_w, _UP)
    sets = {"test": TEST_CLIPS, "tuning (development)": TUNING_CLIPS, "all": tuple(sorted(TYPE_OF))}
    print(
        "Tilt left after levelling [deg], the issue's error: angle between the normal the estimator leaves (its"
        " estimate where it corrects, +z where not) and the tilted +z (the untilted clip's floor taken as level)"
    )
    _error_table(rows, sets, "", lambda n: np.asarray(rows[n]["tilt"]))
    print(
        "\nSelf-consistency [deg]: the same angle against R_applied @ (the estimator's own normal on the untilted"
        " clip), the clip's own untilted estimate as the truth instead of +z; untouched = angle(+z, R @ that normal)"
    )
    _error_table(rows, sets, " self", lambda n: np.asarray(rows[n]["new self untouched"]))
    print("\nCases corrected per tilt angle, before / new (of the cases; 4 axes per clip)")
    print("| set | motion type | " + " | ".join(f"{t:g}°" for t in TILTS_DEG) + " |")
    print("|---|---|" + "---|" * len(TILTS_DEG))
    for set_name, names in sets.items():
        for kind in (*MOTION_TYPE, "all types"):
            group = [n for n in names if kind == "all types" or TYPE_OF[n] == kind]
            cells = []
            for tilt in TILTS_DEG:
                at = [np.asarray(rows[n]["tilt"]) == tilt for n in group]
                before, new = (
                    int(sum(np.asarray(rows[n][f"{label} applied"])[m].sum() for n, m in zip(group, at, strict=True)))
                    for label in ("before", "new")
                )
                cells.append(f"{before} / {new} of {4 * len(group)}")
            print(f"| {set_name} | {kind} | " + " | ".join(cells) + " |")
    print(
        "\nEach cue's tilt on the untilted clips (its bias) [deg]: median / 90th percentile / max / RMS (clips with"
        " it);\nthen its signed pitch (toward the toes) and roll (toward the left): median [RMS]; its tilt in its own"
        " standard errors (1 RMS: the standard error is honest); its Mahalanobis size under its 2 x 2 covariance"
        " (1.41 RMS, the square root of 2 degrees of freedom, when honest)"
    )
    print(
        "| set | cue | estimator | tilt | pitch median [RMS] | roll median [RMS] | tilt / standard error RMS / max |"
        " Mahalanobis RMS / max |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for set_name, names in sets.items():
        for cue in CUE_NAMES:
            for label in ("before", "new"):
                values = np.array([v[cue] for n in names if cue in (v := bias[f"{label} {n}"])]).reshape(-1, 5)
                if not len(values):
                    print(f"| {set_name} | {cue} | {label} | — (0) | — | — | — | — |")
                    continue
                pitch, roll, z, m = values[:, 1], values[:, 2], values[:, 0] / values[:, 3], values[:, 4]
                print(
                    f"| {set_name} | {cue} | {label} | {_stats(values[:, 0])} | {np.median(pitch):+.2f} "
                    f"[{np.sqrt(np.mean(pitch**2)):.2f}] | {np.median(roll):+.2f} [{np.sqrt(np.mean(roll**2)):.2f}] | "
                    f"{np.sqrt(np.mean(z**2)):.2f} / {z.max():.2f} | {np.sqrt(np.mean(m**2)):.2f} / {m.max():.2f} |"
                )
    print(
        "\nTwo cues on the same untilted clip, new estimator [deg]: the difference of their (pitch, roll), median /"
        " 90th percentile / max / RMS (clips with both)."
        " A difference is some cue's bias, whatever the clip's own floor."
    )
    print("| set | " + " | ".join(f"{a} vs {b}" for a, b in _PAIRS) + " |")
    print("|---|" + "---|" * len(_PAIRS))
    for set_name, names in sets.items():
        cells = []
        for a, b in _PAIRS:
            values = np.array(
                [
                    np.hypot(v[a][1] - v[b][1], v[a][2] - v[b][2])
                    for n in names
                    if a in (v := bias[f"new {n}"]) and b in v
                ]
            )
            cells.append(_stats(values))
        print(f"| {set_name} | " + " | ".join(cells) + " |")
    print(
        "\nDepth drift, untilted clips: turn of the footfall plane from the clip's first half to its second [deg] and"
        " rise of the planted feet [cm, absolute]: median / 90th percentile / max / RMS (clips where measurable)"
    )
    print("| set | plane turn [deg] | floor rise [cm] |")
    print("|---|---|---|")
    for set_name, names in sets.items():
        turn = np.array([drift[n][0] for n in names if np.isfinite(drift[n][0])])
        rise = np.array([abs(drift[n][1]) for n in names if np.isfinite(drift[n][1])])
        print(f"| {set_name} | {_stats(turn)} | {_stats(rise)} |")
    print(
        "\nThe fused tilt of the untilted clips in its own standard errors (what the correction is gated on:"
        " Mahalanobis size new, tilt / standard error before): median / 90th percentile / max / RMS"
    )
    print("| set | before | new |")
    print("|---|---|---|")
    for set_name, names in sets.items():
        cells = [
            _stats(np.array([size[f"{label} {n}"] for n in names if np.isfinite(size[f"{label} {n}"])]))
            for label in ("before", "new")
        ]
        print(f"| {set_name} | " + " | ".join(cells) + " |")
    for label in CONFIGS:
        print(f"level clips changed by the {label} estimator: {len(changed[label])} of 39 {changed[label]}")
    print(
        "\nTilted cases decided differently by the two estimators, or by the new one's two gates (scalar: tilt over"
        f" its standard error, gate {NEW.significance:g}; Mahalanobis, gate {NEW.mahalanobis_significance:g}):"
    )
    for line in gates:
        print(f"  {line}")
    print("Trunk over one foot on the untilted clips (both feet never down together): its tilt from +z [deg]")
    for name, tilt in one_foot.items():
        print(f"  {'T' if name in TUNING_CLIPS else 'R'} {name.removesuffix('_filter')}: {tilt:.2f}")
    tuning = np.array([t for n, t in one_foot.items() if n in TUNING_CLIPS])
    print(f"  RMS over the tuning clips (one_foot_standing_bias_deg): {np.sqrt(np.mean(tuning**2)):.2f}")
    print("clips with no usable cue (untilted):")
    for name, why in missing.items():
        print(f"  {name}: {why}")
    print(
        "\nPer clip: tilt left after levelling, median of the 12 cases [deg], before / new, then self-consistency"
        " before / new (T tuning, R test)"
    )
    for kind, group in MOTION_TYPE.items():
        cells = [
            f"{'T' if n in TUNING_CLIPS else 'R'} {n.removesuffix('_filter')} "
            f"{np.median(rows[n]['before']):.2f} / {np.median(rows[n]['new']):.2f} "
            f"(self {np.median(rows[n]['before self']):.2f} / {np.median(rows[n]['new self']):.2f})"
            for n in sorted(group)
        ]
        print(f"{kind}: " + "; ".join(cells))


_PAIRS = (("footfalls", "foot geometry"), ("foot geometry", "quiet standing"), ("footfalls", "quiet standing"))


def calibrate_bench(config: FloorConfig = NEW) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Heights of the foot joints above the right toe in frames where both feet are flat and planted (less
    `config.flat_edge_s` at each end of a foot's flat stance, as the foot-geometry cue reads them), on the
    untilted clips (taken as level): the flat-foot model `FloorConfig.flat_foot_heights_m` is the tuning half's.
    Returns (median, scaled MAD) per set: `flat_foot_heights_m` and `flat_foot_spread_m` are the tuning half's."""
    per_clip: dict[str, np.ndarray] = {}
    medians: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name in sorted(TYPE_OF):
        seq = read_amass_npz(DATA / f"video_{name}_amass.npz")
        foot = _joints(seq)[:, [7, 10, 8, 11]]
        speed = np.linalg.norm(np.gradient(foot, 1.0 / seq.fps, axis=0), axis=-1)
        height = foot[..., 2]
        planted = (speed < 0.2) & (height - np.percentile(height, 5, axis=0) < 0.04)
        flat = settled(planted[:, 0::2] & planted[:, 1::2], round(config.flat_edge_s * seq.fps)).all(axis=1)
        if flat.sum() >= 5:
            per_clip[name] = np.median(height[flat] - height[flat, 3:4], axis=0)
    rest = np.asarray(config.flat_foot_heights_m)
    print("Foot joints above the right toe, both feet flat and planted, untilted clips [cm]: median (MAD) over clips")
    print("| set | clips | L ankle | L toe | R ankle | R toe |")
    print("|---|---|---|---|---|---|")
    spread = np.asarray(config.flat_foot_spread_m)
    print(
        "| FloorConfig default | — | "
        + " | ".join(f"{100 * h:.2f} ({100 * d:.2f})" for h, d in zip(rest, spread, strict=True))
        + " |"
    )
    sets = {"tuning": TUNING_CLIPS, "test": TEST_CLIPS, "all": tuple(sorted(TYPE_OF))}
    for set_name, names in sets.items():
        values = np.array([per_clip[n] for n in names if n in per_clip])
        median = np.median(values, axis=0)
        mad = 1.4826 * np.median(np.abs(values - median), axis=0)
        medians[set_name] = (median, mad)
        cells = " | ".join(f"{100 * m:.2f} ({100 * d:.2f})" for m, d in zip(median, mad, strict=True))
        print(f"| {set_name} | {len(values)} | {cells} |")
    return medians


MOCAP_BVH = DATA.parent / "formats" / "bvh" / "cmu_01_01.bvh"
"""The one studio mocap clip (CMU 01_01, optical markers over a level studio floor): the floor truly at +z."""


def mocap_bench() -> None:
    """Each cue's tilt on the CMU studio clip, whose floor is level (+z is the truth there, not a guess), and
    its 12 tilted copies under both error definitions."""
    bvh_config = BvhConfig(unit="cmu")
    seq = bvh_to_smpl(read_bvh(MOCAP_BVH, bvh_config), MOCAP_BVH, config=bvh_config)
    joints = _joints(seq)
    forward = _forward_w(joints, seq.fps)
    print(f"{MOCAP_BVH.name}: {len(joints)} frames at {seq.fps:g} Hz, read as SMPL (retarget/readers/bvh_smpl.py)")
    print("| estimator | cue | tilt from +z [deg] | pitch / roll [deg] | standard error [deg] | used |")
    print("|---|---|---|---|---|---|")
    for label, config in CONFIGS.items():
        est = estimate_floor(joints, seq.fps, config)
        used = {c.name for c in est.cues}
        for cue in est.considered:
            pitch, roll = _pitch_roll_deg(cue.normal_w, forward)
            print(
                f"| {label} | {cue.name} | {_angle_deg(cue.normal_w, _UP):.2f} | {pitch:+.2f} / {roll:+.2f} | "
                f"{cue.stderr_deg:.2f} | {'yes' if cue.name in used else 'no'} |"
            )
        print(f"| {label} | fused | {est.tilt_deg:.2f} | — | {est.stderr_deg:.2f} | applied: {est.applied} |")
    print(
        "\nTilted copies (3, 8, 15 deg about x, y, x+y, x-y; lifted): median / worst [deg], issue's / self-consistency"
    )
    print("| estimator | issue's error | self-consistency |")
    print("|---|---|---|")
    for label, config in CONFIGS.items():
        own = estimate_floor(joints, seq.fps, config).normal_w
        issue, self_ = [], []
        for tilt in TILTS_DEG:
            for axis in AXES.values():
                rot = rotvec_to_matrix(axis * np.radians(tilt))
                left = _left_normal(joints @ rot.T + OFFSET_M, seq.fps, config)
                issue.append(_angle_deg(left, rot @ _UP))
                self_.append(_angle_deg(left, rot @ own))
        print(f"| {label} | {np.median(issue):.2f} / {max(issue):.2f} | {np.median(self_):.2f} / {max(self_):.2f} |")


def _honest_bias_deg(tilts_deg: np.ndarray, cov_w: list[np.ndarray], normals: list[np.ndarray]) -> float:
    """The isotropic bias [deg] that, added to each cue's residual covariance, makes the RMS Mahalanobis size of
    its tilts from +z the square root of 2 (two honest degrees of freedom); 0 where they are honest without one."""
    if not len(tilts_deg):
        return float("nan")

    def rms(bias: float) -> float:
        return float(
            np.sqrt(
                np.mean([tilt_size(n, c + isotropic_cov(n, bias)) ** 2 for n, c in zip(normals, cov_w, strict=True)])
            )
        )

    if rms(0.0) <= np.sqrt(2.0):
        return 0.0
    lo, hi = 0.0, 90.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if rms(mid) > np.sqrt(2.0) else (lo, mid)
    return hi


def flight_bench(config: FloorConfig = NEW) -> None:
    """The flight fit on the untilted clips (taken as level): the same parabola fitted to the pelvis and to the
    centre of mass, over the airborne frames the estimator finds; the bias that makes the cue honest there."""
    print(
        "Flight on the untilted clips: tilt of the fitted free-fall acceleration from +z [deg] and its size [m/s^2],"
        " pelvis vs centre of mass (same frames, same fit);\nthe centre of mass's residual standard error [deg] and"
        f" Mahalanobis size without a bias; used: within {100 * config.flight_g_tolerance:g} % of g"
    )
    print("| clip | set | frames | pelvis tilt / accel | CoM tilt / accel | CoM residual stderr | CoM size | used |")
    print("|---|---|---|---|---|---|---|---|")
    rows: dict[str, tuple[float, float, np.ndarray, np.ndarray, bool]] = {}
    fit = {"edge_frames": config.flight_edge_frames, "min_phase_frames": config.flight_min_phase_frames}
    for name in sorted(TYPE_OF):
        seq = read_amass_npz(DATA / f"video_{name}_amass.npz")
        joints = _joints(seq)
        used = joints[:, _USED]
        airborne = estimate_floor(joints, seq.fps, config).airborne  # the frames the estimator takes as flight
        assert airborne is not None
        com = fit_free_fall(used_com_w(used), airborne, seq.fps, **fit)
        pelvis = fit_free_fall(used[:, 4], airborne, seq.fps, **fit)
        if com is None or pelvis is None or com.frames < flight_min_frames(config, seq.fps):
            continue
        g_com = float(np.linalg.norm(com.acc_w))
        normal = -com.acc_w / g_com
        across = np.eye(3) - np.outer(normal, normal)
        cov = across @ com.acc_cov_w @ across / g_com**2
        ok = abs(g_com - GRAVITY_M_S2) <= config.flight_g_tolerance * GRAVITY_M_S2
        pelvis_tilt = _angle_deg(-pelvis.acc_w / np.linalg.norm(pelvis.acc_w), _UP)
        rows[name] = (pelvis_tilt, _angle_deg(normal, _UP), cov, normal, ok)
        print(
            f"| {name.removesuffix('_filter')} | {'T' if name in TUNING_CLIPS else 'R'} | {com.frames} | "
            f"{pelvis_tilt:.2f} / {np.linalg.norm(pelvis.acc_w):.2f} | {rows[name][1]:.2f} / {g_com:.2f} | "
            f"{np.degrees(np.sqrt(np.trace(cov))):.2f} | {tilt_size(normal, cov):.2f} | {'yes' if ok else 'no'} |"
        )
    print(
        "\nPer set, clips whose flight is within the gate on g: tilt from +z [deg] median / 90th percentile / max /"
        " RMS; the bias that makes the CoM's Mahalanobis size sqrt(2) RMS (FloorConfig.flight_bias_deg: tuning)"
    )
    print("| set | pelvis | centre of mass | honest bias [deg] |")
    print("|---|---|---|---|")
    for set_name, names in (("tuning", TUNING_CLIPS), ("test", TEST_CLIPS), ("all", tuple(sorted(TYPE_OF)))):
        kept = [rows[n] for n in names if n in rows and rows[n][4]]
        pel, com_tilt = np.array([r[0] for r in kept]), np.array([r[1] for r in kept])
        bias = _honest_bias_deg(com_tilt, [r[2] for r in kept], [r[3] for r in kept])
        print(f"| {set_name} | {_stats(pel)} | {_stats(com_tilt)} | {bias:.2f} |")


def _limb_errors_deg(seq: SmplSequence, human_seq: SmplSequence, config: RetargetConfig) -> tuple[float, float]:
    """Retarget `seq` and score its limb directions against `human_seq` (the untilted human clip): the project's
    definition (retarget/metrics/limbs.py, mean over segments and frames) and the independent one
    (retarget/metrics/limbs_indep.py, mean over its five segment types) [deg]."""
    motion = retarget_sequence(seq, config).motion
    human_src = resample_sequence(human_seq, motion.fps)
    human = HumanReference.from_joints(_joints(human_src), motion.fps, config.contacts)
    spec = load_robot_spec(config.robot)
    row = evaluate_motion(motion, human, spec, MetricsConfig())
    motion, human = align(motion, human)
    indep = score_indep(seq.name, replay_motion(spec, motion), human)
    return row.limb_direction_error_deg, float(np.mean(list(indep.limb_dir_err_indep_deg.values())))


def limbs_bench(names: tuple[str, ...], tilts_deg: tuple[float, ...], axis_name: str) -> None:
    """Limb direction error of three retargets against the untilted human clip: (a) the untilted clip, (b) the
    tilted and lifted clip levelled by the estimator, (c) the same tilted clip not levelled; b - a per clip."""
    config = RetargetConfig()
    axis = AXES[axis_name]
    rows: dict[tuple[str, float], dict[str, float]] = {}
    print(
        f"Limb direction error against the untilted human clip [deg], tilts {', '.join(f'{t:g}' for t in tilts_deg)}"
        f" deg about {axis_name}, lifted {OFFSET_M.tolist()} m: a = untilted clip retargeted, b = tilted clip levelled"
        " then retargeted, c = tilted clip retargeted as it is;\nproject's definition (limbs.py) | independent"
        " (limbs_indep.py); tilt left = angle between the levelled clip's +z and the untilted clip's"
    )
    print("| clip | set | type | tilt | tilt left | a | b | c | b - a | a, b, c, b - a (independent) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        seq = read_amass_npz(DATA / f"video_{name}_amass.npz")
        base, _ = level_sequence(seq)
        a = _limb_errors_deg(base, seq, config)
        for tilt in tilts_deg:
            rot = rotvec_to_matrix(axis * np.radians(tilt))
            tilted = transform_sequence(seq, rot, OFFSET_M)
            levelled, est = level_sequence(tilted)
            b, c = _limb_errors_deg(levelled, seq, config), _limb_errors_deg(tilted, seq, config)
            left = _angle_deg(rot @ _UP, rotation_to_up(est.normal_w).T @ _UP if est.applied else _UP)
            rows[(name, tilt)] = {
                "left": left,
                "applied": float(est.applied),
                "a": a[0],
                "b": b[0],
                "c": c[0],
                "ai": a[1],
                "bi": b[1],
                "ci": c[1],
            }
            print(
                f"| {name.removesuffix('_filter')} | {'T' if name in TUNING_CLIPS else 'R'} | {TYPE_OF[name]} | "
                f"{tilt:g} | {left:.2f} | {a[0]:.2f} | {b[0]:.2f} | {c[0]:.2f} | {b[0] - a[0]:+.2f} | {a[1]:.2f}, "
                f"{b[1]:.2f}, {c[1]:.2f}, {b[1] - a[1]:+.2f} |",
                flush=True,
            )
    print(
        "\nPer set, motion type and tilt: medians of a / b / c [deg]; b - a median / max; share of clips with"
        " b - a <= 0.5 deg (the levelled retarget within 0.5 deg of the untilted one), over all clips and over those"
        " the estimator levelled (n: how many); project's | independent"
    )
    print(
        "| set | type | tilt | clips | a / b / c | b - a median / max | b - a <= 0.5° | a / b / c (indep) |"
        " b - a (indep) median / max | b - a <= 0.5° (indep) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    sets = {"test": TEST_CLIPS, "tuning (development)": TUNING_CLIPS, "all": tuple(sorted(TYPE_OF))}
    for set_name, members in sets.items():
        for kind in (*MOTION_TYPE, "all types"):
            for tilt in tilts_deg:
                group = [rows[(n, tilt)] for n in names if n in members and (kind == "all types" or TYPE_OF[n] == kind)]
                if not group:
                    continue
                cells = []
                done = np.array([r["applied"] for r in group]) > 0.5
                for suffix in ("", "i"):
                    a, b, c = (np.array([r[k + suffix] for r in group]) for k in "abc")
                    cells += [
                        f"{np.median(a):.2f} / {np.median(b):.2f} / {np.median(c):.2f}",
                        f"{np.median(b - a):+.2f} / {np.max(b - a):+.2f}",
                        f"{np.mean(b - a <= 0.5):.0%}, levelled {np.mean((b - a)[done] <= 0.5):.0%} (n {done.sum()})"
                        if done.any()
                        else f"{np.mean(b - a <= 0.5):.0%}, levelled — (n 0)",
                    ]
                print(f"| {set_name} | {kind} | {tilt:g} | {len(group)} | " + " | ".join(cells) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--retarget", action="store_true", help="Foot metrics of the retarget (slow).")
    parser.add_argument("--calibrate", action="store_true", help="The flat-foot joint heights, per split.")
    parser.add_argument("--mocap", action="store_true", help="The cues on the CMU studio clip (a level floor).")
    parser.add_argument("--flight", action="store_true", help="The flight cue on the level clips: pelvis vs CoM.")
    parser.add_argument(
        "--limbs",
        action="store_true",
        help="Limb direction error of the levelled retarget vs the untilted one (--clips all or names, --tilts).",
    )
    parser.add_argument("--axis", default="x+y", choices=tuple(AXES), help="Tilt axis of --limbs.")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="Run the new estimator with this FloorConfig field changed (a number; repeatable).",
    )
    parser.add_argument("--clips", default=",".join(CLIPS))
    parser.add_argument("--tilts", default="3,8,15", help="Tilt angles [deg].")
    args = parser.parse_args()
    if args.set:
        global NEW
        # Each value as its field's type (an int field takes "1", not 1.0).
        changes = {k: type(getattr(NEW, k))(float(v)) for k, v in (item.split("=", 1) for item in args.set)}

        NEW = CONFIGS["new"] = dataclasses.replace(NEW, **changes)  # type: ignore[arg-type]
    if args.calibrate:
        calibrate_bench(NEW)
        return
    if args.mocap:
        mocap_bench()
        return
    if args.flight:
        flight_bench(NEW)
        return
    if args.limbs:
        names = tuple(sorted(TYPE_OF)) if args.clips in ("all", ",".join(CLIPS)) else tuple(args.clips.split(","))
        limbs_bench(names, tuple(float(x) for x in args.tilts.split(",")), args.axis)
        return
    if not args.retarget:
        estimator_bench()
        return
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
