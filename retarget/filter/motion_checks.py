"""Per-frame kinematic checks that apply alike to the human source and the robot result.

Each function takes plain arrays (positions in the world, heights above the floor, the
frame rate) and returns a :class:`CheckResult` with the failing frames and the figure.
"""

from __future__ import annotations

import numpy as np

from retarget.filter.config import KinematicConfig
from retarget.filter.frames import noise_level_m, persistent, rolling_min, runs, seconds_to_frames
from retarget.filter.verdict import CheckResult

GRAVITY_M_S2 = 9.81
LAYER = "kinematic"


def _result(name, bad, worst, threshold, unit, reason, **figures) -> CheckResult:
    bad = np.asarray(bad, dtype=bool)
    return CheckResult(name, LAYER, bad, float(worst), float(threshold), unit, reason if bad.any() else "", figures)


def _first(bad: np.ndarray) -> int:
    return int(np.flatnonzero(bad)[0]) if bad.any() else -1


def check_finite(name: str, values: np.ndarray) -> CheckResult:
    """Frames holding NaN or inf anywhere in `values` (T, ...)."""
    bad = ~np.isfinite(values.reshape(len(values), -1)).all(axis=1)
    return _result(name, bad, bad.sum(), 0, "frames", f"{bad.sum()} frame(s) hold NaN or inf, first at {_first(bad)}")


def check_frozen(name: str, values: np.ndarray, fps: float, cfg: KinematicConfig) -> CheckResult:
    """Segments where the whole pose (T, D) does not change at all for `cfg.frozen_s`."""
    num = len(values)
    still = np.zeros(num, dtype=bool)
    if num > 1:
        step = np.abs(np.diff(values.reshape(num, -1), axis=0)).max(axis=1)
        still_step = step <= cfg.frozen_tolerance
        # A frame is frozen if the steps on either side of it are zero.
        still[1:] |= still_step
        still[:-1] |= still_step
    bad = persistent(still, seconds_to_frames(cfg.frozen_s, fps))
    longest = max((b - a for a, b in runs(still)), default=0) / fps
    return _result(
        name,
        bad,
        longest,
        cfg.frozen_s,
        "s",
        f"the pose is frozen for {longest:.2f} s (tracking lost?), first at frame {_first(bad)}",
    )


def check_root_teleport(name: str, root_pos_w: np.ndarray, fps: float, cfg: KinematicConfig) -> CheckResult:
    """Frame-to-frame pelvis jumps faster than `cfg.max_root_speed_m_s` (both frames of the jump fail)."""
    speed = np.linalg.norm(np.diff(root_pos_w, axis=0), axis=1) * fps
    jump = speed > cfg.max_root_speed_m_s
    bad = np.zeros(len(root_pos_w), dtype=bool)
    bad[:-1] |= jump
    bad[1:] |= jump
    worst = speed.max() if len(speed) else 0.0
    k = _first(jump)
    return _result(
        name,
        bad,
        worst,
        cfg.max_root_speed_m_s,
        "m/s",
        f"the pelvis jumps {worst / fps:.3f} m between frames {k} and {k + 1} ({worst:.1f} m/s)",
        jump_m=worst / fps,
    )


def check_root_spike(
    name: str, root_pos_w: np.ndarray, root_rot_w: np.ndarray, fps: float, cfg: KinematicConfig
) -> CheckResult:
    """Pelvis linear acceleration or angular speed spikes. `root_rot_w` is (T, 3, 3)."""
    num = len(root_pos_w)
    accel = np.zeros(num)
    if num >= 3:
        accel[1:-1] = np.linalg.norm(root_pos_w[2:] - 2 * root_pos_w[1:-1] + root_pos_w[:-2], axis=1) * fps**2
    ang = np.zeros(num)
    if num >= 2:
        rel = np.einsum("tji,tjk->tik", root_rot_w[:-1], root_rot_w[1:])
        cos = np.clip((np.trace(rel, axis1=1, axis2=2) - 1.0) / 2.0, -1.0, 1.0)
        step = np.arccos(cos) * fps
        ang[:-1] = np.maximum(ang[:-1], step)
        ang[1:] = np.maximum(ang[1:], step)
    bad_acc = accel > cfg.max_root_accel_m_s2
    bad_ang = ang > cfg.max_root_angular_speed_rad_s
    bad = bad_acc | bad_ang
    k = _first(bad)
    reason = (
        f"pelvis acceleration {accel.max():.0f} m/s² (limit {cfg.max_root_accel_m_s2:g}) at frame {_first(bad_acc)}"
        if bad_acc.any()
        else f"pelvis turns at {ang.max():.1f} rad/s (limit {cfg.max_root_angular_speed_rad_s:g}) at frame {k}"
    )
    return _result(
        name,
        bad,
        accel.max(),
        cfg.max_root_accel_m_s2,
        "m/s²",
        reason,
        max_angular_speed_rad_s=float(ang.max()),
    )


