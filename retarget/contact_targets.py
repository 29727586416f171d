"""Robot foot targets from human stance: flat, fixed in place, on a floor found per contact.

For each stance phase of each foot (from :mod:`retarget.contacts`), the robot foot gets one
target for the whole phase: the mean horizontal position of the human ankle over the phase
(so it cannot slide), the human foot's mean heading with zero roll and pitch (flat), and
the height at which the robot's soles touch z = 0. The human's own floor height is found per
contact too: each stance phase says how far the human ankle sits from where it should be, and
that vertical correction is interpolated between phases, so a reconstruction whose floor
drifts up or down over the clip is corrected locally rather than by one clip-wide offset.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from retarget.quantiles import median, percentile
from retarget.tree_kinematics import axis_angle_matrices


@dataclass(frozen=True)
class FootTargets:
    """Per-frame targets for both robot feet (index 0 left, 1 right)."""

    stance: np.ndarray
    """(T, 2) bool: the foot is in contact and must follow the targets below."""
    ankle_pos_w: np.ndarray
    """(T, 2, 3) [m] target of the matched ankle point (a point fixed on the foot link) in stance frames (undefined
    elsewhere)."""
    foot_rot_w: np.ndarray
    """(T, 2, 3, 3) flat target orientation (heading only) in stance frames."""
    vertical_shift_m: np.ndarray
    """(T,) [m] vertical correction applied to all human targets at each frame."""


def stance_phases(stance: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) frame ranges where `stance` (T,) is True."""
    padded = np.concatenate([[False], stance, [False]])
    edges = np.flatnonzero(np.diff(padded.astype(int)))
    return list(zip(edges[::2], edges[1::2]))


def heading_rad(rot_w: np.ndarray) -> np.ndarray:
    """Yaw [rad] of the x axis of rotations (..., 3, 3) projected on the floor."""
    return np.arctan2(rot_w[..., 1, 0], rot_w[..., 0, 0])


def _circular_mean(angles: np.ndarray) -> float:
    return float(np.arctan2(np.sin(angles).mean(), np.cos(angles).mean()))


def flat_ankle_height_w(ankle_w: np.ndarray, toe_w: np.ndarray, stance: np.ndarray) -> np.ndarray:
    """(T, 2) [m] the height the ankle would have with its foot flat: the ankle's own height, or, where the toe
    sits lower than a flat foot puts it (the heel raised, the human on the ball of the foot), the toe's height
    plus the flat foot's ankle-over-toe drop. The drop is the median ankle-over-toe height over the stance
    frames, pooled over both feet (a flat foot in most of them)."""
    drop = ankle_w[..., 2] - toe_w[..., 2]
    flat_drop = median(drop[stance]) if stance.any() else median(drop.reshape(-1))
    return np.asarray(np.minimum(ankle_w[..., 2], toe_w[..., 2] + flat_drop))


