"""Low-pass pre-filter for video-derived clips: frame-to-frame jitter out, motion kept.

Video-pose estimators add independent noise to every frame. Foot stance is told by foot speed,
which differentiates that noise: at a few millimetres and half a degree per frame the stance
detector already loses most footfalls (see docs/video_inputs.md). A zero-phase Butterworth
low-pass (run forwards and backwards, so nothing is delayed) on the joint rotations, as unit
quaternions made sign-continuous and renormalised, and on the root translation removes it.
"""

from __future__ import annotations

import numpy as np

from retarget.errors import ConfigError
from retarget.rotations import quat_normalize, quat_to_rotvec, rotvec_to_quat
from retarget.smpl_sequence import SmplSequence

_ORDER = 2
"""Butterworth order; run twice (filtfilt), so the magnitude response is squared: 1 / (1 + (f/fc)^4)."""
VIDEO_CUTOFF_HZ = 6.0
"""Default cut-off for video-pose results [Hz]: it restores the stance detector on jittered real clips
and leaves the clean clips' retargeting metrics as they were (docs/video_inputs.md)."""


def _continuous(quat_wxyz: np.ndarray) -> np.ndarray:
    """(T, J, 4) with each quaternion flipped to the hemisphere of the previous frame's."""
    out = quat_wxyz.copy()
    for t in range(1, len(out)):
        flip = np.sum(out[t] * out[t - 1], axis=-1) < 0.0
        out[t, flip] *= -1.0
    return out


def smooth_sequence(seq: SmplSequence, cutoff_hz: float) -> SmplSequence:
    """`seq` low-passed at `cutoff_hz` [Hz]; clips too short for the filter come back unchanged."""
    if not cutoff_hz > 0:
        raise ConfigError(f"smoothing cut-off must be positive, got {cutoff_hz}")
    if cutoff_hz >= seq.fps / 2:
        return seq  # nothing above the Nyquist rate to remove
    # scipy.signal costs over a second to import; only video clips are filtered, so it loads here.
    from scipy.signal import butter, filtfilt

    b, a = butter(_ORDER, cutoff_hz / (seq.fps / 2))
    pad = 3 * max(len(a), len(b))
    if seq.num_frames <= pad:
        return seq
    quat = filtfilt(b, a, _continuous(rotvec_to_quat(seq.pose_rotvec)), axis=0, padlen=pad)
    trans = filtfilt(b, a, seq.trans_w, axis=0, padlen=pad)
    return seq.with_frames(quat_to_rotvec(quat_normalize(quat)), trans, seq.fps)