def check_jitter(name: str, points_w: np.ndarray, cfg: KinematicConfig) -> CheckResult:
    """Frame-to-frame noise of the points (T, P, 3) (see :func:`noise_level_m`)."""
    noise = noise_level_m(points_w, cfg.jitter_window_frames)
    bad = noise > cfg.jitter_m
    return _result(
        name,
        bad,
        noise.max(initial=0.0),
        cfg.jitter_m,
        "m",
        f"the body jitters with {1000 * noise.max(initial=0.0):.1f} mm frame-to-frame noise "
        f"(limit {1000 * cfg.jitter_m:.0f} mm) in {bad.sum()} frames, first at {_first(bad)}",
        median_m=float(np.median(noise)) if len(noise) else 0.0,
    )


def check_penetration(name: str, lowest_m: np.ndarray, cfg: KinematicConfig) -> CheckResult:
    """Frames whose lowest point (T,) is deeper than `cfg.penetration_m` below the floor."""
    bad = lowest_m < -cfg.penetration_m
    depth = -lowest_m.min()
    return _result(
        name,
        bad,
        depth,
        cfg.penetration_m,
        "m",
        f"the body is {100 * depth:.1f} cm below the floor (limit {100 * cfg.penetration_m:.0f} cm) "
        f"in {bad.sum()} frames, first at {_first(bad)}",
    )


def ballistic_deviation_m(height_m: np.ndarray, fps: float) -> float:
    """Largest distance of a height track from its best free-fall arc z0 + v0·t − g·t²/2 [m]."""
    t = np.arange(len(height_m)) / fps
    y = height_m + 0.5 * GRAVITY_M_S2 * t**2
    basis = np.stack([np.ones_like(t), t], axis=1)
    coef, *_ = np.linalg.lstsq(basis, y, rcond=None)
    return float(np.abs(y - basis @ coef).max())


def check_floating(
    name: str, lowest_m: np.ndarray, pelvis_z_m: np.ndarray, fps: float, cfg: KinematicConfig
) -> CheckResult:
    """Off the ground without being in a jump: each run of frames whose lowest point (T,) is above
    `cfg.float_height_m` must be a free fall of the pelvis and no longer than a possible flight."""
    bad = np.zeros(len(lowest_m), dtype=bool)
    worst_dev, worst_flight = 0.0, 0.0
    for a, b in runs(lowest_m > cfg.float_height_m):
        flight_s = (b - a) / fps
        dev = ballistic_deviation_m(pelvis_z_m[a:b], fps) if b - a >= 3 else 0.0
        worst_dev, worst_flight = max(worst_dev, dev), max(worst_flight, flight_s)
        if dev > cfg.ballistic_tolerance_m or flight_s > cfg.max_flight_s:
            bad[a:b] = True
    height = float(lowest_m[bad].max()) if bad.any() else 0.0
    return _result(
        name,
        bad,
        worst_dev,
        cfg.ballistic_tolerance_m,
        "m",
        f"off the ground by up to {100 * height:.1f} cm for {bad.sum() / fps:.2f} s without a free fall "
        f"(pelvis {100 * worst_dev:.1f} cm off the best ballistic arc), first at frame {_first(bad)}",
        longest_flight_s=worst_flight,
        float_height_m=height,
    )


def check_sliding(
    name: str, height_m: np.ndarray, speed_m_s: np.ndarray, fps: float, cfg: KinematicConfig
) -> CheckResult:
    """Feet sliding on the floor.

    `height_m` and `speed_m_s` are (T, F, P): height above the floor and horizontal speed of
    P points (heel, toe, …) on F feet. A planted foot pivots on some point, so the slowest
    point on the ground of all feet on the ground (the anchor) should be nearly still; when
    even the anchor moves faster than `cfg.slide_speed_m_s` for `cfg.slide_duration_s`, the
    body is skating.
    """
    on_ground = height_m < cfg.contact_height_m
    anchor = np.where(on_ground, speed_m_s, np.inf).min(axis=(1, 2))
    supported = on_ground.any(axis=(1, 2))
    fast = supported & (anchor > cfg.slide_speed_m_s)
    window = seconds_to_frames(cfg.slide_duration_s, fps)
    bad = persistent(fast, window)
    # The figure: the fastest anchor speed sustained over the whole window.
    sustained = rolling_min(np.where(supported, anchor, 0.0), window)
    worst = float(sustained.max(initial=0.0))
    return _result(
        name,
        bad,
        worst,
        cfg.slide_speed_m_s,
        "m/s",
        f"the feet on the floor slide at {worst:.2f} m/s (limit {cfg.slide_speed_m_s:g}) for {bad.sum() / fps:.2f} s, "
        f"first at frame {_first(bad)}",
    )


def horizontal_speed(points_w: np.ndarray, fps: float) -> np.ndarray:
    """(T, ...) horizontal speed [m/s] by central differences (one-sided at the ends)."""
    if len(points_w) < 2:
        return np.zeros(points_w.shape[:-1])
    return np.linalg.norm(np.gradient(points_w[..., :2], 1.0 / fps, axis=0), axis=-1)


def floor_offset_m(lowest_m: np.ndarray, window_m: float) -> float:
    """The floor as the densest height of the lowest point over the clip [m].

    Bodies spend most frames on the floor, so the height that most frames share (within
    `window_m`) is the floor even when a long segment sinks or floats.
    """
    h = np.sort(lowest_m[np.isfinite(lowest_m)])
    if h.size == 0:
        return 0.0
    counts = np.searchsorted(h, h + window_m, side="right") - np.arange(len(h))
    i = int(np.argmax(counts))
    return float(np.median(h[i : i + counts[i]]))
