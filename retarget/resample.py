"""Resample a pose sequence to another frame rate: slerp rotations, lerp translations."""

from __future__ import annotations

import numpy as np

from retarget.errors import ConfigError
from retarget.rotations import quat_slerp, quat_to_rotvec, rotvec_to_quat
from retarget.smpl_sequence import SmplSequence


def sample_times(num_frames: int, fps_in: float, fps_out: float) -> np.ndarray:
    """Output sample times [s] covering [0, duration] of the input at `fps_out`."""
    duration_s = (num_frames - 1) / fps_in
    # The small epsilon keeps the last sample when duration is an exact multiple of the step.
    count = int(np.floor(duration_s * fps_out + 1e-9)) + 1
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
    if abs(seq.fps - fps_out) < 1e-9 or seq.num_frames == 1:
        return seq.with_frames(seq.pose_rotvec, seq.trans_w, float(fps_out) if seq.num_frames == 1 else seq.fps)
    times = sample_times(seq.num_frames, seq.fps, fps_out)
    idx0, alpha = interpolation_weights(times, seq.num_frames, seq.fps)
    idx1 = np.minimum(idx0 + 1, seq.num_frames - 1)
    quat = rotvec_to_quat(seq.pose_rotvec)
    q_out = quat_slerp(quat[idx0], quat[idx1], np.broadcast_to(alpha[:, None], (len(times), quat.shape[1])))
    a = alpha[:, None]
    trans_out = (1.0 - a) * seq.trans_w[idx0] + a * seq.trans_w[idx1]
    return seq.with_frames(quat_to_rotvec(q_out), trans_out, float(fps_out))