def _yaw_matrix(yaw_rad: float) -> list[list[float]]:
    """:func:`retarget.tree_kinematics.axis_angle_matrices` about +z by `yaw_rad`, term for term on Python floats
    (the same values, signed zeros included) without its array stacking: called once per stance phase."""
    x, y, z = 0.0, 0.0, 1.0
    c, s = float(np.cos(np.array(yaw_rad))), float(np.sin(np.array(yaw_rad)))
    C = 1.0 - c
    return [
        [c + x * x * C, x * y * C - z * s, x * z * C + y * s],
        [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
        [z * x * C - y * s, z * y * C + x * s, c + z * z * C],
    ]


def foot_targets(
    ankle_w: np.ndarray,
    foot_rot_w: np.ndarray,
    stance: np.ndarray,
    ankle_height_flat_m: float,
    toe_w: np.ndarray | None = None,
    floor_percentile: float = 50.0,
    floor_per_phase: bool = True,
) -> FootTargets:
    """Foot targets from the scaled human.

    Args:
        ankle_w: (T, 2, 3) [m] scaled human ankle positions (left, right).
        foot_rot_w: (T, 2, 3, 3) human foot orientations mapped to the robot foot frame.
        stance: (T, 2) human stance.
        ankle_height_flat_m: height of the robot's matched ankle point when its soles rest on z = 0.
        toe_w: (T, 2, 3) [m] scaled human toes; with them each phase's floor comes from the ankle's flat-foot
            height (:func:`flat_ankle_height_w`) instead of the ankle's own.
        floor_percentile: the percentile of a phase's ankle heights that stands for its floor [%].
    """
    num_frames = ankle_w.shape[0]
    ankle_z = ankle_w[..., 2] if toe_w is None else flat_ankle_height_w(ankle_w, toe_w, stance)
    centres, shifts = [], []
    targets_pos = np.zeros((num_frames, 2, 3))
    targets_rot = np.tile(np.eye(3), (num_frames, 2, 1, 1))
    for foot in range(2):
        for start, end in stance_phases(stance[:, foot]):
            centres.append(0.5 * (start + end - 1))
            shifts.append(ankle_height_flat_m - percentile(ankle_z[start:end, foot], floor_percentile))
    if centres and not floor_per_phase:
        shift = np.full(num_frames, ankle_height_flat_m - percentile(ankle_z[stance], floor_percentile))
    elif centres:
        order = np.argsort(centres)
        shift = np.interp(np.arange(num_frames), np.array(centres)[order], np.array(shifts)[order])
    else:  # never on the ground: keep the lowest ankle at the flat-foot height
        shift = np.full(num_frames, ankle_height_flat_m - float(ankle_w[..., 2].min()))
    for foot in range(2):
        for start, end in stance_phases(stance[:, foot]):
            xy = ankle_w[start:end, foot, :2].mean(axis=0)
            yaw = _circular_mean(heading_rad(foot_rot_w[start:end, foot]))
            targets_pos[start:end, foot] = [xy[0], xy[1], ankle_height_flat_m]
            targets_rot[start:end, foot] = _yaw_matrix(yaw)
    return FootTargets(stance=stance.copy(), ankle_pos_w=targets_pos, foot_rot_w=targets_rot, vertical_shift_m=shift)


def sagittal_lean_rad(vec_w: np.ndarray, yaw_rad: np.ndarray) -> np.ndarray:
    """Forward lean [rad] of vectors (..., 3) in the vertical plane of heading `yaw_rad` (...): the rotation
    about the heading frame's y axis that takes +z to the vector's projection (positive: top ahead)."""
    forward = vec_w[..., 0] * np.cos(yaw_rad) + vec_w[..., 1] * np.sin(yaw_rad)
    return np.arctan2(forward, vec_w[..., 2])


def heel_raise_pitch_rad(
    ankle_w: np.ndarray, toe_w: np.ndarray, stance: np.ndarray, toe_reach_m: float, threshold_m: float
) -> np.ndarray:
    """(T, 2) [rad] foot pitch (toe down) that lifts the robot's ankle point by as much as the human ankle stands
    above its flat-foot height (:func:`flat_ankle_height_w`), less `threshold_m`, pivoting about the toe: the
    human on the ball of the foot. Zero outside stance and wherever the heel is within the threshold.

    Args:
        ankle_w, toe_w: (T, 2, 3) [m] scaled human ankles and toes.
        stance: (T, 2) human stance.
        toe_reach_m: horizontal distance from the robot's ankle point to its front sole points [m].
        threshold_m: heel raises up to this stay flat [m].
    """
    lift = ankle_w[..., 2] - flat_ankle_height_w(ankle_w, toe_w, stance) - threshold_m
    sine = np.clip(lift / toe_reach_m, 0.0, 0.9)
    return np.where(stance, np.arcsin(sine), 0.0)


def tilt_within_ankle_range(
    feet: FootTargets,
    shank_w: np.ndarray,
    shank_lean_rest_rad: float,
    ankle_pitch_range_rad: tuple[float, float],
    sole_points_b: np.ndarray,
    desired_pitch_rad: np.ndarray | None = None,
) -> FootTargets:
    """Stance targets that pitch the foot only as far as the ankle's pitch range demands.

    A flat stance foot fixes the shank's lean to (rest lean − ankle pitch). In a deep lunge or squat the
    human shank leans further than the ankle's range allows (the human lifts the heel); a flat target
    then bends the robot shank away from the human's. Here such frames get the smallest foot pitch that
    lets the shank follow, pivoting about the sole point that stays on the floor (toe or heel), so the
    foot stays planted and every other stance frame stays exactly flat.

    Args:
        feet: flat targets from :func:`foot_targets`.
        shank_w: (T, 2, 3) [m] scaled human knee minus ankle (left, right).
        shank_lean_rest_rad: sagittal lean of the robot shank (knee minus matched ankle point) at q = 0.
        ankle_pitch_range_rad: (lower, upper) ankle pitch limits, already shrunk by any margin.
        sole_points_b: (k, 3) [m] sole points in the foot frame, relative to the matched ankle point.
        desired_pitch_rad: (T, 2) foot pitch to aim for before the range is applied (0: flat), e.g. a raised
            heel (:func:`heel_raise_pitch_rad`).
    """
    lower, upper = ankle_pitch_range_rad
    yaw = heading_rad(feet.foot_rot_w)
    # Flat foot: ankle pitch q = rest lean − shank lean; foot pitch θ gives q = θ + rest lean − shank lean.
    flat_q = shank_lean_rest_rad - sagittal_lean_rad(shank_w, yaw)
    desired = np.zeros_like(flat_q) if desired_pitch_rad is None else desired_pitch_rad
    pitch = np.where(feet.stance, np.clip(flat_q + desired, lower, upper) - flat_q, 0.0)
    tilted = feet.stance & (pitch != 0.0)
    if not tilted.any():
        return feet
    rot = feet.foot_rot_w.copy()
    pos = feet.ankle_pos_w.copy()
    t, f = np.nonzero(tilted)
    flat_rot = feet.foot_rot_w[t, f]
    new_rot = flat_rot @ axis_angle_matrices(np.array([0.0, 1.0, 0.0]), pitch[t, f])
    soles_tilted_w = np.einsum("nab,kb->nka", new_rot, sole_points_b)
    pivot = np.argmin(soles_tilted_w[..., 2], axis=1)
    pivot_w = feet.ankle_pos_w[t, f] + np.einsum("nab,nb->na", flat_rot, sole_points_b[pivot])
    pivot_w[:, 2] = 0.0
    pos[t, f] = pivot_w - soles_tilted_w[np.arange(len(t)), pivot]
    rot[t, f] = new_rot
    return FootTargets(stance=feet.stance, ankle_pos_w=pos, foot_rot_w=rot, vertical_shift_m=feet.vertical_shift_m)
