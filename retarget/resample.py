"""Resample a pose sequence to another frame rate: slerp rotations, lerp translations."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from retarget.errors import ConfigError
from retarget.limits import check_frames, frames_after_resampling
from retarget.rotations import quat_slerp, quat_to_rotvec, rotvec_to_quat
from retarget.smpl_sequence import SmplSequence


def sample_times(num_frames: int, fps_in: float, fps_out: float, source: str | Path | None = None) -> np.ndarray:
    """Output sample times [s] covering [0, duration] of the input at `fps_out`; refused (naming
    `source`) before allocating when there would be more frames than :mod:`retarget.limits` allows."""
    count = frames_after_resampling(num_frames, fps_in, fps_out)
    check_frames(count, source, f"resampling {num_frames} frames from {fps_in:g} Hz to {fps_out:g} Hz")
    return np.arange(count) / fps_out


def interpolation_weights(times_s: np.ndarray, num_frames: int, fps_in: float) -> tuple[np.ndarray, np.ndarray]:
    """Lower source index and blend weight in [0, 1) for each output time."""
    pos = np.clip(times_s * fps_in, 0.0, num_frames - 1)
    idx0 = np.minimum(np.floor(pos).astype(int), max(num_frames - 2, 0))
    alpha = pos - idx0
    return idx0, alpha


def resample_sequence(seq: SmplSequence, fps_out: float) -> SmplSequence:
    """The same motion sampled at `fps_out` [Hz]; the true output rate is kept on the result."""
    if not np.isfinite(fps_out) or fps_out <= 0:
        raise ConfigError(f"output frame rate must be positive, got {fps_out}")
    check_frames(seq.num_frames, seq.source_path, "the clip")
    if abs(seq.fps - fps_out) < 1e-9 or seq.num_frames == 1:
        return seq.with_frames(seq.pose_rotvec, seq.trans_w, float(fps_out) if seq.num_frames == 1 else seq.fps)
    times = sample_times(seq.num_frames, seq.fps, fps_out, seq.source_path)
    idx0, alpha = interpolation_weights(times, seq.num_frames, seq.fps)
    idx1 = np.minimum(idx0 + 1, seq.num_frames - 1)
    quat = rotvec_to_quat(seq.pose_rotvec)
    q_out = quat_slerp(quat[idx0], quat[idx1], np.broadcast_to(alpha[:, None], (len(times), quat.shape[1])))
    a = alpha[:, None]
    trans_out = (1.0 - a) * seq.trans_w[idx0] + a * seq.trans_w[idx1]
    return seq.with_frames(quat_to_rotvec(q_out), trans_out, float(fps_out))
