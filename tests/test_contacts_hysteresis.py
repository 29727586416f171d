"""The stance hysteresis, walked phase by phase, against the rule stated frame by frame."""

from __future__ import annotations

import math

import numpy as np
import pytest

from retarget.contacts import ContactConfig, _horizontal_speed, _hysteresis
from retarget.readers.amass import read_amass_npz
from retarget.skeleton import smpl_joint_positions
from tests.conftest import smpl_clip


def _frame_by_frame(height, speed, ankle_xy, cfg: ContactConfig) -> np.ndarray:
    """Enter when low and slow; stay while low, slow enough and near the frame it entered at."""
    stance = np.zeros(len(height), dtype=bool)
    on, anchor = False, ankle_xy[0]
    for t in range(len(height)):
        if on:
            moved = math.hypot(*(ankle_xy[t] - anchor))
            on = height[t] <= cfg.exit_height_m and speed[t] <= cfg.exit_speed_m_s and moved <= cfg.exit_displacement_m
        else:
            on = height[t] < cfg.enter_height_m and speed[t] < cfg.enter_speed_m_s
            anchor = ankle_xy[t]
        stance[t] = on
    return stance


@pytest.mark.parametrize("clip", ["walk_level1_filter", "step_forward_back_level3_filter", "SpiderMan_level2"])
@pytest.mark.parametrize(
    "cfg", [ContactConfig(), ContactConfig(exit_displacement_m=0.02), ContactConfig(exit_speed_m_s=0.36)]
)
def test_real_feet(clip, cfg):
    seq = read_amass_npz(smpl_clip(clip))
    ankles = smpl_joint_positions(seq.pose_rotvec, seq.trans_w, [7, 8])
    height = ankles[..., 2] - np.percentile(ankles[..., 2], 5.0)
    speed = _horizontal_speed(ankles, seq.fps)
    for foot in range(2):
        expected = _frame_by_frame(height[:, foot], speed[:, foot], ankles[:, foot, :2], cfg)
        assert 0 < expected.sum() < len(expected)
        np.testing.assert_array_equal(_hysteresis(height[:, foot], speed[:, foot], ankles[:, foot, :2], cfg), expected)


def test_exit_by_displacement_and_reentry_next_frame():
    """A slow shuffle leaves stance once 5 cm from where it landed, and lands again on the next frame."""
    cfg = ContactConfig()
    xy = np.stack([np.arange(10) * 0.02, np.zeros(10)], axis=1)  # 2 cm a frame, always low and slow
    stance = _hysteresis(np.zeros(10), np.zeros(10), xy, cfg)
    # Lands at 0; 6 cm at frame 3 leaves; lands at 4; leaves at 7; lands at 8.
    np.testing.assert_array_equal(stance, [1, 1, 1, 0, 1, 1, 1, 0, 1, 1])
    np.testing.assert_array_equal(stance, _frame_by_frame(np.zeros(10), np.zeros(10), xy, cfg))
    assert not _hysteresis(np.full(5, 0.06), np.zeros(5), np.zeros((5, 2)), cfg).any()  # never low enough to enter
