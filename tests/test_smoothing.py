"""The video pre-filter: its gain against the designed Butterworth response, rotations through the
±π wrap, and on a real clip with added jitter the stance detector gets its footfalls back."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import smpl_clip
from scipy.signal import butter, freqz

from retarget.contacts import detect_foot_contacts
from retarget.readers.amass import read_amass_npz
from retarget.rotations import quat_angle_between, rotvec_to_quat
from retarget.skeleton import smpl_forward_kinematics
from retarget.smoothing import VIDEO_CUTOFF_HZ, smooth_sequence
from retarget.smpl_sequence import SmplSequence

FPS = 30.0


def _still(num_frames: int) -> SmplSequence:
    walk = read_amass_npz(smpl_clip("walk_level2_filter"))
    pose = np.repeat(walk.pose_rotvec[:1], num_frames, axis=0)
    return SmplSequence("still", pose, np.zeros((num_frames, 3)), FPS)


def _gain(signal: np.ndarray, t: np.ndarray, freq_hz: float) -> float:
    """Amplitude of the `freq_hz` component by least squares (middle of the clip, away from the ends)."""
    basis = np.stack([np.sin(2 * np.pi * freq_hz * t), np.cos(2 * np.pi * freq_hz * t)], axis=1)
    coef, *_ = np.linalg.lstsq(basis, signal, rcond=None)
    return float(np.hypot(*coef))


@pytest.mark.parametrize("freq_hz", [1.0, 3.0, 12.0])
def test_translation_gain_is_the_squared_butterworth_response(freq_hz):
    seq = _still(900)
    t = np.arange(900) / FPS
    trans = np.zeros((900, 3))
    trans[:, 0] = 0.05 * np.sin(2 * np.pi * freq_hz * t)
    out = smooth_sequence(seq.with_frames(seq.pose_rotvec, trans, FPS), VIDEO_CUTOFF_HZ)
    mid = slice(150, 750)
    b, a = butter(2, VIDEO_CUTOFF_HZ / (FPS / 2))
    _, response = freqz(b, a, worN=[2 * np.pi * freq_hz / FPS])
    expected = float(np.abs(response[0]) ** 2)  # run forwards and backwards: squared magnitude, no phase
    assert _gain(out.trans_w[mid, 0], t[mid], freq_hz) / 0.05 == pytest.approx(expected, rel=0.01, abs=1e-3)
    assert np.abs(out.trans_w[:, 1:]).max() < 1e-12


def test_a_steady_spin_passes_through_the_wrap():
    """A joint turning at 2 rad/s for 10 s crosses ±π in axis-angle many times; the filter keeps the spin."""
    seq = _still(300)
    angle = 2.0 * np.arange(300) / FPS
    pose = seq.pose_rotvec.copy()
    pose[:, 0] = np.stack([np.zeros(300), np.zeros(300), angle], axis=1)  # rotvec beyond π: a 2π jump in quaternions
    out = smooth_sequence(seq.with_frames(pose, seq.trans_w, FPS), VIDEO_CUTOFF_HZ)
    err = quat_angle_between(rotvec_to_quat(out.pose_rotvec[20:-20, 0]), rotvec_to_quat(pose[20:-20, 0]))
    assert np.degrees(err).max() < 0.1


def test_jittered_real_clip_gets_its_footfalls_back():
    clean = read_amass_npz(smpl_clip("step_forward_back_level2_filter"))
    rng = np.random.default_rng(3)
    noisy = clean.with_frames(
        clean.pose_rotvec + rng.normal(0.0, np.radians(1.0), clean.pose_rotvec.shape),
        clean.trans_w + rng.normal(0.0, 0.01, clean.trans_w.shape),
        clean.fps,
    )

    def stance(seq: SmplSequence) -> float:
        return float(
            detect_foot_contacts(smpl_forward_kinematics(seq.pose_rotvec, seq.trans_w)[0], seq.fps).stance.mean()
        )

    assert stance(noisy) < 0.3 * stance(clean)
    assert stance(smooth_sequence(noisy, VIDEO_CUTOFF_HZ)) > 0.75 * stance(clean)
    # The clean clip barely moves: the filter is below the detail a retarget keeps.
    joints = smpl_forward_kinematics(clean.pose_rotvec, clean.trans_w)[0]
    smoothed = smooth_sequence(clean, VIDEO_CUTOFF_HZ)
    moved = np.linalg.norm(smpl_forward_kinematics(smoothed.pose_rotvec, smoothed.trans_w)[0] - joints, axis=-1)
    assert np.median(moved) < 0.002 and moved.max() < 0.02
