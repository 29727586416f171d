"""The controller's verdict: which frames of a clip the simulated G1 performed, at the clip's rate.

A frame fails when the tracker fell there (mean body distance > ASAP's 0.5 m, or an unstable
simulation), or in the `fail_backoff_s` before a fall (the fall started earlier), or when the
root-anchored mean body distance stayed above the quality bound for `quality_window_s` (the robot
stays up but does not do the motion: a lifted body it cannot lift, a turn it does not make, a
crouch it does not reach). Anchored means the simulated body is moved horizontally so its root
sits over the reference's: landing a jump 10 cm short shifts the rest of the clip by 10 cm without
changing the motion, and ASAP's 0.5 m rule already bounds how far it may drift.
"""

from __future__ import annotations

import numpy as np

from retarget.controller.config import ControllerConfig
from retarget.controller.track import TrackingRun
from retarget.filter.frames import persistent, seconds_to_frames
from retarget.filter.verdict import CheckResult

CHECK_NAME = "controller.tracking"
LAYER = "controller"


def frame_steps(run: TrackingRun, num_frames: int, fps: float) -> np.ndarray:
    """(T,) the control step nearest to each clip frame."""
    return np.minimum(np.round(np.arange(num_frames) / fps / run.dt_s).astype(int), run.num_steps - 1)


def tracking_errors_mm(run: TrackingRun, mask: np.ndarray | None = None) -> dict[str, float]:
    """Eg-mpjpe and Empjpe [mm] of the performed motion against the reference over the finite
    (optionally masked) control steps, the 95th percentile and worst mean body distance and the 95th
    percentile of the root-anchored one [mm]."""
    ok = np.isfinite(run.mean_body_distance_m)
    if mask is not None:
        ok &= mask
    if not ok.any():
        nan = float("nan")
        return {
            "eg_mpjpe_mm": nan,
            "empjpe_mm": nan,
            "p95_distance_mm": nan,
            "max_distance_mm": nan,
            "p95_anchored_distance_mm": nan,
        }
    dist = run.mean_body_distance_m[ok]
    return {
        "eg_mpjpe_mm": float(dist.mean() * 1000.0),
        "empjpe_mm": float(run.root_relative_error_m[ok].mean() * 1000.0),
        "p95_distance_mm": float(np.percentile(dist, 95) * 1000.0),
        "max_distance_mm": float(dist.max() * 1000.0),
        "p95_anchored_distance_mm": float(np.percentile(run.anchored_distance_m[ok], 95) * 1000.0),
    }


def controller_check(run: TrackingRun, num_frames: int, fps: float, config: ControllerConfig) -> CheckResult:
    """The tracking check on a clip of `num_frames` at `fps` [Hz] that `run` tracked."""
    steps = frame_steps(run, num_frames, fps)
    dist = run.mean_body_distance_m[steps]
    far = ~(run.anchored_distance_m[steps] <= config.quality_distance_m)  # NaN/inf count as far
    bad = persistent(far, seconds_to_frames(config.quality_window_s, fps))
    back = seconds_to_frames(config.fail_backoff_s, fps)
    fall_frames = []
    for fall in run.falls:
        frame = min(int(np.ceil(fall.step * run.dt_s * fps - 1e-9)), num_frames - 1)
        fall_frames.append(frame)
        bad[max(frame - back, 0) : frame + 1] = True
    bad |= ~np.isfinite(dist)
    anchored = run.anchored_distance_m[steps]
    finite = anchored[np.isfinite(anchored)]
    worst = float(finite.max()) if finite.size else float("nan")
    if run.falls:
        first = run.falls[0]
        reason = f"the tracker loses the motion at {first.step * run.dt_s:.2f} s: {first.reason}"
    elif bad.any():
        reason = (
            f"the simulated G1 stays more than {config.quality_distance_m:g} m (mean body distance, root "
            f"anchored) from the motion for {config.quality_window_s:g} s or longer"
        )
    else:
        reason = ""
    errors = tracking_errors_mm(run)
    figures = {
        "falls": len(run.falls),
        "fall_frames": ",".join(str(f) for f in fall_frames),
        "fall_reasons": "; ".join(f.reason for f in run.falls),
        "tracked_fraction": float(1.0 - bad.mean()) if num_frames else 0.0,
        "plans": run.plans,
        "rollouts": run.rollouts,
        "skipped_replans": run.skipped_replans,
        **errors,
    }
    return CheckResult(CHECK_NAME, LAYER, bad, worst, config.quality_distance_m, "m", reason, figures)
