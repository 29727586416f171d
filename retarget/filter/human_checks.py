"""Layer 1 on the human source: the SMPL clip as the retargeter saw it (resampled to the robot rate).

Heights are measured from the floor the clip itself stands on: the densest height of the
lowest foot joint (see :func:`floor_offset_m`), with SMPL's toe and ankle joints sitting
`human_toe_contact_height_m` / `human_ankle_contact_height_m` above a flat floor. A floor
that is off by more than `reground_tolerance_m` for the whole clip is a calibration error:
it is repaired (reported as ``human.reground``) and the checks run on the repaired clip.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from retarget.contacts import FOOT_JOINTS, detect_foot_contacts
from retarget.filter import motion_checks as mc
from retarget.filter.config import KinematicConfig
from retarget.filter.verdict import CheckResult, Repair
from retarget.rotations import rotvec_to_matrix
from retarget.skeleton import Skeleton, smpl_forward_kinematics
from retarget.smpl_sequence import SMPL_JOINT_NAMES, SmplSequence

_FOOT_SET = {j for pair in FOOT_JOINTS for j in pair}
_OTHER_JOINTS = [j for j in range(24) if j not in _FOOT_SET]


@dataclass(frozen=True)
class HumanKinematics:
    checks: tuple[CheckResult, ...]
    repair: Repair | None
    floor_offset_m: float
    """Height of the clip's floor above z = 0 [m] (before repair)."""
    airborne: np.ndarray
    """(T,) True where the contact detector sees no foot in stance."""


def foot_heights_m(joints_w: np.ndarray, cfg: KinematicConfig) -> np.ndarray:
    """(T, 2, 2) [m] height above a flat floor at z = 0 implied by each (foot, [ankle, toe]) joint."""
    contact = np.array([cfg.human_ankle_contact_height_m, cfg.human_toe_contact_height_m])
    idx = np.array(FOOT_JOINTS)  # (2 feet, [ankle, toe])
    return joints_w[:, idx, 2] - contact


# SMPL joints the G1 reproduces with its own motors, and the name stem of those motors: the
# human joint may turn no faster than the slowest of them (a 3-axis joint needs all of its motors).
SMPL_TO_MOTORS: dict[int, str] = {
    1: "left_hip",
    2: "right_hip",
    4: "left_knee",
    5: "right_knee",
    7: "left_ankle",
    8: "right_ankle",
    3: "waist",
    6: "waist",
    9: "waist",
    16: "left_shoulder",
    17: "right_shoulder",
    18: "left_elbow",
    19: "right_elbow",
}


def smpl_joint_speed_limits(joint_names, velocity_limits_rad_s) -> np.ndarray:
    """(24,) speed limit [rad/s] per SMPL joint from the robot's motors (inf where the robot has none)."""
    limits = np.full(24, np.inf)
    for j, stem in SMPL_TO_MOTORS.items():
        found = [v for n, v in zip(joint_names, velocity_limits_rad_s) if n.startswith(stem)]
        if found:
            limits[j] = min(found)
    return limits


def check_joint_rates(rot_local: np.ndarray, fps: float, limits_rad_s: np.ndarray) -> CheckResult:
    """SMPL joints turning relative to their parent faster than the robot motors that play them."""
    num = len(rot_local)
    rate = np.zeros((num, 24))
    if num >= 2:
        rel = np.einsum("tjik,tjil->tjkl", rot_local[:-1], rot_local[1:])
        cos = np.clip((np.trace(rel, axis1=2, axis2=3) - 1.0) / 2.0, -1.0, 1.0)
        step = np.arccos(cos) * fps
        rate[:-1] = step
        rate[1:] = np.maximum(rate[1:], step)
    rate[:, 0] = 0.0  # the root's rotation is the floating base's, checked by root_spike
    ratio = rate / limits_rad_s
    bad = (ratio > 1.0).any(axis=1)
    t, j = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    worst = float(ratio.max())
    return mc._result(
        "human.joint_speed",
        bad,
        worst,
        1.0,
        "× limit",
        f"SMPL joint {SMPL_JOINT_NAMES[j]} turns at {rate[t, j]:.0f} rad/s, {worst:.2f}× the {limits_rad_s[j]:g} rad/s "
        f"of the G1 motors that play it, at frame {t}; {bad.sum()} frames",
        joint=SMPL_JOINT_NAMES[j],
    )


def check_human(
    seq: SmplSequence,
    cfg: KinematicConfig = KinematicConfig(),
    skeleton: Skeleton | None = None,
    joint_speed_limits_rad_s: np.ndarray | None = None,
) -> HumanKinematics:
    """All layer-1 checks on an SMPL sequence (already at the robot's frame rate).

    `joint_speed_limits_rad_s` (24,) per SMPL joint, see :func:`smpl_joint_speed_limits` (none: no limit)."""
    fps = seq.fps
    finite = mc.check_finite(
        "human.finite", np.concatenate([seq.pose_rotvec.reshape(seq.num_frames, -1), seq.trans_w], axis=1)
    )
    pose = np.nan_to_num(seq.pose_rotvec)
    trans = np.nan_to_num(seq.trans_w)
    joints_w, rot_w = smpl_forward_kinematics(pose, trans, skeleton)
    feet = foot_heights_m(joints_w, cfg)
    offset = mc.floor_offset_m(feet.min(axis=(1, 2)), cfg.floor_window_m)
    repair = None
    if abs(offset) > cfg.reground_tolerance_m:
        repair = Repair(
            "human.reground",
            -offset,
            f"the whole clip stands {100 * offset:+.1f} cm off the floor; moved by {-100 * offset:+.1f} cm",
        )
        joints_w = joints_w - np.array([0.0, 0.0, offset])
        feet = feet - offset
    # Non-foot joints are inside the body: none may be below the floor at all.
    lowest = np.minimum(feet.min(axis=(1, 2)), joints_w[:, _OTHER_JOINTS, 2].min(axis=1))
    contacts = detect_foot_contacts(joints_w, fps)
    foot_pos = joints_w[:, np.array(FOOT_JOINTS)]  # (T, 2, 2, 3)
    pelvis = joints_w[:, 0]
    floating = mc.check_floating("human.floating", lowest, pelvis[:, 2], fps, cfg)
    # The contact detector must agree that no foot is in stance (it ignores slow, low feet noise).
    floating = _and_mask(floating, contacts.airborne)
    checks = (
        finite,
        mc.check_frozen("human.frozen", np.concatenate([pose.reshape(len(pose), -1), trans], axis=1), fps, cfg),
        mc.check_root_teleport("human.root_teleport", pelvis, fps, cfg),
        mc.check_jitter("human.jitter", joints_w, cfg),
        mc.check_root_spike("human.root_spike", pelvis, rot_w[:, 0], fps, cfg),
        mc.check_penetration("human.penetration", lowest, cfg),
        floating,
        mc.check_sliding("human.sliding", feet, mc.horizontal_speed(foot_pos, fps), fps, cfg),
        check_joint_rates(
            rotvec_to_matrix(pose),
            fps,
            (np.full(24, np.inf) if joint_speed_limits_rad_s is None else joint_speed_limits_rad_s)
            * cfg.joint_speed_factor,
        ),
    )
    return HumanKinematics(checks, repair, offset, contacts.airborne)


def _and_mask(check: CheckResult, mask: np.ndarray) -> CheckResult:
    from dataclasses import replace

    bad = check.bad & mask
    return replace(check, bad=bad, reason=check.reason if bad.any() else "")
