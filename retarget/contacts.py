"""Foot contacts of the human: per-foot stance from ankle and toe height and speed.

A foot enters stance when its lower joint (ankle or toe, each measured against its own
grounded height) is near the floor *and* slow, and leaves stance only when it is clearly
higher or faster (hysteresis), so noise in video reconstructions does not make stance
flicker. The floor is found per clip from the feet themselves: each foot joint's grounded
height is a low percentile of its height over the clip, pooled over both feet.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from retarget.quantiles import percentile

# SMPL joint indices: (ankle, toe) for the left and right foot.
FOOT_JOINTS: tuple[tuple[int, int], tuple[int, int]] = ((7, 10), (8, 11))


@dataclass(frozen=True)
class ContactConfig:
    """Thresholds of the stance detector (with hysteresis: enter < exit)."""

    enter_height_m: float = 0.05
    """A foot may enter stance when its lower joint is within this height of its grounded height [m]."""
    exit_height_m: float = 0.08
    """A foot in stance leaves it when higher than this [m]."""
    enter_speed_m_s: float = 0.35
    """...and when its lower joint moves slower than this (horizontal speed) [m/s]."""
    exit_speed_m_s: float = 0.6
    """A foot in stance leaves it when faster than this [m/s]."""
    exit_displacement_m: float = 0.05
    """A foot in stance leaves it when its ankle has moved this far horizontally since it landed [m]:
    a slow shuffle never exceeds the speed threshold but is not a planted foot."""
    min_stance_s: float = 0.1
    """Stance phases shorter than this are dropped [s]: a foot that touches down for a frame or two
    between drags is not planted, and pinning it there would make the robot foot jump."""
    ground_percentile: float = 5.0
    """Percentile of a foot joint's height over the clip taken as its height when grounded [%]."""


@dataclass(frozen=True)
class FootContacts:
    """Per-frame stance of both feet (index 0 left, 1 right)."""

    stance: np.ndarray
    """(T, 2) bool, True while the foot is on the ground."""
    foot_height_m: np.ndarray
    """(T, 2) [m] height of the lower foot joint above its grounded height."""
    foot_speed_m_s: np.ndarray
    """(T, 2) [m/s] horizontal speed of the lower foot joint."""
    floor_z_m: float
    """Estimated floor height under the human [m] (grounded ankle height minus the rest ankle height is not
    known without the mesh, so this is the grounded height of the lowest foot joint)."""

    @property
    def airborne(self) -> np.ndarray:
        """(T,) True when neither foot is in stance."""
        return np.asarray(~self.stance.any(axis=1))

    @property
    def any_stance(self) -> np.ndarray:
        return np.asarray(self.stance.any(axis=1))


def _horizontal_speed(pos_w: np.ndarray, fps: float) -> np.ndarray:
    """(T, ...) horizontal speed [m/s] by central differences (one-sided at the ends)."""
    if len(pos_w) < 2:
        return np.zeros(pos_w.shape[:-1])
    vel = np.gradient(pos_w[..., :2], 1.0 / fps, axis=0)
    return np.linalg.norm(vel, axis=-1)


def _hysteresis(height: np.ndarray, speed: np.ndarray, ankle_xy: np.ndarray, cfg: ContactConfig) -> np.ndarray:
    """(T,) stance of one foot: it enters where low and slow, and stays while low, slow enough and within
    `exit_displacement_m` of where it entered. Walked phase by phase (each exit depends on its entry), with
    each phase's frames compared at once: a loop over frames cost 5 µs a frame for the two feet."""
    num_frames = len(height)
    stance = np.zeros(num_frames, dtype=bool)
    enter = np.flatnonzero((height < cfg.enter_height_m) & (speed < cfg.enter_speed_m_s))
    stay = (height <= cfg.exit_height_m) & (speed <= cfg.exit_speed_m_s)
    t = 0
    while True:
        later = enter[np.searchsorted(enter, t) :]
        if not len(later):
            return stance
        start = int(later[0])
        moved = np.hypot(ankle_xy[start + 1 :, 0] - ankle_xy[start, 0], ankle_xy[start + 1 :, 1] - ankle_xy[start, 1])
        leave = np.flatnonzero(~(stay[start + 1 :] & (moved <= cfg.exit_displacement_m)))
        end = start + 1 + int(leave[0]) if len(leave) else num_frames
        stance[start:end] = True
        # The frame that leaves is judged by the stance rule; the next one may enter again.
        t = end + 1


def detect_foot_contacts(joints_w: np.ndarray, fps: float, config: ContactConfig = ContactConfig()) -> FootContacts:
    """Stance of both feet from SMPL joints.

    Args:
        joints_w: (T, 24, 3) [m] SMPL joint positions in the world (z-up).
        fps: frame rate [Hz].
    """
    ankles = joints_w[:, [FOOT_JOINTS[0][0], FOOT_JOINTS[1][0]]]  # (T, 2, 3)
    toes = joints_w[:, [FOOT_JOINTS[0][1], FOOT_JOINTS[1][1]]]
    ankle_ground = percentile(ankles[..., 2], config.ground_percentile)
    toe_ground = percentile(toes[..., 2], config.ground_percentile)
    ankle_h = ankles[..., 2] - ankle_ground
    toe_h = toes[..., 2] - toe_ground
    use_toe = toe_h < ankle_h  # the lower joint decides (heel strike vs toe-off)
    height = np.where(use_toe, toe_h, ankle_h)
    speed = np.where(use_toe, _horizontal_speed(toes, fps), _horizontal_speed(ankles, fps))
    stance = np.stack([_hysteresis(height[:, f], speed[:, f], ankles[:, f, :2], config) for f in range(2)], axis=1)
    min_frames = int(np.ceil(config.min_stance_s * fps - 1e-9))
    for foot in range(2):
        padded = np.concatenate([[False], stance[:, foot], [False]])
        edges = np.flatnonzero(np.diff(padded.astype(int)))
        for start, end in zip(edges[::2], edges[1::2]):
            if end - start < min_frames:
                stance[start:end, foot] = False
    return FootContacts(
        stance=stance,
        foot_height_m=height,
        foot_speed_m_s=speed,
        floor_z_m=float(min(ankle_ground, toe_ground)),
    )
